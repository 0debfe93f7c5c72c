"""Where the corpus tests find ../shared/corpus, and what a run without it does.

The corpus is third-party test data kept beside the checkout, never copied into it; about half
the suite reads it. `OPENPROSE_CORPUS` points the tests at another directory (a missing one
shows what a checkout without the corpus does).

Tests that read it carry the `corpus` mark and parametrise over the files found when their
module is imported, so what runs is decided at collection. Without the corpus, `select` (called
by tests/conftest.py) puts one test in place of each module's corpus tests: it skips with the
reason on a developer's machine and fails under CI, as the editor tools do. CI has the corpus,
so a skip there would hide a suite that shrank by half.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ENVIRONMENT_VARIABLE = "OPENPROSE_CORPUS"
BESIDE_THE_CHECKOUT = Path(__file__).resolve().parents[3] / "shared" / "corpus"
MARK = "corpus"
STAND_IN = "test_corpus_is_beside_the_checkout"


def corpus_directory() -> Path:
    configured = os.environ.get(ENVIRONMENT_VARIABLE)
    return Path(configured).resolve() if configured else BESIDE_THE_CHECKOUT


CORPUS = corpus_directory()
PRESENT = CORPUS.is_dir()


def under_ci() -> bool:
    """Whether CI runs the tests: `CI` set to anything but empty, `false` or `0`."""
    return os.environ.get("CI", "").strip().lower() not in ("", "false", "0")


def missing_reason() -> str:
    if os.environ.get(ENVIRONMENT_VARIABLE):
        return f"{CORPUS} ({ENVIRONMENT_VARIABLE}) not found: the corpus tests need it"
    return (
        "../shared/corpus not found beside the checkout: the corpus tests need it "
        f"(looked in {CORPUS}; {ENVIRONMENT_VARIABLE} names another directory)"
    )


def files(*folders: str) -> list[Path]:
    """The corpus's `.prose` files (under `folders` if given), sorted; none without it."""
    if not PRESENT:
        return []
    roots = [CORPUS / folder for folder in folders] if folders else [CORPUS]
    return sorted(p for root in roots for p in root.rglob("*.prose"))


def relative(path: Path) -> str:
    """A corpus file's name in test ids and in the lists of known programs."""
    return path.relative_to(CORPUS).as_posix()


def corpus_is_missing() -> None:
    """The test standing for a module's corpus tests when the corpus is absent (and CI is
    set: elsewhere it is skipped by a mark, which pytest reports at the module's name)."""
    pytest.fail(f"{missing_reason()}; CI is set, so a missing corpus fails", pytrace=False)


class StandIn(pytest.Function):
    def reportinfo(self) -> tuple[Path, int, str]:
        # Reported at the module it stands for, not at this helper.
        return self.path, 0, self.name


def select(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without the corpus, replace each module's `corpus` tests by one stand-in; the
    replaced tests are reported as deselected, so the shrunken run says so."""
    if PRESENT:
        return
    kept: list[pytest.Item] = []
    replaced: list[pytest.Item] = []
    modules: set[str] = set()
    for item in items:
        if item.get_closest_marker(MARK) is None:
            kept.append(item)
            continue
        replaced.append(item)
        module = item.getparent(pytest.Module)
        if module is not None and module.nodeid not in modules:
            modules.add(module.nodeid)
            stand_in = StandIn.from_parent(module, name=STAND_IN, callobj=corpus_is_missing)
            if not under_ci():
                stand_in.add_marker(pytest.mark.skip(reason=missing_reason()))
            kept.append(stand_in)
    if replaced:
        config.hook.pytest_deselected(items=replaced)
        items[:] = kept
