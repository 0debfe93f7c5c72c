"""The last run's figures in the editor: a session's context budget and cost on hover, an
agent's totals on hover, and an inlay hint of tokens and cost after each session.

The figures come from the run's journal (the language server reads it and hands them over
as the plain ``RunCosts`` below).  They are keyed by the 1-based line of the statement that
made the calls and carry that statement's first line as it was when the program ran: a
statement whose first line is no longer that text has moved or changed, and shows nothing
rather than another statement's figures.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from openprose.ide.analysis import Analysis
from openprose.ide.types import Pos, Range
from openprose.syntax import tree as t


@dataclass(frozen=True, slots=True)
class Totals:
    """Calls, tokens and cost summed over a statement's or an agent's calls."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0  # read from and written to the provider's cache
    cost: float = 0.0  # US dollars

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cached_tokens


@dataclass(frozen=True, slots=True)
class Budget:
    """One session attempt's context: the tokens of each layer under the model's window."""

    model: str
    window: int
    layers: tuple[tuple[str, int], ...]  # (system, memory, history, context, prompt, reserve)
    counter: str = "estimate"
    actions: tuple[str, ...] = ()  # what the VM did to fit the window

    @property
    def total(self) -> int:
        return sum(tokens for _, tokens in self.layers)


@dataclass(frozen=True, slots=True)
class StatementCost:
    line: int  # 1-based, as the run journaled it
    statement: str  # the statement's first line when the program ran
    totals: Totals = field(default_factory=Totals)
    budget: Budget | None = None  # the last attempt's
    attempts: int = 0  # how many budgets (attempts, iterations) the run recorded


@dataclass(frozen=True, slots=True)
class RunCosts:
    run_id: str
    started_at: float  # seconds since the epoch
    statements: Mapping[int, StatementCost]
    agents: Mapping[str, Totals]


@dataclass(frozen=True, slots=True)
class RunHint:
    position: Pos  # the end of the statement's first line
    label: str
    tooltip: str


# --------------------------------------------------------------------------- statements


def headline(statement: Any) -> str:
    """A statement's first line as the VM journals it (vm/interpreter.py ``headline``)."""
    code = str(statement.get_code(include_prefix=False)).strip()
    return code.splitlines()[0] if code else ""


def statement_of(node: Any) -> Any:
    """The statement ``node`` is part of: itself or its ancestor in a body or at the top."""
    while node.parent is not None and not isinstance(node.parent, t.Suite | t.Module):
        node = node.parent
    return node


def session_statements(analysis: Analysis) -> list[Any]:
    """The statements that start sessions (``session``, ``resume:``), each once, in order."""
    seen: set[int] = set()
    found = []
    for node in [*analysis.context.nodes(t.Session), *analysis.context.nodes(t.Resume)]:
        statement = statement_of(node)
        if id(statement) not in seen:
            seen.add(id(statement))
            found.append(statement)
    found.sort(key=lambda s: s.start_pos)
    return found


def cost_of(statement: Any, costs: RunCosts) -> StatementCost | None:
    """The run's figures for ``statement``, if its first line is still the one that ran."""
    found = costs.statements.get(int(statement.start_pos[0]))
    if found is None or found.statement != headline(statement):
        return None
    return found


# --------------------------------------------------------------------------- hover


def hover_section(
    analysis: Analysis, position: Pos, costs: RunCosts | None, now: float
) -> str | None:
    """Markdown to append to the hover at ``position``: a session's budget and cost when the
    cursor is on its ``session`` or ``resume`` keyword, an agent's totals on its name."""
    if costs is None:
        return None
    leaf = analysis.leaf_at(position)
    if leaf is None or not (leaf.start_pos <= (position[0] + 1, position[1]) <= leaf.end_pos):
        return None
    parent = leaf.parent
    if isinstance(parent, t.Session | t.Resume) and leaf is parent.children[0]:
        found = cost_of(statement_of(parent), costs)
        return session_section(found, costs, now) if found is not None else None
    name = _agent_name(analysis, position)
    if name is not None and name in costs.agents:
        return agent_section(name, costs.agents[name], costs, now)
    return None


