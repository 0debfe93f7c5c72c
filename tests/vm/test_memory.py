"""Persistent agents: memory and segments in each scope, and recording a step once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openprose.vm.backends.base import Turn
from openprose.vm.memory import AgentMemories, render_memory, split_memory
from openprose.vm.memory_store import Segment

PROGRAM = """\
agent captain:
  model: opus
  persist: true
  prompt: "You coordinate"

session: captain
  prompt: "Review the plan"
resume: captain
  prompt: "Review step 1"
let last = resume: captain
  prompt: "Final review"
session "Unrelated"
"""


def test_resume_passes_the_earlier_turns_and_every_invocation_leaves_a_segment(
    run_prose: Any,
) -> None:
    run = run_prose(PROGRAM)
    assert run.result.status == "success"
    first, second, third, plain = run.backend.sessions
    assert first.context == () and first.turns == ()
    # A multi-turn session: the earlier invocations are its turns; memory.md's current
    # understanding is the last answer, which the last turn holds, so no memory layer.
    assert second.context == ()
    assert second.turns == (
        Turn("Review the plan", "[dry run] Review the plan (agent: captain; model: opus)"),
    )
    assert [turn.prompt for turn in third.turns] == ["Review the plan", "Review step 1"]
    assert third.turns[1].answer.startswith("[dry run] Review step 1 (agent: captain;")
    assert plain.context == () and plain.turns == ()
    agent_dir = run.run_dir / "agents" / "captain"
    assert sorted(p.name for p in agent_dir.iterdir() if not p.name.startswith(".")) == [
        "captain-001.md",
        "captain-002.md",
        "captain-003.md",
        "memory.md",
    ]
    memory = (agent_dir / "memory.md").read_text(encoding="utf-8")
    assert memory == (
        "# Agent Memory: captain\n\n## Current Understanding\n\n" + run.binding("last") + "\n"
    )
    segment = (agent_dir / "captain-002.md").read_text(encoding="utf-8")
    assert segment.startswith("# Segment 002\n\ntimestamp: 2027-01-15T08:00:00Z\n")
    assert "prompt: 'Review step 1'" in segment


def test_project_memory_survives_the_run(run_prose: Any) -> None:
    agent = 'agent advisor:\n  model: opus\n  persist: project\n  prompt: "Advise"\n\n'
    first = run_prose(agent + 'session: advisor\n  prompt: "First advice"\n')
    assert first.result.status == "success"
    second = run_prose(agent + 'resume: advisor\n  prompt: "Second advice"\n')
    assert second.result.status == "success"
    assert second.backend.sessions[0].turns == (
        Turn("First advice", "[dry run] First advice (agent: advisor; model: opus)"),
    )
    directory = first.root / ".prose" / "agents" / "advisor"
    assert sorted(p.name for p in directory.iterdir() if not p.name.startswith(".")) == [
        "advisor-001.md",
        "advisor-002.md",
        "memory.md",
    ]
    assert not (second.run_dir / "agents").exists()


def test_user_memory_lives_in_the_home_directory(
    run_prose: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    run = run_prose(
        'agent mentor:\n  persist: user\n  prompt: "Mentor"\n\n'
        'session: mentor\n  prompt: "Hello"\nresume: mentor\n  prompt: "Again"\n'
    )
    assert run.result.status == "success"
    assert (home / ".prose" / "agents" / "mentor" / "mentor-002.md").is_file()


def test_a_persist_path_must_stay_inside_the_project(run_prose: Any) -> None:
    inside = run_prose(
        'agent a:\n  persist: "state/a"\n  prompt: "A"\n\nsession: a\n  prompt: "Go"\n'
    )
    assert (inside.root / "state" / "a" / "memory.md").is_file()
    outside = run_prose(
        'agent b:\n  persist: "../b"\n  prompt: "B"\n\nsession: b\n  prompt: "Go"\n'
    )
    assert outside.result.status == "error"
    assert outside.result.error.startswith("persist path '../b' is outside the project")


# ---------------------------------------------------------------------- record(key=...)

TS = 1_800_000_000.0


def memories(tmp_path: Path, run: str = "20270115-080000-aaaaaa", **kwargs: Any) -> AgentMemories:
    project = tmp_path / "project"
    return AgentMemories(
        project / ".prose" / "runs" / run, project, home=tmp_path / "home", **kwargs
    )


def files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith("."))


def test_the_run_is_named_by_its_directory_under_prose_runs(tmp_path: Path) -> None:
    assert memories(tmp_path).run_id == "20270115-080000-aaaaaa"
    nested = AgentMemories(tmp_path / ".prose" / "runs" / "r1" / "imports" / "lib", tmp_path)
    assert nested.run_id == "r1/imports/lib"
    assert AgentMemories(tmp_path / "elsewhere", tmp_path).run_id == "elsewhere"
    assert AgentMemories(None, tmp_path).run_id == ""


def test_recording_a_step_again_writes_nothing(tmp_path: Path) -> None:
    first = memories(tmp_path)
    assert first.record("advisor", "project", "Advise", "one", TS, key="0")
    assert first.record("advisor", "project", "Advise more", "two", TS, key="1")
    directory = tmp_path / "project" / ".prose" / "agents" / "advisor"
    before = {name: (directory / name).read_bytes() for name in files(directory)}
    # The run resumed in a new process replays both steps.
    resumed = memories(tmp_path)
    assert not resumed.record("advisor", "project", "Advise", "one", TS, key="0")
    assert resumed.read("advisor", "project") == "one"  # what the run saw then
    assert not resumed.record("advisor", "project", "Advise more", "two", TS, key="1")
    assert {name: (directory / name).read_bytes() for name in files(directory)} == before
    assert files(directory) == ["advisor-001.md", "advisor-002.md", "memory.md"]
    # The same step of another run is another invocation.
    other = memories(tmp_path, run="20270115-090000-bbbbbb")
    assert other.record("advisor", "project", "Advise", "three", TS, key="0")
    assert files(directory)[-2] == "advisor-003.md"
    segment = (directory / "advisor-003.md").read_text(encoding="utf-8")
    assert "run: 20270115-090000-bbbbbb\nstep: 0\n" in segment


def test_the_runs_of_imported_programs_are_told_apart_by_their_directory(
    tmp_path: Path,
) -> None:
    # Two runs each call a program whose run directory is named "lib"; its step keys are
    # the same in both.
    for run in ("r1", "r2"):
        path = tmp_path / ".prose" / "runs" / run / "imports" / "lib"
        m = AgentMemories(path, tmp_path, run_id="lib")
        assert m.record("a", "project", "p", f"from {run}", TS, key="0/lib:0")
    assert AgentMemories(None, tmp_path).describe("a", "project")["items"]["segments"] == 2


def test_a_record_without_a_key_always_writes(tmp_path: Path) -> None:
    m = memories(tmp_path)
    assert m.record("a", "true", "p", "x", TS)
    assert m.record("a", "true", "p", "x", TS)
    assert m.describe("a", "true")["items"]["segments"] == 2


def test_a_record_cut_short_by_a_crash_is_completed_under_its_number(tmp_path: Path) -> None:
    m = memories(tmp_path)
    m.record("a", "project", "p", "one", TS, key="0")
    # The process died after writing segment 2 and before memory.md and the ledger.
    with m.store.transaction("a", "project", create=True) as txn:
        assert txn is not None
        txn.put_segment(Segment(2, "t", "q", "two", m.run_id, "1"))
    resumed = memories(tmp_path)
    assert resumed.record("a", "project", "q", "two", TS, key="1")
    directory = tmp_path / "project" / ".prose" / "agents" / "a"
    assert files(directory) == ["a-001.md", "a-002.md", "memory.md"]
    assert memories(tmp_path).read("a", "project") == "two"
    assert not memories(tmp_path).record("a", "project", "q", "two", TS, key="1")


def test_a_torn_ledger_line_is_skipped_and_numbers_stay_unique(tmp_path: Path) -> None:
    m = memories(tmp_path)
    m.record("a", "project", "p", "one", TS, key="0")
    directory = tmp_path / "project" / ".prose" / "agents" / "a"
    with open(directory / ".segments.jsonl", "a", encoding="utf-8") as ledger:
        ledger.write('{"n": 2, "run": "r", "st')  # a crash mid-append
    assert m.record("a", "project", "p", "two", TS, key="1")
    assert files(directory) == ["a-001.md", "a-002.md", "memory.md"]
    assert not memories(tmp_path).record("a", "project", "p", "two", TS, key="1")


def test_a_memory_without_a_place_stays_in_the_process(tmp_path: Path) -> None:
    m = AgentMemories(None, None, home=tmp_path)
    assert not m.record("a", "true", "p", "one", TS, key="0")
    assert m.read("a", "true") == "one"
    assert m.describe("a", "true") == {
        "agent": "a",
        "scope": "true",
        "store": "filesystem",
        "location": None,
        "exists": False,
        "items": {"segments": 0, "compacted_segments": 0, "memory_chars": 0, "tokens": 0},
        "metadata": {
            "first_segment": None,
            "last_segment": None,
            "last_number": 0,
            "updated": None,
        },
    }


def test_the_compacted_history_outlives_later_records(tmp_path: Path) -> None:
    m = memories(tmp_path)
    for n in range(1, 5):
        m.record("a", "project", f"step {n}", f"Answer {n} about src/app_{n}.py.", TS)
    m.compact("a", "project", max_messages=1)
    m.record("a", "project", "step 5", "Answer 5.", TS)
    text = (tmp_path / "project" / ".prose" / "agents" / "a" / "memory.md").read_text()
    understanding, history = split_memory(text)
    assert understanding == "Answer 5."
    assert "src/app_1.py" in history and "src/app_3.py" in history
    # resume: passes the understanding and the history.
    fresh = memories(tmp_path)
    assert fresh.read("a", "project") == f"Answer 5.\n\n## Compacted history\n\n{history}"
    assert m.read("a", "project") == fresh.read("a", "project")  # the run that recorded it


def test_split_memory_reads_both_places_of_the_history() -> None:
    ours = render_memory("a", "Now.", "- Segment 001, prompt: 'p'\n  - Port 8080.")
    assert split_memory(ours) == ("Now.", "- Segment 001, prompt: 'p'\n  - Port 8080.")
    ahead = (
        "# Agent Memory: a\n\n## Compacted History\n\n- 001 2027-01-15T08:00:00Z 'p': x 1\n\n"
        "## Current Understanding\n\nNow.\n"
    )
    assert split_memory(ahead) == ("Now.", "- 001 2027-01-15T08:00:00Z 'p': x 1")
    # An answer that only mentions the heading keeps it.
    answer = "Plan:\n\n## Compacted history\n\nnot a list"
    assert split_memory(render_memory("a", answer)) == (answer, "")


# ---------------------------------------------------------------------- a resumed run

RESUMABLE = """\
agent advisor:
  model: opus
  persist: project
  prompt: "Advise"

