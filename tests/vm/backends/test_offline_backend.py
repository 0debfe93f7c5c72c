from __future__ import annotations

import asyncio

import pytest

from openprose.vm.backends.base import (
    Backend,
    BackendError,
    ChoiceRequest,
    ConditionRequest,
    SessionRequest,
    SummaryRequest,
)
from openprose.vm.backends.offline import OfflineBackend


def test_sessions_name_what_they_received_and_are_dry_runs() -> None:
    backend = OfflineBackend()
    assert isinstance(backend, Backend) and backend.dry_run
    request = SessionRequest("Write", "1", agent="w", model="opus", context=(("a", "x"),))
    result = asyncio.run(backend.run_session(request))
    assert result.text == "[dry run] Write (agent: w; model: opus; context: a)"
    assert result.cost == 0.0 and result.usage.output_tokens > 0
    assert result.session_ref == "offline-1"


def test_condition_rules() -> None:
    backend = OfflineBackend(rounds=3)

    def judge(purpose: str, n: int) -> bool:
        return asyncio.run(backend.judge(ConditionRequest("c", "1", purpose, n))).value

    assert [judge("until", n) for n in (1, 2, 3)] == [False, False, True]
    assert [judge("while", n) for n in (1, 2, 3)] == [True, True, False]
    assert judge("if", 1) and judge("filter", 1)
    with pytest.raises(ValueError):
        OfflineBackend(rounds=0)


def test_scripted_conditions_choices_and_failures() -> None:
    backend = OfflineBackend(
        conditions={"c": [False, True]}, choices={"k": 5}, failures={"flaky": 1}
    )
    answers = [asyncio.run(backend.judge(ConditionRequest("c", "1", "if"))).value for _ in "abc"]
    assert answers == [False, True, True]  # the last answer repeats
    choice = asyncio.run(backend.choose(ChoiceRequest("k", ("a", "b"), "1")))
    assert choice.index == 1  # clamped to the options
    with pytest.raises(BackendError):
        asyncio.run(backend.run_session(SessionRequest("flaky", "1")))
    assert asyncio.run(backend.run_session(SessionRequest("flaky", "1"))).text


def test_summaries_fit_the_limit() -> None:
    result = asyncio.run(OfflineBackend().summarise(SummaryRequest("a", "x" * 50, 10, "1")))
    assert len(result.text) == 10
