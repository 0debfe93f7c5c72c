"""The ``in-context`` state backend (spec/state/in-context.md).

No run files at all: the narration is the record.  The store keeps the document's compact
markers (``1→ research ✓``, ``∥ [a b]``, ``∥ [a✓ b✓] done``, ``loop:2/3 exit(...)``,
``#43 process`` ... ``#43 done``, ``try→``, ``catch→``, ``finally→``, ``---end``) and the
bindings by value, in memory.  The journal of steps is an in-memory SQLite database: a run
is still answered exactly once per step while it lives, but nothing survives the process,
so a run cannot be resumed and the catalogue lists nothing.

``thresholds`` says when a program is beyond what the document deems fit for this mode.
"""

from __future__ import annotations

import sqlite3
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openprose.syntax import tree as t
from openprose.vm import events as ev
from openprose.vm.rundir import new_run_id, state_line
from openprose.vm.state.base import RunInfo, StateError, program_hash
from openprose.vm.state.journal import Journal, sqlite_transaction
from openprose.vm.state.sqlite import parallel_step
from openprose.vm.state.store import JournaledStore, Replay
from openprose.vm.values import Value, render

NOTHING_TO_RESUME = (
    "an in-context run leaves nothing to resume: its state was the narration of the "
    "process that ran it (run the program again, or run it with --state filesystem)"
)

INDENT = "  "


@dataclass
class Binding:
    kind: str
    source: str
    value: Value


class Narration:
    """The run's record: the document's markers, one line each, indented by nesting."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        # The branches of each parallel block in flight, by (step, level, depth).
        self._branches: dict[tuple[str, int, int], dict[str, str]] = {}

    def record(self, event: ev.Event, depth: int) -> None:
        line = self.line(event, depth)
        if line is not None:
            self.lines.append(INDENT * (event.level + depth) + line)

    def line(self, event: ev.Event, depth: int) -> str | None:
        n = event.step
        if isinstance(event, ev.Binding):
            return state_line(event)  # the same marker as state.md's
        slot = (event.step, event.level, depth)
        if isinstance(event, ev.ParallelEnter):
            self._branches[slot] = {b: "→" for b in event.branches}
            return f"∥ [{' '.join(event.branches)}]"
        if isinstance(event, ev.ParallelBranch):
            marks = {"done": "✓", "failed": "✗", "cancelled": "⊘"}
            step = parallel_step(event.step, lambda s: (s, event.level, depth) in self._branches)
            branches = self._branches.setdefault((step, event.level, depth), {})
            branches[event.branch] = marks.get(event.status, "?")
            return None
        if isinstance(event, ev.ParallelJoin):
            branches = self._branches.pop(slot, {})
            shown = " ".join(f"{b}{mark}" for b, mark in branches.items())
            return f"∥ [{shown}] done"
        if isinstance(event, ev.LoopIteration):
            return f"loop:{event.iteration}/{_max(event.maximum)}"
        if isinstance(event, ev.LoopExit):
            return f"loop:{event.iteration}/{_max(event.maximum)} exit({event.reason})"
        if isinstance(event, ev.FramePush):
            return f"#{event.execution_id} {event.block}"
        if isinstance(event, ev.FramePop):
            return f"#{event.execution_id} {'✗' if event.failed else 'done'}"
        if isinstance(event, ev.Try):
            return {"enter": "try→", "catch": "catch→", "finally": "finally→"}[event.phase]
        if isinstance(event, ev.Import):
            if event.status == "returned":
                return f"{event.alias} ✓"
            return f"use {event.source} → {event.alias}"
        if isinstance(event, ev.Failure):
            return f"{n}→ ✗ {event.message}"
        if isinstance(event, ev.Retry):
            return f"{n}→ retry:{event.attempt}/{event.maximum}"
        if isinstance(event, ev.ProgramEnd):
            return "---end" if event.status == "success" else f"---error {event.error}"
        return None


def _max(maximum: int | None) -> str:
    return str(maximum) if maximum is not None else "∞"


class InContextStore(JournaledStore):
    state = "in-context"

    def __init__(
        self,
        run_id: str,
        program_text: str,
        journal: Journal,
        *,
        narration: Narration | None = None,
        depth: int = 0,
        replay: Replay | None = None,
    ) -> None:
        super().__init__(journal, replay if replay is not None else Replay(False), called=depth > 0)
        self.run_id = run_id
        self.path: Path | None = None
        self.bindings: dict[tuple[str, int | None], Binding] = {}
        self.narration = narration if narration is not None else Narration()
        self._text = program_text
        self._inputs: dict[str, Value] = {}
        self._depth = depth  # a called program's markers nest under its call
        self._children: dict[str, InContextStore] = {}

    @property
    def lines(self) -> list[str]:
        """The narration: the whole record of the run (and of the programs it called)."""
        return self.narration.lines

    def _write_binding(
        self, name: str, kind: str, source: str, value: Value, execution_id: int | None
    ) -> None:
        self.bindings[(name, execution_id)] = Binding(kind, source, value)

    def _narrate(self, event: ev.Event) -> None:
        self.narration.record(event, self._depth)

    def binding(self, name: str, execution_id: int | None = None) -> Value:
        """A committed binding's value (KeyError when there is none)."""
        return self.bindings[(name, execution_id)].value

    def binding_text(self, name: str, execution_id: int | None = None) -> str | None:
        found = self.bindings.get((name, execution_id))
        return None if found is None else render(found.value)

    def inputs(self) -> dict[str, Value]:
        return dict(self._inputs)

    def save_inputs(self, inputs: dict[str, Value]) -> None:
        self._inputs = dict(inputs)
        if self._depth == 0:
            self._journal.update_run(inputs=inputs)

    def program_text(self) -> str:
        return self._text

    def child(self, key: str, name: str, text: str, program_name: str) -> InContextStore:
        known = self._children.get(key)
        if known is None:
            known = InContextStore(
                name,
                text,
                self._journal,
                narration=self.narration,
                depth=self._depth + 1,
                replay=self._replay,
            )
            self._children[key] = known
        return known

    def info(self) -> RunInfo:
        """The run's summary (steps, tokens, cost) while the process that runs it lives."""
        info = self._journal.run_info()
        if info is None:  # pragma: no cover - create() writes the summary first
            raise StateError(f"run {self.run_id} has no summary")
        return info

    def close(self) -> None:
        # Nothing to release: the journal is in memory and goes with the store, which
        # keeps answering info() for whoever still holds it (the runner's summary).
        pass


