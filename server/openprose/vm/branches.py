"""The items of a ``parallel for`` or a ``pmap``, and the branches of a ``parallel:``
block, run in other processes (an engine's ``Branches``, such as the dbos engine's): what
one of them needs to travel (``BranchTask``: plain, picklable data), running it there
(``run_task``), and what comes back (``BranchOutcome``), applied to the run that fanned out
(``apply``).  "Item" below says either.

An item runs there as it would here: the same program, the scopes it sees, its step keys.
Its model exchanges go to the run's own journal, under the item's keys, so that an item
run again (its process died) is answered for every step it took.  Its bindings stay staged
and are committed by the run when the fan-out joins, as a local branch's are; its narration
and its spending come back with its value.

Not every fan-out can travel: ``why_local`` says which stay here, and why.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprose.syntax import tree as t
from openprose.vm import events as ev
from openprose.vm.accounting import Entry
from openprose.vm.backends.base import Backend, BackendFatal, Usage
from openprose.vm.engines.base import RunSpec
from openprose.vm.interpreter import (
    Branches,
    Budget,
    Called,
    Clock,
    Ctx,
    Interpreter,
    Pending,
    Stage,
    Summaries,
    letter,
)
from openprose.vm.remote import RemoteLoader, is_remote
from openprose.vm.scope import Frame, Scope
from openprose.vm.values import ProseError, Value

if TYPE_CHECKING:
    from openprose.vm.state.base import RunStore
    from openprose.vm.telemetry import Telemetry

# States whose journal another process can open while the run holds it.
SHARED_JOURNALS = ("filesystem", "sqlite", "postgres")
Host = t.ForEach | t.PipeStage | t.Parallel  # what fans out
APPLIED = "@branch"  # the journal's mark of an item whose outcome the run has applied
PROGRAM_MARK = "@program"  # the journal's copy of a called program whose items travel


@dataclass(frozen=True)
class Link:
    """One scope of the chain an item sees, from the run's root down."""

    values: dict[str, Value]
    consts: frozenset[str]
    frame: Frame | None


@dataclass(frozen=True)
class CalledProgram:
    """The called program a fan-out is in, for a worker to run its items in it: its text is
    in the run's journal (``PROGRAM_MARK`` under ``key_prefix``, written once by the process
    running the call: not in every item's task), its steps are keyed under ``key_prefix``."""

    key_prefix: str
    program_name: str
    program_path: str | None
    depth: int
    fetched: bool
    project_root: str | None


@dataclass(frozen=True)
class BranchTask:
    """One item of a fan-out (or one branch of a block), for another process."""

    host: tuple[int, int]  # where the `parallel for`, the `pmap` stage or the block starts
    index: int
    item: Value
    chain: tuple[Link, ...]
    step: str
    key: str  # the fan-out's step key: the item's steps are under key@index
    level: int
    options: dict[str, Any]
    program_name: str
    error: tuple[str, str, str] | None = None  # the error a `catch` around it handles
    block: bool = False  # a branch of a `parallel:` block (``item`` is unused)
    # The run's trace context where it fanned out (W3C trace context headers), so that a
    # traced item's calls are children of its run's span in whichever process.
    trace: dict[str, str] = field(default_factory=dict)
    program: CalledProgram | None = None  # None: the fan-out is the run's own program's

    @property
    def branch_key(self) -> str:
        """The item's own step key, which its steps' keys start with."""
        return f"{self.key}{letter(self.index)}" if self.block else f"{self.key}@{self.index}"


@dataclass
class CallTask:
    """A program call of the run's own program, for another process: the worker runs the
    program as ``Interpreter.call_here`` would in the run's."""

    source: str  # what the run imports: "./study", "alice/research"
    name: str  # the name it imports it as
    inputs: dict[str, Value]
    step: str
    key: str  # the call's step key: the called program's are under key/name:
    level: int
    options: dict[str, Any]
    program_name: str
    where: str = ""  # the call's statement, which a failure to start it names
    trace: dict[str, str] = field(default_factory=dict)

    @property
    def branch_key(self) -> str:
        """What the called program's step keys start with."""
        return f"{self.key}/{self.name}:"


