"""Fitting one session's request under its window, before it is sent (seed 001).

``measure`` counts the layers (the estimate, or the provider's counter near a decision);
``fit`` compacts a multi-turn session whose history passed 70 % of what is available, then,
when the request still cannot fit the window, takes overflow-recovery steps before sending
rather than paying for a request the provider would refuse.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from openprose.vm.backends.base import BackendError, SessionRequest
from openprose.vm.context.assembly import KEEP_TURNS, Plan, fits, needs_compaction
from openprose.vm.context.compaction import Steps, compact
from openprose.vm.context.overflow import recover
from openprose.vm.context.record import LAYERS, Layers
from openprose.vm.context.tokens import COUNT_ABOVE

Counter = Callable[[SessionRequest], Awaitable[int]]


async def measure(plan: Plan, counter: Counter | None, name: str = "") -> tuple[Layers, str]:
    """The plan's layers and how they were counted: the estimate, or (when the backend has
    a counter and the estimate passes half the window) the provider's count of the
    request, shared out over the layers in proportion to their estimates."""
    layers = plan.layers()
    if counter is None or layers.total <= COUNT_ABOVE * plan.window:
        return layers, "estimate"
    try:
        counted = await counter(plan.build())
    except BackendError:
        return layers, "estimate"  # the count is an aid: its failure is not the session's
    return scaled(layers, counted), name or "provider"


def scaled(layers: Layers, counted: int) -> Layers:
    """``layers`` with the sent ones scaled so that they add up to ``counted``."""
    sent = layers.sent
    if sent <= 0:
        return replace(layers, prompt=counted)
    values = {name: getattr(layers, name) * counted // sent for name in LAYERS[:-1]}
    values["prompt"] += counted - sum(values.values())  # the rounding, on the task
    return Layers(**values, reserve=layers.reserve)


async def fit(
    plan: Plan, steps: Steps, counter: Counter | None, name: str = ""
) -> tuple[Plan, Layers, str, int]:
    """The plan to send, its layers, how they were counted, and the next overflow step."""
    layers, how = await measure(plan, counter, name)
    if needs_compaction(plan, layers):
        plan = await compact(plan, steps, KEEP_TURNS, "history past 70 % of the window")
        layers, how = await measure(plan, counter, name)
    stage = 0
    while not fits(layers, plan.window):
        steps.narrate(
            "overflow",
            f"the request is about {layers.total:,} tokens with its reserve, more than the "
            f"window of {plan.window:,}",
        )
        recovered = await recover(plan, steps, stage)
        if recovered is None:
            break  # nothing left to take: the provider has the last word
        plan, stage = recovered
        layers, how = await measure(plan, counter, name)
    return plan, layers, how, stage
