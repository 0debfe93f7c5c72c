"""Each model exchange of a run, an item or a call on the dbos engine: a DBOS step as well
as a journal step.

DBOS checkpoints a workflow's steps by position: a workflow executed again (its worker
died) is answered its n-th step from the n-th checkpoint.  An exchange is made a step only
where the program alone decides the order of exchanges (``ordering.in_program_order``): the
run's, an item's or a call's own statements.  The branches and items that run as tasks of
one process (a race, a fan-out whose items ask for inputs...) take theirs in the order their
answers come back; their exchanges are answered by the journal alone, which keys them by
step.

A step is named by its exchange's kind and journal key (``openprose.session 4#attempt1``),
so DBOS itself tells one exchange from another at the same position: a re-execution that
reaches its exchanges in another order (a summary another part now asks, a spending limit
reached sooner) gets DBOSUnexpectedStepError rather than another exchange's answer, and
that exchange is answered by the journal by its key, as a concurrent task's are.  The
step's body is the journaled exchange, so an exchange whose checkpoint was lost (its worker
died between the journal's write and DBOS's) is answered from the journal, never asked
twice.

A model's failure (``BackendError``) is the step's output, not its error: the execution
that met it raises the failure itself (a ``ContextOverflow`` keeps its figures), and a
re-execution raises what the journal would (``replay.decode``).  Anything else is DBOS's to
record: a fatal failure ends the run; a cancellation records nothing.

A retry's backoff, where the exchanges are steps, is DBOS's durable sleep (``DurableClock``):
its wake-up time is checkpointed, so a workflow executed again waits only what was left of
it, rather than every backoff of the failed attempts its checkpoints answer.

Imported only by the dbos engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from openprose.vm.backends.base import BackendError
from openprose.vm.backends.replay import Request, decode, error_text, exchange_key
from openprose.vm.ordering import in_program_order

if TYPE_CHECKING:
    from openprose.vm.backends.base import (
        Backend,
        ChoiceRequest,
        ChoiceResult,
        ConditionRequest,
        ConditionResult,
        SessionRequest,
        SessionResult,
        SummaryRequest,
        SummaryResult,
    )
    from openprose.vm.interpreter import Clock

STEP_PREFIX = "openprose."


def step_name(request: Request) -> str:
    """The DBOS step an exchange is: ``openprose.`` its kind, a space, its journal key."""
    kind, key = exchange_key(request)
    return f"{STEP_PREFIX}{kind} {key}"


# Given a cancelled workflow's id, cancels its task as the engine's look for cancellations
# would (dbos_branches.cancel_watched); whether it did.
Canceller = Callable[[str], bool]


def as_steps(journaled: Backend, on_cancelled: Canceller | None = None) -> Backend:
    """``journaled`` (a ``JournalBackend``), its exchanges made DBOS steps where they can
    be: runner.run_file's and branches.Worker's ``durable_steps``."""
    return StepBackend(journaled, on_cancelled)


async def _stopped(on_cancelled: Canceller | None) -> None:
    """A cancelled workflow's step refused by DBOS: its task is cancelled as the look for
    cancellations cancels it (the run's state then ends ``cancelled``, a fan-out's item
    keeps its partial outcome), and meets the cancellation here."""
    from dbos import DBOS

    workflow_id = DBOS.workflow_id
    if on_cancelled is not None and workflow_id is not None and on_cancelled(workflow_id):
        await asyncio.sleep(0)


def _in_workflow() -> bool:
    """Whether the running task is a workflow's (the engine's other DBOS calls run outside
    it, dbos_branches.outside_workflow, and no exchange runs inside a step but its own)."""
    from dbos import DBOS

    return DBOS.workflow_id is not None


class StepBackend:
    """Passes every exchange to ``inner`` inside a DBOS step named by it, when the running
    task is a workflow's own (see the module's docstring); else straight to ``inner``."""

    def __init__(self, inner: Backend, on_cancelled: Canceller | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dry_run = inner.dry_run
        self.on_cancelled = on_cancelled

    def recorded(self, request: Request) -> Any:
        """The journal's answer (telemetry.answered_from_journal asks the journal)."""
        recorded = getattr(self.inner, "recorded", None)
        return recorded(request) if recorded is not None else None

    async def _step(self, request: Request, call: Callable[[], Awaitable[Any]]) -> Any:
        if not in_program_order() or not _in_workflow():
            return await call()
        from dbos import DBOS
        from dbos._error import (  # private in dbos 3.4; tested
            DBOSUnexpectedStepError,
            DBOSWorkflowCancelledError,
            DBOSWorkflowConflictIDError,
        )

        raised: list[BackendError] = []
        made: list[dict[str, Any]] = []

        async def exchange() -> dict[str, Any]:
            try:
                made.append({"result": await call()})
            except BackendError as failure:
                raised.append(failure)
                made.append({"error": error_text(failure)})
            return made[0]

        step = asyncio.ensure_future(DBOS.run_step_async({"name": step_name(request)}, exchange))
        try:
            outcome = await asyncio.shield(step)
        except asyncio.CancelledError:
            if not made:
                step.cancel()  # the model's answer is not wanted any more
                raise
            # The model answered (and the journal holds the answer) before the task was
            # cancelled: the interpreter takes the answer, so that what it cost is
            # reported, and meets the cancellation at its next wait.
            await asyncio.wait([step])
            if not step.cancelled():
                step.exception()  # the checkpoint, written or refused: the answer stands
            current = asyncio.current_task()
            assert current is not None
            current.cancel()
            outcome = made[0]
        except DBOSUnexpectedStepError:
            return await call()
        except (DBOSWorkflowCancelledError, DBOSWorkflowConflictIDError) as refused:
            if not made:
                if isinstance(refused, DBOSWorkflowCancelledError):
                    await _stopped(self.on_cancelled)
                raise
            # Cancelled (or taken over) while the model answered: DBOS refuses the
            # checkpoint, but the exchange was made and journaled, and what it cost goes
            # to the run's report; the next step meets the cancellation.
            outcome = made[0]
        if "error" in outcome:
            if raised:
                raise raised[0]
            decode(request, {"error": outcome["error"]})  # raises the recorded failure
        return outcome["result"]

    async def run_session(self, request: SessionRequest) -> SessionResult:
        result: SessionResult = await self._step(request, lambda: self.inner.run_session(request))
        return result

    async def judge(self, request: ConditionRequest) -> ConditionResult:
        result: ConditionResult = await self._step(request, lambda: self.inner.judge(request))
        return result

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        result: ChoiceResult = await self._step(request, lambda: self.inner.choose(request))
        return result

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        result: SummaryResult = await self._step(request, lambda: self.inner.summarise(request))
        return result


class DurableClock:
    """The interpreter's clock (``inner``, the real one by default), whose waits in a
    workflow's program order are DBOS's durable sleeps (see the module's docstring)."""

    def __init__(self, inner: Clock | None = None, on_cancelled: Canceller | None = None) -> None:
        from openprose.vm.interpreter import RealClock

        self.inner: Clock = inner or RealClock()
        self.on_cancelled = on_cancelled

    def now(self) -> float:
        return self.inner.now()

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0 or not in_program_order() or not _in_workflow():
            await self.inner.sleep(seconds)
            return
        from dbos import DBOS
        from dbos._error import (  # private in dbos 3.4; tested
            DBOSUnexpectedStepError,
            DBOSWorkflowCancelledError,
        )

        try:
            await DBOS.sleep_async(seconds)
        except DBOSUnexpectedStepError:  # another step's place: the steps go another way
            await self.inner.sleep(seconds)
        except DBOSWorkflowCancelledError:
            await _stopped(self.on_cancelled)
            raise
