"""A session's request laid out under its model's window (seed 001, Context Budget).

The layers, in the order a request holds them: the agent's prompt (system), its persistent
memory, the earlier turns of a multi-turn session (history), the context bindings, the
task (prompt), and a reserve for the answer.  ``Plan`` is one such layout; the compaction
and overflow steps make a smaller one from it; ``budget_of`` counts it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from openprose.vm.backends.base import SessionRequest, Turn
from openprose.vm.context.ladder import Item
from openprose.vm.context.record import Layers
from openprose.vm.context.tokens import estimate

COMPACT_AT = 0.7  # seed 001: compact when history passes 70 % of what is available
KEEP_TURNS = 4  # turns a compaction keeps verbatim (seed 001: "typically 4-8")
EMERGENCY_KEEP = 2  # turns an emergency compaction keeps (seed 001, overflow step 1)


@dataclass(frozen=True)
class Plan:
    """What one session attempt sends."""

    request: SessionRequest  # prompt, system, agent, model, properties...; context/turns below
    memory: str | None  # the agent's memory.md, when it has one (sent as context "memory")
    items: tuple[Item, ...] = ()
    turns: tuple[Turn, ...] = ()
    history: str = ""  # the summary of turns compacted away
    window: int = 0
    reserve: int = 0
    actions: tuple[str, ...] = field(default=())

    def build(self) -> SessionRequest:
        context = tuple((item.name, item.text) for item in self.items)
        if self.memory is not None:
            context = (("memory", self.memory), *context)
        return replace(self.request, context=context, turns=self.turns, history=self.history)

    def layers(self) -> Layers:
        """Tokens of each layer of what ``build`` sends, estimated text by text
        (docs/context.md)."""
        sent = self.build().sent()
        context = sent.context
        memory = ""
        # ``build`` sends the memory as the first binding; the budget counts its text apart.
        if self.memory is not None:
            (_, memory), *rest = context
            context = tuple(rest)
        return Layers(
            system=estimate(sent.system),
            memory=estimate(memory),
            history=sum(map(estimate, sent.history)),
            context=sum(estimate(name) + estimate(text) for name, text in context),
            prompt=estimate(sent.prompt),
            reserve=self.reserve,
        )

    def did(self, action: str) -> Plan:
        return replace(self, actions=(*self.actions, action))


def available(layers: Layers, window: int) -> int:
    """What is left for history, context and task (seed 001: "available for history +
    workspace")."""
    return max(window - layers.system - layers.memory - layers.reserve, 0)


def needs_compaction(plan: Plan, layers: Layers, keep: int = KEEP_TURNS) -> bool:
    """A multi-turn session whose history, context and task pass 70 % of what is available,
    with more turns than a compaction keeps."""
    if len(plan.turns) <= keep:
        return False
    used = layers.history + layers.context + layers.prompt
    return used > COMPACT_AT * available(layers, plan.window)


def fits(layers: Layers, window: int) -> bool:
    return layers.total <= window
