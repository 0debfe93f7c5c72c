"""The dbos engine's fan-outs and program calls: every item of a ``parallel for`` or a
``pmap``, every branch of a ``parallel:`` block, and every program call of the run's own
program, is a workflow (``openprose.branch``) on the queue ``openprose-branches``, which
every worker (and the process running an attached run) executes, so that one run's work
spreads over all of them.  A call's workflow id is ``{run_id}/{step key}:call``.

- An item's workflow id is ``{run_id}/{step key}@{index}`` (a block's branch's:
  ``{run_id}/{step key}{letter}``): a run taken over by another worker enqueues its items
  again under the same ids, which DBOS answers with the workflows it has (finished,
  running, or still queued), never with second ones.  A resumed run's items are under its
  attempt's workflow id (``{run_id}/attempt-2/...``): they run again, answered from the
  journal, rather than be answered by the last attempt's failures and cancellations.
- The items are enqueued and awaited outside the run's workflow context, as top-level
  workflows: DBOS numbers a workflow's operations by the order it makes them, and a run's
  concurrent branches reach theirs in timing order, which a recovery need not repeat.
  Their ids make them durable instead.
- An item's model exchanges go to the run's journal under the item's keys
  (vm/branches.py): an item whose worker died runs again elsewhere (DBOS's recovery, or
  ours for a dead executor) and is answered from the journal for every step it took.
- The first item that fails cancels those not finished (fail-fast, as here), unless this
  process is stopping (``STOPPING``): then they are left to the worker taking the run over.
  A race (``first``, ``any``) keeps its branches here (vm/branches.py, ``why_local``).

Imported only by the dbos engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from openprose.config import MODEL_BACKENDS
from openprose.vm.backends.base import BackendFatal
from openprose.vm.branches import (
    BranchOutcome,
    BranchStore,
    BranchTask,
    CallOutcome,
    CallTask,
    Worker,
    applied_before,
    apply,
    apply_call,
    block_task,
    call_task,
    mark_applied,
    parsed,
    raise_failure,
    run_call,
    run_task,
    tasks_for,
    why_call_local,
    why_local,
)
from openprose.vm.engines.base import RunSpec, build_backend
from openprose.vm.engines.dbos_partials import Keeper as PartialKeeper
from openprose.vm.engines.dbos_partials import Outcome as PartialOutcome
from openprose.vm.engines.dbos_partials import collect as collect_partials
from openprose.vm.engines.dbos_partials import drop as drop_partials
from openprose.vm.engines.dbos_partials import keep_all as keep_partials
from openprose.vm.engines.dbos_steps import DurableClock, as_steps
from openprose.vm.interpreter import letter
from openprose.vm.telemetry import attach_trace, trace_context
from openprose.vm.values import ProseError

if TYPE_CHECKING:
    from openprose.syntax import tree as t
    from openprose.vm.backends.base import Backend
    from openprose.vm.engines.dbos_summaries import SharedSummaries
    from openprose.vm.interpreter import Budget, Called, Clock, Ctx, Interpreter, Stage
    from openprose.vm.remote import RemoteLoader
    from openprose.vm.scope import Scope
    from openprose.vm.telemetry import Telemetry
    from openprose.vm.values import Value

APP_NAME = "openprose"
# Recovery and dequeuing take only workflows of the same version: bumped when what a
# workflow's checkpoints hold changes incompatibly (the pickled RunSpec and RunResult).
APP_VERSION = "openprose-engine-1"
BRANCH_WORKFLOW = "openprose.branch"
BRANCHES_QUEUE = "openprose-branches"
# Program calls have a queue of their own: a call waits for its program's items, which
# would deadlock on a queue it shared with them (calls holding every slot).  Nothing on
# the items' queue waits for a call (an item's calls run in the item's workflow).
CALLS_QUEUE = "openprose-calls"
CALL_MARK = ":call"  # a program call's workflow id: the run's (attempt's), /, its step key, this


def provider_queue(backend: str) -> str:
    """The queue of the items of runs of ``backend`` once a rate limit is set for it
    (``register_rate_limits``); until then they share ``BRANCHES_QUEUE``."""
    return f"{BRANCHES_QUEUE}-{backend}"


BRANCH_QUEUES = (BRANCHES_QUEUE, *(provider_queue(b) for b in MODEL_BACKENDS))
DEFAULT_BRANCH_CONCURRENCY = 16  # items a worker executes at once
DEFAULT_CONCURRENCY = 4  # runs, and program calls, a worker executes at once
_PROGRAMS_KEPT = 64  # runs whose program, fetcher and rate limit a process keeps
POLL_SECONDS = 0.05  # how often a run asks which of its items have finished
_FINISHED = ["SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"]

T = TypeVar("T")
# The backends that attached runs lend to their items executed in their own process (a
# recording wrapper, a test's fake), by run id; an item executed elsewhere makes its own.
LENT_BACKENDS: dict[str, Backend] = {}
# This process's telemetry (`prose worker --otel`, an attached run's `--otel`): the items it
# executes trace their calls with it, under their run's span.  One at most.
ITEM_TELEMETRY: list[Telemetry] = []
# Set while this process stops (a worker's SIGTERM, an attached run's Ctrl-C): the items its
# runs wait for are left as they are, for the worker that takes those runs over to collect,
# rather than cancelled as a failed fan-out's are.
STOPPING = threading.Event()
_registered: list[Any] = []


def branch_workflow() -> Any:
    """The item workflow, registered with DBOS once per process (before launch)."""
    if not _registered:
        from dbos import DBOS

        @DBOS.workflow(name=BRANCH_WORKFLOW)
        async def run_branch(
            spec: RunSpec, run_id: str, task: BranchTask | CallTask
        ) -> BranchOutcome | CallOutcome:
            if isinstance(task, CallTask):
                return await execute_call(spec, run_id, task)
            return await execute_branch(spec, run_id, task)

        _registered.append(run_branch)
    return _registered[0]


# How long a branch cancelled by a sibling's failure waits for that sibling's branch to
# fail the block, when a run taken over finds them both ended.
SIBLING_SECONDS = 60.0


def keep_for_run(cache: dict[str, T], run: str, value: T) -> None:
    """``value`` kept for ``run`` in one of this process's per-run caches, the oldest run's
    dropped past ``_PROGRAMS_KEPT``: a worker serves runs without end."""
    if len(cache) >= _PROGRAMS_KEPT:
        del cache[next(iter(cache))]
    cache[run] = value


def system_database() -> Any:
    """DBOS's own connection to its system database (private in dbos 3.4; tested)."""
    from dbos._dbos import _get_dbos_instance

    return _get_dbos_instance()._sys_db


