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


def _confirm(answer: bool, asked: list[str]) -> Any:
    async def confirm(question: str) -> bool:
        asked.append(question)
        return answer

    return confirm


def test_a_large_fan_out_is_confirmed_first(tmp_path: Any) -> None:
    import asyncio

    from openprose.vm.runner import run_file

    path = tmp_path / "fan.prose"
    path.write_text(
        'parallel for x in ["a", "b", "c", "d"]:\n  session "Do {x}"\n'
        'parallel:\n  session "One"\n  session "Two"\n',
        encoding="utf-8",
    )
    options = Options(fan_out_threshold=3)
    asked: list[str] = []
    declined = asyncio.run(run_file(path, options=options, confirm=_confirm(False, asked)))
    assert declined.status == "error"
    assert declined.error == "fan-out of 4 branches declined"
    assert declined.sessions == 0
    assert asked == ['`parallel for x in ["a", "b", "c", "d"]:` starts 4 branches']
    asked.clear()
    accepted = asyncio.run(run_file(path, options=options, confirm=_confirm(True, asked)))
    assert accepted.status == "success" and accepted.sessions == 6
    assert len(asked) == 1  # two branches are under the threshold
