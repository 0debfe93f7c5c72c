"""Recovering from a context overflow (seed 001, section 7), one step at a time.

When the backend answers ``context_overflow`` (or the VM's own count says the request cannot
fit), the VM takes the next step of the seed's ladder that changes something, narrates it,
and retries; the steps are, in order:

1. emergency compaction: every turn but the last 2 summarised;
2. tool-result purge: each earlier tool result replaced by a one-line summary;
3. file-content drop: context bindings passed by value are passed by reference (their
   location) when they are stored, else left out with a note of their size;
4. session reset: a fresh session, its earlier turns and their summary replaced by a
   transfer summary (the agent's memory is sent again as always).

When no step is left the session fails with the overflow's message: a ``retry:`` or
``catch`` can then handle it.
"""

from __future__ import annotations

from dataclasses import replace

from openprose.vm.backends.base import Turn
from openprose.vm.context import ladder
from openprose.vm.context.assembly import EMERGENCY_KEEP, Plan
from openprose.vm.context.compaction import Steps, compact, transcript

TRANSFER_HEADING = "## Transfer summary (fresh session)"
STEPS = ("emergency compaction", "tool-result purge", "file-content drop", "session reset")


async def recover(plan: Plan, steps: Steps, start: int) -> tuple[Plan, int] | None:
    """The plan after the first step from ``start`` that changes something, and the step
    to try after it; None when every step is spent."""
    for index in range(start, len(STEPS)):
        smaller = await _STEP[index](plan, steps)
        if smaller is not None:
            return smaller, index + 1
    return None


async def _emergency(plan: Plan, steps: Steps) -> Plan | None:
    if len(plan.turns) <= EMERGENCY_KEEP:
        return None
    return await compact(plan, steps, EMERGENCY_KEEP, "context overflow, emergency compaction")


async def _purge(plan: Plan, steps: Steps) -> Plan | None:
    if not any(turn.tools for turn in plan.turns):
        return None
    purged = tuple(
        Turn(turn.prompt, turn.answer, tuple(_one_line(result) for result in turn.tools))
        for turn in plan.turns
    )
    count = sum(len(turn.tools) for turn in plan.turns)
    detail = f"context overflow: purged {count} earlier tool result{'s'[: count != 1]}"
    steps.narrate("purged", detail)
    return replace(plan, turns=purged).did(detail)


def _one_line(result: str) -> str:
    first = result.strip().splitlines()[0] if result.strip() else ""
    shown = first if len(first) <= 80 else first[:79] + "…"
    return f"[tool result: {shown} ({len(result):,} characters, purged)]"


async def _drop(plan: Plan, steps: Steps) -> Plan | None:
    by_value = [item for item in plan.items if item.form not in (ladder.REFERENCE, "dropped")]
    if not by_value:
        return None
    items = []
    for item in plan.items:
        if item not in by_value:
            items.append(item)
        elif item.location is not None:
            text = ladder.reference(item.name, item.location, item.chars)
            items.append(replace(item, text=text, form=ladder.REFERENCE))
        else:
            items.append(replace(item, text=ladder.dropped(item.name, item.chars), form="dropped"))
    names = ", ".join(item.name for item in by_value)
    detail = f"context overflow: dropped the contents of {names} (passed by reference or left out)"
    steps.narrate("dropped", detail)
    return replace(plan, items=tuple(items)).did(detail)


async def _reset(plan: Plan, steps: Steps) -> Plan | None:
    if not plan.turns and not plan.history.startswith("## Session Summary"):
        return None
    text = transcript(plan.turns, plan.history)
    summary = await steps.summarise("session transfer", text, "transfer", ladder.SUMMARY_LIMIT)
    n = len(plan.turns)
    detail = (
        f"context overflow: started a fresh session with a transfer summary of the "
        f"{n} earlier turn{'s'[: n != 1]}"
    )
    steps.narrate("reset", detail)
    fresh = replace(plan, turns=(), history=f"{TRANSFER_HEADING}\n{summary}")
    return fresh.did(detail)


_STEP = (_emergency, _purge, _drop, _reset)
