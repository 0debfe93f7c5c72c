"""Persistent agents' memory (E018, W011): every rule with a program that breaks it (code
and exact range), programs whose order gives the agent memory, and memory kept on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.analysis import analyze
from openprose.checking import check_text
from openprose.diagnostics import Diagnostic
from openprose.syntax import parse
from tests.analysis.rule_checks import Range, found, only

# code: (program, [(start, end) of each diagnostic with that code])
BAD: dict[str, tuple[str, list[Range]]] = {
    "E018": (
        "agent a:\n  persist: true\nresume: a\nsession: a\n",
        [((3, 8), (3, 9))],
    ),
    "W011": (
        "agent a:\n  persist: true\nsession: a\nsession: a\n",
        [((4, 9), (4, 10))],
    ),
}


@pytest.mark.parametrize("code", sorted(BAD))
def test_bad_program_reports_code_at_exact_range(code: str) -> None:
    text, ranges = BAD[code]
    assert found(text, code) == ranges


# Programs whose resumes all have memory and whose sessions all start afresh.
GOOD: dict[str, str] = {
    "persist true": """\
agent captain:
  model: opus
  persist: true
  prompt: "You coordinate"
session: captain
  prompt: "Review the plan"
resume: captain
  prompt: "Review step one"
let review = resume: captain
  prompt: "Final review"
""",
    "resume in a loop after a session": """\
agent captain:
  persist: true
session: captain
repeat 3:
  resume: captain
    prompt: "Continue"
""",
    "first iteration starts, later ones resume": """\
agent captain:
  persist: true
repeat 3 as i:
  if **this is the first iteration**:
    session: captain
      prompt: "Start {i}"
  else:
    resume: captain
      prompt: "Continue {i}"
""",
    "sessions in exclusive branches": """\
agent captain:
  persist: true
choice **the best approach**:
  option "fast":
    session: captain
  option "thorough":
    session: captain
resume: captain
""",
    "block invoked after the session": """\
agent captain:
  persist: project
block follow-up:
  resume: captain
session: captain
do follow-up
""",
    "project and path persistence without a project root": """\
agent advisor:
  persist: project
agent keeper:
  persist: ".prose/custom/keeper/"
agent traveller:
  persist: user
resume: advisor
resume: keeper
resume: traveller
""",
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_good_program_has_no_diagnostics(name: str) -> None:
    assert check_text(GOOD[name]) == []


# ----------------------------------------------------------------------- program order


def test_resume_before_session_in_sequence() -> None:
    text = (
        "agent a:\n  persist: true\nif **the cache is warm**:\n  resume: a\nelse:\n  session: a\n"
    )
    # Different branches of one `if`, outside any loop: the resume never has memory.
    assert found(text, "E018") == [((4, 10), (4, 11))]


def test_resume_inside_loop_before_session_in_the_same_loop() -> None:
    text = "agent a:\n  persist: true\nloop until **the work is done** (max: 3):\n"
    text += "  resume: a\n  session: a\n"
    assert found(text, "E018") == []  # the second iteration has memory


def test_block_invoked_before_and_after_the_session() -> None:
    text = "agent a:\n  persist: true\nblock more:\n  resume: a\ndo more\nsession: a\ndo more\n"
    assert found(text, "E018") == [((4, 10), (4, 11))]


def test_sessions_in_parallel_branches_do_not_warn() -> None:
    text = "agent a:\n  persist: true\nparallel:\n  x = session: a\n  y = session: a\n"
    assert found(text, "W011") == []


def test_session_after_session_relates_to_the_first() -> None:
    text = "agent a:\n  persist: true\nsession: a\nresume: a\nsession: a\n"
    d = only(text, "W011")
    assert (d.start, d.end) == ((5, 9), (5, 10))
    assert [(r.start, r.end) for r in d.related] == [((3, 9), (3, 10))]


def test_failed_resume_creates_no_memory() -> None:
    text = "agent a:\n  persist: true\nresume: a\nsession: a\n"
    assert found(text, "W011") == []


def test_session_in_a_loop_alone_does_not_warn() -> None:
    text = "agent a:\n  persist: true\nrepeat 2:\n  session: a\n"
    assert found(text, "W011") == []


def _memory(root: Path, *parts: str) -> None:
    directory = root.joinpath(*parts)
    directory.mkdir(parents=True)
    (directory / "memory.md").write_text("# Agent Memory\n")


def _analyze(text: str, root: Path) -> list[Diagnostic]:
    return analyze(parse(text), path=root / "main.prose", project_root=root)


def _codes(diagnostics: list[Diagnostic], code: str) -> list[Range]:
    return [(d.start, d.end) for d in diagnostics if d.code == code]


def test_project_memory_missing_on_disk(tmp_path: Path) -> None:
    text = "agent advisor:\n  persist: project\nresume: advisor\n"
    result = _analyze(text, tmp_path)
    assert _codes(result, "E018") == [((3, 8), (3, 15))]
    assert "no memory file in .prose/agents/advisor/" in result[0].message


def test_project_memory_on_disk(tmp_path: Path) -> None:
    _memory(tmp_path, ".prose", "agents", "advisor")
    good = "agent advisor:\n  persist: project\nresume: advisor\n"
    assert _analyze(good, tmp_path) == []
    bad = "agent advisor:\n  persist: project\nsession: advisor\n"
    assert _codes(_analyze(bad, tmp_path), "W011") == [((3, 9), (3, 16))]


def test_project_memory_of_another_agent(tmp_path: Path) -> None:
    _memory(tmp_path, ".prose", "agents", "someone-else")
    text = "agent advisor:\n  persist: project\nsession: advisor\nresume: advisor\n"
    assert _analyze(text, tmp_path) == []


def test_custom_path_memory(tmp_path: Path) -> None:
    text = 'agent keeper:\n  persist: "state/keeper/"\nresume: keeper\n'
    assert _codes(_analyze(text, tmp_path), "E018") == [((3, 8), (3, 14))]
    _memory(tmp_path, "state", "keeper")
    assert _analyze(text, tmp_path) == []
    session = 'agent keeper:\n  persist: "state/keeper/"\nsession: keeper\n'
    assert _codes(_analyze(session, tmp_path), "W011") == [((3, 9), (3, 15))]


def test_empty_memory_directory_has_no_memory(tmp_path: Path) -> None:
    (tmp_path / ".prose" / "agents" / "advisor").mkdir(parents=True)
    text = "agent advisor:\n  persist: project\nresume: advisor\n"
    assert _codes(_analyze(text, tmp_path), "E018") == [((3, 8), (3, 15))]


def test_run_scoped_memory_ignores_the_disk(tmp_path: Path) -> None:
    _memory(tmp_path, ".prose", "agents", "captain")
    text = "agent captain:\n  persist: true\nresume: captain\n"
    assert _codes(_analyze(text, tmp_path), "E018") == [((3, 8), (3, 15))]
