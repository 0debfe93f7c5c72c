"""The ``dbos`` engine: every run is a durable workflow of DBOS Transact (the ``dbos``
package, extra ``openprose[dbos]``, imported only here and only when this engine is used).

Mapping (docs/scale.md):

- A run is the workflow ``openprose.run`` whose id is the run id.  It runs the program with
  the VM as the ``local`` engine does, so bindings, outputs, run-directory files and
  narration are the same.  Every model exchange is a step of the run's journal (step key +
  input hash -> answer, written before the run goes on): when a worker dies, the workflow is
  taken over and re-executed, and every step the journal holds is answered from it, not
  asked again.  Only the step in flight at the death runs again.
- ``prose run --engine dbos --detach`` enqueues the run on the queue ``openprose-runs``;
  ``prose worker`` processes dequeue and execute runs (``--concurrency`` runs each).  Without
  ``--detach`` the process that asked for the run executes it itself, as a worker of that
  one run.
- A worker whose process is gone has its runs taken over: every worker looks, once a second,
  for runs that are pending on a dead executor, and puts them back on the queue.  An
  executor id is ``host:pid``: one on this machine is dead when its process is; one on
  another machine when it has not written its heartbeat row (``openprose_executors``, once
  a second) for ``STALE_SECONDS``.
- A mid-program ``input`` waits for a message (``prose runs send RUN_ID name=value``) when
  nobody attached to the run can be asked.
- A run resumed after it ended (failed, cancelled: ``prose run --resume``, ``prose runs
  resume``) is a new workflow of the same run, its next attempt: ``RUN_ID/attempt-2``,
  ``RUN_ID/attempt-3``...  (the first is ``RUN_ID`` itself).  It takes the run over from its
  state as a worker takes over a dead one's: the journal answers every step taken before.

The system database is PostgreSQL when the run's state is (the same URL variables:
``OPENPROSE_POSTGRES_URL``...), else SQLite at ``.prose/dbos.sqlite`` beside the runs;
``OPENPROSE_DBOS_URL`` names another.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprose.vm.engines.base import Attachment, RunSpec, build_backend
from openprose.vm.engines.dbos_branches import (
    APP_NAME,
    APP_VERSION,
    BRANCH_QUEUES,
    BRANCH_WORKFLOW,
    BRANCHES_QUEUE,
    CALL_MARK,
    CALLS_QUEUE,
    DEFAULT_BRANCH_CONCURRENCY,
    DEFAULT_CONCURRENCY,
    ITEM_TELEMETRY,
    LENT_BACKENDS,
    STOPPING,
    DbosBranches,
    branch_workflow,
    durable_clock,
    durable_steps,
    outside_workflow,
    paced_backend,
    provider_queue,
    shared_budget,
    shared_summaries,
    system_database,
    unless_cancelled,
)
from openprose.vm.engines.dbos_budget import make_table as make_spending_table
from openprose.vm.engines.dbos_pacing import make_table as make_pacing_table
from openprose.vm.engines.dbos_partials import make_table as make_partials_table
from openprose.vm.engines.dbos_steps import STEP_PREFIX
from openprose.vm.engines.dbos_summaries import make_table as make_summaries_table
from openprose.vm.engines.dbos_tables import make as make_table

if TYPE_CHECKING:
    from openprose.config import RateLimit
    from openprose.vm.interpreter import RunResult
    from openprose.vm.telemetry import Telemetry

RUN_WORKFLOW = "openprose.run"
RUNS_QUEUE = "openprose-runs"
URL_VARIABLE = "OPENPROSE_DBOS_URL"
AWAITING_INPUT = "openprose.awaiting-input"  # the event a run waiting for an input sets
INPUT_TOPIC = "input:"  # + the input's name: the topic of the message that answers it
SQLITE_FILE = "dbos.sqlite"
# How often a queue is polled and a worker looks for runs of dead executors (seconds).
POLL_SECONDS = 0.2
RECOVERY_SECONDS = 1.0
BRANCH_POLL_SECONDS = 0.05  # items are short: they are looked for more often than runs
# Every executor writes the time into its row of this table once a second; one on another
# machine whose row is older than STALE_SECONDS is taken to be dead (its machine's clock and
# ours are taken to agree within a few seconds).
BEATS_TABLE = "openprose_executors"
BEAT_SECONDS = 1.0
STALE_SECONDS = 15.0
# How long a worker taking a run over waits for the state backend to let go of the dead
# executor's claim on it.
TAKEOVER_SECONDS = 300.0
# The workflow statuses of a run not over: queued, executing (or pending on a dead
# executor, for a worker to take over), or waiting to be queued.
LIVE = ("ENQUEUED", "PENDING", "DELAYED")
ATTEMPT = "/attempt-"  # RUN_ID/attempt-N: the Nth workflow of a resumed run


def attempt_id(run_id: str, attempt: int) -> str:
    """The workflow id of a run's ``attempt``: the run id for the first."""
    return run_id if attempt <= 1 else f"{run_id}{ATTEMPT}{attempt}"


