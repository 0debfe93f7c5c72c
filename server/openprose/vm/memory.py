"""Memory of persistent agents (``persist: true``): ``agents/{name}/memory.md`` and one
segment file per invocation, ``{name}-001.md``, ``{name}-002.md`` ..., in the run directory
(spec/state/filesystem.md).

In the spec the persistent agent writes these files itself.  The VM writes them from the
session's answer instead (the answer stands for the agent's compacted state), so that every
backend, the offline one included, leaves the same files; ``resume:`` passes the current
memory to the session as context named ``memory``.
"""

from __future__ import annotations

from pathlib import Path

from openprose.vm.rundir import iso, write_atomic


def segment_name(agent: str, number: int) -> str:
    # Three digits, four past 999 (filesystem.md, "Segment Numbering").
    return f"{agent}-{number:03d}.md"


class AgentMemories:
    """Every persistent agent's memory in one run; on disk when there is a run directory."""

    def __init__(self, run_path: Path | None) -> None:
        self.base = run_path / "agents" if run_path is not None else None
        self.current: dict[str, str] = {}
        self.segments: dict[str, int] = {}

    def read(self, agent: str) -> str | None:
        return self.current.get(agent)

    def record(self, agent: str, prompt: str, answer: str, ts: float) -> None:
        number = self.segments.get(agent, 0) + 1
        self.segments[agent] = number
        self.current[agent] = answer
        if self.base is None:
            return
        directory = self.base / agent
        directory.mkdir(parents=True, exist_ok=True)
        write_atomic(
            directory / segment_name(agent, number),
            f"# Segment {number:03d}\n\ntimestamp: {iso(ts)}\nprompt: {prompt!r}\n\n"
            f"## Summary\n\n{answer}\n",
        )
        write_atomic(
            directory / "memory.md",
            f"# Agent Memory: {agent}\n\n## Current Understanding\n\n{answer}\n",
        )