def shared_budget(spec: RunSpec, run_workflow: str) -> Callable[[], Budget] | None:
    """Budgets of the run's attempt ``run_workflow`` counted in the system database
    (dbos_budget), when the run has a spending limit."""
    from openprose.vm.engines.dbos_budget import SharedBudget

    options = spec.run_options()
    if not options.limited:
        return None
    return partial(
        SharedBudget,
        engine=system_database().engine,
        budget=run_workflow,
        sessions=options.max_sessions is not None,
        spending=options.max_cost is not None or options.max_tokens is not None,
    )


def shared_summaries(run_workflow: str, workflow_id: str) -> SharedSummaries:
    """The summaries of the run's attempt ``run_workflow`` as its workflow ``workflow_id``
    (the run's own, an item's, a call's) asks them (dbos_summaries)."""
    from openprose.vm.engines.dbos_summaries import SharedSummaries

    return SharedSummaries(system_database().engine, run_workflow, workflow_id, workflow_ended)


async def workflow_status(workflow_id: str) -> str | None:
    """The status DBOS holds of the workflow ``workflow_id`` (None: it has none)."""
    from dbos import DBOS

    found = await outside_workflow(
        DBOS.list_workflows_async(workflow_ids=[workflow_id], load_input=False, load_output=False)
    )
    return str(found[0].status) if found else None


async def workflow_ended(workflow_id: str) -> bool:
    """Whether the workflow ``workflow_id`` is over (or gone), as DBOS holds it."""
    return await workflow_status(workflow_id) not in ("PENDING", "ENQUEUED", "DELAYED")


# The rate limit of each run's backend, as this process first read it for the run.
_limits: dict[str, tuple[int, float] | None] = {}


async def paced_backend(backend: Backend, name: str, run_id: str) -> Backend:
    """``backend``, each of whose model requests waits for a place under the rate limit set
    for the backend ``name`` (its items queue's limiter, dbos_pacing), if one is set: read
    once per run in this process (a run's thousand items do not ask a thousand times)."""
    from openprose.vm.engines.dbos_pacing import PacedBackend, Pacer

    if run_id not in _limits:
        keep_for_run(_limits, run_id, await _limit_of(name))
    limit = _limits[run_id]
    if limit is None:
        return backend
    return PacedBackend(backend, Pacer(system_database().engine, name, limit))


async def _limit_of(name: str) -> tuple[int, float] | None:
    from dbos import DBOS

    own = provider_queue(name)
    for queue in await DBOS.list_queues_async():
        if queue.name == own:
            limit = await queue.get_limiter_async()
            return None if limit is None else (int(limit["limit"]), float(limit["period"]))
    return None


def _own_id(task: BranchTask | CallTask) -> str:
    """What a task's workflow id adds to its run's: an item's step key (``4@17``, a block's
    branch ``5b``), a program call's key and ``CALL_MARK`` (``3:call``)."""
    return f"{task.key}{CALL_MARK}" if isinstance(task, CallTask) else task.branch_key


