"""A run's summaries asked once by the whole run on the dbos engine
(engines/dbos_summaries.py): the claims of the system database on SQLite and PostgreSQL,
and a run whose items travel.  Across worker processes: tests/cli/test_worker_fan_out.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.backends.base import BackendError, ContextOverflow, SummaryRequest
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.engines.base import Attachment
from openprose.vm.interpreter import Options
from openprose.vm.rundir import new_run_id
from tests.support.extras import require
from tests.vm.engines.test_dbos_branches import _items, _run
from tests.vm.vm_support import Recording

require("dbos", "pip install 'openprose[dbos]'")

ASKED = SummaryRequest("doc", "a long document " * 200, 2000, "3", "summary")


def _part(engine: Any, attempt: str, holder: str, ended: set[str] | None = None) -> Any:
    """The summaries of ``attempt`` as the workflow ``holder`` asks them; the workflows
    in ``ended`` are over."""
    from openprose.vm.engines.dbos_summaries import SharedSummaries

    over = ended if ended is not None else set()

    async def is_over(workflow_id: str) -> bool:
        return workflow_id in over

    return SharedSummaries(engine, attempt, holder, is_over)


class _Asker:
    """An ``ask`` that counts its calls, answers after ``delay`` (or fails with
    ``failure``), and can be held until released."""

    def __init__(self, answer: str, delay: float = 0.0, failure: BaseException | None = None):
        self.answer = answer
        self.delay = delay
        self.failure = failure
        self.calls = 0

    def __call__(self) -> Awaitable[str]:
        async def ask() -> str:
            self.calls += 1
            await asyncio.sleep(self.delay)
            if self.failure is not None:
                raise self.failure
            return self.answer

        return ask()


def _attempt() -> str:
    return f"{new_run_id()}/attempt-1"


def test_the_first_part_to_want_a_summary_asks_and_the_others_wait_for_its_answer(
    system_engine: Any,
) -> None:
    attempt = _attempt()
    asks = [_Asker(f"summary by {n}", delay=0.3) for n in range(4)]
    parts = [_part(system_engine, attempt, f"{attempt}/1@{n}") for n in range(4)]

    async def go() -> list[str]:
        wanted = (part.once(ASKED, ask) for part, ask in zip(parts, asks, strict=True))
        return list(await asyncio.gather(*wanted))

    answers = asyncio.run(go())
    assert sum(a.calls for a in asks) == 1
    [asker] = [n for n, a in enumerate(asks) if a.calls]
    assert answers == [f"summary by {asker}"] * 4
    # Another attempt (a resumed run) asks for itself: its journal replays it.
    again = _Asker("asked again")
    assert asyncio.run(_part(system_engine, _attempt(), "x").once(ASKED, again)) == "asked again"
    assert again.calls == 1


def test_another_summary_is_claimed_apart(system_engine: Any) -> None:
    attempt = _attempt()
    other = SummaryRequest("doc", "another document " * 200, 2000, "3", "summary")
    first, second = _Asker("one"), _Asker("two")
    run, item = _part(system_engine, attempt, attempt), _part(system_engine, attempt, "i")
    assert asyncio.run(run.once(ASKED, first)) == "one"
    assert asyncio.run(item.once(other, second)) == "two"
    assert (first.calls, second.calls) == (1, 1)


@pytest.mark.parametrize("failure", [BackendError("the provider is down"), ContextOverflow("big")])
def test_a_failure_of_the_model_is_the_answer_the_others_get(
    system_engine: Any, failure: BackendError
) -> None:
    attempt = _attempt()
    holder = _part(system_engine, attempt, "holder")
    with pytest.raises(type(failure), match=str(failure)):
        asyncio.run(holder.once(ASKED, _Asker("", failure=failure)))
    waiter = _Asker("never")
    with pytest.raises(type(failure), match=str(failure)):
        asyncio.run(_part(system_engine, attempt, "other").once(ASKED, waiter))
    assert waiter.calls == 0


def test_a_holder_cancelled_before_its_answer_lets_the_next_ask(system_engine: Any) -> None:
    attempt = _attempt()

    async def go() -> tuple[str, int]:
        held = asyncio.ensure_future(
            _part(system_engine, attempt, "first").once(ASKED, _Asker("late", delay=30))
        )
        await asyncio.sleep(0.3)
        held.cancel()
        with pytest.raises(asyncio.CancelledError):
            await held
        second = _Asker("second's")
        return await _part(system_engine, attempt, "second").once(ASKED, second), second.calls

    assert asyncio.run(go()) == ("second's", 1)


def test_a_claim_whose_holder_ended_without_an_answer_is_taken_over(system_engine: Any) -> None:
    from openprose.vm.engines.dbos_summaries import SharedSummaries

    attempt = _attempt()
    # A holder that left its claim (its process died between claiming and answering, and
    # its workflow then ended elsewhere): the claim is there, unanswered.
    ended: set[str] = set()
    SharedSummaries._claim(_part(system_engine, attempt, "gone"), "summarise:" + _key())
    waiter = _Asker("the waiter's")

    async def go() -> str:
        waiter_part = _part(system_engine, attempt, "w", ended)
        waiting = asyncio.ensure_future(waiter_part.once(ASKED, waiter))
        await asyncio.sleep(1.5)
        assert not waiting.done() and waiter.calls == 0  # the holder is still going
        ended.add("gone")
        return await asyncio.wait_for(waiting, 10)

    assert asyncio.run(go()) == "the waiter's"
    assert waiter.calls == 1


def test_the_holder_executed_again_asks_again(system_engine: Any) -> None:
    """An item whose worker died after it answered is executed again by another: it asks
    again (its journal replays the answer), so its narration has the summary."""
    attempt = _attempt()
    first, again = _Asker("answer"), _Asker("answer")
    assert asyncio.run(_part(system_engine, attempt, "item").once(ASKED, first)) == "answer"
    assert asyncio.run(_part(system_engine, attempt, "item").once(ASKED, again)) == "answer"
    assert (first.calls, again.calls) == (1, 1)


def _key() -> str:
    from openprose.vm.backends.replay import exchange_key

    return exchange_key(ASKED)[1]


# ---------------------------------------------------------------------- a run's items

SHARED = (
    'let doc = session "Write a long report"\n'
    'let out = parallel for x in ["a", "b", "c", "d", "e", "f"]:\n'
    '  session "Use {x}"\n'
    "    context: doc\n"
    'output last = session "Conclude"\n'
    "  context: doc\n"
)


def _summarised(run_dir: Path) -> int:
    lines = (run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return sum(json.loads(line).get("action") == "summarised" for line in lines)


def _on_local(tmp_path: Path, backend: Recording, options: Options) -> Path:
    from openprose.vm.engines.local import LocalExecutor
    from tests.vm.engines.test_dbos_branches import _spec

    here = tmp_path / "local"
    here.mkdir()
    spec = _spec(here, SHARED, options)
    result = asyncio.run(LocalExecutor().run(spec, None, Attachment(backend=backend)))
    assert result.status == "success", result.error
    return Path(spec.runs_root) / result.run_id


@pytest.mark.parametrize("state", ["filesystem", "postgres"])
def test_a_value_passed_to_every_item_is_summarised_once_for_the_run_as_here(
    tmp_path: Path, state: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if state == "postgres":
        monkeypatch.setenv("OPENPROSE_POSTGRES_URL", request.getfixturevalue("postgres_db_url"))
    options = Options(jitter=False, verbatim_below=10)
    backend = Recording(OfflineBackend())
    url, run_id, result = _run(
        tmp_path, SHARED, options, attachment=Attachment(backend=backend), state=state
    )
    assert result.status == "success", result.error
    assert len(_items(url, run_id)) == 6  # the items travelled
    # One summary for the six items and the run's own last session, as the local engine.
    local = Recording(OfflineBackend())
    local_run = _on_local(tmp_path, local, options)
    assert [c for c in backend.calls if c[0] == "summarise"] == [("summarise", "doc")]
    assert [c for c in local.calls if c[0] == "summarise"] == [("summarise", "doc")]
    assert _summarised(local_run) == 1
    if state == "filesystem":
        assert _summarised(tmp_path / ".prose" / "runs" / run_id) == 1
    # Every session got the summary, as here.
    assert sorted((s.prompt, s.context) for s in backend.sessions) == sorted(
        (s.prompt, s.context) for s in local.sessions
    )
