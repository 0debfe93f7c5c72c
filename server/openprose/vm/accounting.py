"""Where a run's tokens and money went: per model call, agent, statement and run.

The interpreter hands every answer it accounts (a session, a condition, a choice, a summary)
to a ``Ledger`` with the call's journal key, its agent and the statement that made it.  The
ledger keeps the entries for the run's result and, when the run has a journal, writes each
one there as a commit entry named ``@account`` (the value is the entry as JSON), so that
``prose runs show`` can break down any run, and a resume's reset of the journal forgets it
with the rest.  A resumed run accounts its replayed calls again (the totals are the run's,
as ``--max-cost`` counts them) and writes no entry twice.

Before a call, ``estimate`` guesses what it will take (documented in docs/run.md): about
four characters a token of the prompt, system, context and earlier turns, plus the output
the backend reserves for the answer when it is known, priced with the backend's price table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from openprose.vm.backends.base import (
    ChoiceRequest,
    ConditionRequest,
    SessionRequest,
    SummaryRequest,
    Usage,
)
from openprose.vm.backends.chat import ANSWER_MAX_TOKENS, SESSION_MAX_TOKENS
from openprose.vm.state.bookkeeping import stored_values, values

ACCOUNT = "@account"  # the journal commit name of an entry
NO_AGENT = ""  # a session with no agent, or a question the VM asks (condition, choice...)
CHARS_PER_TOKEN = 4
# The output a backend reserves for an answer (the max_tokens it sends), by backend name;
# the others send none (openai, claude-code), so nothing is known to add.
OUTPUT_RESERVE = {"anthropic": SESSION_MAX_TOKENS}  # a session or a summary
ANSWER_RESERVE = {"anthropic": ANSWER_MAX_TOKENS}  # a condition or a choice

Request = SessionRequest | ConditionRequest | ChoiceRequest | SummaryRequest


def statement_of(node: Any) -> Any:
    """The statement ``node`` is part of (a session inside a ``let``, a condition of an
    ``if``): the node itself or its ancestor that sits in a body or at the top."""
    from openprose.syntax import tree as t

    while node.parent is not None and not isinstance(node.parent, t.Suite | t.Module):
        node = node.parent
    return node


def total_tokens(usage: Usage) -> int:
    """What ``--max-tokens`` counts: every token of the call, cached ones included."""
    return (
        usage.input_tokens
        + usage.output_tokens
        + usage.cache_read_tokens
        + usage.cache_write_tokens
    )


@dataclass
class Tally:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0

    def add(self, usage: Usage, cost: float) -> None:
        self.calls += 1
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_read_tokens += usage.cache_read_tokens
        self.cache_write_tokens += usage.cache_write_tokens
        self.cost += cost

    @property
    def tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "tokens": self.tokens}


@dataclass(frozen=True)
class Entry:
    """One accounted model call."""

    kind: str  # session | judge | choose | summarise
    key: str  # its journal step key
    agent: str
    statement: str  # the first line of the statement that made the call
    line: int
    program: str
    usage: Usage
    cost: float

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["usage"] = asdict(self.usage)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        return cls(
            kind=str(data.get("kind", "")),
            key=str(data.get("key", "")),
            agent=str(data.get("agent") or NO_AGENT),
            statement=str(data.get("statement", "")),
            line=int(data.get("line", 0)),
            program=str(data.get("program", "")),
            usage=Usage(**dict(data.get("usage") or {})),
            cost=float(data.get("cost", 0.0)),
        )


@dataclass
class Breakdown:
    """A run's accounting, grouped."""

    total: Tally = field(default_factory=Tally)
    agents: dict[str, Tally] = field(default_factory=dict)
    statements: dict[tuple[str, int, str], Tally] = field(default_factory=dict)
    sessions: list[Entry] = field(default_factory=list)

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> Breakdown:
        found = cls()
        for entry in entries:
            found.total.add(entry.usage, entry.cost)
            found.agents.setdefault(entry.agent, Tally()).add(entry.usage, entry.cost)
            where = (entry.program, entry.line, entry.statement)
            found.statements.setdefault(where, Tally()).add(entry.usage, entry.cost)
            if entry.kind == "session":
                found.sessions.append(entry)
        return found

    def _agents(self) -> list[tuple[str, Tally]]:
        return sorted(self.agents.items(), key=lambda item: (-item[1].cost, -item[1].tokens))

    def top_statements(self, limit: int | None = None) -> list[tuple[tuple[str, int, str], Tally]]:
        ranked = sorted(
            self.statements.items(), key=lambda item: (-item[1].cost, -item[1].tokens, item[0])
        )
        return ranked[:limit] if limit is not None else ranked

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total.to_json(),
            "agents": [
                {"agent": name or None, **tally.to_json()} for name, tally in self._agents()
            ],
            "statements": [
                {"program": p, "line": line, "statement": s, **tally.to_json()}
                for (p, line, s), tally in self.top_statements()
            ],
            "sessions": [
                {
                    "key": e.key,
                    "agent": e.agent or None,
                    "statement": e.statement,
                    "line": e.line,
                    **asdict(e.usage),
                    "cost": e.cost,
                }
                for e in self.sessions
            ],
        }

    def lines(self, top: int = 3) -> list[str]:
        """A short text breakdown: tokens and cost by agent, then the costliest statements."""
        if not self.total.calls:
            return []
        out = ["by agent:"]
        for name, tally in self._agents():
            out.append(f"  {name or '(no agent)'}: {_tally_text(tally)}")
        out.append(f"top statements by cost (of {len(self.statements)}):")
        for (_program, line, statement), tally in self.top_statements(top):
            shown = statement if len(statement) <= 60 else statement[:59] + "…"
            out.append(f"  line {line}: {shown}: {_tally_text(tally)}")
        return out


