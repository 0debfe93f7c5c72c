"""Waiting for a run of the dbos engine from a process that does not execute it (``prose
runs wait``): the run's result, as the process that executes it gets it, once the run's
current attempt is over.  Meanwhile the waiter is told what the run is doing that it can
act on: queued with no worker to start it, running (and on which executor: a change is a
takeover), waiting for a mid-program input that ``prose runs send`` gives."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openprose.vm.engines.dbos_engine import (
    LIVE,
    NoRun,
    awaited_input,
    cancelled_result,
    client,
    current_attempt,
)

if TYPE_CHECKING:
    from openprose.vm.interpreter import RunResult

POLL_SECONDS = 0.25  # a run's status is read this often (one query, and one for its event)


@dataclass(frozen=True)
class Seen:
    """What a run is doing, as the waiter is told of it when it changes."""

    status: str  # queued | running | awaiting-input
    executor: str = ""  # the process executing it (running, awaiting-input)
    name: str = ""  # the input it waits for (awaiting-input)
    prompt: str = ""


def wait(
    url: str,
    run_id: str,
    *,
    timeout: float | None = None,
    tell: Callable[[Seen], None] = lambda seen: None,
    poll: float = POLL_SECONDS,
) -> RunResult | None:
    """The result of ``run_id``'s current attempt (the one not over, else the last) once it
    is over; None when ``timeout`` seconds passed first.  ``tell`` hears of every change of
    what the run is doing.  NoRun: the engine has no such run; EngineError: a database
    it cannot read."""
    deadline = None if timeout is None else time.monotonic() + timeout
    with client(url) as dbos_client:
        workflow_id = current_attempt(dbos_client, run_id)
        last: Seen | None = None
        while True:
            found = dbos_client.list_workflows(workflow_ids=[workflow_id], load_input=False)
            if not found:  # removed meanwhile (`prose runs rm` refuses a run not over)
                raise NoRun(f"no DBOS run {run_id}")
            workflow = found[0]
            if workflow.status not in LIVE:
                return _outcome(dbos_client, workflow, run_id)
            seen = _seen(dbos_client, workflow)
            if seen != last:
                tell(seen)
                last = seen
            if deadline is not None and time.monotonic() >= deadline:
                return None
            pause = poll if deadline is None else min(poll, max(0.0, deadline - time.monotonic()))
            time.sleep(pause)


def _seen(dbos_client: Any, workflow: Any) -> Seen:
    if workflow.status != "PENDING":  # ENQUEUED, or DELAYED before it is queued
        return Seen("queued")
    executor = str(workflow.executor_id or "")
    asked = awaited_input(dbos_client, workflow)
    if asked is not None:
        return Seen("awaiting-input", executor, asked["name"], asked["prompt"])
    return Seen("running", executor)


def _outcome(dbos_client: Any, workflow: Any, run_id: str) -> RunResult:
    """The result of an attempt that is over: what its workflow returned, or what a run
    cancelled or failed outside the VM (the workflow raised) reports."""
    from openprose.vm.interpreter import RunResult

    if workflow.status == "SUCCESS":
        result: RunResult = workflow.output
        return result
    if workflow.status == "CANCELLED":
        [spec] = _inputs(dbos_client, workflow.workflow_id)
        return cancelled_result(spec, run_id)
    # ERROR: the workflow raised rather than return the run's failure (a state it could not
    # take over, say); MAX_RECOVERY_ATTEMPTS_EXCEEDED: DBOS stopped taking it over.
    why = workflow.error if workflow.error is not None else workflow.status
    return RunResult(status="error", error=f"the dbos engine ended it: {why}", run_id=run_id)


def _inputs(dbos_client: Any, workflow_id: str) -> list[Any]:
    [workflow] = dbos_client.list_workflows(workflow_ids=[workflow_id], load_output=False)
    return list(workflow.input["args"])
