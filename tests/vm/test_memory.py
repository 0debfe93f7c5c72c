"""Persistent agents (``persist: true``): memory and segments in the run directory."""

from __future__ import annotations

from typing import Any

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


def test_resume_passes_the_memory_and_every_invocation_leaves_a_segment(
    run_prose: Any,
) -> None:
    run = run_prose(PROGRAM)
    assert run.result.status == "success"
    first, second, third, plain = run.backend.sessions
    assert first.context == ()
    assert second.context == (
        ("memory", "[dry run] Review the plan (agent: captain; model: opus)"),
    )
    assert third.context[0][1].startswith("[dry run] Review step 1 (agent: captain; model: opus;")
    assert plain.context == ()
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
    assert second.backend.sessions[0].context == (
        ("memory", "[dry run] First advice (agent: advisor; model: opus)"),
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
