"""What each session's context looked like: its budget, written to the run's journal.

Every session attempt the VM sends has a ``SessionBudget``: the model's window, the tokens of
each layer (system, memory, history, context, prompt, reserve), how they were counted, and
what the VM did to fit them (summaries, compaction, overflow recovery).  When the run has a
journal the budget is a commit entry named ``@context:session`` (the value is the budget as
JSON), beside the ``@account`` entries of ``vm/accounting.py``, so that ``prose runs show``
and the editor (hover, inlay hints) can show the last run's budgets without re-running.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from openprose.vm.state.bookkeeping import stored_values, values

CONTEXT = "@context"  # the journal commit name of a budget: "@context:session"
LAYERS = ("system", "memory", "history", "context", "prompt", "reserve")


@dataclass(frozen=True)
class Layers:
    """Tokens of each part of one request."""

    system: int = 0  # the agent's prompt
    memory: int = 0  # a persistent agent's memory.md
    history: int = 0  # earlier turns of a multi-turn (``resume:``) session, and their summary
    context: int = 0  # the context bindings, as sent (verbatim, summarised or by reference)
    prompt: int = 0  # the task
    reserve: int = 0  # kept free for the answer

    @property
    def sent(self) -> int:
        """Everything but the reserve: what the request itself takes."""
        return self.system + self.memory + self.history + self.context + self.prompt

    @property
    def total(self) -> int:
        return self.sent + self.reserve


@dataclass(frozen=True)
class SessionBudget:
    """One session attempt's context budget (docs/context.md)."""

    key: str  # the session's journal step key (step#attemptN)
    agent: str
    statement: str  # the first line of the statement
    line: int
    program: str
    model: str  # the model id the window was looked up by ("" when the backend chooses)
    window: int  # the model's context window, tokens
    layers: Layers = field(default_factory=Layers)
    counter: str = "estimate"  # "estimate" (docs/context.md) or the provider's counter
    actions: tuple[str, ...] = ()  # what the VM did to fit the window, as narrated

    @property
    def available(self) -> int:
        """What is left for history, context and prompt once the system prompt, memory and
        reserve are placed (seed 001's "available for history + workspace")."""
        layers = self.layers
        return max(self.window - layers.system - layers.memory - layers.reserve, 0)

    @property
    def used(self) -> int:
        layers = self.layers
        return layers.history + layers.context + layers.prompt

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["actions"] = list(self.actions)
        data["available"] = self.available
        data["used"] = self.used
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionBudget:
        layers = data.get("layers") or {}
        return cls(
            key=str(data.get("key", "")),
            agent=str(data.get("agent") or ""),
            statement=str(data.get("statement", "")),
            line=int(data.get("line", 0)),
            program=str(data.get("program", "")),
            model=str(data.get("model") or ""),
            window=int(data.get("window", 0)),
            layers=Layers(**{name: int(layers.get(name, 0)) for name in LAYERS}),
            counter=str(data.get("counter", "estimate")),
            actions=tuple(str(a) for a in data.get("actions") or ()),
        )


def record(budget: SessionBudget, journal: Any | None) -> None:
    """Write ``budget`` to the run's journal (nothing without one).  Bookkeeping, like the
    accounting entries: relaxed sync, and a resumed run does not write it twice."""
    if journal is None:
        return
    value = json.dumps(budget.to_json(), sort_keys=True, ensure_ascii=False)
    name = f"{CONTEXT}:session"
    if journal.committed(budget.key, name, None) != value:
        journal.record_commit(budget.key, name, None, value)


def stored_budgets(database: Path, run_id: str, prefix: str = "") -> list[SessionBudget] | None:
    """The budgets a run wrote to its journal (a SQLite file); None when it has none."""
    found = stored_values(database, run_id, f"{CONTEXT}:session", prefix)
    return None if found is None else _budgets(found)


def budgets_from(
    cursor: Any, table: str, run_id: str, placeholder: str = "?"
) -> list[SessionBudget]:
    """The budgets of ``run_id`` in a journal's commits ``table``, through a DB-API cursor
    (``placeholder``: ``?`` for sqlite3, ``%s`` for psycopg), in the order written."""
    return _budgets(values(cursor, table, run_id, f"{CONTEXT}:session", placeholder))


def _budgets(found: list[dict[str, Any]]) -> list[SessionBudget]:
    budgets = []
    for data in found:
        try:
            budgets.append(SessionBudget.from_json(data))
        except (ValueError, TypeError):
            continue  # a row this version cannot read: left out
    return budgets
