"""A condition or choice a real backend cannot answer fails its statement like a failed
session: ``try`` catches it, and uncaught it fails the run naming the step (no traceback)."""

from __future__ import annotations

from typing import Any

from openprose.vm.backends.base import (
    BackendError,
    ChoiceRequest,
    ChoiceResult,
    ConditionRequest,
    ConditionResult,
)
from openprose.vm.backends.offline import OfflineBackend


class Unanswerable(OfflineBackend):
    async def judge(self, request: ConditionRequest) -> ConditionResult:
        raise BackendError(f"step {request.step}: the answer is not true or false: 'maybe'")

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        raise BackendError(f"step {request.step}: the answer is not an option number: 'x'")


def test_an_unanswerable_condition_fails_the_run_naming_the_step(run_prose: Any) -> None:
    run = run_prose(
        """\
        if **the sky is blue**:
          session "a"
        """,
        backend=Unanswerable(),
    )
    assert run.result.status == "error"
    assert run.result.error.startswith("step 1")
    assert "not true or false" in run.result.error
    assert run.result.failed_statement.startswith("if **the sky is blue**")


def test_try_catches_an_unanswerable_choice(run_prose: Any) -> None:
    run = run_prose(
        """\
        try:
          choice **the best**:
            option "one":
              session "a"
        catch as e:
          output caught = e.message
        """,
        backend=Unanswerable(),
    )
    assert run.result.status == "success", run.result.error
    assert "not an option number" in run.result.outputs["caught"]