@dataclass
class CallOutcome:
    """What a program call run elsewhere brings back to its run."""

    status: str = "success"
    outputs: dict[str, Value] = field(default_factory=dict)
    error: str = ""
    fatal: bool = False
    events: list[ev.Event] = field(default_factory=list)  # shown by the run, not recorded
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    sessions: int = 0
    started: int = 0
    tokens: int = 0
    entries: list[Entry] = field(default_factory=list)
    live: bool = False
    # The error the call raised before its program ran (a remote program that cannot be
    # fetched, a local one with errors): message, statement, kind, raised again by the run.
    raised: tuple[str, str, str] | None = None


@dataclass(frozen=True)
class StagedBinding:
    """A binding the item made, committed by the run at the join."""

    key: str
    step: str
    level: int
    name: str  # "" for an anonymous one, named at the join
    kind: str
    value: Value
    source: str
    execution_id: int | None
    previous: str | None
    outer: bool


@dataclass
class BranchOutcome:
    value: Value = None
    error: tuple[str, str, str] | None = None  # the program's failure: message, statement, kind
    fatal: str | None = None  # the run must stop (a limit, a backend that cannot go on)
    bindings: list[StagedBinding] = field(default_factory=list)
    events: list[ev.Event] = field(default_factory=list)
    # Which of ``events`` are the item's own, which the run's state records; the others
    # are a called program's, which its own state recorded and the run only shows.
    recorded: set[int] = field(default_factory=set)
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    sessions: int = 0
    started: int = 0
    tokens: int = 0
    entries: list[Entry] = field(default_factory=list)
    live: bool = False  # it asked the model something the journal did not hold
    # A block's branch: the names bound in its own scope, which the join makes visible
    # after the block, and those of them that shadow an outer name it assigned.
    scope: dict[str, Value] = field(default_factory=dict)
    shadowed: frozenset[str] = frozenset()
    # The memory of each agent the item used, as it last recorded or read it: the run's
    # view of it afterwards, as when its items share the run's process.
    memories: dict[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------------- the run's side


def _why_run_local(interpreter: Interpreter) -> str | None:
    """Why nothing this interpreter runs can go to another process (None: its fan-outs and
    calls may): its state, or the run's limits."""
    store = interpreter.store
    if store is None or store.state not in SHARED_JOURNALS:
        return "the run has no journal another process can share"
    if interpreter.options.limited and not interpreter.budget.shared:
        return "the run has a spending limit, which is counted in one process"
    return None


def why_local(interpreter: Interpreter, host: Any) -> str | None:
    """Why this fan-out's items must run in this process (None: they can travel)."""
    if why := _why_run_local(interpreter):
        return why
    if isinstance(host, t.Parallel) and _races(host):
        return "a race (`first`, `any`) is decided by what one process sees finish first"
    # A program's tree lives as long as its interpreter, and what follows depends on
    # nothing else.
    verdicts = interpreter.travel_verdicts
    if host not in verdicts:
        verdicts[host] = _why_items_local(interpreter, host)
    return verdicts[host]


def _why_items_local(interpreter: Interpreter, host: Any) -> str | None:
    """Why what an item runs keeps it here: its body and the bodies of the blocks it
    calls, and the programs they call.  An item of a called program runs in a worker with
    the run's journal, not the called program's state, which the states of the programs
    it calls and its agents' memory would need."""
    called = bool(interpreter.key_prefix)
    for node in (n for root in _reached(interpreter, host) for n in t.iter_nodes(root)):
        if isinstance(node, t.ProgramCall):
            if called:
                return "an item of a called program calls a program"
            if why := _why_callee_local(interpreter, node):
                return why
        if isinstance(node, t.InputDeclaration):
            return "an item asks for an input"
    if called and any(
        isinstance(node, t.Property) and node.name_leaf.value == "persist"
        for node in t.iter_nodes(interpreter.module)
    ):
        return "a called program's items would keep agent memory in its state"
    return None


def _why_callee_local(interpreter: Interpreter, call: t.ProgramCall) -> str | None:
    """Why an item calling this program must run in the run's process (None: the program,
    and those it calls, can run in the item's).  A called program gets its own state, made
    under the run's by whichever process calls it and named from the run's counters; it
    asks nobody for inputs (its caller gives them); a remote one is fetched by the item's
    worker, once per run, as are the programs it calls, which are remote too."""
    source = interpreter.imports.get(call.name.value if call.name is not None else "")
    if source is None or is_remote(source):
        return None  # (not imported: the call fails alike wherever it runs)
    if interpreter.load_program is None or interpreter.fetched:
        # A fetched program's calls of local files are refused here, and would not be
        # by an item's worker, which has its own loader.
        return "an item calls a program that only the run's process may load"
    return None


def why_call_local(interpreter: Interpreter, source: str) -> str | None:
    """Why this program call must run in the run's process (None: it may run in any
    worker, which spreads the called program's fan-outs as the run's process would).  A
    call travels when it is the run's own program's (a called program's calls run where
    it runs, as an item's run in the item's worker)."""
    if why := _why_run_local(interpreter):
        return why
    if interpreter.import_depth or interpreter.key_prefix:
        return "it is inside an imported program"
    if not is_remote(source) and (interpreter.load_program is None or interpreter.fetched):
        return "only the run's process may load the program"
    return None


def call_task(
    interpreter: Interpreter,
    ctx: Ctx,
    source: str,
    name: str,
    inputs: dict[str, Value],
    where: str = "",
    trace: dict[str, str] | None = None,
) -> CallTask:
    return CallTask(
        source=source,
        name=name,
        inputs=inputs,
        step=ctx.step,
        key=ctx.key,
        level=ctx.level,
        options=RunSpec.options_of(interpreter.options),
        program_name=interpreter.program_name,
        where=where,
        trace=dict(trace or {}),
    )


def apply_call(interpreter: Interpreter, outcome: CallOutcome, *, replayed: bool) -> Called:
    """A call's outcome, in the run: the called program's narration shown (its own state
    recorded it), its spending, and its result for ``Interpreter.program_call``."""
    from openprose.vm.interpreter import Called, RunResult

    store = interpreter.store
    if outcome.live and not replayed and store is not None:
        went_live = getattr(store, "went_live", None)
        if went_live is not None:
            went_live()
    for event in outcome.events:
        for sink in interpreter.external_sinks:
            sink(event)
    interpreter.budget.absorb(outcome.started, outcome.cost, outcome.tokens, outcome.entries)
    if outcome.raised is not None:
        raise ProseError(*outcome.raised)
    result = RunResult(
        status=outcome.status,
        outputs=dict(outcome.outputs),
        error=outcome.error,
        fatal=outcome.fatal,
    )
    return Called(result, outcome.usage, outcome.cost, outcome.sessions)


def _reached(interpreter: Interpreter, host: Any) -> list[Any]:
    """``host`` and the definitions of the blocks an item of it may call, directly or
    through other blocks."""
    reached: list[Any] = [host]
    seen: set[str] = set()
    for root in reached:
        for node in t.iter_nodes(root):
            if isinstance(node, t.DoInvocation) and node.name is not None:
                name = node.name.value
                block = interpreter.blocks.get(name)
                if block is not None and name not in seen:
                    seen.add(name)
                    reached.append(block)
    return reached


def _races(host: t.Parallel) -> bool:
    """Whether the block may join fewer than all its branches: any strategy but a
    written ``"all"`` (a strategy computed at run time counts as a race)."""
    modifiers = host.modifiers
    if modifiers is None:
        return False
    return any(not (isinstance(m, t.String) and m.text == "all") for m in modifiers.positional())


def names_read(interpreter: Interpreter, host: Host) -> frozenset[str]:
    """Every name an item of ``host`` may read or assign: each identifier and each
    interpolation of its body, of the blocks it calls (a block's body sees its caller's
    scope) and of the agents' definitions (a session evaluates its agent's properties in
    the item's scope).  More than it reads, never fewer: a name left
    out would be undefined there, or an interpolation left as written."""
    names: set[str] = set()
    blocks = _reached(interpreter, host)[1:]
    roots: list[Any] = [*host.body_statements(), *blocks, *interpreter.agents.values()]
    for root in roots:
        for leaf in t.iter_leaves(root):
            if isinstance(leaf, t.Name):
                names.add(leaf.value)
            elif isinstance(leaf, t.String) and "{" in leaf.value:
                names.update(p.path[0] for p in leaf.parts() if p.kind == "interpolation")
    return frozenset(names)


def chain_for(ctx: Ctx, names: frozenset[str]) -> tuple[Link, ...]:
    """The scopes an item sees, from the root down, holding only ``names``: not the
    collection it came from, nor the bindings its body never mentions (an item's task is
    stored in the system database, once per item)."""
    chain: list[Link] = []
    scope: Scope | None = ctx.scope
    while scope is not None:
        values = {name: value for name, value in scope.values.items() if name in names}
        chain.append(Link(values, frozenset(scope.consts & names), scope.frame))
        scope = scope.parent
    return tuple(reversed(chain))


def tasks_for(
    interpreter: Interpreter,
    host: t.ForEach | t.PipeStage,
    ctx: Ctx,
    items: list[Value],
    trace: dict[str, str] | None = None,
) -> list[BranchTask]:
    """One task per item of the fan-out at ``host``."""
    chain = chain_for(ctx, names_read(interpreter, host))
    program = called_program(interpreter)
    return [
        task_for(interpreter, host, ctx, i, item, chain, program, trace=trace)
        for i, item in enumerate(items)
    ]


def block_task(
    interpreter: Interpreter,
    host: t.Parallel,
    ctx: Ctx,
    index: int,
    trace: dict[str, str] | None = None,
) -> BranchTask:
    """The task of branch ``index`` of the block at ``host``."""
    chain = chain_for(ctx, names_read(interpreter, host))
    program = called_program(interpreter)
    return task_for(interpreter, host, ctx, index, None, chain, program, block=True, trace=trace)


def task_for(
    interpreter: Interpreter,
    host: Any,
    ctx: Ctx,
    index: int,
    item: Value,
    chain: tuple[Link, ...],
    program: CalledProgram | None,
    *,
    block: bool = False,
    trace: dict[str, str] | None = None,
) -> BranchTask:
    error = ctx.error
    return BranchTask(
        program=program,
        host=host.start_pos,
        index=index,
        item=item,
        chain=chain,
        step=ctx.step,
        key=ctx.key,
        level=ctx.level,
        options=RunSpec.options_of(interpreter.options),
        program_name=interpreter.program_name,
        error=(error.message, error.statement, error.kind) if error is not None else None,
        block=block,
        trace=dict(trace or {}),
    )


def called_program(interpreter: Interpreter) -> CalledProgram | None:
    """What a worker needs to run an item of this called program's fan-out (None: the
    interpreter runs the run's own program); its text goes to the run's journal the first
    time (the same text each time: one call's state, one program)."""
    if not interpreter.key_prefix:
        return None
    journal = interpreter.store.journal if interpreter.store is not None else None
    if (
        journal is not None
        and journal.committed(interpreter.key_prefix, PROGRAM_MARK, None) is None
    ):
        text = interpreter.module.get_code()
        journal.record_commit(interpreter.key_prefix, PROGRAM_MARK, None, text, durable=True)
    path = interpreter.program_path
    root = interpreter.memories.project_root
    return CalledProgram(
        key_prefix=interpreter.key_prefix,
        program_name=interpreter.program_name,
        program_path=str(path) if path is not None else None,
        depth=interpreter.import_depth,
        fetched=interpreter.fetched,
        project_root=str(root) if root is not None else None,
    )


def applied_before(interpreter: Interpreter, key: str, item: str) -> bool:
    """Whether the run applied the outcome of this item's execution ``item`` (an engine's
    name for it) before it was taken over: its narration is written already.  A resumed
    run executes the item again under another name, and applies what that one brings."""
    store = interpreter.store
    return store is not None and store.journal.committed(key, APPLIED, None) == item


def apply(
    interpreter: Interpreter,
    ctx: Ctx,
    stage: Stage,
    outcome: BranchOutcome,
    *,
    replayed: bool,
    own: Scope | None = None,
) -> Value:
    """An item's outcome, in the run: its narration, its spending, its staged bindings
    (and a block's branch's own names, in ``own``); its value, or its failure raised as a
    local item's would be.  ``replayed``: the run applied it before it was taken over
    (``applied_before``)."""
    store = interpreter.store
    if outcome.live and not replayed and store is not None:
        went_live = getattr(store, "went_live", None)
        if went_live is not None:
            went_live()
    for index, event in enumerate(outcome.events):
        for sink in interpreter.external_sinks:
            sink(event)
        if index in outcome.recorded and store is not None:
            store.record(event)
    interpreter.count_spent(outcome.usage, outcome.cost, outcome.sessions)
    # Its entries were journaled by the item's process.
    interpreter.budget.absorb(outcome.started, outcome.cost, outcome.tokens, outcome.entries)
    # (An outcome from a worker of before this field has none.)
    interpreter.memories.current.update(getattr(outcome, "memories", {}))
    for b in outcome.bindings:
        where = Ctx(ctx.scope, b.step, b.key, b.level)
        stage.pending.append(
            Pending(where, b.name, b.kind, b.value, b.source, b.execution_id, b.previous, b.outer)
        )
    if own is not None:
        own.values.update(outcome.scope)
        stage.shadowed.update(outcome.shadowed)
    raise_failure(outcome)
    return outcome.value


def raise_failure(outcome: BranchOutcome) -> None:
    """An item's failure, raised as a local item's would be (nothing when it succeeded)."""
    if outcome.fatal is not None:
        raise BackendFatal(outcome.fatal)
    if outcome.error is not None:
        raise ProseError(*outcome.error)


def mark_applied(interpreter: Interpreter, key: str, item: str) -> None:
    """Notes that the run applied the outcome of ``item``, the execution of the item (or
    program call) whose steps are under ``key``."""
    if interpreter.store is not None:
        interpreter.store.journal.record_commit(key, APPLIED, None, item)


# ---------------------------------------------------------------------- the item's side


class BranchStore:
    """What an item's interpreter has of the run's state: its journal (shared with the
    run, read under the item's keys: ``Catalog.branch_journal``), its directory (``path``,
    where the run's agents with ``persist: true`` keep their memory), and the states of
    the programs the item calls, made under the run's (``Catalog.branch_store``, opened
    only for an item that calls one or, on PostgreSQL, that records agent memory: it is a
    connection more).  An item commits nothing and narrates nothing itself: both go back
    to the run."""

    replaying = False

    def __init__(
        self,
        journal: Any,
        run_id: str,
        state: str,
        open_run: Callable[[Any], RunStore] | None = None,
        path: Path | None = None,
    ) -> None:
        self._journal = journal
        self.run_id = run_id
        self.state = state
        self.path = path  # the run's directory (None: the run has none, on PostgreSQL)
        self._open_run = open_run  # the run's store over this journal
        self._run: RunStore | None = None
        self.outcome: BranchOutcome | None = None  # set by run_task

    @property
    def journal(self) -> Any:
        return self._journal

    def child(self, key: str, name: str, text: str, program_name: str) -> RunStore:
        """The state of the program called at step ``key``: the called program commits
        its bindings and narrates there itself, as in the run's process."""
        return self._opened().child(key, name, text, program_name)

    def memory_connection(self) -> Any:
        """A new connection for agent memory on PostgreSQL (``vm.memory``), as the run's
        store gives one."""
        connect = getattr(self._opened(), "memory_connection", None)
        if connect is None:
            raise RuntimeError(f"the {self.state} state keeps agent memory without connections")
        return connect()

    def _opened(self) -> RunStore:
        if self._run is None:
            if self._open_run is None:
                raise RuntimeError("this item cannot open its run's state")
            self._run = self._open_run(self._journal)
        return self._run

    def record(self, event: ev.Event) -> None:
        # The run narrates the item's events when it applies its outcome; this marks the
        # one just given to the item's sinks as the item's own (not a called program's).
        if self.outcome is not None:
            self.outcome.recorded.add(len(self.outcome.events) - 1)

    def commit_binding(self, *args: Any) -> bool:
        raise RuntimeError("an item's bindings are committed by its run, at the join")

    def close(self) -> None:
        if self._run is not None:
            self._run.close()  # and the journal it was opened over
        else:
            self._journal.close()


@dataclass
class Worker:
    """What a worker runs an item or a program call of a run with: the run's program, a
    backend, the part of the run's state it may use, and its own means (telemetry, a
    fetcher of remote programs)."""

    module: Any
    backend: Backend
    store: BranchStore
    program_path: Path | None = None
    project_root: Path | None = None
    telemetry: Telemetry | None = None
    remote: RemoteLoader | None = None  # None: remote programs are refused, as the run does
    # A budget for each item or call, counted with the run's (None: the run has no limits).
    budget: Callable[[], Budget] | None = None
    # Where a call's program spreads its fan-outs (None: here, as an item's nested ones,
    # which would wait for their items on the queue the item holds a slot of).
    branches: Branches | None = None
    # Where its summaries are shared with the run's other parts (None: it asks its own).
    summaries: Summaries | None = None
    # What wraps its journaled backend, for an engine that checkpoints each exchange too.
    durable_steps: Callable[[Backend], Backend] | None = None
    clock: Clock | None = None  # its retries' waits (None: the real clock's)

    def interpreter(self, task: BranchTask | CallTask, outcome: Any) -> Interpreter:
        """An interpreter of the run's program, here, as the run's would be: the run's
        journal answers every step it holds (a step it does not marks ``outcome`` live),
        ``backend`` the rest; ``telemetry`` traces its calls as the run's own are
        (wrapping the journal: a replayed step is a span too, marked so); what it narrates
        goes to ``outcome.events``."""
        from openprose.vm.backends.base import bind_run
        from openprose.vm.backends.replay import JournalBackend
        from openprose.vm.interpreter import Options
        from openprose.vm.runner import load_import

        def live() -> None:
            outcome.live = True

        bind_run(self.backend, self.store.run_id)
        model: Backend = JournalBackend(self.backend, self.store.journal, live)
        if self.durable_steps is not None:
            model = self.durable_steps(model)
        if self.telemetry is not None:
            model = self.telemetry.backend(model)
        common: dict[str, Any] = dict(
            store=self.store,  # the part of a RunStore it uses
            sinks=[outcome.events.append],
            options=Options(**task.options),
            load_program=load_import,  # the local programs it calls
            remote=self.remote,
            budget=self.budget() if self.budget is not None else None,
            clock=self.clock,
        )
        called = task.program if isinstance(task, BranchTask) else None
        if called is None:
            interpreter = Interpreter(
                self.module,
                model,
                program_path=self.program_path,
                program_name=task.program_name,
                project_root=self.project_root,
                **common,
            )
            interpreter.branches = self.branches  # (the called program's are its caller's)
            interpreter.summaries = self.summaries
            return interpreter
        # An item of a fan-out of a program the run called: an interpreter of that program.
        journal = self.store.journal
        text = journal.committed(called.key_prefix, PROGRAM_MARK, None)
        if text is None:  # (loaded under the item's key, it holds only the item's)
            text = journal.stored_commit(called.key_prefix, PROGRAM_MARK)
        if text is None:
            raise RuntimeError(f"the run's journal has no program called at {called.key_prefix}")
        interpreter = Interpreter(
            parsed(text),
            model,
            program_path=Path(called.program_path) if called.program_path else None,
            program_name=called.program_name,
            depth=called.depth,
            key_prefix=called.key_prefix,
            project_root=Path(called.project_root) if called.project_root else None,
            fetched=called.fetched,
            **common,
        )
        interpreter.summaries = self.summaries
        return interpreter


async def run_task(task: BranchTask, worker: Worker) -> BranchOutcome:
    """Run one item of a fan-out, here, as the run would have."""
    outcome = BranchOutcome()
    worker.store.outcome = outcome
    interpreter = worker.interpreter(task, outcome)
    interpreter.collect()
    scope: Scope | None = None
    for link in task.chain:
        scope = Scope(scope, link.frame)
        scope.values.update(link.values)
        scope.consts.update(link.consts)
    assert scope is not None
    error = ProseError(*task.error) if task.error is not None else None
    ctx = Ctx(scope, task.step, task.key, task.level, error=error)
    stage = Stage(scope)
    host = find_host(interpreter.module, task.host)
    own = scope.child()
    try:
        if isinstance(host, t.Parallel):
            outcome.value = await interpreter.branch(host, ctx, task.index, own, stage)
        else:
            outcome.value = await interpreter.item(host, ctx, task.index, task.item, stage)
    except ProseError as failure:
        outcome.error = (failure.message, failure.statement, failure.kind)
    except BackendFatal as fatal:
        outcome.fatal = str(fatal)
    finally:
        # Also when the item is cancelled: what it narrated and spent until then is its
        # partial outcome (dbos_partials).
        _spent(outcome, interpreter)
        outcome.memories = dict(interpreter.memories.current)
    outcome.bindings = [_staged(p) for p in stage.pending]
    outcome.scope = dict(own.values)
    outcome.shadowed = frozenset(stage.shadowed)
    return outcome


async def run_call(
    task: CallTask, worker: Worker, outcome: CallOutcome | None = None
) -> CallOutcome:
    """Run a program call of the run here, as the run would have (``Interpreter.call_here``
    on an interpreter of the run's program): its state made under the run's.  ``outcome``
    (a new one if None) is filled as it goes: cancelled, it holds what the call narrated
    and spent until then, its partial outcome (dbos_partials)."""
    outcome = outcome if outcome is not None else CallOutcome()
    interpreter = worker.interpreter(task, outcome)
    ctx = Ctx(Scope(), task.step, task.key, task.level)
    try:
        called = await interpreter.call_here(task.source, task.name, task.inputs, ctx, task.where)
    except asyncio.CancelledError:
        # call_here counted the called program's spending in the interpreter's totals.
        _spent(outcome, interpreter)
        raise
    except ProseError as failure:  # its program cannot be fetched, or has errors
        outcome.raised = (failure.message, failure.statement, failure.kind)
        return outcome
    except BackendFatal as fatal:
        outcome.status, outcome.error, outcome.fatal = "error", str(fatal), True
        return outcome
    result = called.result
    outcome.status, outcome.error, outcome.fatal = result.status, result.error, result.fatal
    outcome.outputs = dict(result.outputs)
    outcome.usage, outcome.cost, outcome.sessions = called.usage, called.cost, called.sessions
    outcome.started = interpreter.budget.started
    outcome.tokens = interpreter.budget.tokens
    outcome.entries = list(interpreter.budget.ledger.entries)
    return outcome


def _spent(outcome: BranchOutcome | CallOutcome, interpreter: Interpreter) -> None:
    """What ``interpreter`` spent, and its budget counted, into ``outcome``."""
    outcome.usage, outcome.cost = interpreter.usage, interpreter.cost
    outcome.sessions = interpreter.sessions
    outcome.started = interpreter.budget.started
    outcome.tokens = interpreter.budget.tokens
    outcome.entries = list(interpreter.budget.ledger.entries)


def _staged(pending: Pending) -> StagedBinding:
    ctx = pending.ctx
    return StagedBinding(
        ctx.key,
        ctx.step,
        ctx.level,
        pending.name,
        pending.kind,
        pending.value,
        pending.source,
        pending.execution_id,
        pending.previous,
        pending.outer,
    )


@functools.lru_cache(maxsize=8)
def parsed(text: str) -> Any:
    """The tree of a program's text, shared by the items that run it in this process (the
    interpreter never changes it)."""
    from openprose.syntax import parse

    return parse(text)


def find_host(module: Any, start: tuple[int, int]) -> Host:
    """The `parallel for`, the `pmap` stage or the `parallel:` block that starts at
    ``start`` in ``module``."""
    for node in t.iter_nodes(module):
        if isinstance(node, Host) and node.start_pos == start:
            return node
    raise LookupError(
        f"no parallel for, pmap or parallel block at line {start[0]}, column {start[1] + 1}"
    )
