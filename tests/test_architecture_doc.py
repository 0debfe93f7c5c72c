"""docs/architecture.md names real files: a module that moves or is split makes this fail
until the page names it as it is."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "server" / "openprose"
DOC = ROOT / "docs" / "architecture.md"
# A code span that is a file or folder: has a slash or a .py, and no spaces or calls.
PATHLIKE = re.compile(r"`([\w.*/-]+(?:/|\.py|\.md|\.toml)|[\w.*-]+/[\w.*/-]*)`")


# Protocol methods look like paths too.
LSP_METHOD = re.compile(r"^(textDocument|workspace|window)/")


def named_paths() -> list[str]:
    found = PATHLIKE.findall(DOC.read_text(encoding="utf-8"))
    return sorted({name for name in found if not LSP_METHOD.match(name)})


def exists(name: str) -> bool:
    """The page's paths are relative to the package, unless they start at the repository's
    root; a bare file name is in a folder the text around it names: one of the package's,
    the tests' or the benchmarks'."""
    if "/" not in name.rstrip("/"):
        if (ROOT / name).exists():
            return True
        folders = (PACKAGE, ROOT / "tests", ROOT / "bench")
        return any(next(folder.rglob(name), None) for folder in folders)
    return any(next(base.glob(name.rstrip("/")), None) for base in (PACKAGE, ROOT))


def test_the_architecture_page_names_files_that_exist() -> None:
    names = named_paths()
    assert len(names) > 40, names  # the pattern still finds the page's paths
    missing = [name for name in names if not exists(name)]
    assert missing == [], f"docs/architecture.md names files that do not exist: {missing}"