def _agent_name(analysis: Analysis, position: Pos) -> str | None:
    from openprose.ide.names import find

    found = find(analysis, position)
    occurrence = found.occurrence if found is not None else None
    if occurrence is None or occurrence.key[0] != "agent":
        return None
    return str(occurrence.name)


def session_section(found: StatementCost, costs: RunCosts, now: float) -> str:
    lines = [f"**Last run** {_run(costs, now)}", "", f"This statement: {_totals(found.totals)}."]
    budget = found.budget
    if budget is not None:
        which = f"the last of {found.attempts} attempts" if found.attempts > 1 else "the request"
        facts = [f"`{budget.model}`"] if budget.model else []
        facts.append(
            "tokens estimated" if budget.counter == "estimate" else f"counted by {budget.counter}"
        )
        lines += [
            "",
            f"Context of {which} ({', '.join(facts)}):",
            "",
            "| layer | tokens |",
            "| --- | ---: |",
            *(f"| {name} | {tokens:,} |" for name, tokens in budget.layers),
            f"| **total** | **{budget.total:,}** |",
        ]
        if budget.window > 0:
            share = budget.total / budget.window
            reserve = dict(budget.layers).get("reserve", 0)
            kept = f", the {reserve:,} kept for the answer included" if reserve else ""
            lines += [
                "",
                f"Window: {budget.total:,} of {budget.window:,} tokens ({share:.0%}){kept}.",
            ]
        if budget.actions:
            lines += ["", "To fit the window:", *(f"- {action}" for action in budget.actions)]
    return "\n".join(lines)


def agent_section(name: str, totals: Totals, costs: RunCosts, now: float) -> str:
    sessions = f"{totals.calls:,} session{'' if totals.calls == 1 else 's'}"
    return (
        f"**Last run** {_run(costs, now)}\n\n"
        f"`{name}`: {sessions}, {_tokens(totals)}{_cost(totals.cost, ', ')}."
    )


def _run(costs: RunCosts, now: float) -> str:
    return f"`{costs.run_id}` ({age(now - costs.started_at)})"


def _totals(totals: Totals) -> str:
    calls = f"{totals.calls:,} call{'' if totals.calls == 1 else 's'}"
    return f"{calls}, {_tokens(totals)}{_cost(totals.cost, ', ')}"


def _tokens(totals: Totals) -> str:
    parts = f"{totals.input_tokens:,} in, {totals.output_tokens:,} out"
    if totals.cached_tokens:
        parts += f", {totals.cached_tokens:,} cached"
    return f"{totals.tokens:,} tokens ({parts})"


def _cost(cost: float, separator: str) -> str:
    if cost <= 0:
        return ""
    return f"{separator}<$0.0001" if cost < 0.00005 else f"{separator}${cost:.4f}"


def age(seconds: float) -> str:
    """How long ago, in the largest whole unit (a clock set back reads "just now")."""
    if seconds < 60:
        return "just now"
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'' if count == 1 else 's'} ago"
    return "just now"  # unreachable: seconds >= 60 has a unit


# --------------------------------------------------------------------------- inlay hints


def run_hints(analysis: Analysis, range: Range, costs: RunCosts | None) -> list[RunHint]:
    """After the first line of each session statement in ``range`` that the run made calls
    for: its tokens, and its cost when it had one."""
    if costs is None or not costs.statements:
        return []
    hints = []
    for statement in _in_range(session_statements(analysis), range):
        found = cost_of(statement, costs)
        if found is None or found.totals.calls == 0:
            continue
        line = int(statement.start_pos[0]) - 1
        text = analysis.lines[line] if line < len(analysis.lines) else ""
        hints.append(RunHint((line, len(text)), hint_label(found.totals), _tooltip(found, costs)))
    return hints


def _in_range(statements: Iterable[Any], range: Range) -> Iterable[Any]:
    for statement in statements:
        line = int(statement.start_pos[0]) - 1
        if range.start[0] <= line <= range.end[0]:
            yield statement


def hint_label(totals: Totals) -> str:
    return f"{totals.tokens:,} tok" + _cost(totals.cost, " · ")


def _tooltip(found: StatementCost, costs: RunCosts) -> str:
    return f"Last run {costs.run_id}: {_totals(found.totals)}"
