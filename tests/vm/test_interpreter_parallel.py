"""Parallel blocks: join strategies, failure policies, cancellation, bounded fan-out."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openprose.vm.backends.base import BackendError, SessionRequest, SessionResult
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import Options


class Gated(OfflineBackend):
    """Sessions whose prompt starts with "slow" wait until cancelled; records cancellations."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cancelled: list[str] = []

    async def run_session(self, request: SessionRequest) -> SessionResult:
        if request.prompt.startswith("slow"):
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled.append(request.prompt)
                raise
        if request.prompt.startswith("fail"):
            await asyncio.sleep(0)
            raise BackendError(f"{request.prompt} broke")
        return await super().run_session(request)


class Counting(OfflineBackend):
    """Counts sessions in flight; each yields to the loop so that others can start."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__()
        self.in_flight = 0
        self.most = 0
        self.delay = delay  # real seconds a session takes, beyond the yields

    async def run_session(self, request: SessionRequest) -> SessionResult:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            for _ in range(3):
                await asyncio.sleep(0)
            await asyncio.sleep(self.delay)
            return await super().run_session(request)
        finally:
            self.in_flight -= 1


# Every test here runs on both engines (tests/vm/conftest.py).
pytestmark = pytest.mark.both_engines


def test_all_binds_named_branches_at_the_join(run_prose: Any) -> None:
    run = run_prose(
        """\
        parallel:
          security = session "Check security"
          perf = session "Check performance"
          session "Unnamed"
        session "Report"
          context: [security, perf]
        """
    )
    assert run.result.status == "success"
    assert sorted(run.prompts[:3]) == ["Check performance", "Check security", "Unnamed"]
    assert run.prompts[3] == "Report"
    assert run.state()[:6] == [
        "1→ ∥start security,perf,c",
        "1a→ security ✓",  # every branch's bindings commit at the join, in branch order
        "1b→ perf ✓",
        "1c→ ✓",  # the unnamed branch's anonymous session too (seed 002)
        "1→ ∥done",
        "2→ ✓",
    ]
    assert run.binding("security").startswith("[dry run] Check security")


def test_first_returns_the_winner_and_cancels_the_rest(run_prose: Any) -> None:
    backend = Gated()
    run = run_prose(
        """\
        let winner = parallel ("first"):
          session "slow approach"
          session "fast approach"
        """,
        backend=backend,
    )
    assert run.result.status == "success"
    assert run.binding("winner") == "[dry run] fast approach (agent: -; model: default)"
    assert backend.cancelled == ["slow approach"]
    assert "[Parallel] Branch a: cancelled" in run.text


def test_any_with_count_waits_for_that_many_successes(run_prose: Any) -> None:
    backend = Gated()
    run = run_prose(
        """\
        let two = parallel ("any", count: 2, on-fail: "ignore"):
          a = session "fail one"
          b = session "good one"
          c = session "good two"
          d = session "slow one"
        """,
        backend=backend,
    )
    assert run.result.status == "success"
    assert backend.cancelled == ["slow one"]
    assert run.binding("b").startswith("[dry run] good one")
    assert run.binding("c").startswith("[dry run] good two")
    assert "[Warning] branch" not in run.text  # ignore: no warning at the join
    assert "[Warning] Failed: fail one broke" in run.text  # the session's own failure


def test_fail_fast_cancels_the_other_branches_and_fails(run_prose: Any) -> None:
    backend = Gated()
    run = run_prose(
        """\
        parallel:
          session "fail now"
          session "slow tail"
        session "never"
        """,
        backend=backend,
    )
    assert run.result.status == "error"
    assert run.result.error == "parallel branch a failed: fail now broke"
    assert backend.cancelled == ["slow tail"]
    assert "never" not in run.prompts
    assert run.state()[-1].startswith("---error ")


def test_continue_binds_failures_as_errors_and_warns(run_prose: Any) -> None:
    run = run_prose(
        """\
        parallel (on-fail: "continue"):
          good = session "good"
          bad = session "fail here"
        session "after"
          context: bad
        """,
        backend=Gated(),
    )
    assert run.result.status == "success"
    assert "[Warning] branch bad failed: fail here broke" in run.text
    assert run.backend.sessions[-1].context[0][1].startswith('{message: "fail here broke"')


def test_continue_fails_when_too_few_branches_succeed(run_prose: Any) -> None:
    run = run_prose(
        """\
        parallel ("any", on-fail: "continue"):
          session "fail a"
          session "fail b"
        """,
        backend=Gated(),
    )
    assert run.result.status == "error"
    assert run.result.error == "parallel: 0 of 2 branches succeeded, 1 needed"


def test_branches_do_not_see_each_other_until_the_join(run_prose: Any) -> None:
    run = run_prose(
        """\
        parallel:
          do:
            let inner = session "A"
          session "B {inner}"
        session "C {inner}"
        """
    )
    b = next(p for p in run.prompts if p.startswith("B"))
    assert b == "B {inner}"  # not yet visible: left as written
    assert run.prompts[-1] == "C [dry run] A (agent: -; model: default)"


def test_parallel_for_over_1000_items_never_has_more_than_8_in_flight(
    run_prose: Any, engine: str
) -> None:
    backend = Counting()
    items = ", ".join(f'"i{n}"' for n in range(1000))
    run = run_prose(
        f'let items = [{items}]\nlet out = parallel for x in items:\n  session "Do {{x}}"\n',
        backend=backend,
    )
    assert run.result.status == "success"
    assert len(run.prompts) == 1000
    if engine == "local":
        assert backend.most == 8
    else:
        # Each item is a workflow handed out by a queue: how many overlap depends on when
        # the queue hands them out, never more than the run's concurrency.
        assert 1 < backend.most <= 8
    out = (run.run_dir / "bindings" / "out.md").read_text(encoding="utf-8")
    assert '"[dry run] Do i0 ' in out and '"[dry run] Do i999 ' in out


def test_the_concurrency_is_configurable(run_prose: Any) -> None:
    # Sessions long enough that items handed out by a queue overlap too (dbos).
    backend = Counting(delay=0.3)
    run_prose(
        'parallel for x in ["a", "b", "c", "d", "e"]:\n  session "Do {x}"\n',
        backend=backend,
        options=Options(concurrency=2, jitter=False),
    )
    assert backend.most == 2


def test_parallel_for_keeps_results_in_item_order(run_prose: Any) -> None:
    run = run_prose(
        'let out = parallel for x, i in ["a", "b", "c"]:\n  session "Do {x} at {i}"\n'
        'session "Use"\n  context: out\n',
    )
    assert run.backend.sessions[-1].context[0][1] == (
        '["[dry run] Do a at 0 (agent: -; model: default)", '
        '"[dry run] Do b at 1 (agent: -; model: default)", '
        '"[dry run] Do c at 2 (agent: -; model: default)"]'
    )


def test_a_race_binds_the_branches_it_did_not_join_to_nothing(run_prose: Any) -> None:
    run = run_prose(
        """\
        parallel ("any", count: 2):
          a = session "A"
          b = session "B"
          c = session "C"
        session "Pick one"
          context: { a, b, c }
        """
    )
    assert run.result.status == "success", run.result.error
    # The first two to finish are joined; the third's name is bound to nothing, and a
    # context that names it passes only the others.
    assert [name for name, _ in run.backend.sessions[-1].context] == ["a", "b"]
    assert run.binding("c") == ""
    assert run.binding("a").startswith("[dry run] A")