def _parts(workflow_id: str) -> tuple[str, int, str]:
    """A workflow id's run, attempt and own part: ``R`` (1, ""), ``R/attempt-2`` (2,
    ""), ``R/attempt-2/4@17`` (2, "4@17"), ``R/3:call`` (1, "3:call").  A run id has no
    slash; an item's step key may have some."""
    run_id, _, rest = workflow_id.partition("/")
    mark = ATTEMPT.lstrip("/")
    head, _, own = rest.partition("/")
    number = head[len(mark) :]
    if head.startswith(mark) and number.isdigit():
        return run_id, int(number), own
    return run_id, 1, rest


def run_of(workflow_id: str) -> str:
    """The run a workflow (any attempt's, an item's, a call's) is of."""
    return _parts(workflow_id)[0]


def described(workflow_id: str) -> str:
    """A run's or an item's workflow as a worker names it: ``run R``, ``run R (attempt
    2)``, ``item KEY of run R``, ``program call at step KEY of run R``."""
    run_id, number, own = _parts(workflow_id)
    run = f"run {run_id}" + (f" (attempt {number})" if number > 1 else "")
    if not own:
        return run
    if own.endswith(CALL_MARK):
        return f"program call at step {own.removesuffix(CALL_MARK)} of {run}"
    return f"item {own} of {run}"


def _attempt_of(workflow_id: str) -> int:
    return _parts(workflow_id)[1]


def attempts(found: Sequence[Any], run_id: str) -> list[Any]:
    """The workflows of ``run_id``'s attempts among ``found`` (DBOS's workflow statuses),
    the first first."""
    mine = [w for w in found if w.name == RUN_WORKFLOW and run_of(w.workflow_id) == run_id]
    return sorted(mine, key=lambda w: _attempt_of(w.workflow_id))


def next_attempt(found: Sequence[Any], run_id: str) -> str:
    """The workflow id that resumes ``run_id``, whose attempts are among ``found``;
    EngineError while one of them is not over."""
    mine = attempts(found, run_id)
    live = [w for w in mine if w.status in LIVE]
    if live:
        if live[-1].status == "PENDING":
            raise NotOver(
                f"run {run_id} is not over: it runs on the dbos engine, or waits for a worker "
                f"to take it over (`prose worker`); `prose runs cancel {run_id}` ends it"
            )
        raise NotOver(f"run {run_id} is queued on the dbos engine: a worker starts it")
    return attempt_id(run_id, _attempt_of(mine[-1].workflow_id) + 1 if mine else 1)


def _of_run(run_id: str) -> dict[str, Any]:
    """What to ask ``list_workflows`` for to find a run's attempts (``attempts``)."""
    return {
        "workflow_id_prefix": run_id,
        "name": RUN_WORKFLOW,
        "load_input": False,
        "load_output": False,
    }


class EngineError(Exception):
    """The dbos engine cannot do what was asked (not installed, no such run, a system
    database it cannot reach).  The message is for the user and holds no password."""


class NoRun(EngineError):
    """The dbos engine has no workflow of the run asked for."""


class NotOver(EngineError):
    """A run cannot be resumed: the dbos engine has an attempt of it not over."""


def require_over(url: str, run_id: str) -> None:
    """NotOver while the dbos engine, whose system database is at ``url``, has an attempt
    of ``run_id`` queued or running: a resume by the local engine would race the worker
    that takes it (EngineError: no DBOS tables there, or no database)."""
    with client(url) as dbos_client:
        next_attempt(dbos_client.list_workflows(**_of_run(run_id)), run_id)


def require_dbos() -> None:
    try:
        import dbos  # noqa: F401
    except ImportError:
        raise EngineError(
            "the dbos engine needs DBOS Transact: pip install 'openprose[dbos]'"
        ) from None