def memory_journal(run_id: str) -> Journal:
    connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    journal = Journal(connection, run_id, transaction=sqlite_transaction(connection))
    journal.create_tables()
    return journal


class InContextCatalog:
    """Runs that live in the narration of the process running them: nothing to list,
    open, or remove afterwards."""

    state = "in-context"

    def __init__(self) -> None:
        # The runs of this process still held by someone: what info() can answer for
        # (weakly: a language server running many programs must not keep them all).
        self._live: weakref.WeakValueDictionary[str, InContextStore] = weakref.WeakValueDictionary()

    def create(
        self,
        program_text: str,
        program_name: str,
        inputs: dict[str, Value],
        *,
        backend: str = "",
        run_id: str | None = None,
    ) -> InContextStore:
        rid = run_id or new_run_id()
        if rid in self._live:
            raise FileExistsError(f"run {rid} exists")
        journal = memory_journal(rid)
        journal.start_run(
            self.state, program_name, program_text, program_hash(program_text), inputs, backend
        )
        store = InContextStore(rid, program_text, journal)
        store._inputs = dict(inputs)
        self._live[rid] = store
        return store

    def open(self, run_id: str) -> InContextStore:
        raise StateError(f"cannot resume run {run_id}: {NOTHING_TO_RESUME}")

    def runs(self) -> list[RunInfo]:
        return []

    def branch_journal(self, run_id: str, under: str) -> Journal:
        raise StateError("an in-context run keeps its journal in its own process")

    def branch_store(self, run_id: str, journal: Journal) -> InContextStore:
        raise StateError("an in-context run keeps its state in its own process")

    def info(self, run_id: str) -> RunInfo:
        store = self._live.get(run_id)
        if store is None:
            raise StateError(f"no run {run_id!r}: an in-context run keeps no record after it")
        return store.info()

    def program_text(self, run_id: str) -> str:
        store = self._live.get(run_id)
        if store is None:
            raise StateError(f"no run {run_id!r}: an in-context run keeps no record after it")
        return store.program_text()

    def remove(self, run_id: str) -> None:
        raise StateError(f"no run {run_id!r}: an in-context run keeps no record to remove")