def branch_id(run_workflow: str, task: BranchTask | CallTask) -> str:
    """The workflow id of an item or a call, under its run's attempt's."""
    return f"{run_workflow}/{_own_id(task)}"


def run_workflow_of(workflow_id: str, task: BranchTask | CallTask) -> str:
    """The workflow id of the run's attempt an item or a call (of ``workflow_id``) is of."""
    return workflow_id.removesuffix(f"/{_own_id(task)}")


async def execute_branch(spec: RunSpec, run_id: str, task: BranchTask) -> BranchOutcome:
    """The body of an item's workflow, in whichever worker dequeued it."""
    from dbos import DBOS

    item_id = DBOS.workflow_id or branch_id(run_id, task)
    run_workflow = run_workflow_of(item_id, task)
    async with _worker(spec, run_id, run_workflow, item_id, task.branch_key, task.trace) as worker:
        work = run_task(task, worker)
        return await _keeping(run_workflow, item_id, work, lambda: worker.store.outcome)


async def _keeping(
    run_workflow: str,
    workflow_id: str,
    work: Coroutine[Any, Any, T],
    outcome: Callable[[], PartialOutcome | None],
) -> T:
    """``work``, the body of the item's (or call's) workflow ``workflow_id``, its
    ``outcome`` so far kept as its partial outcome (dbos_partials) when DBOS cancels it, and
    before it ends: the run may cancel it (a sibling failed as it ended) until DBOS records
    its outcome, which DBOS then refuses.  The run drops the rows of the items whose
    outcomes DBOS recorded."""
    from dbos._error import DBOSWorkflowCancelledError  # private in dbos 3.4; tested

    try:
        done = await unless_cancelled(workflow_id, work)
    except DBOSWorkflowCancelledError:
        await asyncio.shield(_keep_partial(run_workflow, workflow_id, outcome()))
        raise
    await asyncio.shield(_keep_partial(run_workflow, workflow_id, outcome()))
    return done


async def _drop_partials(ids: list[str]) -> None:
    engine = system_database().engine
    await asyncio.to_thread(drop_partials, engine, ids)


async def _keep_partial(run_workflow: str, item_id: str, outcome: PartialOutcome | None) -> None:
    if outcome is not None:
        database = system_database()
        keeper = _keepers.get(asyncio.get_running_loop())
        if keeper is None or keeper.engine is not database.engine:  # (DBOS launched again)
            from dbos._sys_db import db_retry  # private in dbos 3.4; tested

            write = db_retry(sys_db=database)(keep_partials)
            keeper = _keepers[asyncio.get_running_loop()] = PartialKeeper(database.engine, write)
        await keeper.keep(run_workflow, item_id, outcome)


# The writers of the partial outcomes of the items ending on each event loop.
_keepers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, PartialKeeper] = (
    weakref.WeakKeyDictionary()
)


async def execute_call(spec: RunSpec, run_id: str, task: CallTask) -> CallOutcome:
    """The body of a program call's workflow (the same workflow as an item's), in whichever
    worker dequeued it.  Its steps, and the name the run gave its state, are under the
    call's key."""
    from dbos import DBOS

    call_id = DBOS.workflow_id or branch_id(run_id, task)
    run_workflow = run_workflow_of(call_id, task)
    async with _worker(spec, run_id, run_workflow, call_id, task.key, task.trace) as worker:
        # The called program's fan-outs are spread from here, as from the run's process.
        worker.branches = DbosBranches(spec, run_id, run_workflow)
        outcome = CallOutcome()  # filled as the call goes
        return await _keeping(
            run_workflow, call_id, run_call(task, worker, outcome), lambda: outcome
        )


@contextlib.asynccontextmanager
async def _worker(
    spec: RunSpec,
    run_id: str,
    run_workflow: str,
    workflow_id: str,
    under: str,
    trace: dict[str, str],
) -> AsyncIterator[Worker]:
    """What this process runs an item or a call (the workflow ``workflow_id``) of the run
    with: the run's program (read from its workflow ``run_workflow``), its backend (paced
    by the rate limit), the run's journal read under the step key ``under``, the run's
    state, and the run's summaries; ``trace``: the run's trace context, which its spans
    join."""
    if not spec.text:
        spec = replace(spec, text=await outside_workflow(_program_of(run_workflow)))
    backend = await outside_workflow(
        paced_backend(LENT_BACKENDS.get(run_id) or build_backend(spec), spec.backend, run_id)
    )
    catalog = spec.catalog()
    journal = await asyncio.to_thread(catalog.branch_journal, run_id, under)
    # The run's directory, where its agents with `persist: true` keep their memory.
    directory = Path(spec.runs_root) / run_id if spec.state in ("filesystem", "sqlite") else None
    store = BranchStore(
        journal, run_id, spec.state, partial(catalog.branch_store, run_id), directory
    )
    telemetry = ITEM_TELEMETRY[0] if ITEM_TELEMETRY else None
    detach = attach_trace(trace) if telemetry is not None else None
    try:
        yield Worker(
            parsed(spec.text),
            backend,
            store,
            program_path=spec.program_path,
            project_root=spec.project_dir,
            telemetry=telemetry,
            remote=_remote_loader(run_id, spec),
            budget=shared_budget(spec, run_workflow),
            summaries=shared_summaries(run_workflow, workflow_id),
            durable_steps=durable_steps,
            clock=durable_clock(),
        )
    finally:
        if detach is not None:
            detach()
        store.close()


