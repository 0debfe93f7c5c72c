"""``prose check .`` at this repository's root, as a contributor runs it: the fixtures and
grammar snapshots (programs with errors on purpose) are left out by the repository's own
``extend-exclude``, and what is left, our example programs, passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def test_checking_the_repository_root_skips_the_fixtures(prose: Any) -> None:
    done = prose("check", ".", cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "All checks passed" in done.stdout + done.stderr
    # The fixtures are still checked when named.
    named = prose("check", "tests/e2e/vscode/fixtures", cwd=ROOT)
    assert named.returncode == 1
    assert "E007" in named.stdout
