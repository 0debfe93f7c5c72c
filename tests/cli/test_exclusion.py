"""``.gitignore`` matching agrees with git itself on generated rule sets (no prose process:
the search is called directly, git answers through ``git ls-files``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from openprose.cli.exclusion import Patterns, excluded_with_parents
from openprose.cli.sources import search

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

# Every .prose file of the tree; directories are what these paths imply.
FILES = (
    "a.prose",
    "keep.prose",
    "x.gen.prose",
    "docs/a.prose",
    "docs/keep.prose",
    "docs/deep/b.prose",
    "docs/deep/x.gen.prose",
    "src/c.prose",
    "src/docs/d.prose",
    "src/out/e.prose",
    "out/f.prose",
)
RULES = (
    "*",
    "!*/",
    "*.prose",
    "!*.prose",
    "*.gen.prose",
    "!keep.prose",
    "docs/",
    "!docs/",
    "/docs",
    "docs/*",
    "!docs/keep.prose",
    "deep",
    "out/",
    "/out/",
    "**/out",
    "src/**/d.prose",
    "docs/**",
    "docs/**/*",
    "**/deep/",
    "b.prose",
    "!b.prose",
    "/a.prose",
    "a.prose",
    "# a comment",
    "",
)
rules = st.lists(st.sampled_from(RULES), max_size=5)


def _ours(root: Path) -> list[str]:
    found = search([str(root)])
    return sorted(Path(f.display_path).relative_to(root).as_posix() for f in found.files)


def _gits(root: Path) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "-z"],
        cwd=root,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    return sorted(p for p in listed.split("\0") if p.endswith(".prose"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(top=rules, docs=rules, deep=rules, src=rules)
# Found by this test: `docs/**` matches what is inside docs/, not docs/ itself.
@example(top=[], docs=[], deep=[], src=["docs/**", "!*.prose"])
@example(top=["*", "!*/", "!*.prose"], docs=["*"], deep=["!*.prose"], src=["!*/", "out/"])
def test_the_search_keeps_what_git_does_not_ignore(
    top: list[str], docs: list[str], deep: list[str], src: list[str]
) -> None:
    with tempfile.TemporaryDirectory(prefix="prose-gitignore-") as scratch:
        root = Path(scratch)
        subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=60)
        for relative in FILES:
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text('session "x"\n', encoding="utf-8")
        for directory, lines in (("", top), ("docs", docs), ("docs/deep", deep), ("src", src)):
            (root / directory / ".gitignore").write_text("\n".join(lines) + "\n")
        assert _ours(root) == _gits(root)


def test_a_glob_matches_a_name_or_an_anchored_path(tmp_path: Path) -> None:
    root = str(tmp_path)
    patterns = Patterns(("fixtures", "tests/*.gen.prose"), root)
    assert patterns.match(os.path.join(root, "a", "fixtures")) == "fixtures"
    assert patterns.match(os.path.join(root, "tests", "x.gen.prose")) == "tests/*.gen.prose"
    assert patterns.match(os.path.join(root, "other", "tests", "x.gen.prose")) is None


def test_force_exclusion_stops_at_the_project_root(tmp_path: Path) -> None:
    project = str(tmp_path / "build" / "project")
    patterns = [Patterns(("build",), project)]
    assert not excluded_with_parents(os.path.join(project, "a.prose"), patterns, project)
    assert excluded_with_parents(os.path.join(project, "build", "a.prose"), patterns, project)
