"""``max_sessions`` and ``max_cost`` stop a run; no retry or catch continues past them."""

from __future__ import annotations

from typing import Any

from openprose.vm.backends.base import SessionRequest, SessionResult
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import Options


class Priced(OfflineBackend):
    async def run_session(self, request: SessionRequest) -> SessionResult:
        result = await super().run_session(request)
        return SessionResult(usage=result.usage, cost=0.5, session_ref="p", text=result.text)


def test_the_session_limit_stops_the_run_even_inside_try(run_prose: Any) -> None:
    run = run_prose(
        'try:\n  session "A"\n  session "B"\n  session "C"\ncatch:\n  session "Recover"\n',
        options=Options(max_sessions=2, jitter=False),
    )
    assert run.result.status == "error"
    assert run.result.error == "session limit reached (2 sessions)"
    assert run.prompts == ["A", "B"]


def test_retries_count_against_the_session_limit(run_prose: Any) -> None:
    run = run_prose(
        'session "flaky"\n  retry: 5\n',
        backend=OfflineBackend(failures={"flaky": 4}),
        options=Options(max_sessions=3, jitter=False),
    )
    assert run.result.error == "session limit reached (3 sessions)"
    assert run.prompts == ["flaky"] * 3


def test_imported_programs_share_the_limit(run_prose: Any) -> None:
    run = run_prose(
        'use "./helper" as helper\nsession "Mine"\nlet r = helper(topic: "x")\n',
        files={"helper.prose": 'input topic: "t"\nsession "One"\nsession "Two"\noutput o = "d"\n'},
        options=Options(max_sessions=2, jitter=False),
    )
    assert run.result.status == "error"
    assert run.result.error == "session limit reached (2 sessions)"
    assert run.prompts == ["Mine", "One"]


def test_the_cost_cap_lets_the_crossing_session_finish(run_prose: Any) -> None:
    run = run_prose(
        'session "A"\nsession "B"\nsession "C"\n',
        backend=Priced(),
        options=Options(max_cost=0.75, jitter=False),
    )
    assert run.result.error == "cost limit reached ($1.00 of $0.75)"
    assert run.prompts == ["A", "B"]
    assert run.result.cost == 1.0
