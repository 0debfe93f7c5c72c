"""The interpreter: walks a checked program strictly, one method per construct.

Only sessions, discretion conditions, choices and summaries go to the backend; everything
else (order, scopes, loops, joins, retries, errors) is decided here.  Decisions the spec
leaves open are listed in docs/run.md.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol

from openprose.syntax import tree as t
from openprose.syntax.vocabulary import JOIN_STRATEGIES, ON_FAIL_POLICIES, SESSION_PROPERTIES
from openprose.vm import events as ev
from openprose.vm.accounting import (
    Breakdown,
    Entry,
    Ledger,
    estimate,
    fan_out_cost,
    statement_of,
    total_tokens,
)
from openprose.vm.backends.base import (
    Backend,
    BackendError,
    BackendFatal,
    ChoiceRequest,
    ConditionRequest,
    ContextOverflow,
    SessionRequest,
    SummaryRequest,
    Turn,
    Usage,
)
from openprose.vm.context import ladder
from openprose.vm.context import record as budgets
from openprose.vm.context.assembly import Plan
from openprose.vm.context.fitting import fit, measure
from openprose.vm.context.overflow import recover
from openprose.vm.context.tokens import backend_name, counter_of
from openprose.vm.context.windows import RESERVE, window_for
from openprose.vm.memory import AgentMemories, render_memory, split_memory
from openprose.vm.operators import binary, compare, truth
from openprose.vm.ordering import enter_concurrent_task
from openprose.vm.permissions import permissions_text
from openprose.vm.remote import RemoteError, RemoteLoader, is_remote
from openprose.vm.rundir import write_atomic
from openprose.vm.scope import Frame, Scope
from openprose.vm.state.base import RunStore, StateError
from openprose.vm.values import (
    ProseError,
    Record,
    Value,
    attribute,
    items_of,
    preview,
    render,
    to_count,
)

MAX_DEPTH = 100
DEFAULT_CONCURRENCY = 8
UNBOUNDED_LOOP_LIMIT = 100


class Clock(Protocol):
    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class RealClock:
    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@dataclass
class Options:
    concurrency: int = DEFAULT_CONCURRENCY  # parallel for / pmap in flight at once
    max_depth: int = MAX_DEPTH  # nested block invocations
    unbounded_loop_limit: int = UNBOUNDED_LOOP_LIMIT  # `loop:` with no max
    # characters under which a context value is passed verbatim (vm/context/ladder.py)
    verbatim_below: int = ladder.VERBATIM_BELOW
    retry_base_delay: float = 1.0  # seconds
    retry_max_delay: float = 60.0
    jitter: bool = True
    seed: int | None = None
    max_sessions: int | None = None  # session attempts in the whole run, imports included
    max_cost: float | None = None  # US dollars
    max_tokens: int | None = None  # every token of every call (vm/accounting.py)
    fan_out_threshold: int = 100  # branches or items above which `confirm` is asked
    # US dollars: a fan-out estimated above it is confirmed, or refused with no `confirm`
    fan_out_cost: float | None = None

    @property
    def limited(self) -> bool:
        """Whether the run has a spending limit to count."""
        return any(v is not None for v in (self.max_sessions, self.max_cost, self.max_tokens))


@dataclass
class Budget:
    """What a run has spent, shared with the programs it calls: what this process counted
    (``started``, ``cost``, ``tokens``, the ledger), which is also what the run's limits
    are checked against here.  On the dbos engine a run with limits has a budget counted
    across every process of the run instead (engines/dbos_budget.py: ``shared``)."""

    started: int = 0
    cost: float = 0.0
    tokens: int = 0
    ledger: Ledger = field(default_factory=Ledger)
    # Counted where every process running a part of the run sees it: its fan-outs and
    # calls may travel though it has limits (branches._why_run_local).
    shared: ClassVar[bool] = False

    async def spent(self) -> tuple[float, int]:
        """The cost and the tokens the run's ``max_cost`` and ``max_tokens`` are checked
        against."""
        return self.cost, self.tokens

    async def start_session(self, key: str, limit: int | None) -> bool:
        """Count the session attempt ``key`` as started, unless ``limit`` are already (a
        session stopped by a cap after it was counted stops the run: nobody counts on)."""
        if limit is not None and self.started >= limit:
            return False
        self.started += 1
        return True

    async def charge(self, key: str, cost: float, tokens: int) -> None:
        """Count what the call ``key`` spent."""
        self.cost += cost
        self.tokens += tokens

    def absorb(self, started: int, cost: float, tokens: int, entries: Iterable[Entry]) -> None:
        """Count what an item or a call run in another process spent (its entries are in
        the journal already)."""
        self.started += started
        self.cost += cost
        self.tokens += tokens
        self.ledger.entries.extend(entries)


class RunStopped(BackendFatal):
    """A limit of the run was reached: no ``retry`` or ``catch`` continues past it."""


@dataclass
class RunResult:
    status: str  # success | error | cancelled
    outputs: dict[str, Value] = field(default_factory=dict)
    error: str = ""
    failed_statement: str = ""
    run_id: str = ""
    run_dir: Path | None = None
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    sessions: int = 0
    dry_run: bool = True
    fatal: bool = False  # stopped by a BackendFatal: not the program's failure
    breakdown: Breakdown = field(default_factory=Breakdown)  # by agent, statement, session


@dataclass
class Pending:
    """A binding made inside a parallel branch, committed when the branch joins."""

    ctx: Ctx
    name: str
    kind: str
    value: Value
    source: str
    execution_id: int | None
    previous: str | None
    outer: bool  # an assignment to a name held outside the branch


class Stage:
    """The bindings of one parallel branch (seed 002): the branch reads the snapshot taken
    at the fork plus its own writes; the rest of the program sees its writes at the join,
    and a branch that fails or is cancelled commits nothing."""

    def __init__(self, base: Scope) -> None:
        self.base = base  # the scope the branch forked from
        self.pending: list[Pending] = []
        self.shadowed: set[str] = set()

    def outside(self, holder: Scope) -> bool:
        scope: Scope | None = self.base
        while scope is not None:
            if scope is holder:
                return True
            scope = scope.parent
        return False

    def top(self, scope: Scope) -> Scope:
        """The branch's own top scope, the child of ``base`` above ``scope``."""
        while scope.parent is not None and scope.parent is not self.base:
            scope = scope.parent
        return scope


@dataclass(frozen=True)
class Ctx:
    """Where execution stands: the scope, the state.md step, the backend step key, the
    nesting level of the narration, the error a ``catch`` is handling and the parallel
    branch whose bindings are staged."""

    scope: Scope
    step: str
    key: str
    level: int = 0
    error: ProseError | None = None
    stage: Stage | None = None

    @property
    def frame(self) -> Frame | None:
        return self.scope.frame

    def nested(self, key: str, scope: Scope | None = None, **changes: Any) -> Ctx:
        return replace(self, scope=scope or self.scope, key=f"{self.key}{key}", **changes)


class Summaries(Protocol):
    """An engine's way of asking each of a run's summaries once when the run's parts have
    interpreters in many processes (engines/dbos_summaries.py)."""

    async def once(self, asked: SummaryRequest, ask: Callable[[], Awaitable[str]]) -> str:
        """The summary ``asked``: ``ask`` asks, narrates and pays for it when this part of
        the run is the first to want it; else the first one's answer."""
        ...


class Branches(Protocol):
    """An engine's way of running the items of a ``parallel for`` or ``pmap``, and the
    branches of a ``parallel:`` block, elsewhere (vm/branches.py)."""

    def takes(self, interpreter: Interpreter, node: Any, ctx: Ctx) -> bool:
        """Whether this fan-out's items (or this block's branches) go elsewhere."""
        ...

    async def fan_out(
        self, interpreter: Interpreter, node: Any, ctx: Ctx, items: list[Value], stages: list[Stage]
    ) -> list[Value]:
        """Every item's value, in order; each item's bindings staged in its stage."""
        ...

    async def branch(
        self,
        interpreter: Interpreter,
        node: t.Parallel,
        ctx: Ctx,
        index: int,
        own: Scope,
        stage: Stage,
    ) -> Value:
        """Branch ``index`` of the block ``node``'s value, as ``Interpreter.branch`` gives
        it: its own names in ``own``, its bindings staged in ``stage``."""
        ...

    def takes_call(self, interpreter: Interpreter, source: str) -> bool:
        """Whether this call of the program ``source`` runs elsewhere."""
        ...

    async def call(
        self,
        interpreter: Interpreter,
        ctx: Ctx,
        source: str,
        name: str,
        inputs: dict[str, Value],
        where: str,
    ) -> Called:
        """The program ``source`` called as ``Interpreter.call_here`` calls it (``where``:
        the statement that calls it)."""
        ...


@dataclass
class Called:
    """A called program's result, and what its calls spent."""

    result: RunResult
    usage: Usage
    cost: float
    sessions: int


class BlockReturn(Exception):
    """``output expression`` inside a block: the block ends with that value."""

    def __init__(self, value: Value) -> None:
        super().__init__("block result")
        self.value = value