session: advisor
  prompt: "First"
resume: advisor
  prompt: "Second"
resume: advisor
  prompt: "Third"
"""


def run_to_the_end(tmp_path: Path, state: str, stop_after: int | None) -> dict[str, Any]:
    import asyncio

    from openprose.vm.backends.offline import OfflineBackend
    from openprose.vm.interpreter import Options
    from openprose.vm.runner import run_file
    from openprose.vm.state import open_catalog
    from tests.vm.vm_support import FakeClock

    runs = tmp_path / ".prose" / "runs"
    runs.mkdir(parents=True)
    path = tmp_path / "main.prose"
    path.write_text(RESUMABLE, encoding="utf-8")
    options = Options(jitter=False, max_sessions=stop_after) if stop_after else None
    result = asyncio.run(
        run_file(
            path, backend=OfflineBackend(), runs_root=runs, options=options,
            clock=FakeClock(), state=state,
        )
    )  # fmt: skip
    if stop_after:
        assert result.status == "error"
        store = open_catalog(state, runs).open(result.run_id)
        result = asyncio.run(
            run_file(path, backend=OfflineBackend(), resume=store, clock=FakeClock(), state=state)
        )
    assert result.status == "success"
    report = AgentMemories(None, tmp_path, state=state).describe(
        "advisor", "project", include_data=True
    )
    for segment in report["data"]["segments"]:
        segment.pop("run")  # the two runs' ids differ
    return dict(report["data"])


@pytest.mark.parametrize("state", ["filesystem", "sqlite"])
def test_a_resumed_run_leaves_the_memory_of_an_uninterrupted_one(
    tmp_path: Path, state: str
) -> None:
    whole = run_to_the_end(tmp_path / "whole", state, None)
    resumed = run_to_the_end(tmp_path / "resumed", state, 2)
    assert [s["prompt"] for s in resumed["segments"]] == ["First", "Second", "Third"]
    assert resumed == whole
