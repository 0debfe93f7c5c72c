"""The project a checked file belongs to (analysis.project): where its state lives,
searched anew for each analysis, except within ``project_roots_remembered``, where `prose
check` checks a batch of files at one moment and each directory is searched once."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.analysis import prepare, project_roots_remembered, surroundings
from openprose.analysis.contracts import ContractLoader
from openprose.checking import check_text
from openprose.syntax import parse


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


# A context finds its surroundings when a rule first needs them: most programs import
# nothing and keep no agent memory, and the search and the loader cost an eighth of
# checking a small file.


def _searches(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    from openprose.analysis import project as module

    searched: list[Path] = []
    search = module._search_root

    def spy(directory: Path) -> tuple[Path, bool]:
        searched.append(directory)
        return search(directory)

    monkeypatch.setattr(module, "_search_root", spy)
    return searched


def test_a_program_that_needs_nothing_around_it_searches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    searched = _searches(monkeypatch)
    program = tmp_path / "main.prose"
    assert check_text('let x = session "hi"\nsession "{x}"\n', str(program)) == []
    assert searched == []


def test_an_import_finds_the_surroundings_and_the_contract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    searched = _searches(monkeypatch)
    (tmp_path / "helper.prose").write_text('input topic: "what"\nsession "{topic}"\n')
    program = tmp_path / "main.prose"
    text = 'use "./helper" as helper\nlet r = helper(wrong: "x")\n'
    codes = [d.code for d in check_text(text, str(program))]
    assert searched == [tmp_path]
    # The contract was read: the call's arguments are checked against the helper's inputs.
    assert codes == ["E026", "E027"]


def test_agent_memory_finds_the_project_state(tmp_path: Path) -> None:
    (tmp_path / ".prose").mkdir()
    program = tmp_path / "src" / "main.prose"
    program.parent.mkdir()
    text = (
        'agent advisor:\n  model: sonnet\n  persist: project\n  prompt: "advise"\n\n'
        'resume: advisor\n  prompt: "again"\n'
    )
    # No memory on disk in the project's `.prose/`: the resume has nothing to resume.
    assert "E018" in [d.code for d in check_text(text, str(program))]


def test_what_the_caller_gives_is_kept(tmp_path: Path) -> None:
    module = parse('session "hi"\n')
    loader = object()
    ctx = prepare(module, str(tmp_path / "main.prose"), project_root=tmp_path, contracts=loader)
    assert ctx.project_root == tmp_path and ctx.contracts is loader
    ctx = prepare(module, str(tmp_path / "main.prose"), project_root=tmp_path)
    assert ctx.project_root == tmp_path
    assert isinstance(ctx.contracts, ContractLoader) and ctx.contracts.project_root == tmp_path
    assert ctx.path == tmp_path / "main.prose"
    assert prepare(module, None).contracts is None