_programs: dict[str, str] = {}
# Each run's fetcher of remote programs in this process: a remote program is fetched once
# per run by each worker that executes items calling it.
_loaders: dict[str, RemoteLoader] = {}


def _remote_loader(run_id: str, spec: RunSpec) -> RemoteLoader | None:
    if not spec.allow_remote:
        return None
    if run_id not in _loaders:
        loader = spec.remote()
        assert loader is not None
        keep_for_run(_loaders, run_id, loader)
    return _loaders[run_id]


async def _program_of(run_workflow: str) -> str:
    """The run's program text, from its (attempt's) workflow's input, read once per
    process: an item's own input leaves it out, or a run's thousand items would store it a
    thousand times."""
    if run_workflow not in _programs:
        from dbos import DBOS

        [run] = await DBOS.list_workflows_async(workflow_ids=[run_workflow], load_input=True)
        spec = run.input["args"][0] if run.input else None
        if not isinstance(spec, RunSpec):
            raise BackendFatal(f"run {run_workflow} has no program to run its items from")
        keep_for_run(_programs, run_workflow, spec.text)
    return _programs[run_workflow]


async def outside_workflow(work: Coroutine[Any, Any, T]) -> T:
    """``work`` outside the run's workflow context (see the module's docstring)."""
    return await asyncio.create_task(work, context=contextvars.Context())


# How often this process looks whether the workflows it executes were cancelled (seconds):
# a cancelled item goes on asking the model until then (it was a second: a failed fan-out's
# siblings then made up to a second more of sessions than on the local engine, and the run
# waited as long for their partial outcomes).  One query for all, only while some run.
CANCEL_POLL_SECONDS = 0.25


class _Cancellations:
    """The workflows (runs, items) this process executes on one event loop, looked up
    together every ``CANCEL_POLL_SECONDS``: those DBOS marks cancelled (``prose runs
    cancel``, a failed fan-out's fail-fast) have their task cancelled.  DBOS itself stops
    a cancelled workflow at its next DBOS operation (an exchange's step: dbos_steps, which
    then cancels the task here at once), but an exchange may last minutes, and those of a
    race's branches are no steps: without this, a cancelled item went on asking the model
    to its end."""

    def __init__(self) -> None:
        self.watched: dict[str, asyncio.Future[Any]] = {}
        self.cancelled: set[str] = set()
        self.poller: asyncio.Task[None] | None = None

    def watch(self, workflow_id: str, task: asyncio.Future[Any]) -> None:
        self.watched[workflow_id] = task
        if self.poller is None or self.poller.done():
            self.poller = asyncio.get_running_loop().create_task(self._poll())

    def cancel(self, workflow_id: str) -> bool:
        """Cancels the task of ``workflow_id``, found cancelled (by the look, or by DBOS
        refusing its step); whether it was watched."""
        task = self.watched.pop(workflow_id, None)
        if task is None:
            return False
        self.cancelled.add(workflow_id)
        task.cancel()
        return True

    def forget(self, workflow_id: str) -> bool:
        """Stops watching; whether DBOS had cancelled it."""
        self.watched.pop(workflow_id, None)
        if workflow_id in self.cancelled:
            self.cancelled.discard(workflow_id)
            return True
        return False

    async def _poll(self) -> None:
        from dbos import DBOS

        while self.watched:
            await asyncio.sleep(CANCEL_POLL_SECONDS)
            ids = list(self.watched)
            if not ids:
                break
            try:
                found = await outside_workflow(
                    DBOS.list_workflows_async(
                        workflow_ids=ids, status="CANCELLED", load_input=False, load_output=False
                    )
                )
            except Exception:  # a database that does not answer: looked at next time
                continue
            for workflow in found:
                self.cancel(workflow.workflow_id)


_cancellations: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Cancellations] = (
    weakref.WeakKeyDictionary()
)


def cancel_watched(workflow_id: str) -> bool:
    """Cancels the task of the workflow ``workflow_id``, which DBOS found cancelled
    sooner than the look for cancellations would (it refused its step: dbos_steps), as
    the look would; whether this process watched it."""
    watch = _cancellations.get(asyncio.get_running_loop())
    return watch is not None and watch.cancel(workflow_id)