# --------------------------------------------------------------------- thresholds

# spec/state/in-context.md, "When to Use In-Context State": in-context fits below these.
MAX_STATEMENTS = 29  # fewer than 30
MAX_PARALLEL_BRANCHES = 4  # fewer than 5 at once
MAX_IMPORTS = 2  # 0 to 2
MAX_DEPTH = 2  # at most 2 levels of nesting

# Declarations: read when the program starts, not executed as statements.
_DECLARATIONS = (t.AgentDefinition, t.BlockDefinition, t.UseStatement, t.ImportStatement)


@dataclass
class Shape:
    """What the thresholds measure of a program (statically: a loop counts once)."""

    statements: int = 0
    branches: int = 0  # the widest parallel block
    imports: int = 0
    depth: int = 0  # the deepest statement's number of enclosing blocks


def shape(module: Any) -> Shape:
    found = Shape()
    _walk(module.statements(), 0, found)
    return found


def _walk(statements: list[Any], depth: int, found: Shape) -> None:
    for node in statements:
        if not isinstance(node, t.ProseNode | t.ErrorNode):
            continue
        if isinstance(node, t.UseStatement | t.ImportStatement):
            found.imports += 1
        if isinstance(node, t.OptionClause):
            # An option is a choice's arm, not a statement of its own: its body sits at
            # the depth of the choice's other arms.
            _walk(node.body_statements(), depth, found)
            continue
        if not isinstance(node, _DECLARATIONS):
            found.statements += 1
            found.depth = max(found.depth, depth)
        if isinstance(node, t.Parallel):
            found.branches = max(found.branches, len(_nodes(node.body_statements())))
        elif (
            isinstance(node, t.ForEach)
            and node.is_parallel
            and isinstance(node.collection, t.ArrayLiteral)
        ):
            # `parallel for` over a literal list: one branch an item (other
            # collections are known only when the run reaches them).
            found.branches = max(found.branches, len(node.collection.elements()))
        for suite in _suites(node):
            _walk(suite.statements(), depth + 1, found)


def _nodes(statements: list[Any]) -> list[Any]:
    return [s for s in statements if isinstance(s, t.ProseNode | t.ErrorNode)]


def _suites(node: Any) -> list[t.Suite]:
    """The blocks a statement opens: its body, and the bodies of its clauses (``else``,
    ``catch``, ``finally``, a pipeline's stages), not the blocks inside those."""
    found: list[t.Suite] = []
    stack = list(getattr(node, "children", []))
    while stack:
        child = stack.pop(0)
        if isinstance(child, t.Suite):
            found.append(child)
        elif isinstance(child, t.ProseNode | t.ErrorNode):
            stack.extend(child.children)
    return found


def thresholds(module: Any) -> list[str]:
    """Warnings, one a line, when a program (``openprose.syntax.parse`` output) exceeds
    what spec/state/in-context.md deems fit for in-context state."""
    found = shape(module)
    advice = "; a file-based state (--state filesystem) suits it better"
    warnings = []
    if found.statements > MAX_STATEMENTS:
        warnings.append(
            f"in-context state: the program has {found.statements} statements "
            f"(in-context suits fewer than {MAX_STATEMENTS + 1}){advice}"
        )
    if found.branches > MAX_PARALLEL_BRANCHES:
        warnings.append(
            f"in-context state: a parallel block has {found.branches} branches "
            f"(in-context suits fewer than {MAX_PARALLEL_BRANCHES + 1}){advice}"
        )
    if found.imports > MAX_IMPORTS:
        warnings.append(
            f"in-context state: the program imports {found.imports} programs "
            f"(in-context suits at most {MAX_IMPORTS}){advice}"
        )
    if found.depth > MAX_DEPTH:
        warnings.append(
            f"in-context state: statements are nested {found.depth} levels deep "
            f"(in-context suits at most {MAX_DEPTH}){advice}"
        )
    return warnings
