"""The seam between persistent agents' memory (``memory.AgentMemories``) and where it is
kept: files (``memory_files``), SQLite or PostgreSQL (``memory_sql``).

A store only knows how to lock one agent's memory and read or write its parts; what a
record, a compaction or a reset does with them is decided once, in ``memory``.
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import asdict, dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Segment:
    """One invocation of a persistent agent.  ``run`` and ``step`` say which step of which
    run recorded it (empty when unknown), so that a resumed run does not record it twice."""

    number: int
    timestamp: str
    prompt: str
    summary: str
    run: str = ""
    step: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Found:
    """A segment a step already recorded.  ``complete`` is False when a crash interrupted
    its recording (the segment is there, the rest may not be): it is recorded again, under
    the same number."""

    number: int
    complete: bool = True


class MemoryTxn(Protocol):
    """One agent's memory, held exclusively until the transaction ends: no other process
    or thread reads a number or writes a part of it meanwhile."""

    def memory(self) -> str | None:
        """The whole text of ``memory.md`` (None: none yet)."""
        ...

    def numbers(self) -> list[int]:
        """The numbers of the segments there, ascending."""
        ...

    def segments(self) -> list[Segment]:
        """The segments there, ascending by number."""
        ...

    def last_number(self) -> int:
        """The highest number ever given to a segment since the last reset, compacted
        ones included (numbers are never reused)."""
        ...

    def find(self, run: str, step: str) -> Found | None: ...

    def put_segment(self, segment: Segment) -> None: ...

    def put_memory(self, text: str) -> None: ...

    def note(self, segment: Segment) -> None:
        """The segment's recording is complete (the last write of a record)."""
        ...

    def remove_segments(self, numbers: list[int]) -> None:
        """Drop these segments (compaction); their numbers stay used."""
        ...

    def clear(self) -> None:
        """Drop the memory, every segment and every number (reset)."""
        ...


class MemoryStore(Protocol):
    name: str  # filesystem | sqlite | postgres

    def location(self, agent: str, scope: str) -> str | None:
        """Where the agent's memory lives, for people (never with a password); None when
        the scope has no place (a run without a directory): memory is then in-process."""
        ...

    def exists(self, agent: str, scope: str) -> bool: ...

    def read_memory(self, agent: str, scope: str) -> str | None:
        """``memory.md``'s text without taking the lock (every write replaces it whole)."""
        ...

    def transaction(
        self, agent: str, scope: str, *, create: bool
    ) -> contextlib.AbstractContextManager[MemoryTxn | None]:
        """Hold the agent's memory; yields None when it has no place, or when it does not
        exist and ``create`` is False."""
        ...

    def agents(self, scope: str) -> list[str]:
        """The agents with memory in ``scope`` (``true``, ``project``, ``user``), sorted."""
        ...


def segment_name(agent: str, number: int) -> str:
    # Three digits, four past 999 (filesystem.md, "Segment Numbering").
    return f"{agent}-{number:03d}.md"


def render_segment(segment: Segment) -> str:
    header = f"# Segment {segment.number:03d}\n\ntimestamp: {segment.timestamp}\n"
    header += f"prompt: {segment.prompt!r}\n"
    if segment.run:
        header += f"run: {segment.run}\n"
    if segment.step:
        header += f"step: {segment.step}\n"
    return f"{header}\n## Summary\n\n{segment.summary}\n"


def parse_segment(number: int, text: str) -> Segment:
    """A segment file back; tolerant of files an agent wrote itself (spec format)."""
    head, _, body = text.partition("\n## Summary\n")
    fields: dict[str, str] = {}
    for line in head.splitlines():
        name, sep, value = line.partition(": ")
        if sep and name in ("timestamp", "prompt", "run", "step"):
            fields[name] = value
    prompt = fields.get("prompt", "")
    with contextlib.suppress(ValueError, SyntaxError):
        literal = ast.literal_eval(prompt)
        if isinstance(literal, str):
            prompt = literal
    summary = body[1:] if body.startswith("\n") else body
    return Segment(
        number,
        fields.get("timestamp", ""),
        prompt,
        summary[:-1] if summary.endswith("\n") else summary,
        fields.get("run", ""),
        fields.get("step", ""),
    )