def durable_steps(journaled: Backend) -> Backend:
    """A run's, an item's or a call's journaled backend, its exchanges DBOS steps too."""
    return as_steps(journaled, on_cancelled=cancel_watched)


def durable_clock(inner: Clock | None = None) -> DurableClock:
    """A run's, an item's or a call's clock (``inner``: a test's), its retries' waits
    DBOS's durable sleeps."""
    return DurableClock(inner, on_cancelled=cancel_watched)


async def unless_cancelled(workflow_id: str, work: Coroutine[Any, Any, T]) -> T:
    """``work``, the body of the workflow ``workflow_id``, stopped within
    ``CANCEL_POLL_SECONDS`` of its cancellation (at once at its next step, dbos_steps), as
    DBOS stops a cancelled workflow (which keeps its status)."""
    from dbos._error import DBOSWorkflowCancelledError  # private in dbos 3.4; tested

    loop = asyncio.get_running_loop()
    watch = _cancellations.get(loop)
    if watch is None:
        watch = _cancellations[loop] = _Cancellations()
    task = asyncio.ensure_future(work)
    watch.watch(workflow_id, task)
    try:
        return await task
    except asyncio.CancelledError:
        if watch.forget(workflow_id):
            raise DBOSWorkflowCancelledError(f"workflow {workflow_id} was cancelled") from None
        raise  # this process stops: the workflow stays pending for another to take over
    finally:
        watch.forget(workflow_id)