def system_database_url(
    state: str,
    runs_root: Path,
    project_root: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """Where DBOS keeps its workflows for runs kept under ``runs_root`` in ``state``."""
    environ = os.environ if environ is None else environ
    explicit = environ.get(URL_VARIABLE)
    if explicit:
        return explicit
    if state == "postgres":
        from openprose.vm.state.postgres_url import find_url

        root = project_root if project_root is not None else runs_root.parent.parent
        return find_url(root, environ).url
    return f"sqlite:///{runs_root.parent / SQLITE_FILE}"


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite system database (None: another kind of database)."""
    return Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None


def _make_room(url: str) -> None:
    """SQLite makes its file, not the directories above it (a project's first run)."""
    file = sqlite_file(url)
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)


def shown(url: str) -> str:
    from openprose.vm.state.postgres_url import redact

    return redact(url)


def this_executor() -> str:
    """This process's executor id: unique on the machine, and telling whether it lives."""
    return f"{socket.gethostname()}:{os.getpid()}"


def executor_alive(executor_id: str | None, beats: Mapping[str, float] | None = None) -> bool:
    """Whether the process behind an executor id still runs.  One on this machine is
    asked directly; one on another machine by its last heartbeat in ``beats`` (executor id
    -> epoch seconds): without one, or without an id of our making, it is taken to be alive
    (nothing is taken from what cannot be judged)."""
    if not executor_id:
        return True
    host, _, pid = executor_id.rpartition(":")
    if not host or not pid.isdigit():
        return True
    if host == socket.gethostname():
        from openprose.vm.rundir import pid_alive

        return pid_alive(int(pid))
    beat = (beats or {}).get(executor_id)
    return beat is None or time.time() - beat < STALE_SECONDS


@functools.cache
def _beats_table() -> Any:
    import sqlalchemy as sa

    return sa.Table(
        BEATS_TABLE,
        sa.MetaData(),
        sa.Column("executor_id", sa.String(256), primary_key=True),
        sa.Column("beat_at", sa.Float, nullable=False),
    )


class _Heartbeat:
    """Writes this executor's row of the heartbeat table once a second, on a thread."""

    def __init__(self, engine: Any, executor_id: str) -> None:
        self.engine = engine
        self.executor_id = executor_id
        self.table = _beats_table()
        make_table(engine, self.table)
        self.stopped = threading.Event()
        self.beat()
        self.thread = threading.Thread(target=self._run, name="openprose-heartbeat", daemon=True)
        self.thread.start()

    def beat(self) -> None:
        table = self.table
        with self.engine.begin() as connection:
            now = time.time()
            done = connection.execute(
                table.update().where(table.c.executor_id == self.executor_id).values(beat_at=now)
            )
            if done.rowcount == 0:
                connection.execute(table.insert().values(executor_id=self.executor_id, beat_at=now))

    def _run(self) -> None:
        while not self.stopped.wait(BEAT_SECONDS):
            # A database that does not answer for a moment: the next beat tries again.
            with contextlib.suppress(Exception):
                self.beat()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(5)


def heartbeats(engine: Any) -> dict[str, float]:
    """The last heartbeat of every executor that wrote one (executor id -> epoch seconds);
    the table is made by the launch of the executor asking."""
    table = _beats_table()
    with engine.connect() as connection:
        return {row.executor_id: row.beat_at for row in connection.execute(table.select())}


# ------------------------------------------------------------------ the workflow

# The attachments of the runs this process started, by run id (a run taken over by another
# process runs without one).
_ATTACHED: dict[str, Attachment] = {}
_registered: list[Any] = []


def _workflow() -> Any:
    """The run workflow, registered with DBOS once per process (before launch)."""
    if not _registered:
        from dbos import DBOS

        @DBOS.workflow(name=RUN_WORKFLOW)
        async def run_workflow(spec: RunSpec) -> RunResult:
            return await execute(spec)

        _registered.append(run_workflow)
    return _registered[0]


async def execute(spec: RunSpec) -> RunResult:
    """The body of the run workflow: a new run, or one taken over (its journal answers
    the steps it took)."""
    from dbos import DBOS

    from openprose.vm.engines.local import LocalExecutor
    from openprose.vm.state import StateError

    workflow_id = DBOS.workflow_id
    assert workflow_id is not None
    run_id = run_of(workflow_id)
    attachment = _ATTACHED.get(run_id) or Attachment()
    if attachment.ask is None:
        attachment = replace(attachment, ask=_ask_by_message)
    if attachment.telemetry is None and ITEM_TELEMETRY:
        attachment = replace(attachment, telemetry=ITEM_TELEMETRY[0])  # prose worker --otel
    # Its model requests wait for their places under its backend's rate limit, if any.
    backend = attachment.backend if attachment.backend is not None else build_backend(spec)
    paced = await outside_workflow(paced_backend(backend, spec.backend, run_id))
    attachment = replace(attachment, backend=paced)
    catalog = spec.catalog()
    branches = DbosBranches(spec, run_id, workflow_id)
    resources: dict[str, Any] = {
        "branches": branches,
        "remote": spec.remote(),
        "fetched": spec.fetched,
    }
    # A summary is asked once by the run and its items and calls, wherever they run.
    resources["summaries"] = shared_summaries(workflow_id, workflow_id)
    # Its exchanges are checkpoints of its workflow as well as journal steps, and its
    # retries' backoffs durable sleeps (but under a test's fake time).
    resources["durable_steps"] = durable_steps
    if attachment.clock is None:
        attachment = replace(attachment, clock=durable_clock())
    # A spending limit is counted with its items and calls, wherever they run.
    budget = shared_budget(spec, workflow_id)
    if budget is not None:
        resources["budget"] = budget()
    try:
        catalog.info(run_id)
    except StateError:
        # Not begun: the run is made under the workflow's id.
        run = LocalExecutor(**resources).run(spec, run_id, attachment)
    else:
        store = await _taken_over(catalog, run_id)
        run = LocalExecutor(resume=store, **resources).run(spec, None, attachment)
    return await unless_cancelled(workflow_id, run)


async def _taken_over(catalog: Any, run_id: str) -> Any:
    """The run's store, claimed for this executor.  The state backend may still see the
    dead executor's claim for a while (a PostgreSQL server releases a dead machine's
    session, and with it the run's lock, when it notices the connection is gone): it is
    asked again until ``TAKEOVER_SECONDS`` have passed."""
    from openprose.vm.state import StateError

    deadline = time.monotonic() + TAKEOVER_SECONDS
    while True:
        try:
            return catalog.open(run_id)
        except StateError as error:
            if "still running" not in str(error) or time.monotonic() > deadline:
                raise
        await asyncio.sleep(1.0)


async def _ask_by_message(name: str, prompt: str) -> str:
    """A mid-program input nobody attached can give: the run says it waits (an event) and
    waits for a message on the input's topic."""
    from dbos import DBOS

    await DBOS.set_event_async(AWAITING_INPUT, {"name": name, "prompt": prompt})
    while True:
        message = await DBOS.recv_async(INPUT_TOPIC + name, timeout_seconds=60)
        if message is not None:
            await DBOS.set_event_async(AWAITING_INPUT, None)
            return str(message)


# ------------------------------------------------------------------ processes


class _QuietOnPurpose(logging.Filter):
    """Drops what DBOS reports of workflows stopped on purpose, as faults: each workflow
    interrupted as this process stops (Ctrl-C, SIGTERM), a cancelled task or one that could
    not end because DBOS had stopped (those stay pending and another worker takes them over,
    which is what stopping means here); and a run cancelled by ``prose runs cancel``, which
    its state says."""

    INTERRUPTED = (
        "task cancelled",
        "Error executing workflow",
        "Exception encountered in asynchronous workflow",
    )
    # What DBOS reports of a workflow cancelled by `prose runs cancel` as it ends: asked
    # for, and said by the run's own state.
    CANCELLED = ("DBOSAwaitedWorkflowCancelledError", "DBOSWorkflowCancelledError")
    # What DBOS reports of each step (a model exchange, dbos_steps) whose task is
    # cancelled: only the engine cancels them, on purpose (a failed fan-out's siblings, a
    # race's losers, a cancelled run), and the narration says so.  And of an item whose
    # outcome it refused, cancelled as it ended: the run has it from its partial outcome
    # (dbos_partials).
    ON_PURPOSE = (
        "was cancelled during execution",
        "Asyncio task cancelled for workflow or step",
        "outcome was not recorded",
    )

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and type(record.exc_info[1]).__name__ in self.CANCELLED:
            return False
        message = record.getMessage()
        if any(part in message for part in self.ON_PURPOSE):
            return False
        if not STOPPING.is_set():
            return True
        return not any(part in message for part in self.INTERRUPTED)


def launch(url: str, executor_id: str, queues: Sequence[str]) -> None:
    """Make this process a DBOS executor listening to ``queues`` (none: it runs only what
    it starts itself)."""
    require_dbos()
    from dbos import DBOS

    dbos_log = logging.getLogger("dbos")
    dbos_log.setLevel(logging.WARNING)
    if not any(isinstance(f, _QuietOnPurpose) for f in dbos_log.filters):
        dbos_log.addFilter(_QuietOnPurpose())
    _make_room(url)
    _workflow()
    branch_workflow()
    DBOS(
        config={
            "name": APP_NAME,
            "system_database_url": url,
            "executor_id": executor_id,
            "application_version": APP_VERSION,
            "log_level": "WARNING",
            "notification_listener_polling_interval_sec": 0.1,
        }
    )
    DBOS.listen_queues(list(queues))
    DBOS.launch()
    STOPPING.clear()
    _heartbeat.append(_Heartbeat(system_database().engine, executor_id))
    make_pacing_table(system_database().engine)
    make_spending_table(system_database().engine)
    make_summaries_table(system_database().engine)
    make_partials_table(system_database().engine)


_heartbeat: list[_Heartbeat] = []


def shut_down() -> None:
    from dbos import DBOS

    STOPPING.set()  # what its runs still wait for is left for the worker taking them over
    while _heartbeat:
        _heartbeat.pop().stop()
    DBOS.destroy(workflow_completion_timeout_sec=0)


async def recover_dead_executors() -> list[str]:
    """Put back on the queue the runs pending on executors whose process is gone; returns
    their ids.  Idempotent: a run a live executor has taken since is not touched."""
    from dbos import DBOS

    pending = await DBOS.list_workflows_async(
        status="PENDING",
        name=[RUN_WORKFLOW, BRANCH_WORKFLOW],
        load_input=False,
        load_output=False,
    )
    if not pending:
        return []
    beats = await asyncio.to_thread(heartbeats, system_database().engine)
    recovered = []
    for workflow in pending:
        executor = workflow.executor_id
        if executor is None or executor_alive(executor, beats):
            continue
        queue = workflow.queue_name or _queue_of(workflow)
        if await asyncio.to_thread(_reenqueue, workflow.workflow_id, executor, queue):
            recovered.append(workflow.workflow_id)
    return recovered


def _queue_of(workflow: Any) -> str:
    """The queue a workflow is put back on when DBOS does not say which it was on."""
    if workflow.name != BRANCH_WORKFLOW:
        return RUNS_QUEUE
    return CALLS_QUEUE if workflow.workflow_id.endswith(CALL_MARK) else BRANCHES_QUEUE


def _reenqueue(workflow_id: str, executor_id: str, queue: str) -> bool:
    # DBOS's own recovery step (what its Conductor does for a dead executor), onto our
    # queue: it only moves a workflow still pending on that executor, so two workers
    # recovering at once cannot both take it.  Private in dbos 3.4
    # (tests/vm/engines/test_dbos_engine.py checks it is there).
    return bool(system_database().reenqueue_for_recovery(workflow_id, [executor_id], queue))


async def work(
    url: str,
    *,
    concurrency: int,
    queues: Sequence[str] = (RUNS_QUEUE, CALLS_QUEUE, *BRANCH_QUEUES),
    branch_concurrency: int = DEFAULT_BRANCH_CONCURRENCY,
    rate_limits: Mapping[str, RateLimit | None] | None = None,
    global_concurrency: Mapping[str, int] | None = None,
    stop: asyncio.Event,
    executor_id: str | None = None,
    on_recovered: Any = None,
    telemetry: Telemetry | None = None,
) -> None:
    """``prose worker``: execute queued runs until ``stop`` is set; ``telemetry`` traces
    the runs and the items it executes.  ``global_concurrency`` (``runs``, ``branches``)
    caps what all workers execute at once; a worker's own cap is never above it (DBOS
    refuses a queue whose per-worker cap exceeds its global one)."""
    launch(url, executor_id or this_executor(), queues)
    if telemetry is not None:
        ITEM_TELEMETRY[:] = [telemetry]
    try:
        from dbos import DBOS

        caps = dict(global_concurrency or {})
        runs_cap = caps.get("runs")
        await DBOS.register_queue_async(
            RUNS_QUEUE,
            worker_concurrency=_within(concurrency, runs_cap),
            global_concurrency=runs_cap,
            polling_interval_sec=POLL_SECONDS,
            on_conflict="always_update",
        )
        await _register_calls(concurrency, "always_update", runs_cap)
        items_cap = caps.get("branches")
        await _register_branches(branch_concurrency, "always_update", items_cap)
        await register_rate_limits(
            rate_limits or {}, branch_concurrency, "always_update", items_cap
        )
        while not stop.is_set():
            recovered = await recover_dead_executors()
            if recovered and on_recovered is not None:
                on_recovered(recovered)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), RECOVERY_SECONDS)
    finally:
        ITEM_TELEMETRY.clear()
        shut_down()


