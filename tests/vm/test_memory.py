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
    assert sorted(p.name for p in agent_dir.iterdir()) == [
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