class DbosBranches:
    """A run's fan-outs, as item workflows on the branches queue."""

    def __init__(self, spec: RunSpec, run_id: str, workflow_id: str | None = None) -> None:
        # What every item's workflow carries: the program and the inputs are the run's,
        # read from its own workflow where an item needs them (the inputs are in scope).
        self.spec = replace(spec, text="", inputs={}, fetched=None)
        self.run_id = run_id
        self.workflow_id = workflow_id or run_id  # the run's attempt's (dbos_engine.attempt_id)
        # What DBOS had of a branch or call this run cancelled, and whether it was running.
        self._stopped: dict[str, tuple[list[Any], set[str]]] = {}

    def takes(self, interpreter: Interpreter, node: Any, ctx: Ctx) -> bool:
        return why_local(interpreter, node) is None

    async def fan_out(
        self,
        interpreter: Interpreter,
        node: Any,
        ctx: Ctx,
        items: list[Value],
        stages: list[Stage],
    ) -> list[Value]:
        tasks = tasks_for(interpreter, node, ctx, items, trace_context())
        queue = await outside_workflow(self._queue())
        ids = [branch_id(self.workflow_id, task) for task in tasks]

        def applied(j: int) -> bool:
            return applied_before(interpreter, tasks[j].branch_key, ids[j])

        # At most `concurrency` items of the run in flight, wherever they run, as here.
        window = max(1, interpreter.options.concurrency)
        waiting: dict[str, int] = {}
        results: list[Value] = [None] * len(items)
        following = 0
        failure: ProseError | BackendFatal | None = None
        recorded: list[str] = []  # the items whose outcome DBOS recorded
        try:
            while failure is None and (waiting or following < len(items)):
                if len(waiting) < window and following < len(items):
                    more = range(following, min(len(items), following + window - len(waiting)))
                    await outside_workflow(
                        self._enqueue(queue, [tasks[i] for i in more], [ids[i] for i in more])
                    )
                    waiting.update((ids[i], i) for i in more)
                    following = more.stop
                finished = await outside_workflow(_finished(list(waiting)))
                recorded += (w.workflow_id for w in finished if w.status == "SUCCESS")
                # Items that ended together are taken in their order, as the local engine
                # joins ties: the first of them to fail fails the fan-out.
                for workflow in sorted(finished, key=lambda w: waiting[w.workflow_id]):
                    if workflow.workflow_id not in waiting:
                        continue  # the cause of the failure, taken already (below)
                    i = waiting.pop(workflow.workflow_id)
                    if failure is None and workflow.status == "CANCELLED":
                        # Taken over after a fail-fast: the item whose failure cancelled
                        # this one fails the fan-out, as it did before.
                        j, cause = await outside_workflow(_cause(ids, i, workflow, applied))
                        if j != i:
                            waiting.pop(cause.workflow_id, None)
                            failure = _failure(interpreter, ctx, stages[j], cause, tasks[j], j)
                    if failure is not None:
                        # Ended with the item that fails the fan-out: narrated and paid for,
                        # as a local item that ended beside it (a cancelled one, by a
                        # failure before a takeover, as far as it went).
                        ended = [workflow] if workflow.status == "CANCELLED" else []
                        partials = await _partials(ended, set(), wait=False)
                        _salvage(interpreter, ctx, stages[i], workflow, tasks[i], partials)
                        continue
                    failure = _failure(interpreter, ctx, stages[i], workflow, tasks[i], i, results)
                if waiting and failure is None:
                    await asyncio.sleep(POLL_SECONDS)
        finally:
            if waiting and not STOPPING.is_set():
                # Fail-fast: the items not finished are not wanted (a cancelled item stops
                # at its next step). What they did until then is narrated and paid for,
                # as a local item's until its cancellation.
                ended, running = await asyncio.shield(outside_workflow(_stop(list(waiting))))
                partials = await asyncio.shield(_partials(ended, running))
                for workflow in ended:
                    i = waiting[workflow.workflow_id]
                    _salvage(interpreter, ctx, stages[i], workflow, tasks[i], partials)
                recorded += (w.workflow_id for w in ended if w.status == "SUCCESS")
        if recorded:
            await _drop_partials(recorded)
        if failure is not None:
            raise failure
        return results

    async def branch(
        self,
        interpreter: Interpreter,
        node: t.Parallel,
        ctx: Ctx,
        index: int,
        own: Scope,
        stage: Stage,
    ) -> Value:
        """One branch of a block, as a workflow; the block's own loop (fail-fast) cancels
        it as it would a local branch, and the cancellation reaches the workflow."""
        task = block_task(interpreter, node, ctx, index, trace_context())
        workflow_id = branch_id(self.workflow_id, task)
        try:
            workflow = await self._awaited(task, workflow_id)
        except asyncio.CancelledError:
            # A sibling's failure cancelled it (a race's branches are not spread): what it
            # did until then is narrated and paid for, as a local branch's until then.
            stopped = self._stopped.pop(workflow_id, None)
            if stopped is not None:
                partials = await asyncio.shield(_partials(*stopped))
                for ended in stopped[0]:
                    _salvage(interpreter, ctx, stage, ended, task, partials)
            raise
        if workflow.status == "SUCCESS":
            await _drop_partials([workflow_id])
        label = f"branch {letter(index)} of the parallel block"
        if workflow.status == "CANCELLED":
            # Taken over after a fail-fast: the sibling whose failure cancelled this
            # branch fails the block, from its own branch, which applies its outcome and
            # names it; this one waits to be cancelled by the block, as then.
            tasks = [
                block_task(interpreter, node, ctx, j) for j in range(len(node.body_statements()))
            ]
            siblings = [branch_id(self.workflow_id, sibling) for sibling in tasks]

            def applied(k: int) -> bool:
                return applied_before(interpreter, tasks[k].branch_key, siblings[k])

            j, cause = await outside_workflow(_cause(siblings, index, workflow, applied))
            if j != index:
                await asyncio.sleep(SIBLING_SECONDS)
                raise_failure(cause.output)  # the sibling never did (not expected)
        return _take(interpreter, ctx, stage, workflow, task, label, own)

    def takes_call(self, interpreter: Interpreter, source: str) -> bool:
        return why_call_local(interpreter, source) is None

    async def call(
        self,
        interpreter: Interpreter,
        ctx: Ctx,
        source: str,
        name: str,
        inputs: dict[str, Value],
        where: str,
    ) -> Called:
        """A program call of the run, as a workflow that any worker executes (the same
        workflow and queue as a fan-out's items), waited for; if the run stops meanwhile,
        a takeover finds it under the same id."""
        task = call_task(interpreter, ctx, source, name, inputs, where, trace_context())
        workflow_id = branch_id(self.workflow_id, task)
        try:
            workflow = await self._awaited(task, workflow_id, CALLS_QUEUE)
        except asyncio.CancelledError:
            # A race's loser, or the run cancelled: what the called program narrated and
            # spent until then is the run's, as a local call's cancelled with its caller.
            stopped = self._stopped.pop(workflow_id, None)
            if stopped is not None:
                partials = await asyncio.shield(_partials(*stopped))
                for ended in stopped[0]:
                    _salvage_call(interpreter, ended, task, partials)
            raise
        label = f"the call of {source}"
        if workflow.status == "CANCELLED":
            raise BackendFatal(f"{label} was cancelled")
        outcome = workflow.output
        if workflow.status != "SUCCESS" or not isinstance(outcome, CallOutcome):
            raise BackendFatal(f"{label} failed in its worker: {workflow.error}")
        await _drop_partials([workflow_id])
        key = task.branch_key
        replayed = applied_before(interpreter, key, workflow_id)
        try:
            return apply_call(interpreter, outcome, replayed=replayed)
        finally:
            mark_applied(interpreter, key, workflow_id)

    async def _awaited(
        self, task: BranchTask | CallTask, workflow_id: str, queue: str | None = None
    ) -> Any:
        """``task`` as the workflow ``workflow_id``, enqueued (on ``queue``, else the
        items') and waited for; what DBOS has of it once it ended.  A wait cancelled (a
        block's fail-fast, a race's loser) cancels the workflow, unless this process is
        stopping: the worker taking the run over collects it then."""
        waiting = True
        try:
            where = queue if queue is not None else await outside_workflow(self._queue())
            await outside_workflow(self._enqueue(where, [task], [workflow_id]))
            while not (found := await outside_workflow(_finished([workflow_id]))):
                await asyncio.sleep(POLL_SECONDS)
            waiting = False
            return found[0]
        finally:
            if waiting and not STOPPING.is_set():
                stopped = await asyncio.shield(outside_workflow(_stop([workflow_id])))
                self._stopped[workflow_id] = stopped

    async def _queue(self) -> str:
        """The provider's queue when a rate limit was set for it, else the shared one
        (asked at each fan-out: a limit set during a long run applies to what follows)."""
        from dbos import DBOS

        own = provider_queue(self.spec.backend)
        queues = await DBOS.list_queues_async()
        return own if any(q.name == own for q in queues) else BRANCHES_QUEUE

    async def _enqueue(
        self, queue: str, tasks: Sequence[BranchTask | CallTask], ids: list[str]
    ) -> None:
        await asyncio.to_thread(_enqueue_together, queue, self.spec, self.run_id, tasks, ids)


