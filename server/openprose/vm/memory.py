"""Memory of persistent agents: ``memory.md`` and one segment file per invocation,
``{name}-001.md``, ``{name}-002.md`` ... (spec/state/filesystem.md).

Where it lives follows ``persist:``: ``true`` in the run directory (``agents/{name}/``, dies
with the run), ``project`` in the project's ``.prose/agents/{name}/``, ``user`` in
``~/.prose/agents/{name}/``, a string in that directory, which must lie inside the project.

In the spec the persistent agent writes these files itself.  The VM writes them from the
session's answer instead (the answer stands for the agent's compacted state), so that every
backend, the offline one included, leaves the same files; ``resume:`` passes the current
memory to the session as context named ``memory``.
"""

from __future__ import annotations

import re
from pathlib import Path

from openprose.vm.rundir import iso, write_atomic
from openprose.vm.values import ProseError

_UNDERSTANDING = "## Current Understanding\n\n"


def segment_name(agent: str, number: int) -> str:
    # Three digits, four past 999 (filesystem.md, "Segment Numbering").
    return f"{agent}-{number:03d}.md"


class AgentMemories:
    """Every persistent agent's memory in one run."""

    def __init__(
        self, run_path: Path | None, project_root: Path | None = None, home: Path | None = None
    ) -> None:
        self.run_path = run_path
        self.project_root = project_root
        self.home = home
        self.current: dict[str, str] = {}
        self.segments: dict[str, int] = {}

    def directory(self, agent: str, scope: str) -> Path | None:
        """Where ``agent``'s memory lives for a ``persist:`` value (None: in memory only)."""
        if scope == "true":
            return self.run_path / "agents" / agent if self.run_path is not None else None
        if scope == "project":
            return self.project_root / ".prose" / "agents" / agent if self.project_root else None
        if scope == "user":
            home = self.home if self.home is not None else Path.home()
            return home / ".prose" / "agents" / agent
        if self.project_root is None:
            return None
        root = self.project_root.resolve()
        place = (root / scope).resolve()
        if place != root and root not in place.parents:
            raise ProseError(f"persist path {scope!r} is outside the project ({root})")
        return place

    def read(self, agent: str, scope: str) -> str | None:
        if agent in self.current:
            return self.current[agent]
        directory = self.directory(agent, scope)
        if directory is None or scope == "true":
            return None
        try:
            text = (directory / "memory.md").read_text(encoding="utf-8")
        except OSError:
            return None
        memory = text.split(_UNDERSTANDING, 1)[1] if _UNDERSTANDING in text else text
        self.current[agent] = memory.rstrip("\n")
        return self.current[agent]

    def record(self, agent: str, scope: str, prompt: str, answer: str, ts: float) -> None:
        directory = self.directory(agent, scope)
        if agent not in self.segments:
            self.segments[agent] = _last_segment(directory, agent) if directory else 0
        number = self.segments[agent] + 1
        self.segments[agent] = number
        self.current[agent] = answer
        if directory is None:
            return
        directory.mkdir(parents=True, exist_ok=True)
        write_atomic(
            directory / segment_name(agent, number),
            f"# Segment {number:03d}\n\ntimestamp: {iso(ts)}\nprompt: {prompt!r}\n\n"
            f"## Summary\n\n{answer}\n",
        )
        write_atomic(
            directory / "memory.md", f"# Agent Memory: {agent}\n\n{_UNDERSTANDING}{answer}\n"
        )


def _last_segment(directory: Path, agent: str) -> int:
    """The highest segment number already there (segments of earlier runs are kept)."""
    pattern = re.compile(re.escape(agent) + r"-(\d{3,})\.md")
    numbers = [0]
    if directory.is_dir():
        for entry in directory.iterdir():
            match = pattern.fullmatch(entry.name)
            if match:
                numbers.append(int(match.group(1)))
    return max(numbers)
