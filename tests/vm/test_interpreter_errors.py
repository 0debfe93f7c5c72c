"""try/catch/finally, throw, and retry with backoff on a fake clock."""

from __future__ import annotations

from typing import Any

import pytest

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import Options
from tests.vm.vm_support import FakeClock

# Every test here runs on both engines (tests/vm/conftest.py).
pytestmark = pytest.mark.both_engines


def test_catch_binds_the_error_and_finally_always_runs(run_prose: Any) -> None:
    run = run_prose(
        """\
        try:
          session "Risky operation"
        catch as err:
          session "Handle {err.message}"
            context: err
        finally:
          session "Cleanup"
        """,
        backend=OfflineBackend(failures={"Risky": 1}),
    )
    assert run.result.status == "success"
    assert run.prompts == [
        "Risky operation",
        "Handle dry run: scripted failure of 'Risky'",
        "Cleanup",
    ]
    markers = [line.strip() for line in run.text.splitlines() if line.strip().startswith("[Try]")]
    assert markers == [
        "[Try] Entering try block",
        "[Try] Executing catch block",
        "[Try] Executing finally block",
    ]
    assert "1→ ✗ dry run: scripted failure of 'Risky'" in run.state()


def test_finally_runs_when_nothing_catches(run_prose: Any) -> None:
    run = run_prose('try:\n  throw "bad input"\nfinally:\n  session "Cleanup"\nsession "Never"\n')
    assert run.result.status == "error"
    assert run.result.error == "bad input"
    assert run.result.failed_statement == 'throw "bad input"'
    assert run.prompts == ["Cleanup"]
    assert run.state()[-1].endswith(" bad input")


def test_a_bare_throw_in_catch_rethrows_to_the_outer_try(run_prose: Any) -> None:
    run = run_prose(
        """\
        try:
          try:
            throw "inner"
          catch:
            session "Log it"
            throw
        catch as outer:
          session "Outer saw {outer.message}"
        """
    )
    assert run.prompts == ["Log it", "Outer saw inner"]


@pytest.mark.parametrize(
    ("backoff", "sleeps"),
    [
        ("none", [0.0, 0.0]),
        ("linear", [1.0, 1.0]),
        ("exponential", [1.0, 2.0]),
    ],
)
def test_retry_with_backoff(run_prose: Any, backoff: str, sleeps: list[float]) -> None:
    clock = FakeClock()
    run = run_prose(
        f'session "flaky call"\n  retry: 3\n  backoff: "{backoff}"\n',
        backend=OfflineBackend(failures={"flaky": 2}),
        clock=clock,
    )
    assert run.result.status == "success"
    assert run.prompts == ["flaky call"] * 3
    assert [s.attempt for s in run.backend.sessions] == [1, 2, 3]
    assert clock.sleeps == sleeps
    assert run.state()[:3] == ["1→ retry:1/3", "1→ retry:2/3", "1→ ✓"]


def test_exponential_backoff_doubles_up_to_the_cap_with_jitter_in_range(run_prose: Any) -> None:
    clock = FakeClock()
    run = run_prose(
        'session "flaky"\n  retry: 5\n  backoff: "exponential"\n',
        backend=OfflineBackend(failures={"flaky": 5}),
        clock=clock,
        options=Options(jitter=True, seed=7, retry_max_delay=4.0),
    )
    assert run.result.status == "success"
    ceilings = [1.0, 2.0, 4.0, 4.0, 4.0]
    assert len(clock.sleeps) == 5
    for slept, ceiling in zip(clock.sleeps, ceilings, strict=True):
        assert ceiling / 2 <= slept <= ceiling


def test_retries_exhausted_fail_the_statement(run_prose: Any) -> None:
    run = run_prose('session "flaky"\n  retry: 1\n', backend=OfflineBackend(failures={"flaky": 9}))
    assert run.result.status == "error"
    assert run.prompts == ["flaky", "flaky"]
    assert run.result.error == "dry run: scripted failure of 'flaky'"