def _enqueue_together(
    queue: str,
    spec: RunSpec,
    run_id: str,
    tasks: Sequence[BranchTask | CallTask],
    ids: list[str],
) -> None:
    """The items' workflows queued in one transaction of the system database: one commit
    for the window a run fills, where DBOS.enqueue_workflow commits each (the run's loop
    waited for each in turn, and feeding three workers of 16 items was its bottleneck).
    An id already queued (a run taken over queues its items again) is left as it is, as
    enqueue_workflow leaves it.  As DBOS's own writes, it waits out a lost connection or a
    locked SQLite file and tries again (the transaction is all or nothing, and a retried
    insert finds the rows a commit left)."""
    from dbos._sys_db import db_retry

    database = system_database()
    client = _client(database.engine)

    def together() -> None:
        with database.engine.begin() as connection:
            for task, workflow_id in zip(tasks, ids, strict=True):
                client.enqueue_in_transaction(
                    connection,
                    {
                        "workflow_name": BRANCH_WORKFLOW,
                        "queue_name": queue,
                        "workflow_id": workflow_id,
                        "app_version": APP_VERSION,
                    },
                    spec,
                    run_id,
                    task,
                )

    db_retry(sys_db=database)(together)()


_clients: list[tuple[Any, Any]] = []  # this process's DBOS engine, and its client


def _client(engine: Any) -> Any:
    """A DBOS client over this process's own engine on the system database (it opens no
    connection of its own); another after DBOS is launched again (in tests)."""
    from dbos import DBOSClient

    if not _clients or _clients[0][0] is not engine:
        made = DBOSClient(system_database_engine=engine, application_name=APP_NAME)
        _clients[:] = [(engine, made)]
    return _clients[0][1]


async def _finished(ids: list[str]) -> list[Any]:
    from dbos import DBOS

    found: list[Any] = await DBOS.list_workflows_async(
        workflow_ids=ids, status=_FINISHED, load_input=False
    )
    return found


async def _cause(
    ids: list[str], index: int, cancelled: Any, applied: Callable[[int], bool]
) -> tuple[int, Any]:
    """The item of ``ids`` (a fan-out's items, or a block's branches) whose failure
    cancelled the others, and its index: the failure the run applied before it was taken
    over, else the first failure in order; else the cancelled one at ``index``, as
    found."""
    from dbos import DBOS

    ended: list[Any] = await DBOS.list_workflows_async(
        workflow_ids=ids, status="SUCCESS", load_input=False
    )
    place = {workflow_id: i for i, workflow_id in enumerate(ids)}
    failed = [
        (place[w.workflow_id], w)
        for w in ended
        if isinstance(w.output, BranchOutcome) and (w.output.error or w.output.fatal)
    ]
    return min(
        failed, key=lambda found: (not applied(found[0]), found[0]), default=(index, cancelled)
    )


def _failure(
    interpreter: Interpreter,
    ctx: Ctx,
    stage: Stage,
    workflow: Any,
    task: BranchTask,
    index: int,
    results: list[Value] | None = None,
) -> ProseError | BackendFatal | None:
    """A fan-out's item ``index`` taken (``_take``): its value put in ``results``, or its
    failure returned, which fails the fan-out once the items that ended with it are taken."""
    try:
        value = _take(interpreter, ctx, stage, workflow, task, f"item {index + 1} of the fan-out")
    except (ProseError, BackendFatal) as failed:
        return failed
    if results is not None:
        results[index] = value
    return None


