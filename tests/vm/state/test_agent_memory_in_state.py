"""A persistent agent's memory is kept by the run's own state backend (files, the sqlite
databases, PostgreSQL), and a resumed run records none of its segments twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openprose.vm.interpreter import Options
from openprose.vm.memory import AgentMemories

PROGRAM = """\
agent keeper:
  model: haiku
  persist: project
  prompt: "You keep notes"
session: keeper
  prompt: "First note"
resume: keeper
  prompt: "Second note"
resume: keeper
  prompt: "Third note"
"""


def memories_of(catalog: Any, root: Path) -> AgentMemories:
    connect = None
    if catalog.state == "postgres":
        connect = catalog._plain  # the catalogue's connection factory (its URL stays hidden)
    return AgentMemories(None, root, root / "home", state=catalog.state, connect=connect)


def test_a_resumed_run_leaves_the_memory_an_uninterrupted_run_leaves(
    durable_catalog: Any, run_in_state: Any, tmp_path: Path
) -> None:
    stopped = run_in_state(durable_catalog, PROGRAM, options=Options(max_sessions=2))
    assert stopped.result.status == "error"
    store = durable_catalog.open(stopped.result.run_id)
    resumed = run_in_state(durable_catalog, PROGRAM, resume=store)
    assert resumed.result.status == "success", resumed.result.error
    report = memories_of(durable_catalog, tmp_path).describe("keeper", "project", True)
    assert report["exists"], report
    prompts = [segment["prompt"] for segment in report["data"]["segments"]]
    assert prompts == ["First note", "Second note", "Third note"]
    if durable_catalog.state != "filesystem":
        # Kept in the backend's tables, not in files.
        assert not (tmp_path / ".prose" / "agents" / "keeper").exists()