def _within(concurrency: int, cap: int | None) -> int:
    return concurrency if cap is None else min(concurrency, cap)


async def _register_calls(concurrency: int, on_conflict: Any, cap: int | None = None) -> None:
    """The queue of the run's program calls: a call is a program run inside the run, so a
    worker executes as many at once as runs (``--concurrency``), under the runs' global
    cap, and looks for them as often."""
    from dbos import DBOS

    await DBOS.register_queue_async(
        CALLS_QUEUE,
        worker_concurrency=_within(concurrency, cap),
        global_concurrency=cap,
        polling_interval_sec=POLL_SECONDS,
        on_conflict=on_conflict,
    )


async def _register_branches(concurrency: int, on_conflict: Any, cap: int | None = None) -> None:
    """The queue of fan-out items; a worker's ``--branch-concurrency`` sets how many
    each process executes at once, ``cap`` how many all do (an attached run keeps what
    the workers set)."""
    await _register_items_queue(BRANCHES_QUEUE, concurrency, on_conflict, cap=cap)


async def register_rate_limits(
    limits: Mapping[str, RateLimit | None],
    concurrency: int,
    on_conflict: Any,
    cap: int | None = None,
) -> None:
    """Each provider's limit (``run.rate-limits``, ``prose worker --rate-limit``) as its
    own items' queue's limiter, which DBOS enforces across every worker: at most so many
    items of that provider's runs start in any window of the period.  ``None`` ("off")
    leaves the queue without a limit."""
    for backend, limit in limits.items():
        await _register_items_queue(provider_queue(backend), concurrency, on_conflict, limit, cap)