def _salvage(
    interpreter: Interpreter,
    ctx: Ctx,
    stage: Stage,
    workflow: Any,
    task: BranchTask,
    partials: dict[str, PartialOutcome],
) -> None:
    """The narration and spending of an item that ended beside the failure that fails its
    fan-out (or block), or was cancelled by it (its partial outcome, in ``partials``),
    applied to the run without its failure, which the fan-out does not raise twice; its
    bindings are staged, and dropped with the failed fan-out's.  A cancelled item without a
    partial outcome (not begun, or its worker died) has nothing to apply."""
    outcome = workflow.output if workflow.status == "SUCCESS" else None
    if workflow.status == "CANCELLED":
        outcome = partials.get(workflow.workflow_id)
    if not isinstance(outcome, BranchOutcome):
        return
    with contextlib.suppress(ProseError, BackendFatal):
        _applied(interpreter, ctx, stage, outcome, task, workflow.workflow_id)


def _salvage_call(
    interpreter: Interpreter,
    workflow: Any,
    task: CallTask,
    partials: dict[str, PartialOutcome],
) -> None:
    """The narration and spending of a program call cancelled with its caller (its partial
    outcome, in ``partials``), or that ended just before: the run's, without its result.
    A call cancelled before it began (or whose worker died) has nothing to apply."""
    outcome = workflow.output if workflow.status == "SUCCESS" else None
    if workflow.status == "CANCELLED":
        outcome = partials.get(workflow.workflow_id)
    if not isinstance(outcome, CallOutcome):
        return
    key, workflow_id = task.branch_key, workflow.workflow_id
    replayed = applied_before(interpreter, key, workflow_id)
    try:
        with contextlib.suppress(ProseError):
            called = apply_call(interpreter, outcome, replayed=replayed)
            interpreter.count_spent(called.usage, called.cost, called.sessions)
    finally:
        mark_applied(interpreter, key, workflow_id)


async def _stop(ids: list[str]) -> tuple[list[Any], set[str]]:
    """Cancels the items ``ids``: what DBOS has of them then (each ended, cancelled or
    finished before), and which of the cancelled ones a worker had taken from the queue
    (it writes what the item did until then, dbos_partials): those with an executor, which
    a queued workflow gets when it is taken and keeps when it is cancelled.  DBOS takes no
    cancelled one from the queue afterwards."""
    await _cancel(ids)
    ended = await _finished(ids)
    taken = {w.workflow_id for w in ended if w.status == "CANCELLED" and w.executor_id}
    return ended, taken


async def _partials(
    ended: list[Any], running: set[str], *, wait: bool = True
) -> dict[str, PartialOutcome]:
    """The partial outcomes of the cancelled items among ``ended``: waited for those that
    were ``running`` when they were cancelled, read for the others (``wait`` False: read
    for all)."""
    cancelled = [w.workflow_id for w in ended if w.status == "CANCELLED"]
    if not cancelled:
        return {}
    awaited = [i for i in cancelled if i in running] if wait else []
    engine = system_database().engine
    found = await collect_partials(engine, awaited) if awaited else {}
    others = [i for i in cancelled if i not in found]
    if others:
        found.update(await collect_partials(engine, others, seconds=0))
    return found


async def _cancel(ids: list[str]) -> None:
    from dbos import DBOS

    await DBOS.cancel_workflows_async(ids)


def _take(
    interpreter: Interpreter,
    ctx: Ctx,
    stage: Stage,
    workflow: Any,
    task: BranchTask,
    label: str,
    own: Scope | None = None,
) -> Value:
    """A finished item's outcome applied to the run (``apply``), noted as applied even
    when it is a failure, which a takeover must not narrate twice."""
    if workflow.status == "CANCELLED":
        raise BackendFatal(f"{label} was cancelled")
    outcome = workflow.output
    if workflow.status != "SUCCESS" or not isinstance(outcome, BranchOutcome):
        raise BackendFatal(f"{label} failed in its worker: {workflow.error}")
    return _applied(interpreter, ctx, stage, outcome, task, workflow.workflow_id, own)


def _applied(
    interpreter: Interpreter,
    ctx: Ctx,
    stage: Stage,
    outcome: BranchOutcome,
    task: BranchTask,
    workflow_id: str,
    own: Scope | None = None,
) -> Value:
    """``outcome``, of the item's workflow ``workflow_id``, applied to the run (``apply``)
    and noted as applied even when it is a failure, which a takeover must not narrate
    twice."""
    replayed = applied_before(interpreter, task.branch_key, workflow_id)
    try:
        return apply(interpreter, ctx, stage, outcome, replayed=replayed, own=own)
    finally:
        mark_applied(interpreter, task.branch_key, workflow_id)