class MissingInput(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(f"missing input {name!r}")
        self.name = name


EventSink = Callable[[ev.Event], None]
ProgramLoader = Callable[[Path], tuple[str, Any]]
Confirm = Callable[[str], Awaitable[bool]]  # a question; True to go ahead
# (name, prompt) -> the user's answer: asks for an input when the run reaches it.
Ask = Callable[[str, str], Awaitable[str]]


def source_of(node: Any) -> str:
    return str(node.get_code(include_prefix=False)).strip()


def headline(node: Any) -> str:
    """The first line of a statement, for the narration."""
    return source_of(node).splitlines()[0] if source_of(node) else type(node).__name__


def mid_program_inputs(module: Any) -> set[str]:
    """The inputs declared after the program's first executable statement: the language
    binds them when the run reaches them (asking the user then, if nobody supplied them),
    where the inputs above it are bound before the run starts."""
    started = False
    found: set[str] = set()
    for statement in module.statements():
        if isinstance(statement, t.InputDeclaration):
            if started and statement.name is not None:
                found.add(statement.name.value)
        elif not isinstance(statement, t.UseStatement | t.AgentDefinition | t.BlockDefinition):
            started = True
    return found


def declared_inputs(module: Any) -> list[tuple[str, str]]:
    """(name, description) of each ``input`` of a program, in order."""
    found = []
    for statement in module.statements():
        if isinstance(statement, t.InputDeclaration) and statement.name is not None:
            description = statement.description
            text = description.text if isinstance(description, t.String) else ""
            found.append((statement.name.value, text))
    return found


class Interpreter:
    def __init__(
        self,
        module: Any,
        backend: Backend,
        *,
        program_path: Path | None = None,
        program_name: str = "program.prose",
        store: RunStore | None = None,
        sinks: Iterable[EventSink] = (),
        options: Options | None = None,
        clock: Clock | None = None,
        load_program: ProgramLoader | None = None,
        depth: int = 0,
        key_prefix: str = "",
        budget: Budget | None = None,
        confirm: Confirm | None = None,
        ask: Ask | None = None,
        project_root: Path | None = None,
        remote: RemoteLoader | None = None,
        fetched: bool = False,
    ) -> None:
        self.module = module
        self.backend = backend
        self.program_path = program_path
        self.program_name = program_name
        self.store = store
        self.external_sinks = list(sinks)
        self.sinks = list(sinks)
        if store is not None:
            self.sinks.append(store.record)
        self.options = options or Options()
        self.clock: Clock = clock or RealClock()
        self.rng = random.Random(self.options.seed)
        self.load_program = load_program
        self.import_depth = depth
        self.key_prefix = key_prefix  # an imported program's steps are keyed under its call
        self.budget = budget or Budget()
        self.confirm = confirm
        self.ask = ask
        self.agents: dict[str, t.AgentDefinition] = {}
        self.blocks: dict[str, t.BlockDefinition] = {}
        self.imports: dict[str, str] = {}
        self.outputs: dict[str, Value] = {}
        self.usage = Usage()
        self.cost = 0.0
        self.sessions = 0
        self._counters: dict[str, int] = {}  # numbers handed out by a run with no journal
        # Summaries asked in this run, by their journal key: a value passed to many
        # sessions at once is summarised (and paid for) once.
        self._summaries: dict[tuple[str, str], asyncio.Task[str]] = {}
        # Where summaries are shared with the run's other interpreters (None: this one is
        # the run's only one, or its called programs' caller).
        self.summaries: Summaries | None = None
        self.last_budget: budgets.SessionBudget | None = None
        self.remote = remote  # None: remote programs are refused
        self.fetched = fetched  # this program came from the network
        self.memories = _memories(
            store, project_root if project_root is not None else _project_root(program_path)
        )
        # Where the items of a fan-out run (an engine's, set after construction): None,
        # here as asyncio tasks.
        self.branches: Branches | None = None
        # Why each fan-out of the run's own program must stay in this process (None: it
        # may travel), judged once per fan-out (vm/branches.py, why_local), not each
        # time a loop reaches it: judging walks its body and the blocks it calls.
        self.travel_verdicts: dict[Any, str | None] = {}

    # ------------------------------------------------------------------ running

    async def run(self, inputs: Mapping[str, Value] | None = None) -> RunResult:
        inputs = dict(inputs or {})
        root = Scope()
        ctx = Ctx(root, "0", "")
        run_id = self.store.run_id if self.store else ""
        self.emit(
            ctx,
            ev.ProgramStart,
            program=self.program_name,
            run_id=run_id,
            dry_run=self.backend.dry_run,
            state=self.store.state if self.store else "none",
        )
        status, error, statement = "success", "", ""
        fatal_error = False
        try:
            self.collect()
            self.bind_inputs(ctx, inputs)
            for number, node in enumerate(self.module.statements(), start=1):
                key = f"{self.key_prefix}{number}"
                await self.statement(node, replace(ctx, step=str(number), key=key))
        except ProseError as failure:
            status, error, statement = "error", failure.message, failure.statement
        except BackendFatal as fatal:
            status, error, fatal_error = "error", str(fatal), True
        except asyncio.CancelledError:
            self.emit(ctx, ev.ProgramEnd, status="cancelled", error="interrupted")
            raise
        except BaseException:
            if self.store is not None:
                self.store.close()  # an internal error: still release the logs
            raise
        self.emit(ctx, ev.ProgramEnd, status=status, error=error, statement=statement)
        return RunResult(
            status=status,
            outputs=dict(self.outputs),
            error=error,
            failed_statement=statement,
            run_id=run_id,
            run_dir=self.store.path if self.store else None,
            usage=self.usage,
            cost=self.cost,
            sessions=self.sessions,
            dry_run=self.backend.dry_run,
            fatal=fatal_error,
            breakdown=self.budget.ledger.breakdown(),
        )

    def collect(self) -> None:
        """Agents, blocks and imports are known before the first statement runs."""
        for node in self.module.statements():
            if isinstance(node, t.AgentDefinition) and node.name:
                self.agents[node.name] = node
            elif isinstance(node, t.BlockDefinition) and node.name:
                self.blocks[node.name] = node
            elif isinstance(node, t.UseStatement) and node.path is not None:
                text = node.path.text
                alias = node.alias.value if node.alias else text.rstrip("/").split("/")[-1]
                self.imports[alias.removesuffix(".prose")] = text

    def bind_inputs(self, ctx: Ctx, inputs: Mapping[str, Value]) -> None:
        received: dict[str, str] = {}
        later = mid_program_inputs(self.module) if self.ask is not None else set()
        for name, _description in declared_inputs(self.module):
            if name not in inputs:
                if name in later:
                    continue  # asked for when the run reaches it (input_declaration)
                raise MissingInput(name)
            ctx.scope.values[name] = inputs[name]
            received[name] = preview(inputs[name])
        if received:
            self.emit(ctx, ev.InputReceived, values=received)
            for node in self.module.statements():
                if isinstance(node, t.InputDeclaration) and node.name is not None:
                    name = node.name.value
                    if name in inputs:
                        self.bind(ctx, name, "input", inputs[name], node, declare=False)

    def emit(self, ctx: Ctx, cls: type[ev.Event], **fields: Any) -> None:
        event = cls(step=ctx.step, level=ctx.level, ts=self.clock.now(), **fields)
        for sink in self.sinks:
            sink(event)

    def bind(
        self, ctx: Ctx, name: str, kind: str, value: Value, node: Any, declare: bool = True
    ) -> None:
        """Bind ``name``: visible to the statements that follow at once; committed (its
        value made durable, then journaled, then narrated) now, or at the join of the
        parallel branch it was made in."""
        scope = ctx.scope
        previous = None
        outer = False
        if kind == "assignment":
            holder = scope.holder(name)
            if holder is not None:
                if name in holder.consts:
                    raise ProseError(f"cannot reassign const {name!r}", headline(node))
                previous = preview(holder.values[name])
                scope = holder
                if ctx.stage is not None and ctx.stage.outside(holder):
                    # The branch sees its own write; its siblings keep the snapshot.
                    outer = True
                    scope = ctx.stage.top(ctx.scope)
                    ctx.stage.shadowed.add(name)
        if declare or kind == "assignment":
            scope.values[name] = value
            if kind == "const":
                scope.consts.add(name)
        pending = Pending(
            ctx, name, kind, value, source_of(node), _execution_id(ctx), previous, outer
        )
        if ctx.stage is not None:
            ctx.stage.pending.append(pending)
        else:
            self.commit(pending)

    def commit(self, pending: Pending) -> None:
        """The binding's value, then its journal entry (both in the store), then its
        narration marker."""
        ctx = pending.ctx
        if not pending.name:  # an anonymous binding of a branch, named as it joins
            pending.name = self.anonymous_name(ctx.key)
        if self.store is not None:
            file_kind = {"assignment": "let", "anonymous": "let"}.get(pending.kind, pending.kind)
            self.store.commit_binding(
                ctx.key,
                pending.name,
                file_kind,
                pending.source,
                pending.value,
                pending.execution_id,
            )
        self.emit(
            ctx,
            ev.Binding,
            name=pending.name,
            binding_kind=pending.kind,
            value=preview(pending.value),
            execution_id=pending.execution_id,
            previous=pending.previous,
        )

    def join_stage(self, stage: Stage, ctx: Ctx) -> None:
        """A branch that completed: its writes become the joining statement's, committed
        in the order they were made (or staged again, in an enclosing branch)."""
        for pending in stage.pending:
            if pending.outer:
                holder = ctx.scope.holder(pending.name)
                if holder is not None and ctx.stage is not None and ctx.stage.outside(holder):
                    ctx.stage.top(ctx.scope).values[pending.name] = pending.value
                    ctx.stage.shadowed.add(pending.name)
                else:
                    (holder or ctx.scope).values[pending.name] = pending.value
                    pending.outer = False
            if ctx.stage is not None:
                ctx.stage.pending.append(pending)
            else:
                self.commit(pending)

    def recorded_join(self, key: str) -> tuple[list[int], list[int]] | None:
        """The branches a race at step ``key`` joined (in the order they completed) and
        those that failed, when a run before this one decided it."""
        if self.store is None:
            return None
        known = self.store.journal.committed(key, "@join", None)
        if known is None:
            return None
        won, failed = json.loads(known)
        return [int(i) for i in won], [int(i) for i in failed]

    def record_join(self, key: str, won: list[int], failed: list[int]) -> None:
        if self.store is not None:
            outcome = json.dumps([won, failed])
            self.store.journal.record_commit(key, "@join", None, outcome, durable=True)

    def numbered(self, kind: str, key: str) -> int:
        """A number for the thing made at step ``key`` (a block's execution id, an anonymous
        binding's, an imported program's directory): the number a run gave it before, so
        that replayed steps keep their names whatever order parallel branches take, else
        the next of the run's.  The journal counts, so that items of a fan-out running in
        other processes number from the same counter as the run."""
        if self.store is None:
            self._counters[kind] = self._counters.get(kind, 0) + 1
            return self._counters[kind]
        # An execution id or a program's directory must survive a power cut with the
        # bindings that use it; an anonymous name is cheap to hand out again.
        name = f"@{kind}:{self.key_prefix}"
        return int(self.store.journal.number(key, name, durable=kind != "anon"))

    # ------------------------------------------------------------------ statements

    async def statements(self, nodes: list[Any], ctx: Ctx) -> Value:
        value: Value = None
        for index, node in enumerate(nodes, start=1):
            value = await self.statement(node, ctx.nested(f".{index}"))
        return value

    async def statement(self, node: Any, ctx: Ctx) -> Value:
        method = _STATEMENTS.get(type(node))
        if method is None:
            raise ProseError(f"cannot run {type(node).__name__}", headline(node))
        # Yield to the event loop at every statement: a backend that answers without
        # suspending (offline) would otherwise never let Ctrl-C's cancellation in, nor
        # interleave parallel branches.
        await asyncio.sleep(0)
        if not isinstance(node, _SILENT):
            self.emit(ctx, ev.Position, statement=headline(node), line=node.start_pos[0])
        try:
            result: Value = await method(self, node, ctx)
        except ProseError as failure:
            if not failure.statement:
                failure.statement = headline(node)  # the innermost statement that failed
            raise
        except BackendError as failure:
            # A condition, choice or summary the backend could not answer: a failure of this
            # statement, as a failed session is, so that `try` and `on-fail` handle it.
            raise ProseError(str(failure), headline(node), "session") from None
        return result

    async def nothing(self, node: Any, ctx: Ctx) -> Value:
        return None  # declarations: collected before the run

    async def input_declaration(self, node: t.InputDeclaration, ctx: Ctx) -> Value:
        """An input nobody supplied, reached mid-program: the run pauses and asks.  (Every
        other input was bound before the first statement.)"""
        if node.name is None or self.ask is None or node.name.value in ctx.scope.values:
            return None
        name = node.name.value
        description = node.description
        prompt = description.text if isinstance(description, t.String) else source_of(node)
        value = await self.ask(name, prompt)
        ctx.scope.values[name] = value
        self.emit(ctx, ev.InputReceived, values={name: preview(value)}, source="user")
        self.bind(ctx, name, "input", value, node, declare=False)
        if self.store is not None:
            # A resumed run starts with every input it was given, asked ones included.
            self.store.save_inputs({**self.store.inputs(), name: value})
        return None

    async def unsupported(self, node: Any, ctx: Ctx) -> Value:
        raise ProseError(f"not part of the language: {headline(node)}", headline(node))

    async def session_statement(self, node: Any, ctx: Ctx) -> Value:
        value = await self.session(node, ctx)
        if ctx.stage is not None:
            # Named when its branch joins, in branch order: branches finish in whatever
            # order (and, distributed, in whatever process), their names do not.
            ctx.stage.pending.append(
                Pending(
                    ctx, "", "anonymous", value, source_of(node), _execution_id(ctx), None, False
                )
            )
            return value
        self.bind(ctx, self.anonymous_name(ctx.key), "anonymous", value, node)
        return value

    def anonymous_name(self, key: str) -> str:
        number = self.numbered("anon", key)
        return f"anon_{number:03d}"

    async def let(self, node: t.LetBinding, ctx: Ctx) -> Value:
        value = await self.expression(node.value, ctx)
        kind = node.keyword
        target = node.target
        if isinstance(target, t.ObjectLiteral):
            for name_leaf in node.target_names():
                self.bind(ctx, name_leaf.value, kind, attribute(value, name_leaf.value), node)
        elif isinstance(target, t.Name):
            self.bind(ctx, target.value, kind, value, node)
        return value

    async def assignment(self, node: t.Assignment, ctx: Ctx) -> Value:
        value = await self.expression(node.value, ctx)
        if node.target is not None:
            self.bind(ctx, node.target.value, "assignment", value, node)
        return value

    async def output(self, node: t.OutputBinding, ctx: Ctx) -> Value:
        value = await self.expression(node.value, ctx)
        frame = ctx.frame
        name = node.name.value if node.name is not None else None
        if frame is not None:
            if name is None:
                raise BlockReturn(value)  # `output expr` ends the block with its result
            else:
                frame.outputs[name] = value
                self.bind(ctx, name, "output", value, node)
            return value
        if name is not None:
            self.outputs[name] = value
            self.bind(ctx, name, "output", value, node)
            self.emit(ctx, ev.Output, name=name, value=preview(value))
        return value

    async def expression_statement(self, node: Any, ctx: Ctx) -> Value:
        return await self.expression(node, ctx)

    # ------------------------------------------------------------------ expressions

    async def expression(self, node: Any, ctx: Ctx) -> Value:
        if node is None:
            return None
        if isinstance(node, t.String):
            return self.interpolate(node, ctx)
        if isinstance(node, t.Number):
            number = node.as_int()
            return number if number is not None else node.value
        if isinstance(node, t.Name):
            return self.lookup(node.value, ctx, node)
        if isinstance(node, t.Attribute):
            value = await self.expression(node.base, ctx)
            for name in node.attribute_names():
                try:
                    value = attribute(value, name.value)
                except ProseError as missing:
                    raise ProseError(missing.message, headline(node)) from None
            return value
        if isinstance(node, t.ArrayLiteral):
            return [await self.expression(e, ctx) for e in node.elements()]
        if isinstance(node, t.ObjectLiteral):
            fields = {}
            for entry in node.entries():
                if isinstance(entry, t.Name):
                    fields[entry.value] = self.lookup(entry.value, ctx, entry)
                elif isinstance(entry, t.ObjectEntry):
                    fields[source_of(entry.key).strip('"')] = await self.expression(
                        entry.value, ctx
                    )
            return Record(fields)
        if isinstance(node, t.Discretion):
            return await self.condition(node, ctx, "if")
        if isinstance(node, t.BinaryExpression):
            children = node.children
            value = await self.expression(children[0], ctx)
            for i in range(1, len(children) - 1, 2):
                right = await self.expression(children[i + 1], ctx)
                try:
                    value = binary(value, children[i].value, right)
                except ProseError as error:
                    raise ProseError(error.message, headline(node)) from None
            return value
        if isinstance(node, t.Comparison | t.NotExpression | t.BooleanExpression):
            return await self.logic(node, ctx)
        method = _EXPRESSIONS.get(type(node)) or _STATEMENTS.get(type(node))
        if method is None:
            raise ProseError(f"cannot evaluate {source_of(node)!r}", headline(node))
        result: Value = await method(self, node, ctx)
        return result

    async def logic(self, node: Any, ctx: Ctx) -> bool:
        """Comparisons, ``not``, ``and``/``or``; discretion operands go to the backend."""
        if isinstance(node, t.Comparison):
            # The operator may be words (`is not`, `not in`): everything between the sides.
            operator = " ".join(str(c.value) for c in node.children[1:-1])
            left = await self.expression(node.children[0], ctx)
            right = await self.expression(node.children[-1], ctx)
            try:
                return compare(left, operator, right)
            except ProseError as error:
                raise ProseError(error.message, headline(node)) from None
        if isinstance(node, t.NotExpression):
            return not await self.truth_of(node.children[-1], ctx)
        children = node.children
        value = await self.truth_of(children[0], ctx)
        for i in range(1, len(children) - 1, 2):
            word = children[i].value
            if (word == "and" and not value) or (word == "or" and value):
                continue  # short-circuit: the right side is never evaluated
            value = await self.truth_of(children[i + 1], ctx)
        return value

    async def truth_of(self, node: Any, ctx: Ctx) -> bool:
        if isinstance(node, t.Discretion):
            return await self.condition(node, ctx, "if")
        return truth(await self.expression(node, ctx))

    def lookup(self, name: str, ctx: Ctx, node: Any) -> Value:
        try:
            return ctx.scope.get(name)
        except KeyError:
            if name in self.agents:
                return name
            raise ProseError(f"undefined variable {name!r}", headline(node)) from None

    def interpolate(self, leaf: t.String, ctx: Ctx) -> str:
        if "{" not in leaf.value:
            return leaf.text
        out = []
        for part in leaf.parts():
            if part.kind == "interpolation":
                path = part.path
                holder = ctx.scope.holder(path[0])
                if holder is None:
                    out.append(part.raw)  # left as written (the checker warns)
                    continue
                value = holder.values[path[0]]
                try:
                    for name in path[1:]:
                        value = attribute(value, name)
                except ProseError:
                    out.append(part.raw)
                    continue
                out.append(render(value))
            elif part.kind == "escape":
                out.append(_ESCAPES.get(part.raw[1:], part.raw))
            else:
                out.append(part.raw)
        return "".join(out)

    # ------------------------------------------------------------------ sessions

    def properties_of(self, node: Any) -> dict[str, t.Property]:
        return {p.name: p for p in node.properties()}

    async def session(self, node: t.Session | t.Resume, ctx: Ctx) -> str:
        agent_leaf = node.agent
        agent_name = agent_leaf.value if agent_leaf is not None else None
        merged: dict[str, t.Property] = {}
        agent = self.agents.get(agent_name) if agent_name else None
        if agent is not None:
            merged.update(self.properties_of(agent))
        own = self.properties_of(node)
        system = None
        if agent is not None and "prompt" in merged:
            system = await self.property_text(merged["prompt"], ctx)
        merged.update(own)
        inline = node.prompt if isinstance(node, t.Session) else None
        if inline is not None:
            prompt = self.interpolate(inline, ctx)
        elif "prompt" in merged:
            prompt = await self.property_text(merged["prompt"], ctx)
        else:
            prompt = ""
        model = await self.property_text(merged["model"], ctx) if "model" in merged else None
        properties = tuple(
            (name, _property_source(name, prop))
            for name, prop in merged.items()
            if name not in SESSION_PROPERTIES
        )
        items = await self.context_items(own.get("context"), ctx, properties, own.get("context"))
        retries = to_count(await self.expression(own["retry"].value, ctx)) if "retry" in own else 0
        backoff = (await self.property_text(own["backoff"], ctx)) if "backoff" in own else "none"
        extra = properties
        persist = persistence(merged) if agent_name is not None else None
        memory: str | None = None
        turns: tuple[Turn, ...] = ()
        if isinstance(node, t.Resume):
            extra += (("resume", "true"),)
            if agent_name is not None and persist is not None:
                memory, turns = self.recall(agent_name, persist, ctx)
            if persist is not None and memory is None:
                raise ProseError(
                    f"no memory for agent {agent_name!r} yet: use `session:` first",
                    headline(node),
                )
            if memory is not None and turns:
                # The last answer, memory.md's current understanding, is the last turn:
                # the memory layer is what the turns do not hold (its compacted history).
                history = split_memory(render_memory(agent_name or "", memory))[1]
                memory = history or None
        request = SessionRequest(
            prompt=prompt,
            step=ctx.key,
            agent=agent_name,
            model=model,
            system=system,
            properties=extra,
        )
        plan = Plan(
            request,
            memory,
            items,
            turns,
            window=window_for(self.model_id(model)),
            reserve=RESERVE,
        )
        steps = SessionSteps(self, ctx, node, agent_name, persist)
        answer = await self.with_retry(plan, retries or 0, backoff, ctx, node, steps)
        if persist is not None and agent_name is not None:
            self.memories.record(agent_name, persist, prompt, answer, self.clock.now(), key=ctx.key)
        return answer

    def recall(self, agent: str, persist: str, ctx: Ctx) -> tuple[str | None, tuple[Turn, ...]]:
        """An agent's memory and its earlier turns (segments not yet compacted), as the run
        first read them at this step: another run may have changed a project agent's
        memory since, and a resumed run must ask its journaled sessions the very same
        question."""
        if self.store is None:
            return self.memories.read(agent, persist), self.turns_of(agent, persist)
        from openprose.vm.state.base import StepRecord

        journal = self.store.journal
        key = f"{ctx.key}#{agent}"
        known = journal.step("memory", key)
        if known is not None and known.result is not None:
            remembered = known.result.get("text")
            if isinstance(remembered, str):
                self.memories.current[agent] = remembered
            turns = tuple(
                Turn(str(pair[0]), str(pair[1]))
                for pair in known.result.get("turns") or ()
                if isinstance(pair, list) and len(pair) == 2
            )
            return (remembered if isinstance(remembered, str) else None), turns
        memory = self.memories.read(agent, persist)
        turns = self.turns_of(agent, persist) if memory is not None else ()
        result = {"text": memory, "turns": [[turn.prompt, turn.answer] for turn in turns]}
        journal.record_step(StepRecord("memory", key, "", result))
        return memory, turns

    def turns_of(self, agent: str, persist: str) -> tuple[Turn, ...]:
        try:
            segments = self.memories.segments(agent, persist)
        except (OSError, StateError):
            return ()  # the memory is read; its turns are an addition
        return tuple(Turn(segment.prompt, segment.summary) for segment in segments)

    def model_id(self, alias: str | None) -> str:
        """The model id a session's model resolves to, for its window: the provider's own
        for the chat backends, Anthropic's for the others (claude-code, offline, replay)."""
        from openprose.vm.backends.pricing import resolve_model

        inner: Any = self.backend
        while getattr(inner, "inner", None) is not None:
            inner = inner.inner
        model_map = getattr(inner, "model_map", None)
        provider = "openai" if getattr(inner, "name", "") == "openai" else "anthropic"
        return resolve_model(provider, alias, model_map if isinstance(model_map, dict) else {})

    def can_read(self, location: str, properties: tuple[tuple[str, str], ...]) -> bool:
        """Whether the backend's sessions with these properties may read ``location``."""
        inner: Any = self.backend
        while inner is not None:
            check = getattr(inner, "can_read", None)
            if callable(check):
                return bool(check(location, properties))
            inner = getattr(inner, "inner", None)
        return False

    async def property_text(self, prop: t.Property, ctx: Ctx) -> str:
        value = prop.value
        if isinstance(value, t.Name):
            holder = ctx.scope.holder(value.value)
            return render(holder.values[value.value]) if holder else value.value
        return render(await self.expression(value, ctx))

    async def with_retry(
        self, plan: Plan, retries: int, backoff: str, ctx: Ctx, node: Any, steps: SessionSteps
    ) -> str:
        """Send the session (fitted under its window), recovering from a context overflow
        step by step (which spends no ``retry:``) and retrying other failures."""
        counter, name = counter_of(self.backend), backend_name(self.backend)
        plan, layers, counted, stage = await fit(plan, steps, counter, name)
        attempt = failures = 1
        while True:
            asked = replace(plan.build(), attempt=attempt)
            await self.check_budget(node, asked, session=True)
            self.record_budget(asked, plan, layers, counted, node)
            try:
                result = await self.backend.run_session(asked)
            except ContextOverflow as overflow:
                recovered = await recover(plan, steps, stage)
                if recovered is None:
                    self.emit(ctx, ev.Failure, message=str(overflow))
                    raise ProseError(
                        f"{overflow} (every recovery step of docs/context.md was taken)",
                        headline(node),
                        "session",
                    ) from None
                plan, stage = recovered
                layers, counted = await measure(plan, counter, name)
                attempt += 1
                continue
            except BackendError as failure:
                if failures > retries:
                    self.emit(ctx, ev.Failure, message=str(failure))
                    raise ProseError(str(failure), headline(node), "session") from None
                delay = self.retry_delay(backoff, failures)
                self.emit(
                    ctx,
                    ev.Retry,
                    attempt=failures,
                    maximum=retries,
                    delay=delay,
                    error=str(failure),
                )
                await self.clock.sleep(delay)
                attempt += 1
                failures += 1
                continue
            self.sessions += 1
            await self.account(result, asked, node, check=False)
            self.emit(
                ctx,
                ev.Success,
                what="Session",
                value=preview(result.text),
                session_ref=result.session_ref,
                input_tokens=result.usage.input_tokens,
                output_tokens=result.usage.output_tokens,
                cost=result.cost,
            )
            await self.check_caps()  # the session is narrated and journaled: a resume replays it
            return result.text

    def retry_delay(self, backoff: str, attempt: int) -> float:
        """Seconds before retry ``attempt`` (1-based): none 0; linear the base delay each
        time (the spec's "fixed delay"); exponential base * 2^(attempt-1), capped; with
        jitter, a uniform draw from [delay/2, delay]."""
        base = self.options.retry_base_delay
        kind = backoff.strip().strip('"').lower()
        if kind == "linear":
            delay = base
        elif kind == "exponential":
            delay = base * 2 ** (attempt - 1)
        else:
            return 0.0
        delay = min(delay, self.options.retry_max_delay)
        if self.options.jitter:
            delay = delay / 2 + self.rng.random() * delay / 2
        return delay

    async def account(self, result: Any, request: Any, node: Any, *, check: bool = True) -> None:
        """Count a call's usage and cost (the run's, its budget's and its ledger's), then
        (``check``) stop the run when it passed ``max_tokens`` or ``max_cost``: the call is
        journaled, so a resumed run with a higher cap takes it from the journal."""
        from openprose.vm.backends.replay import exchange_key

        usage, cost = result.usage, result.cost
        self.usage = self.usage + usage
        self.cost += cost
        kind, key = exchange_key(request)
        await self.budget.charge(f"{kind}:{key}", cost, total_tokens(usage))
        agent = getattr(request, "agent", None) or ""
        where = statement_of(node) if node is not None else None
        entry = Entry(
            kind,
            key,
            agent,
            headline(where) if where is not None else request.condition,
            where.start_pos[0] if where is not None else 0,
            self.program_name,
            usage,
            cost,
        )
        self.budget.ledger.add(entry, self.store.journal if self.store is not None else None)
        if check:
            await self.check_caps()

    async def confirm_fan_out(self, size: int, node: Any) -> None:
        """Ask before a fan-out larger than ``fan_out_threshold`` (when a ``confirm``
        callback was given: the CLI gives one on a terminal), and before one estimated to
        cost more than ``fan_out_cost`` (refused when nobody can be asked)."""
        threshold = self.options.fan_out_cost
        if threshold is not None:
            cost = fan_out_cost(node, size, self.agents, self.backend)
            if cost > threshold:
                question = (
                    f"`{headline(node)}` starts {size} branches, estimated at ${cost:.2f} "
                    f"(more than ${threshold:.2f})"
                )
                if self.confirm is None or not await self.confirm(question):
                    raise RunStopped(
                        f"fan-out of {size} branches estimated at ${cost:.2f} declined "
                        f"(more than ${threshold:.2f})"
                    )
                return
        if self.confirm is None or size <= self.options.fan_out_threshold:
            return
        question = f"`{headline(node)}` starts {size} branches"
        if not await self.confirm(question):
            raise RunStopped(f"fan-out of {size} branches declined")

    async def check_budget(self, node: Any, request: Any, *, session: bool = False) -> None:
        """``max_sessions`` stops the run before a session would pass it; ``max_tokens`` and
        ``max_cost`` before a call whose estimate (vm/accounting.py) would pass them."""
        from openprose.vm.backends.replay import exchange_key

        n = self.options.max_sessions
        if session and not await self.budget.start_session(":".join(exchange_key(request)), n):
            raise RunStopped(f"session limit reached ({n} session{'' if n == 1 else 's'})")
        tokens, cost = estimate(request, self.backend)
        await self.check_caps(tokens, cost)

    async def check_caps(self, tokens: int | None = None, cost: float | None = None) -> None:
        """Stop the run when what it spent passed ``max_tokens`` or ``max_cost`` (after a
        call), or when the next call's estimate, ``tokens`` and ``cost``, would pass them.
        A cost cap that is reached, not passed, stops the next call too (as it always has)."""
        options = self.options
        cap, limit = options.max_tokens, options.max_cost
        if cap is None and limit is None:
            return
        spent, used = await self.budget.spent()
        if cap is not None and used + (tokens or 0) > cap:
            if tokens is None or used > cap:
                raise RunStopped(f"token limit reached ({used} of {cap} tokens)")
            raise RunStopped(
                f"token limit reached ({used} used, the next call needs about "
                f"{tokens}, of {cap} tokens)"
            )
        if limit is None:
            return
        if spent > limit or (cost is not None and spent >= limit):
            raise RunStopped(f"cost limit reached (${spent:.2f} of ${limit:.2f})")
        if cost is not None and spent + cost > limit:
            raise RunStopped(
                f"cost limit reached (${spent:.2f} spent, the next call costs about "
                f"${cost:.2f}, of ${limit:.2f})"
            )

    async def context_items(
        self,
        prop: t.Property | None,
        ctx: Ctx,
        properties: tuple[tuple[str, str], ...],
        node: Any,
    ) -> tuple[ladder.Item, ...]:
        """``context: x``, ``[a, b]``, ``{ a, b }`` and ``[]``, each binding as it is sent
        (vm/context/ladder.py): by reference when the session can read where it is
        stored, else verbatim, summarised or reduced to its essentials by its size."""
        if prop is None or prop.value is None:
            return ()
        value = prop.value
        nodes: Iterable[t.ObjectEntry | t.Expression]
        if isinstance(value, t.ArrayLiteral):
            nodes = value.elements()
        elif isinstance(value, t.ObjectLiteral):
            nodes = value.entries()
        else:
            nodes = [value]
        items = []
        for item in nodes:
            location = None
            if isinstance(item, t.ObjectEntry):
                label = source_of(item.key).strip('"')
                text = render(await self.expression(item.value, ctx))
            else:
                label = item.value if isinstance(item, t.Name) else source_of(item)
                bound = await self.expression(item, ctx)
                if bound is None:
                    continue  # nothing to pass: a race's branch that did not finish, say
                text = render(bound)
                if isinstance(item, t.Name):
                    location = self.binding_location(item.value, text, ctx, properties)
            form = ladder.tier(text, self.options.verbatim_below)
            if location is not None and form != ladder.VERBATIM:
                sent = ladder.reference(label, location, len(text))
                items.append(ladder.Item(label, sent, ladder.REFERENCE, len(text), location))
                continue
            if form != ladder.VERBATIM:
                text_sent = await self.summary(label, text, form, ladder.SUMMARY_LIMIT, ctx, node)
            else:
                text_sent = text
            items.append(ladder.Item(label, text_sent, form, len(text), location))
        return tuple(items)

    def binding_location(
        self, name: str, text: str, ctx: Ctx, properties: tuple[tuple[str, str], ...]
    ) -> str | None:
        """Where the binding ``name`` is stored with the value ``text``, when the run keeps
        bindings in files (the filesystem state), it is committed there, and the session
        may read it."""
        directory: Any = getattr(self.store, "directory", None)
        holder = ctx.scope.holder(name)
        if not hasattr(directory, "binding_path") or holder is None:
            return None  # sqlite, postgres: a binding is a row, which no session can read
        execution_id = holder.frame.execution_id if holder.frame is not None else None
        path = directory.binding_path(name, execution_id)
        if not self.can_read(str(path), properties):
            return None  # asked before reading the file: most sessions cannot read files
        try:
            stored = path.read_text(encoding="utf-8")
        except OSError:
            return None
        # A staged binding (inside a parallel branch) is not on disk yet: an older value is.
        return str(path) if stored.rstrip("\n").endswith(text.rstrip("\n")) else None

    async def summary(
        self, name: str, text: str, mode: str, limit: int, ctx: Ctx, node: Any
    ) -> str:
        """A summary of ``text`` (a journaled backend step keyed by its content): asked
        once per run, however many sessions want it at the same time."""
        from openprose.vm.backends.replay import exchange_key

        asked = SummaryRequest(name, text, limit, ctx.key, mode)
        key = exchange_key(asked)
        task = self._summaries.get(key)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            shared = self.summaries
            if shared is None:
                task = asyncio.ensure_future(self._summarise(asked, node, ctx))
            else:
                task = asyncio.ensure_future(
                    shared.once(asked, lambda: self._summarise(asked, node, ctx))
                )
            self._summaries[key] = task
        return await asyncio.shield(task)

    async def _summarise(self, asked: SummaryRequest, node: Any, ctx: Ctx) -> str:
        await self.check_budget(node, asked)
        summary = await self.backend.summarise(asked)
        await self.account(summary, asked, node)
        if asked.mode in (ladder.SUMMARY, ladder.ESSENTIALS):
            # Narrated when asked, not at each session that uses it again.
            what = "its key points" if asked.mode == ladder.SUMMARY else "its essentials"
            self.emit(
                ctx,
                ev.ContextStep,
                action="summarised",
                detail=f"{asked.name}: {len(asked.text):,} characters passed as {what} "
                f"({len(summary.text):,} characters)",
            )
        return summary.text

    def record_budget(
        self, asked: SessionRequest, plan: Plan, layers: Any, counted: str, node: Any
    ) -> None:
        """The session attempt's context budget, in the run's journal (vm/context/record.py)."""
        from openprose.vm.backends.replay import exchange_key

        where = statement_of(node)
        budget = budgets.SessionBudget(
            key=exchange_key(asked)[1],
            agent=asked.agent or "",
            statement=headline(where),
            line=where.start_pos[0],
            program=self.program_name,
            model=self.model_id(asked.model),
            window=plan.window,
            layers=layers,
            counter=counted,
            actions=plan.actions,
        )
        self.last_budget = budget
        budgets.record(budget, self.store.journal if self.store is not None else None)

    # ------------------------------------------------------------------ conditions

    async def condition(self, node: Any, ctx: Ctx, purpose: str, evaluation: int = 1) -> bool:
        if not isinstance(node, t.Discretion):
            return await self.truth_of(node, ctx)
        text = node.condition if isinstance(node, t.Discretion) else source_of(node)
        request = ConditionRequest(text, ctx.key, purpose, evaluation)
        await self.check_budget(node, request)
        result = await self.backend.judge(request)
        await self.account(result, request, node)
        return result.value

    async def if_(self, node: t.IfStatement, ctx: Ctx) -> Value:
        clauses: list[tuple[str, Any, list[Any]]] = [("if", node.condition, node.body_statements())]
        clauses += [("elif", c.condition, c.body_statements()) for c in node.elif_clauses()]
        for index, (purpose, condition, body) in enumerate(clauses):
            holds = await self.condition(condition, ctx.nested(f"?{index}"), purpose)
            self.emit(
                ctx, ev.Flow, condition=source_of(condition), result="true" if holds else "false"
            )
            if holds:
                return await self.statements(body, ctx.nested(f"?{index}", level=ctx.level + 1))
        otherwise = node.else_clause
        if otherwise is not None:
            return await self.statements(
                otherwise.body_statements(), ctx.nested("?else", level=ctx.level + 1)
            )
        return None

    async def choice(self, node: t.ChoiceStatement, ctx: Ctx) -> Value:
        options = node.options()
        labels = tuple(o.label.text if o.label else "" for o in options)
        criteria = node.criteria
        text = criteria.condition if isinstance(criteria, t.Discretion) else source_of(criteria)
        request = ChoiceRequest(text, labels, ctx.key)
        await self.check_budget(node, request)
        result = await self.backend.choose(request)
        await self.account(result, request, node)
        if not options:
            return None
        index = max(0, min(result.index, len(options) - 1))
        self.emit(ctx, ev.Flow, condition=f"**{text}**", result=f'chose "{labels[index]}"')
        return await self.statements(
            options[index].body_statements(), ctx.nested(f"?{index}", level=ctx.level + 1)
        )

    # ------------------------------------------------------------------ composition

    async def do(self, node: Any, ctx: Ctx) -> Value:
        if isinstance(node, t.DoBlock):
            return await self.statements(node.body_statements(), ctx)
        return await self.block_call(node, ctx)

    async def do_statement(self, node: Any, ctx: Ctx) -> Value:
        return await self.do(node, ctx)

    async def block_call(self, node: t.DoInvocation, ctx: Ctx) -> Value:
        name = node.name.value if node.name is not None else ""
        block = self.blocks.get(name)
        if block is None:
            raise ProseError(f"undefined block {name!r}", headline(node))
        arguments = node.arguments
        values = [
            await self.expression(a, ctx) for a in (arguments.positional() if arguments else [])
        ]
        params = [p.value for p in block.parameters()]
        caller = ctx.frame
        depth = caller.depth + 1 if caller else 1
        if depth > self.options.max_depth:
            raise ProseError(
                f"block {name!r} nested deeper than {self.options.max_depth} invocations",
                headline(node),
                "depth",
            )
        number = self.numbered("execution", f"{ctx.key}/{name}")
        frame = Frame(name, number, depth, caller.execution_id if caller else None)
        scope = ctx.scope.child(frame)
        for param, value in zip(params, values, strict=False):
            scope.values[param] = value
        for param in params[len(values) :]:
            scope.values[param] = None
        shown = {p: preview(v) for p, v in zip(params, values, strict=False)}
        self.emit(
            ctx,
            ev.FramePush,
            block=name,
            execution_id=frame.execution_id,
            depth=depth,
            parent=frame.parent_id,
            arguments=shown,
        )
        # Keyed by the call site, not the execution id: ids follow the order in which
        # parallel branches happen to call, which a replay need not reproduce.
        inner = ctx.nested(f"/{name}", scope, level=ctx.level + 1)
        try:
            last = await self.statements(block.body_statements(), inner)
        except BlockReturn as returned:
            frame.result, frame.has_result = returned.value, True
            last = returned.value
        except BaseException:
            self.emit(ctx, ev.FramePop, block=name, execution_id=frame.execution_id, failed=True)
            raise
        self.emit(ctx, ev.FramePop, block=name, execution_id=frame.execution_id)
        # Names are program-wide for the analyzer (E019), and programs read a block's
        # bindings after calling it: they stay visible to the caller unless it has its own.
        for bound, value in scope.values.items():
            if bound not in params and not ctx.scope.has(bound):
                ctx.scope.values[bound] = value
        if frame.has_result:
            return frame.result
        if frame.outputs:
            return Record(frame.outputs, kind="outputs")
        return last

    async def arrow(self, node: t.ArrowSequence, ctx: Ctx) -> Value:
        value: Value = None
        for index, step in enumerate(node.steps(), start=1):
            value = await self.expression(step, ctx.nested(f">{index}"))
        return value

    async def program_call(self, node: t.ProgramCall, ctx: Ctx) -> Value:
        name = node.name.value if node.name is not None else ""
        source = self.imports.get(name)
        if source is None:
            raise ProseError(f"{name!r} is not an imported program", headline(node))
        remote = is_remote(source)
        if remote and self.remote is None:
            raise ProseError(
                f"cannot run {source!r}: remote programs need --allow-remote "
                "(or allow-remote = true in the run configuration)",
                headline(node),
            )
        if not remote and (self.load_program is None or self.fetched):
            # A fetched program naming a local path would read the user's files.
            why = "a remote program imports only remote ones" if self.fetched else "no loader"
            raise ProseError(f"cannot run {source!r}: {why}", headline(node))
        arguments = node.arguments
        inputs = {}
        for kw in arguments.keyword_arguments() if arguments else []:
            inputs[kw.name.value] = await self.expression(kw.value, ctx)
        if self.import_depth >= self.options.max_depth:
            raise ProseError("programs call each other too deeply", headline(node), "depth")
        self.emit(ctx, ev.Import, source=source, alias=name)
        branches = self.branches
        if branches is not None and branches.takes_call(self, source):
            called = await branches.call(self, ctx, source, name, inputs, headline(node))
        else:
            called = await self.call_here(source, name, inputs, ctx, headline(node))
        result = called.result
        self.count_spent(called.usage, called.cost, called.sessions)
        if result.fatal:
            raise BackendFatal(result.error)
        if result.status != "success":
            raise ProseError(f"{source}: {result.error}", headline(node), "program")
        self.emit(ctx, ev.Import, source=source, alias=name, status="returned")
        return Record(result.outputs, kind="program")

    async def call_here(
        self, source: str, name: str, inputs: dict[str, Value], ctx: Ctx, where: str = ""
    ) -> Called:
        """The program ``source`` (imported as ``name``) run in this process with
        ``inputs``, its state made under the run's; its calls accounted in the shared
        budget already.  A call fails as ``RunResult`` says; one that cannot start (a
        remote program that cannot be fetched, an input not given) raises, naming the
        statement ``where``."""
        remote = is_remote(source)
        store = None
        path: Path | None
        if remote:
            assert self.remote is not None
            try:
                fetched, module = await asyncio.to_thread(self.remote.program, source)
            except RemoteError as error:
                raise ProseError(str(error), where, "program") from None
            text, path, program_name = fetched.text, None, f"{fetched.location.slug}.prose"
            if self.store is not None:
                # Its state is named after it, numbered from the second call on by the
                # run's counter, which items calling it in other processes share.
                dirname = fetched.location.dirname
                number = self.numbered(f"import:{dirname}", ctx.key)
                named = dirname if number == 1 else f"{dirname}-{number}"
                store = self.store.child(ctx.key, named, text, program_name)
                if store.path is not None:
                    write_atomic(store.path / "source.json", fetched.source_json())
        else:
            assert self.load_program is not None
            path = self.resolve_import(source)
            text, module = self.load_program(path)
            program_name = path.name
            if self.store is not None:
                number = self.numbered("import", ctx.key)
                store = self.store.child(ctx.key, f"local--{path.stem}-{number}", text, path.name)
        callee = Interpreter(
            module,
            self.backend,
            program_path=path,
            program_name=program_name,
            store=store,
            options=self.options,
            sinks=[_shifted(sink, ctx.level + 1) for sink in self.external_sinks],
            clock=self.clock,
            load_program=self.load_program,
            depth=self.import_depth + 1,
            key_prefix=f"{ctx.key}/{name}:",
            budget=self.budget,
            confirm=self.confirm,
            project_root=self.memories.project_root if remote else None,
            remote=self.remote,
            fetched=remote or self.fetched,
        )
        # Its fan-outs are spread as the run's are, when it runs in the run's process.
        callee.branches = self.branches
        callee.summaries = self.summaries
        try:
            result = await callee.run(inputs)
        except MissingInput as missing:
            raise ProseError(f"{source}: missing input {missing.name!r}", where) from None
        except asyncio.CancelledError:
            # Cancelled with its caller (a sibling's fail-fast, a race's loss): the sessions
            # it completed were paid for, and the breakdown (the shared budget's ledger)
            # lists them already, so the caller's totals count them too.
            self.count_spent(callee.usage, callee.cost, callee.sessions)
            raise
        return Called(result, callee.usage, callee.cost, callee.sessions)

    def count_spent(self, usage: Usage, cost: float, sessions: int) -> None:
        """What a called program or an item run elsewhere spent, in this run's totals (its
        budget and ledger count it where it was spent)."""
        self.usage = self.usage + usage
        self.cost += cost
        self.sessions += sessions

    def resolve_import(self, source: str) -> Path:
        base = Path(source).expanduser()
        if not base.is_absolute():
            importer = self.program_path or Path("program.prose")
            base = importer.resolve().parent / base
        if not base.name.endswith(".prose") and not base.is_file():
            base = base.with_name(base.name + ".prose")
        return base

    # ------------------------------------------------------------------ parallel

    async def parallel(self, node: t.Parallel, ctx: Ctx) -> Value:
        strategy, count, on_fail = await self.parallel_modifiers(node, ctx)
        branches = node.body_statements()
        names = [_branch_name(b, i) for i, b in enumerate(branches)]
        await self.confirm_fan_out(len(branches), node)
        needed = len(branches) if strategy == "all" else (count or 1)
        self.emit(
            ctx, ev.ParallelEnter, branches=names, strategy=strategy, count=count, on_fail=on_fail
        )
        scopes = [ctx.scope.child() for _ in branches]
        stages = [Stage(ctx.scope) for _ in branches]
        elsewhere = self.elsewhere(node, ctx)

        async def run_branch(index: int) -> Value:
            if elsewhere is not None:
                return await elsewhere.branch(self, node, ctx, index, scopes[index], stages[index])
            return await self.branch(node, ctx, index, scopes[index], stages[index])

        # A race ("first", "any") is decided once: a resumed run joins the branches the
        # killed run joined, which its journal answers at once, and runs no others.
        recorded = self.recorded_join(ctx.key) if strategy != "all" else None
        chosen = range(len(branches)) if recorded is None else sorted({*recorded[0], *recorded[1]})
        for index in set(range(len(branches))) - set(chosen):
            self.emit(ctx, ev.ParallelBranch, branch=names[index], status="cancelled")
        # Completions are taken one at a time in the order they happened, so that a race
        # joins the first to finish even when several finish in one turn of the loop: a
        # resumed run, whose journaled branches finish first, then decides it the same way.
        # Each branch notes its own end (a done callback would run a turn later).
        finished: list[asyncio.Task[Any]] = []

        async def noted(index: int) -> Value:
            enter_concurrent_task()
            try:
                return await run_branch(index)
            finally:
                finished.append(by_index[index])

        tasks = {asyncio.ensure_future(noted(i)): i for i in chosen}
        by_index = {i: task for task, i in tasks.items()}
        results: dict[int, Value] = {}
        failures: dict[int, ProseError] = {}
        pending = set(tasks)
        taken = 0
        decided = False
        try:
            while pending and not decided:
                _done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                while taken < len(finished) and not decided:
                    task = finished[taken]
                    taken += 1
                    index = tasks[task]
                    error = task.exception()
                    if error is None:
                        results[index] = task.result()
                        self.emit(
                            _branch_ctx(ctx, index),
                            ev.ParallelBranch,
                            branch=names[index],
                            status="done",
                            value=preview(results[index]),
                            named=_is_named(branches[index]),
                        )
                    else:
                        if not isinstance(error, ProseError):
                            raise error
                        failures[index] = error
                        self.emit(
                            ctx,
                            ev.ParallelBranch,
                            branch=names[index],
                            status="failed",
                            value=error.message,
                        )
                    if failures and on_fail == "fail-fast":
                        index, error = next(iter(failures.items()))
                        raise ProseError(
                            f"parallel branch {names[index]} failed: {error.message}",
                            error.statement or headline(node),
                            error.kind,
                        )
                    if recorded is not None:
                        continue  # the journal's branches, every one of them
                    # "first"/"any": decided by enough successes, or too few left to get them;
                    # "all" waits for every branch (fail-fast aside).
                    possible = len(results) + len(tasks) - taken
                    decided = strategy != "all" and (len(results) >= needed or possible < needed)
        finally:
            joined = set(finished[:taken])
            unjoined = [task for task in tasks if task not in joined]
            for task in unjoined:
                task.cancel()  # done already for some: their answers are not joined
                self.emit(ctx, ev.ParallelBranch, branch=names[tasks[task]], status="cancelled")
            if unjoined:
                await asyncio.gather(*unjoined, return_exceptions=True)
        if recorded is not None:
            results = {i: results[i] for i in recorded[0] if i in results}  # the journal's order
        elif strategy != "all":
            self.record_join(ctx.key, list(results), list(failures))
        if strategy != "all" and len(results) < needed and on_fail == "continue":
            raise ProseError(
                f"parallel: {len(results)} of {len(branches)} branches succeeded, {needed} needed",
                headline(node),
            )
        return self.join(
            node, ctx, branches, names, scopes, stages, results, failures, strategy, on_fail
        )

    def elsewhere(self, node: Any, ctx: Ctx) -> Branches | None:
        """The engine's ``branches`` when this fan-out's items (or this block's branches)
        go to other processes; None: they are tasks of this one."""
        branches = self.branches
        return branches if branches is not None and branches.takes(self, node, ctx) else None

    async def branch(
        self, node: t.Parallel, ctx: Ctx, index: int, own: Scope, stage: Stage
    ) -> Value:
        """Branch ``index`` of the block ``node``: its statement in its own scope ``own``
        (a child of the block's), its bindings staged in ``stage`` until the join."""
        branch = node.body_statements()[index]
        mark = letter(index)
        bctx = ctx.nested(mark, own, step=f"{ctx.step}{mark}", level=ctx.level + 1, stage=stage)
        if isinstance(branch, t.Assignment):
            return await self.expression(branch.value, bctx)
        return await self.statement(branch, bctx)

    def join(
        self,
        node: t.Parallel,
        ctx: Ctx,
        branches: list[Any],
        names: list[str],
        scopes: list[Scope],
        stages: list[Stage],
        results: dict[int, Value],
        failures: dict[int, ProseError],
        strategy: str,
        on_fail: str,
    ) -> Value:
        """Branch bindings become visible here, in branch order (seed 002)."""
        joined: dict[str, Value] = {}
        for index, branch in enumerate(branches):
            if index in results:
                value = results[index]
            elif index in failures:
                value = failures[index].value
                if on_fail == "continue":
                    self.emit(
                        ctx,
                        ev.Warning,
                        message=f"branch {names[index]} failed: {failures[index].message}",
                    )
            else:
                if isinstance(branch, t.Assignment) and branch.target is not None:
                    # A race's branch that was not joined: its name is bound to nothing,
                    # so the program can still name every candidate (a context of all of
                    # them passes those that finished).
                    self.bind(_branch_ctx(ctx, index), branch.target.value, "let", None, branch)
                continue
            joined[names[index]] = value
            if index in results:
                self.join_stage(stages[index], ctx)
            if isinstance(branch, t.Assignment) and branch.target is not None:
                self.bind(_branch_ctx(ctx, index), branch.target.value, "let", value, branch)
            elif index in results:
                for name, inner in scopes[index].values.items():
                    if name not in stages[index].shadowed:
                        ctx.scope.values[name] = inner
        self.emit(ctx, ev.ParallelJoin, results={k: preview(v) for k, v in joined.items()})
        if strategy == "first" and results:
            return next(iter(results.values()))  # dicts keep completion order
        return Record(joined, kind="parallel")

    async def parallel_modifiers(self, node: t.Parallel, ctx: Ctx) -> tuple[str, int | None, str]:
        strategy, count, on_fail = "all", None, "fail-fast"
        modifiers = node.modifiers
        if modifiers is not None:
            for item in modifiers.positional():
                value = render(await self.expression(item, ctx))
                if value in JOIN_STRATEGIES:
                    strategy = value
            for kw in modifiers.keyword_arguments():
                value = await self.expression(kw.value, ctx)
                if kw.name.value == "count":
                    count = to_count(value)
                elif kw.name.value == "on-fail" and render(value) in ON_FAIL_POLICIES:
                    on_fail = render(value)
        return strategy, count, on_fail

    # ------------------------------------------------------------------ loops

    async def repeat(self, node: t.Repeat, ctx: Ctx) -> Value:
        times = to_count(await self.expression(node.count, ctx))
        if times is None or times < 0:
            raise ProseError("repeat needs a count of 0 or more", headline(node))
        index_name = node.index.value if node.index else None
        value: Value = None
        for i in range(times):
            self.emit(ctx, ev.LoopIteration, iteration=i + 1, maximum=times)
            scope = ctx.scope.child()
            if index_name:
                scope.values[index_name] = i
            value = await self.statements(
                node.body_statements(), ctx.nested(f"@{i}", scope, level=ctx.level + 1)
            )
        return value

    async def for_each(self, node: t.ForEach, ctx: Ctx) -> Value:
        items = items_of(await self.expression(node.collection, ctx))

        if node.is_parallel:
            return await self.bounded(items, node, ctx)
        values = []
        for i, item in enumerate(items):
            self.emit(ctx, ev.LoopIteration, iteration=i + 1, maximum=len(items))
            values.append(await self.item(node, ctx, i, item))
        return values

    async def item(
        self,
        host: t.ForEach | t.PipeStage,
        ctx: Ctx,
        i: int,
        item: Value,
        stage: Stage | None = None,
    ) -> Value:
        """The body of a ``for`` loop or a pipeline stage for its item ``i``; a branch of a
        ``parallel for`` or a ``pmap`` when ``stage`` holds its bindings until the join."""
        scope = ctx.scope.child()
        if isinstance(host, t.ForEach):
            scope.values[host.item.value if host.item else "item"] = item
            if host.index:
                scope.values[host.index.value] = i
        else:
            scope.values["item"] = item
        return await self.statements(
            host.body_statements(), ctx.nested(f"@{i}", scope, level=ctx.level + 1, stage=stage)
        )

    async def bounded(
        self, items: list[Value], node: t.ForEach | t.PipeStage, ctx: Ctx
    ) -> list[Value]:
        """``parallel for`` and ``pmap``: every item's body, at most ``concurrency`` at
        once, results in order; the first failure cancels the rest (fail-fast, as a parallel
        block's default).  Each item is a parallel branch: its bindings commit when all have
        completed.  With ``branches`` (an engine's), the items may run in other processes."""
        await self.confirm_fan_out(len(items), node)
        names = [letter(i) for i in range(len(items))]
        self.emit(ctx, ev.ParallelEnter, branches=names, strategy="all", on_fail="fail-fast")
        stages = [Stage(ctx.scope) for _ in items]
        elsewhere = self.elsewhere(node, ctx)
        if elsewhere is not None:
            results = await elsewhere.fan_out(self, node, ctx, items, stages)
        else:
            results = await self.here(items, node, ctx, stages)
        for stage in stages:
            self.join_stage(stage, ctx)
        self.emit(ctx, ev.ParallelJoin, results={})
        return results

    async def here(
        self, items: list[Value], node: t.ForEach | t.PipeStage, ctx: Ctx, stages: list[Stage]
    ) -> list[Value]:
        """The items of a fan-out as tasks of this process."""
        results: list[Value] = [None] * len(items)
        queue = iter(range(len(items)))

        async def worker() -> None:
            enter_concurrent_task()
            for i in queue:
                results[i] = await self.item(node, ctx, i, items[i], stages[i])

        workers = [
            asyncio.ensure_future(worker())
            for _ in range(min(max(1, self.options.concurrency), len(items)))
        ]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        return results

    async def loop(self, node: t.Loop, ctx: Ctx) -> Value:
        maximum = None
        if node.modifiers is not None:
            for kw in node.modifiers.keyword_arguments():
                if kw.name.value == "max":
                    maximum = to_count(await self.expression(kw.value, ctx))
        kind = node.kind
        condition = node.condition
        index_name = node.index.value if node.index else None
        described = f"loop {kind} {source_of(condition)}" if kind and condition else "loop"
        limit = maximum if maximum is not None else None
        self.emit(
            ctx, ev.LoopStart, description=described + (f" (max: {maximum})" if maximum else "")
        )
        value: Value = None
        iteration = 0
        reason = ""
        while True:
            if kind is not None and condition is not None:
                self.emit(ctx, ev.LoopEvaluation, condition=source_of(condition))
                holds = await self.condition(
                    condition, ctx.nested(f"?{iteration}"), kind, iteration + 1
                )
                stop = holds if kind == "until" else not holds
                self.emit(
                    ctx,
                    ev.Flow,
                    condition=source_of(condition),
                    result="satisfied" if holds else "not satisfied",
                )
                if stop:
                    reason = (
                        source_of(condition) if kind == "until" else f"not {source_of(condition)}"
                    )
                    break
            if limit is not None and iteration >= limit:
                reason = "max"
                break
            if limit is None and iteration >= self.options.unbounded_loop_limit:
                reason = "safety limit"
                self.emit(
                    ctx,
                    ev.Warning,
                    message=f"loop stopped at the VM's safety limit of "
                    f"{self.options.unbounded_loop_limit} iterations",
                )
                break
            iteration += 1
            self.emit(ctx, ev.LoopIteration, iteration=iteration, maximum=maximum)
            scope = ctx.scope.child()
            if index_name:
                scope.values[index_name] = iteration - 1
            value = await self.statements(
                node.body_statements(), ctx.nested(f"@{iteration}", scope, level=ctx.level + 1)
            )
        self.emit(ctx, ev.LoopExit, reason=reason, iteration=iteration, maximum=maximum)
        return value

    # ------------------------------------------------------------------ pipelines

    async def pipeline(self, node: t.Pipeline, ctx: Ctx) -> Value:
        value: Value = await self.expression(node.source, ctx)
        for number, stage in enumerate(node.stages(), start=1):
            items = items_of(value)
            operation = stage.operation.value if stage.operation is not None else ""
            self.emit(ctx, ev.PipelineStage, operation=operation, stage=number, items=len(items))
            sctx = ctx.nested(f"|{number}")

            if operation == "map":
                value = [await self.item(stage, sctx, i, item) for i, item in enumerate(items)]
            elif operation == "pmap":
                value = await self.bounded(items, stage, sctx)
            elif operation == "filter":
                kept = []
                for i, item in enumerate(items):
                    verdict = await self.item(stage, sctx, i, item)
                    if await self.truthy(verdict, sctx.nested(f"@{i}")):
                        kept.append(item)
                value = kept
            elif operation == "reduce":
                value = await self.reduce(stage, items, sctx)
            else:
                raise ProseError(f"unknown pipeline operation {operation!r}", headline(stage))
        return value

    async def reduce(self, stage: t.PipeStage, items: list[Value], ctx: Ctx) -> Value:
        params = stage.parameter_list.names() if stage.parameter_list is not None else []
        acc_name = params[0].value if params else "acc"
        item_name = params[1].value if len(params) > 1 else "item"
        if not items:
            return None
        acc = items[0]
        for i, item in enumerate(items[1:], start=1):
            scope = ctx.scope.child()
            scope.values[acc_name] = acc
            scope.values[item_name] = item
            acc = await self.statements(
                stage.body_statements(), ctx.nested(f"@{i}", scope, level=ctx.level + 1)
            )
        return acc

    async def truthy(self, verdict: Value, ctx: Ctx) -> bool:
        """A filter keeps an item when its body answers yes: "yes"/"true" and "no"/"false"
        are read directly; any other answer is judged by the backend."""
        if isinstance(verdict, bool):
            return verdict
        text = render(verdict).strip().lower()
        word = text.split()[0].strip(".,!:;") if text.split() else ""
        if word in ("yes", "true"):
            return True
        if word in ("no", "false") or not text:
            return False
        request = ConditionRequest(f"the answer means yes: {render(verdict)}", ctx.key, "filter")
        await self.check_budget(None, request)
        result = await self.backend.judge(request)
        await self.account(result, request, None)
        return result.value

    # ------------------------------------------------------------------ errors

    async def try_(self, node: t.TryStatement, ctx: Ctx) -> Value:
        self.emit(ctx, ev.Try, phase="enter")
        inner = ctx.nested("", level=ctx.level + 1)
        value: Value = None
        try:
            value = await self.statements(node.body_statements(), inner.nested(":try"))
        except ProseError as failure:
            clauses = node.catch_clauses()
            if not clauses:
                raise
            clause = clauses[0]
            self.emit(ctx, ev.Try, phase="catch")
            cctx = inner.nested(":catch", error=failure)
            if clause.error_name is not None:
                self.bind(cctx, clause.error_name.value, "let", failure.value, clause)
            value = await self.statements(clause.body_statements(), cctx)
        finally:
            final = node.finally_clause
            if final is not None:
                self.emit(ctx, ev.Try, phase="finally")
                await self.statements(final.body_statements(), inner.nested(":finally"))
        return value

    async def throw(self, node: t.ThrowStatement, ctx: Ctx) -> Value:
        if node.message is None and ctx.error is not None:
            raise ctx.error
        message = self.interpolate(node.message, ctx) if node.message is not None else "error"
        self.emit(ctx, ev.Failure, message=message)
        raise ProseError(message, headline(node), "thrown")


_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "{": "{", "}": "}"}