async def _register_items_queue(
    name: str,
    concurrency: int,
    on_conflict: Any,
    limit: RateLimit | None = None,
    cap: int | None = None,
) -> None:
    from dbos import DBOS

    await DBOS.register_queue_async(
        name,
        worker_concurrency=_within(concurrency, cap),
        global_concurrency=cap,
        limiter=None if limit is None else {"limit": limit[0], "period": limit[1]},
        polling_interval_sec=BRANCH_POLL_SECONDS,
        on_conflict=on_conflict,
    )


class DbosExecutor:
    name = "dbos"

    def __init__(
        self,
        url: str,
        rate_limits: Mapping[str, RateLimit | None] | None = None,
        global_concurrency: Mapping[str, int] | None = None,
    ) -> None:
        require_dbos()
        self.url = url
        # The run's configuration's, for queues no worker has registered yet.
        self.rate_limits = dict(rate_limits or {})
        self.items_cap = (global_concurrency or {}).get("branches")
        self.runs_cap = (global_concurrency or {}).get("runs")

    async def run(
        self, spec: RunSpec, run_id: str, attachment: Attachment, *, resume: bool = False
    ) -> RunResult:
        """Execute the run here (this process is its executor; if it dies, a worker takes
        the run over) and wait for its result.  ``resume``: the run exists and has ended;
        this is its next attempt (EngineError while an attempt is not over)."""
        from dbos import DBOS, SetWorkflowID

        # It executes its own run's items too (and any other run's: the queue is shared),
        # beside the workers.
        launch(self.url, this_executor(), [CALLS_QUEUE, *BRANCH_QUEUES])
        _ATTACHED[run_id] = attachment
        if attachment.backend is not None:
            LENT_BACKENDS[run_id] = attachment.backend
        if attachment.telemetry is not None:
            ITEM_TELEMETRY[:] = [attachment.telemetry]
        running: asyncio.Future[Any] | None = None  # the workflow's task, in this process
        try:
            await _register_calls(DEFAULT_CONCURRENCY, "never_update", self.runs_cap)
            await _register_branches(DEFAULT_BRANCH_CONCURRENCY, "never_update", self.items_cap)
            await register_rate_limits(
                self.rate_limits, DEFAULT_BRANCH_CONCURRENCY, "never_update", self.items_cap
            )
            workflow_id = run_id
            if resume:
                found = await DBOS.list_workflows_async(**_of_run(run_id))
                workflow_id = next_attempt(found, run_id)
            with SetWorkflowID(workflow_id):
                handle = await DBOS.start_workflow_async(_workflow(), spec)
            running = getattr(handle, "task", None)  # dbos 3.4's WorkflowHandleAsyncTask
            try:
                result: RunResult = await handle.get_result()
            except Exception:
                status = await DBOS.get_workflow_status_async(workflow_id)
                if status is None or status.status != "CANCELLED":
                    raise
                return cancelled_result(spec, run_id)
            return result
        finally:
            if isinstance(running, asyncio.Future) and not running.done():
                # Interrupted (Ctrl-C): the workflow stays pending for a worker to take
                # over, and so do the items this process was executing, of any run. Their
                # tasks end now, while DBOS is up, rather than when the loop closes, where
                # they failed with DBOS's tracebacks.
                STOPPING.set()
                here = asyncio.current_task()
                others = [task for task in asyncio.all_tasks() if task is not here]
                for task in others:
                    task.cancel()
                await asyncio.gather(*others, return_exceptions=True)
            _ATTACHED.pop(run_id, None)
            LENT_BACKENDS.pop(run_id, None)
            ITEM_TELEMETRY.clear()
            shut_down()

    def submit(self, spec: RunSpec, run_id: str, *, resume: bool = False) -> str:
        """Queue the run (``resume``: its next attempt) for a worker."""
        with client(self.url, make_tables=True) as dbos_client:
            workflow_id = run_id
            if resume:
                workflow_id = next_attempt(dbos_client.list_workflows(**_of_run(run_id)), run_id)
            dbos_client.enqueue(
                {
                    "workflow_name": RUN_WORKFLOW,
                    "queue_name": RUNS_QUEUE,
                    "workflow_id": workflow_id,
                    "app_version": APP_VERSION,
                },
                spec,
            )
        return run_id


