"""Each model exchange of a run on the dbos engine is a DBOS step named by it (dbos_steps):
checkpointed by DBOS, answered from its checkpoint when its workflow is executed again, and
never another exchange's answer when the re-execution reaches its exchanges in another
order."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.backends.base import (
    BackendError,
    ContextOverflow,
    SessionRequest,
    SessionResult,
)
from openprose.vm.engines import dbos_engine as engine
from openprose.vm.engines import dbos_steps
from tests.support.extras import require
from tests.vm.engines.test_dbos_branches import _run

require("dbos", "pip install 'openprose[dbos]'")

PROGRAM = (
    'let a = session "one"\n'
    "if **a looks fine**:\n"
    '  session "two"\n'
    'let out = parallel for x in ["p", "q"]:\n'
    '  session "item {x}"\n'
    'let r = parallel ("first"):\n'
    '  session "fast"\n'
    '  session "slow"\n'
    "choice **which way**:\n"
    '  option "left":\n'
    '    session "go left"\n'
    '  option "right":\n'
    '    session "go right"\n'
    'session "last"\n'
)


def _steps(url: str, workflow_id: str) -> list[str]:
    with engine.client(url) as client:
        return [step["function_name"] for step in client.list_workflow_steps(workflow_id)]


@pytest.mark.parametrize("state", ["filesystem", "postgres"])
def test_each_exchange_of_a_run_and_of_its_items_is_a_step_named_by_it(
    tmp_path: Path, state: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On the filesystem state the system database is SQLite; on the postgres state it is
    # the state's PostgreSQL.
    if state == "postgres":
        monkeypatch.setenv("OPENPROSE_POSTGRES_URL", request.getfixturevalue("postgres_db_url"))
    url, run_id, result = _run(tmp_path, PROGRAM, state=state)
    assert result.status == "success"
    assert url.startswith("sqlite" if state == "filesystem" else "postgresql")
    # The run's own exchanges, in the order it made them: a session, the condition, the
    # condition's session, the choice, the chosen option's session, the last session.
    assert _steps(url, run_id) == [
        "openprose.session 1#attempt1",
        "openprose.judge 2?0#if1",
        "openprose.session 2?0.1#attempt1",
        "openprose.choose 5",
        "openprose.session 5?0.1#attempt1",
        "openprose.session 6#attempt1",
    ]
    # Each item's exchange is a step of the item's workflow.
    assert _steps(url, f"{run_id}/3@0") == ["openprose.session 3@0.1#attempt1"]
    assert _steps(url, f"{run_id}/3@1") == ["openprose.session 3@1.1#attempt1"]
    # The race's branches (step 4) are tasks of the run's process, which reach their
    # exchanges in the order their answers come: they are the journal's steps only.
    if state == "filesystem":
        [events_file] = tmp_path.glob(f"**/{run_id}/events.jsonl")
        assert '"fast' in events_file.read_text("utf-8")


# ------------------------------------------------------------------ a re-execution


class Answers:
    """A backend that answers each prompt with its number of asks: an exchange asked
    again shows it."""

    name = "answers"
    dry_run = True

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()
        self.after_answer: Any = None  # called as the answer is given

    async def run_session(self, request: SessionRequest) -> SessionResult:
        self.asked[request.prompt] += 1
        if request.prompt.startswith("overflow"):
            raise ContextOverflow(f"{request.prompt} is too long", tokens=9000, limit=8000)
        if request.prompt.startswith("fail"):
            raise BackendError(f"{request.prompt} failed")
        if self.after_answer is not None:
            self.after_answer()
        return SessionResult(text=f"{request.prompt} #{self.asked[request.prompt]}")

    async def judge(self, request: Any) -> Any:
        raise NotImplementedError

    async def choose(self, request: Any) -> Any:
        raise NotImplementedError

    async def summarise(self, request: Any) -> Any:
        raise NotImplementedError


ANSWERS = Answers()
ORDER: dict[str, list[str]] = {}  # what a workflow asks, read at each execution
TAKEN: list[str] = []  # the answers the workflows were given
_registered: dict[str, Any] = {}


def _workflows() -> dict[str, Any]:
    """Two workflows that ask the prompts ``ORDER[key]`` through dbos_steps, registered
    once per process before DBOS is launched: ``asks`` one after another, ``together``
    as concurrent tasks, then once more after them."""
    if not _registered:
        from dbos import DBOS

        from openprose.vm.ordering import enter_concurrent_task

        backend = dbos_steps.as_steps(ANSWERS)

        async def ask(prompt: str) -> str:
            try:
                answer = (await backend.run_session(_request(prompt))).text
            except BackendError as failure:
                answer = f"{type(failure).__name__}: {failure}"
            TAKEN.append(answer)
            return answer

        @DBOS.workflow(name="openprose-test.asks")
        async def asks(key: str) -> list[str]:
            return [await ask(prompt) for prompt in ORDER[key]]

        @DBOS.workflow(name="openprose-test.together")
        async def together(key: str) -> list[str]:
            async def task(prompt: str) -> str:
                enter_concurrent_task()
                return await ask(prompt)

            *tasks, last = ORDER[key]
            return [*await asyncio.gather(*map(task, tasks)), await ask(last)]

        @DBOS.workflow(name="openprose-test.waits")
        async def waits(seconds: float) -> list[Any]:
            clock = dbos_steps.DurableClock()
            first = await ask("ask before")
            started = time.monotonic()
            await clock.sleep(seconds)
            waited = time.monotonic() - started
            return [first, await ask("ask after"), waited]

        _registered.update(asks=asks, together=together, waits=waits)
    return _registered


def _request(prompt: str) -> SessionRequest:
    return SessionRequest(prompt=prompt, step=prompt)


@pytest.fixture
def launched(tmp_path: Path) -> Any:
    workflows = _workflows()
    url = f"sqlite:///{tmp_path / 'system.sqlite'}"
    engine.launch(url, "test-steps", [])
    ANSWERS.asked.clear()
    ANSWERS.after_answer = None
    ORDER.clear()
    TAKEN.clear()
    try:
        yield workflows, url
    finally:
        engine.shut_down()


def _fork(workflow_id: str, start_step: int) -> list[Any]:
    """The workflow executed again as a fork: its steps before ``start_step`` answered
    from their checkpoints, the rest run."""
    from dbos import DBOS

    async def fork() -> list[Any]:
        handle = await DBOS.fork_workflow_async(workflow_id, start_step)
        answers: list[Any] = await handle.get_result()
        return answers

    return asyncio.run(fork())


def _start(workflow: Any, workflow_id: str, argument: Any = None) -> list[Any]:
    from dbos import DBOS, SetWorkflowID

    async def start() -> list[Any]:
        with SetWorkflowID(workflow_id):
            handle = await DBOS.start_workflow_async(
                workflow, workflow_id if argument is None else argument
            )
        answers: list[Any] = await handle.get_result()
        return answers

    return asyncio.run(start())


def test_a_workflow_executed_again_is_answered_from_its_checkpoints(launched: Any) -> None:
    workflows, url = launched
    asks = workflows["asks"]
    ORDER["w1"] = ["ask 1", "ask 2", "ask 3"]
    assert _start(asks, "w1") == ["ask 1 #1", "ask 2 #1", "ask 3 #1"]
    assert _steps(url, "w1") == [
        "openprose.session ask 1#attempt1",
        "openprose.session ask 2#attempt1",
        "openprose.session ask 3#attempt1",
    ]
    # A fork from the third step: the first two are the checkpoints' answers, not asked
    # again; the third is asked again.
    assert _fork("w1", 3) == ["ask 1 #1", "ask 2 #1", "ask 3 #2"]
    assert ANSWERS.asked == {"ask 1": 1, "ask 2": 1, "ask 3": 2}


def test_an_exchange_at_another_s_checkpoint_is_not_given_its_answer(launched: Any) -> None:
    workflows, _url = launched
    asks = workflows["asks"]
    ORDER["w2"] = ["ask a", "ask b", "ask c"]
    assert _start(asks, "w2") == ["ask a #1", "ask b #1", "ask c #1"]
    # Executed again, the workflow asks `c` where it had asked `b`: `c` is not given
    # `b`'s answer but asked (on the engine, its journal answers it by its key).
    ORDER["w2"] = ["ask a", "ask c", "ask b"]
    assert _fork("w2", 3) == ["ask a #1", "ask c #2", "ask b #2"]


def test_a_model_s_failure_is_the_step_s_answer(launched: Any) -> None:
    workflows, url = launched
    asks = workflows["asks"]
    ORDER["w3"] = ["fail 1", "overflow 2", "ask 3"]
    first = [
        "BackendError: fail 1 failed",
        "ContextOverflow: overflow 2 is too long",
        "ask 3 #1",
    ]
    assert _start(asks, "w3") == first
    # Executed again, each failure is raised from its checkpoint, as the kind it was.
    assert _fork("w3", 3) == [*first[:2], "ask 3 #2"]
    assert ANSWERS.asked["fail 1"] == 1 and ANSWERS.asked["overflow 2"] == 1
    assert len(_steps(url, "w3")) == 3


def test_a_concurrent_task_s_exchanges_are_not_steps(launched: Any) -> None:
    workflows, url = launched
    ORDER["w4"] = ["ask x", "ask y", "ask z"]
    assert _start(workflows["together"], "w4") == ["ask x #1", "ask y #1", "ask z #1"]
    # `x` and `y` were asked by concurrent tasks; `z` after them, in the program's order.
    assert _steps(url, "w4") == ["openprose.session ask z#attempt1"]
    # Outside a workflow (the engine's own calls), an exchange is not a step either.
    answer = asyncio.run(dbos_steps.as_steps(ANSWERS).run_session(_request("ask w")))
    assert answer.text == "ask w #1"


def test_an_answer_given_as_its_task_is_cancelled_is_taken(launched: Any) -> None:
    # The model answers (the journal holds the answer) and the task is cancelled while
    # DBOS writes the checkpoint: the answer is taken, so that what it cost is reported
    # (a failed fan-out's cancelled items, dbos_partials), and the cancellation is met at
    # the next wait.
    workflows, _url = launched
    ORDER["w5"] = ["ask 1", "ask 2"]

    async def cancelled_as_answered() -> None:
        running = asyncio.current_task()
        assert running is not None
        ANSWERS.after_answer = running.cancel
        await workflows["asks"]("w5")

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancelled_as_answered())
    assert TAKEN == ["ask 1 #1"]
    assert ANSWERS.asked == {"ask 1": 1}


# ------------------------------------------------------------------ retries' waits


def test_a_retry_s_backoff_is_a_durable_sleep_between_its_attempts(tmp_path: Path) -> None:
    from openprose.vm.backends.offline import OfflineBackend
    from openprose.vm.engines.base import Attachment
    from openprose.vm.interpreter import Options

    text = 'session "flaky"\n  retry: 2\n  backoff: "linear"\n'
    url, run_id, result = _run(
        tmp_path,
        text,
        Options(jitter=False, retry_base_delay=0.05),
        attachment=Attachment(backend=OfflineBackend(failures={"flaky": 1})),
    )
    assert result.status == "success"
    assert _steps(url, run_id) == [
        "openprose.session 1#attempt1",
        "DBOS.sleep",
        "openprose.session 1#attempt2",
    ]


def test_a_workflow_executed_again_waits_only_what_was_left(launched: Any) -> None:
    workflows, url = launched
    *answers, waited = _start(workflows["waits"], "w6", 1.0)
    assert answers == ["ask before #1", "ask after #1"] and waited >= 1.0
    assert _steps(url, "w6") == [
        "openprose.session ask before#attempt1",
        "DBOS.sleep",
        "openprose.session ask after#attempt1",
    ]
    # Executed again from its last step, after its wait ended: the wait is over.
    *answers, waited = _fork("w6", 3)
    assert answers == ["ask before #1", "ask after #2"] and waited < 0.5


def test_a_concurrent_task_s_wait_is_not_a_step(launched: Any) -> None:
    from openprose.vm.ordering import enter_concurrent_task

    class Fake:
        def __init__(self) -> None:
            self.slept: list[float] = []

        def now(self) -> float:
            return 0.0

        async def sleep(self, seconds: float) -> None:
            self.slept.append(seconds)

    fake = Fake()
    clock = dbos_steps.DurableClock(fake)

    async def concurrently() -> None:
        enter_concurrent_task()
        await clock.sleep(5.0)

    asyncio.run(concurrently())
    asyncio.run(clock.sleep(7.0))  # outside a workflow
    assert fake.slept == [5.0, 7.0]


# ------------------------------------------------------------------ cancellation


def test_a_run_cancelled_stops_at_its_next_exchange_s_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dbos import DBOS

    from openprose.vm.backends.offline import OfflineBackend
    from openprose.vm.engines import dbos_branches
    from openprose.vm.engines.base import Attachment

    # The look for cancellations comes too late to stop it: DBOS's refusal of the next
    # step must.
    monkeypatch.setattr(dbos_branches, "CANCEL_POLL_SECONDS", 60.0)

    class CancelledAtTheSecond(OfflineBackend):
        def __init__(self) -> None:
            super().__init__()
            self.asked: list[str] = []

        async def run_session(self, request: SessionRequest) -> SessionResult:
            self.asked.append(request.prompt)
            if len(self.asked) == 2:
                run = DBOS.workflow_id
                assert run is not None
                await dbos_branches.outside_workflow(DBOS.cancel_workflow_async(run))
            return await super().run_session(request)

    backend = CancelledAtTheSecond()
    text = "".join(f'session "step {n}"\n' for n in range(1, 6))
    url, run_id, result = _run(tmp_path, text, attachment=Attachment(backend=backend))
    assert result.status == "cancelled"
    # The second answer was given as the run was cancelled: it is narrated; the third
    # session's step was refused.
    assert backend.asked == ["step 1", "step 2"]
    [events_file] = tmp_path.glob(f"**/{run_id}/events.jsonl")
    events = [json.loads(line) for line in events_file.read_text("utf-8").splitlines()]
    assert [e["step"] for e in events if e["event"] == "success"] == ["1", "2"]
    assert events[-1]["event"] == "program_end" and events[-1]["status"] == "cancelled"
    assert _steps(url, run_id) == ["openprose.session 1#attempt1"]