class SessionSteps:
    """What compaction and overflow recovery ask of the interpreter for one session
    (vm/context/compaction.py ``Steps``): journaled summaries, and the agent's memory."""

    def __init__(
        self, vm: Interpreter, ctx: Ctx, node: Any, agent: str | None, persist: str | None
    ) -> None:
        self.vm, self.ctx, self.node, self.agent, self.persist = vm, ctx, node, agent, persist

    async def summarise(self, name: str, text: str, mode: str, limit: int) -> str:
        return await self.vm.summary(name, text, mode, limit, self.ctx, self.node)

    def flush(self, notes: str) -> None:
        if self.agent is not None and self.persist is not None:
            now = self.vm.clock.now()
            self.vm.memories.flush(self.agent, self.persist, notes, now, key=self.ctx.key)

    def fold(self, keep: int) -> None:
        if self.agent is None or self.persist is None:
            return
        try:
            self.vm.memories.compact(self.agent, self.persist, "recent", max_messages=keep)
        except StateError as error:
            self.narrate("compacted", f"the agent's memory was not compacted: {error}")

    def narrate(self, action: str, detail: str) -> None:
        self.vm.emit(self.ctx, ev.ContextStep, action=action, detail=detail)


def letter(index: int) -> str:
    """Branch ``index``'s letters, as its step is numbered: a, b, ..., z, aa, ab..."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


def _memories(store: RunStore | None, project_root: Path | None) -> AgentMemories:
    """Agent memory kept by the run's state backend (files, its database, or PostgreSQL),
    recording which step wrote each segment so that a resumed run writes none twice."""
    if store is None:
        return AgentMemories(None, project_root)
    connect = getattr(store, "memory_connection", None)  # postgres: a connection factory
    return AgentMemories(
        store.path, project_root, state=store.state, run_id=store.run_id, connect=connect
    )


def _project_root(program: Path | None) -> Path | None:
    if program is None:
        return None
    from openprose.analysis.contracts import project_root_of

    return project_root_of(program.resolve())


def _property_source(name: str, prop: t.Property) -> str:
    """A property as the backend sees it; a ``permissions:`` block as JSON (its lines have
    no single value)."""
    if name == "permissions":
        return permissions_text(prop)
    return source_of(prop.value) if prop.value is not None else ""


def persistence(properties: dict[str, t.Property]) -> str | None:
    """``true``, ``project``, ``user`` or a path; None for an agent without memory."""
    prop = properties.get("persist")
    value = prop.value if prop is not None else None
    if isinstance(value, t.String):
        return value.text.strip() or None
    if value is None or source_of(value) == "false":
        return None
    return source_of(value)


def _shifted(sink: EventSink, levels: int) -> EventSink:
    """A sink that shows an imported program's events nested under the call."""

    def shifted(event: ev.Event) -> None:
        sink(replace(event, level=event.level + levels))

    return shifted