def cancelled_result(spec: RunSpec, run_id: str) -> RunResult:
    """The result of an attached run cancelled by ``prose runs cancel``: its state says
    what it did until then."""
    from openprose.vm.interpreter import RunResult

    where = Path(spec.runs_root) / run_id if spec.state in ("filesystem", "sqlite") else None
    return RunResult(
        status="cancelled",
        error=f"cancelled (`prose runs cancel {run_id}`)",
        run_id=run_id,
        run_dir=where,
    )


class client:
    """A DBOS client of the system database at ``url``, for the commands that do not run
    workflows: enqueue, send, list, cancel.  ``make_tables``: a command that adds a run
    makes DBOS's tables when no worker ever made them; the others only read, and change
    nothing in a database DBOS never used.  What fails inside is an ``EngineError``."""

    def __init__(self, url: str, *, make_tables: bool = False) -> None:
        require_dbos()
        self.url = url
        self.make_tables = make_tables

    def __enter__(self) -> Any:
        from dbos import DBOSClient

        if self.make_tables:
            _make_room(self.url)
        try:
            self._client = DBOSClient(system_database_url=self.url, application_name=APP_NAME)
            if self.make_tables:
                # A client never makes the system tables: the first run queued on a new
                # database makes them, as a worker's launch would (private in dbos 3.4;
                # tested).
                self._client._sys_db.run_migrations()
        except Exception as error:  # an unreachable or unusable database
            raise EngineError(
                f"cannot reach the DBOS system database {shown(self.url)}: {error}"
            ) from None
        return self._client

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self._client.destroy()
        if isinstance(error, Exception) and not isinstance(error, EngineError):
            # A database without DBOS's tables, or one that went away meanwhile.
            raise EngineError(f"the DBOS system database {shown(self.url)}: {error}") from None


