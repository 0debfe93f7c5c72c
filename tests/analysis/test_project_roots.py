"""Where a checked file's project state lives (analysis.surroundings): searched anew for each
analysis, except within ``project_roots_remembered``, where `prose check` checks a batch of
files at one moment and each directory is searched once."""

from __future__ import annotations

from pathlib import Path

from openprose.analysis import project_roots_remembered, surroundings


def test_each_analysis_searches_again(tmp_path: Path) -> None:
    program = tmp_path / "src" / "main.prose"
    program.parent.mkdir()
    assert surroundings(program, None, None)[0] is None  # no `.prose/`: no project state
    (tmp_path / ".prose").mkdir()
    assert surroundings(program, None, None)[0] == tmp_path


def test_a_batch_searches_each_directory_once(tmp_path: Path) -> None:
    program = tmp_path / "src" / "main.prose"
    program.parent.mkdir()
    with project_roots_remembered():
        assert surroundings(program, None, None)[0] is None
        (tmp_path / ".prose").mkdir()
        # The batch's answer for the directory stands (the files are checked at one moment).
        assert surroundings(program.with_name("other.prose"), None, None)[0] is None
        assert surroundings(tmp_path / "third.prose", None, None)[0] == tmp_path
    assert surroundings(program, None, None)[0] == tmp_path