def _execution_id(ctx: Ctx) -> int | None:
    frame = ctx.frame
    return frame.execution_id if frame else None


def _branch_ctx(ctx: Ctx, index: int) -> Ctx:
    return replace(ctx, step=f"{ctx.step}{letter(index)}")


def _is_named(branch: Any) -> bool:
    return isinstance(branch, t.Assignment | t.LetBinding)


def _branch_name(branch: Any, index: int) -> str:
    if isinstance(branch, t.Assignment) and branch.target is not None:
        return str(branch.target.value)
    if isinstance(branch, t.LetBinding):
        names = branch.target_names()
        if names:
            return str(names[0].value)
    return letter(index)


_STATEMENTS: dict[type, Callable[[Interpreter, Any, Ctx], Awaitable[Value]]] = {
    t.UseStatement: Interpreter.nothing,
    t.ImportStatement: Interpreter.nothing,
    t.InputDeclaration: Interpreter.input_declaration,
    t.AgentDefinition: Interpreter.nothing,
    t.BlockDefinition: Interpreter.nothing,
    t.OutputBinding: Interpreter.output,
    t.LetBinding: Interpreter.let,
    t.ConstBinding: Interpreter.let,
    t.Assignment: Interpreter.assignment,
    t.Session: Interpreter.session_statement,
    t.Resume: Interpreter.session_statement,
    t.DoBlock: Interpreter.do_statement,
    t.DoInvocation: Interpreter.do_statement,
    t.ArrowSequence: Interpreter.expression_statement,
    t.ProgramCall: Interpreter.expression_statement,
    t.Pipeline: Interpreter.expression_statement,
    t.Parallel: Interpreter.parallel,
    t.Repeat: Interpreter.repeat,
    t.ForEach: Interpreter.for_each,
    t.Loop: Interpreter.loop,
    t.TryStatement: Interpreter.try_,
    t.ThrowStatement: Interpreter.throw,
    t.ChoiceStatement: Interpreter.choice,
    t.IfStatement: Interpreter.if_,
    t.UnsupportedStatement: Interpreter.unsupported,
    t.ErrorStatement: Interpreter.unsupported,
    t.ErrorBlock: Interpreter.unsupported,
}

# Statements narrated by their own markers rather than a [Position] line.
_SILENT = (
    t.UseStatement,
    t.ImportStatement,
    t.InputDeclaration,
    t.AgentDefinition,
    t.BlockDefinition,
    t.OutputBinding,
    t.TryStatement,
)

_EXPRESSIONS: dict[type, Callable[[Interpreter, Any, Ctx], Awaitable[Value]]] = {
    t.Session: Interpreter.session,
    t.Resume: Interpreter.session,
    t.DoBlock: Interpreter.do,
    t.DoInvocation: Interpreter.do,
    t.ArrowSequence: Interpreter.arrow,
    t.ProgramCall: Interpreter.program_call,
    t.Pipeline: Interpreter.pipeline,
    t.Parallel: Interpreter.parallel,
    t.Repeat: Interpreter.repeat,
    t.ForEach: Interpreter.for_each,
    t.Loop: Interpreter.loop,
}