def current_attempt(dbos_client: Any, run_id: str) -> str:
    """The workflow of the run's attempt not over, else of its last one."""
    mine = attempts(dbos_client.list_workflows(**_of_run(run_id)), run_id)
    if not mine:
        raise NoRun(f"no DBOS run {run_id}")
    live = [w for w in mine if w.status in LIVE]
    return str((live or mine)[-1].workflow_id)


def workflows_of(url: str, run_id: str) -> dict[str, Any] | None:
    """What the dbos engine holds of a run, for ``prose runs show``: its attempts (workflow
    id, status, executor), the input its attempt running waits for (``awaiting_input``:
    name and prompt, or None), the exchanges its last attempt's workflow checkpointed
    (``exchanges``: how many, the last one's step) and its fan-out items (how many of each
    status, on how many executors); None: the engine never had the run."""
    with client(url) as dbos_client:
        found = dbos_client.list_workflows(
            workflow_id_prefix=run_id, load_input=False, load_output=False
        )
        mine = attempts(found, run_id)
        if not mine:
            return None
        awaiting = awaited_input(dbos_client, mine[-1])
        steps = dbos_client.list_workflow_steps(mine[-1].workflow_id, load_output=False)
    exchanges = [s["function_name"] for s in steps if s["function_name"].startswith(STEP_PREFIX)]
    theirs = [
        w for w in found if w.name == BRANCH_WORKFLOW and w.workflow_id.startswith(f"{run_id}/")
    ]
    calls = [w for w in theirs if w.workflow_id.endswith(CALL_MARK)]
    return {
        "attempts": [
            {"workflow_id": w.workflow_id, "status": w.status, "executor": w.executor_id}
            for w in mine
        ],
        "awaiting_input": awaiting,
        "exchanges": {"count": len(exchanges), "last": exchanges[-1] if exchanges else None},
        "items": _counted([w for w in theirs if not w.workflow_id.endswith(CALL_MARK)]),
        "calls": _counted(calls),
    }


def awaited_input(dbos_client: Any, workflow: Any) -> dict[str, str] | None:
    """The mid-program input a run's attempt waits for (its name and prompt), if it is
    executing and waits for one."""
    if workflow.status != "PENDING":
        return None
    asked = dbos_client.get_event(workflow.workflow_id, AWAITING_INPUT, timeout_seconds=0)
    if not isinstance(asked, dict) or not asked.get("name"):
        return None
    return {"name": str(asked["name"]), "prompt": str(asked.get("prompt") or "")}


def _counted(workflows: Sequence[Any]) -> dict[str, Any]:
    statuses: dict[str, int] = {}
    for workflow in workflows:
        statuses[workflow.status] = statuses.get(workflow.status, 0) + 1
    return {
        "count": len(workflows),
        "statuses": dict(sorted(statuses.items())),
        "executors": len({w.executor_id for w in workflows if w.executor_id}),
    }


def send_input(url: str, run_id: str, name: str, value: str) -> None:
    with client(url) as dbos_client:
        dbos_client.send(current_attempt(dbos_client, run_id), value, INPUT_TOPIC + name)


