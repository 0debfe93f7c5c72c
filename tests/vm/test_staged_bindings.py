"""Seed 002's staged bindings: a parallel branch reads the snapshot taken at the fork plus
its own writes; the others see its writes at the join, in branch order; a branch that
fails or is cancelled commits nothing; a sequence sees its own writes at once."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from openprose.vm.backends.base import SessionRequest, SessionResult
from tests.vm.vm_support import Answering

ANSWERS = Answering(
    {
        "A writes": "new",
        "inner writes": "inner",
        "a saw none": "A",
        "b saw none": "B",
        "c saw none": "C",
        "one": "1",
        "two after 1": "2",
    }
)


class WriteFirst(Answering):
    """B reads only once A has written and read its write back.  A thread event: on the
    dbos engine each branch is a workflow, which DBOS runs on a loop of its own."""

    def __init__(self) -> None:
        super().__init__(ANSWERS.answers)
        self.written = threading.Event()
        self.answered: list[str] = []  # in the order answered (a recording's is as asked)

    async def run_session(self, request: SessionRequest) -> SessionResult:
        if request.prompt.startswith("B sees"):
            for _ in range(1000):
                if self.written.is_set():
                    break
                await asyncio.sleep(0.01)
        result = await super().run_session(request)
        self.answered.append(request.prompt)
        if request.prompt == "A sees new":
            self.written.set()
        return result


# Every test here runs on both engines (tests/vm/conftest.py).
pytestmark = pytest.mark.both_engines


def test_a_branch_does_not_see_a_sibling_write_before_the_join(run_prose: Any) -> None:
    run = run_prose(
        """\
        let x = "old"
        parallel:
          do:
            x = session "A writes"
            session "A sees {x}"
          do:
            repeat 3:
              session "B waits"
            session "B sees {x}"
        session "after {x}"
        """,
        backend=(backend := WriteFirst()),
    )
    assert run.result.status == "success", run.result.error
    prompts = run.prompts
    # A's write happened before B read, yet B saw the fork.
    assert backend.answered.index("B sees old") > backend.answered.index("A sees new")
    assert prompts[-1] == "after new"
    assert run.binding("x") == "new"


def test_every_item_of_a_parallel_for_reads_the_snapshot_of_the_fork(run_prose: Any) -> None:
    run = run_prose(
        """\
        let seen = "none"
        parallel for item in ["a", "b", "c"]:
          seen = session "{item} saw {seen}"
        session "after {seen}"
        """,
        backend=ANSWERS,
    )
    assert run.result.status == "success", run.result.error
    assert sorted(run.prompts[:3]) == ["a saw none", "b saw none", "c saw none"]
    # Committed in item order: the last item's write is the one that stays.
    assert run.prompts[3] == "after C"
    assert [line for line in run.state() if "seen" in line] == [
        "1→ seen ✓",
        "2→ seen ✓",
        "2→ seen ✓",
        "2→ seen ✓",
    ]


def test_a_failed_branch_commits_nothing(run_prose: Any) -> None:
    run = run_prose(
        """\
        let x = "old"
        parallel (on-fail: "continue"):
          do:
            x = session "A writes"
            let kept = session "A keeps"
            throw "A fails"
          session "B"
        session "after {x}"
        """,
        backend=ANSWERS,
    )
    assert run.result.status == "success", run.result.error
    assert "after old" in run.prompts
    assert run.binding("x") == "old"
    assert not (run.run_dir / "bindings" / "kept.md").exists()
    assert not any("kept" in line for line in run.state())


def test_a_cancelled_branch_commits_nothing(run_prose: Any) -> None:
    run = run_prose(
        """\
        let winner = parallel ("first"):
          session "Fast"
          do:
            let partial = session "Slow one"
            repeat 5:
              session "Slow more"
        session "after"
        """,
        backend=ANSWERS,
    )
    assert run.result.status == "success", run.result.error
    assert "Slow one" in run.prompts  # the slow branch bound `partial` before it lost
    assert not (run.run_dir / "bindings" / "partial.md").exists()
    assert not any("partial" in line for line in run.state())


def test_the_statements_of_a_sequence_see_each_other_at_once(run_prose: Any) -> None:
    run = run_prose(
        """\
        let n = "zero"
        parallel:
          do:
            n = session "one"
            n = session "two after {n}"
            session "three after {n}"
        """,
        backend=ANSWERS,
    )
    assert run.result.status == "success", run.result.error
    assert run.prompts == ["one", "two after 1", "three after 2"]


def test_nested_branches_commit_at_the_outermost_join(run_prose: Any) -> None:
    run = run_prose(
        """\
        let x = "old"
        parallel:
          do:
            parallel:
              do:
                x = session "inner writes"
            session "outer branch sees {x}"
          do:
            repeat 3:
              session "sibling waits"
            session "sibling sees {x}"
        session "after {x}"
        """,
        backend=ANSWERS,
    )
    assert run.result.status == "success", run.result.error
    # The inner join makes the write visible to its own (outer) branch only.
    assert "outer branch sees inner" in run.prompts
    assert "sibling sees old" in run.prompts
    assert run.prompts[-1] == "after inner"
    markers = [line for line in run.state() if line.endswith("x ✓")]
    # Narrated where it was made (2aa), committed once, at the outer join.
    assert markers == ["1→ x ✓", "2aa→ x ✓"]