def _tally_text(tally: Tally) -> str:
    calls = f"{tally.calls} call{'' if tally.calls == 1 else 's'}"
    cached = tally.cache_read_tokens + tally.cache_write_tokens
    cache = f", {cached} cached" if cached else ""
    return f"{calls}, {tally.input_tokens} in, {tally.output_tokens} out{cache}, ${tally.cost:.4f}"


class Ledger:
    """The entries of one run, shared with the programs it calls (their keys are under the
    call's step key in the same journal)."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def add(self, entry: Entry, journal: Any | None = None) -> None:
        self.entries.append(entry)
        if journal is None:
            return
        value = json.dumps(entry.to_json(), sort_keys=True, ensure_ascii=False)
        name = f"{ACCOUNT}:{entry.kind}"
        if journal.committed(entry.key, name, None) != value:
            # A bookkeeping row: losing the last one to a power cut costs only its line in
            # `prose runs show`, so it is not synced like a step.
            journal.record_commit(entry.key, name, None, value)

    def breakdown(self) -> Breakdown:
        return Breakdown.of(self.entries)


def stored_entries(database: Path, run_id: str, prefix: str = "") -> list[Entry] | None:
    """The entries a run wrote to its journal (a SQLite file); None when it has none."""
    found = stored_values(database, run_id, f"{ACCOUNT}:%", prefix)
    return None if found is None else _entries(found)


def entries_from(cursor: Any, table: str, run_id: str, placeholder: str = "?") -> list[Entry]:
    """The entries of ``run_id`` in a journal's commits ``table``, through a DB-API cursor
    (``placeholder``: ``?`` for sqlite3, ``%s`` for psycopg)."""
    return _entries(values(cursor, table, run_id, f"{ACCOUNT}:%", placeholder))


def _entries(found: list[dict[str, Any]]) -> list[Entry]:
    entries = []
    for data in found:
        try:
            entries.append(Entry.from_json(data))
        except (ValueError, TypeError):
            continue  # a row this version cannot read: left out of the breakdown
    return entries


# ---------------------------------------------------------------------- estimates


def _chars(request: Request) -> int:
    if isinstance(request, SessionRequest):
        return sum(map(len, request.sent().texts()))
    if isinstance(request, ConditionRequest):
        return len(request.condition) + sum(len(t) for _, t in request.context)
    if isinstance(request, ChoiceRequest):
        return len(request.criteria) + sum(len(o) for o in request.options)
    return len(request.text)


def _innermost(backend: object) -> object:
    """The model backend under the journal and recording wrappers (kept as ``inner``)."""
    while getattr(backend, "inner", None) is not None:
        backend = backend.inner  # type: ignore[attr-defined]
    return backend


def estimate(request: Request, backend: object) -> tuple[int, float]:
    """(tokens, US dollars) a call is expected to take before it is made."""
    from openprose.vm.backends.pricing import cost, resolve_model

    inner = _innermost(backend)
    name = str(getattr(inner, "name", ""))
    sent = (_chars(request) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
    long_answer = isinstance(request, SessionRequest | SummaryRequest)
    reserve = (OUTPUT_RESERVE if long_answer else ANSWER_RESERVE).get(name, 0)
    usage = Usage(input_tokens=sent, output_tokens=reserve)
    model_map = getattr(inner, "model_map", None)
    if not isinstance(model_map, dict):
        return total_tokens(usage), 0.0  # offline, replay: no price
    provider = "anthropic" if name == "claude-code" else name
    alias = request.model if isinstance(request, SessionRequest) else None
    return total_tokens(usage), cost(resolve_model(provider, alias, model_map), usage)


def _literal(prop: Any) -> str | None:
    """A property's value when it is written out (a name or a string), else None."""
    from openprose.syntax import tree as t

    value = prop.value if prop is not None else None
    if isinstance(value, t.String):
        return str(value.text)
    if isinstance(value, t.Name):
        return str(value.value)
    return None


def _sessions(node: Any) -> Iterable[Any]:
    from openprose.syntax import tree as t

    if isinstance(node, t.Session | t.Resume):
        yield node
    for child in getattr(node, "children", ()):
        yield from _sessions(child)


def fan_out_cost(node: Any, branches: int, agents: dict[str, Any], backend: object) -> float:
    """What a fan-out is expected to cost before it starts: each session written in its body
    once per branch (a ``parallel`` block's statements are its branches), estimated from
    its source text and its model (its own ``model:``, else its agent's).  Loops and nested
    fan-outs inside count once, and context is not known yet: it is a lower bound."""
    from openprose.syntax import tree as t

    body = node.body_statements()
    total = 0.0
    for session in (s for statement in body for s in _sessions(statement)):
        agent_leaf = session.agent
        agent = agents.get(agent_leaf.value) if agent_leaf is not None else None
        model = _literal(session.get_property("model"))
        if model is None and agent is not None:
            model = _literal(agent.get_property("model"))
        system = _literal(agent.get_property("prompt")) if agent is not None else None
        text = str(session.get_code(include_prefix=False))
        request = SessionRequest(prompt=text, step="", model=model, system=system)
        total += estimate(request, backend)[1]
    return total if isinstance(node, t.Parallel) else total * branches