def cancel(url: str, run_id: str) -> None:
    """Cancel a run and the fan-out items it has not collected (an item's id is RUN/...,
    an attempt's item's RUN/attempt-N/...): the run, waiting for its items, ends when it
    finds them cancelled."""
    with client(url) as dbos_client:
        dbos_client.cancel_workflow(current_attempt(dbos_client, run_id))
        items = dbos_client.list_workflows(
            workflow_id_prefix=f"{run_id}/",
            status=["ENQUEUED", "PENDING", "DELAYED"],
            load_input=False,
            load_output=False,
        )
        if items:
            dbos_client.cancel_workflows([item.workflow_id for item in items])


def forget(url: str, run_id: str) -> int:
    """Remove what the dbos engine holds of a run that is over: the workflows of its
    attempts, items and calls (with their steps, inputs, outputs and messages), and the
    engine's rows of its attempts (spending, summaries, partial outcomes).  NotOver while
    an attempt is queued or running.  The number of workflows removed (0: the engine never
    had it)."""
    with client(url) as dbos_client:
        return _forget(dbos_client, run_id)


def forget_all(url: str, run_ids: Sequence[str]) -> dict[str, int | EngineError]:
    """``forget`` for each of ``run_ids``, through one client: what each removed, or why
    it could not."""
    done: dict[str, int | EngineError] = {}
    with client(url) as dbos_client:
        for run_id in run_ids:
            try:
                done[run_id] = _forget(dbos_client, run_id)
            except EngineError as error:
                done[run_id] = error
    return done


def not_over(url: str) -> set[str]:
    """The runs the dbos engine has an attempt of queued or running."""
    with client(url) as dbos_client:
        found = dbos_client.list_workflows(
            name=RUN_WORKFLOW, status=list(LIVE), load_input=False, load_output=False
        )
    return {run_of(w.workflow_id) for w in found}


def _forget(dbos_client: Any, run_id: str) -> int:
    found = dbos_client.list_workflows(
        workflow_id_prefix=run_id, load_input=False, load_output=False
    )
    mine = [w.workflow_id for w in found if run_of(w.workflow_id) == run_id]
    if not mine:
        return 0
    next_attempt(found, run_id)  # NotOver while one is not over
    # (Its items and calls are not DBOS children of its workflow: each is named by the
    # prefix of their ids, RUN/4@17, RUN/attempt-2/3:call.)
    dbos_client.delete_workflows(mine)
    runs = [w.workflow_id for w in attempts(found, run_id)]
    # The engine's own rows, in DBOS's engine (private in dbos 3.4; tested).
    forget_rows(dbos_client._sys_db.engine, runs)
    return len(mine)


def forget_rows(system: Any, runs: Sequence[str]) -> None:
    """The engine's rows of the attempts ``runs`` (workflow ids) in the system database
    ``system``: their spending, their summaries' claims and their items' partial
    outcomes."""
    import sqlalchemy as sa

    from openprose.vm.engines.dbos_budget import SPEND_TABLE
    from openprose.vm.engines.dbos_partials import PARTIALS_TABLE
    from openprose.vm.engines.dbos_summaries import SUMMARIES_TABLE

    tables = sa.inspect(system).get_table_names()
    with system.begin() as connection:
        for table, column in (
            (SPEND_TABLE, "budget"),
            (SUMMARIES_TABLE, "attempt"),
            (PARTIALS_TABLE, "attempt"),
        ):
            if table in tables:  # (made by the first worker that ran a run here)
                rows = sa.table(table, sa.column(column))
                connection.execute(rows.delete().where(rows.c[column].in_(list(runs))))


def queued(url: str) -> list[tuple[str, RunSpec, float]]:
    """The runs waiting on the queue, oldest first: id, spec, when queued (epoch seconds).
    With them the runs a worker has just taken, which may not be in their state yet."""
    with client(url) as dbos_client:
        return _queued_of(_live_runs(dbos_client))


def queue_view(url: str) -> tuple[list[tuple[str, RunSpec, float]], dict[str, str]]:
    """``queued``'s runs, and the runs executing that wait for a mid-program input by
    message (``prose runs send``): the name of the input each waits for, by run id."""
    with client(url) as dbos_client:
        found = _live_runs(dbos_client)
        asking = {}
        for workflow in found:
            asked = awaited_input(dbos_client, workflow)
            if asked is not None:
                asking[run_of(workflow.workflow_id)] = asked["name"]
    return _queued_of(found), asking


def _live_runs(dbos_client: Any) -> list[Any]:
    """The run workflows queued or executing, with their inputs."""
    found: list[Any] = dbos_client.list_workflows(
        name=RUN_WORKFLOW, status=["ENQUEUED", "PENDING"], load_output=False
    )
    return found


def _queued_of(found: Sequence[Any]) -> list[tuple[str, RunSpec, float]]:
    waiting = []
    for workflow in found:
        args = (workflow.input or {}).get("args") or ()
        if args and isinstance(args[0], RunSpec):
            when = (workflow.created_at or 0) / 1000
            waiting.append((run_of(workflow.workflow_id), args[0], when))
    return waiting
