"""Compacting a multi-turn session's earlier turns (seed 001, sections 3 and 5).

When a ``resume:`` session's history passes 70 % of what its window leaves, the turns before
the last ``keep`` (default 4) are replaced by a summary, "## Session Summary (compacted)".
First a memory flush asks the backend for the decisions, preferences and artifacts in
those turns and writes them to the agent's ``memory.md``; then the summary is asked; then
the folded turns leave the agent's segments (``memory.AgentMemories.compact``), so the next
session starts from the compacted state.  Each ask is a journaled backend step keyed by
its text's content hash: a resumed run re-walking a compaction pays for none of it again.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from openprose.vm.backends.base import Turn
from openprose.vm.context.assembly import Plan
from openprose.vm.context.ladder import SUMMARY_LIMIT

SUMMARY_HEADING = "## Session Summary (compacted)"


class Steps(Protocol):
    """What compaction and overflow recovery ask of the interpreter."""

    async def summarise(self, name: str, text: str, mode: str, limit: int) -> str:
        """A journaled, accounted backend summary of ``text``."""
        ...

    def flush(self, notes: str) -> None:
        """Write memory-flush notes to the agent's memory.md (nothing for an agent
        without memory)."""
        ...

    def fold(self, keep: int) -> None:
        """Fold the agent's segments but the last ``keep`` into its memory.md."""
        ...

    def narrate(self, action: str, detail: str) -> None: ...


def transcript(turns: tuple[Turn, ...], history: str = "") -> str:
    """Earlier turns as one text to summarise, after the summary of those before them."""
    parts = [history] if history else []
    for number, turn in enumerate(turns, 1):
        part = f"### Turn {number}\nAsked: {turn.prompt}\nAnswered: {turn.answer}"
        if turn.tools:
            part += "\nTool results:\n" + "\n".join(turn.tools)
        parts.append(part)
    return "\n\n".join(parts)


async def compact(plan: Plan, steps: Steps, keep: int, why: str) -> Plan:
    """``plan`` with the turns before the last ``keep`` replaced by their summary."""
    older = plan.turns[: len(plan.turns) - keep] if keep else plan.turns
    kept = plan.turns[len(older) :]
    if not older:
        return plan
    before = plan.layers().history
    text = transcript(older, plan.history)
    notes = await steps.summarise("memory flush", text, "flush", SUMMARY_LIMIT)
    steps.flush(notes)  # seed 001: the flush comes before anything is discarded
    summary = await steps.summarise("earlier turns", text, "compaction", SUMMARY_LIMIT)
    steps.fold(len(kept))
    compacted = replace(plan, turns=kept, history=f"{SUMMARY_HEADING}\n{summary}")
    after = compacted.layers().history
    s = "" if len(older) == 1 else "s"
    detail = (
        f"{why}: compacted {len(older)} earlier turn{s} into a summary, kept the last "
        f"{len(kept)} ({before:,} → {after:,} tokens of history); memory flushed first"
    )
    steps.narrate("compacted", detail)
    return compacted.did(detail)
