"""A fan-out that fails on the dbos engine reports what its other items did, as the local
engine does: what those items narrated and paid for until the failure cancelled them (their
partial outcomes, dbos_partials) and what those that ended beside the failure did."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from openprose.vm import events as ev
from openprose.vm.backends.base import BackendError, Usage
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.branches import BranchOutcome, CallOutcome, StagedBinding
from openprose.vm.engines import dbos_partials
from openprose.vm.engines.base import Attachment
from openprose.vm.engines.local import LocalExecutor
from openprose.vm.interpreter import Options
from tests.support.extras import require
from tests.vm.engines.test_dbos_branches import _items, _run, _spec

require("dbos", "pip install 'openprose[dbos]'")

# Item `a` fails at its second session while the others are at theirs.
SIBLINGS = (
    'let out = parallel for x in ["a", "b", "c", "d"]:\n'
    '  session "first {x}"\n'
    '  session "second {x}"\n'
    '  session "third {x}"\n'
    "output result = out\n"
)
# The same as a parallel block's branches.
BRANCHES = (
    "block steps(x):\n"
    '  session "first {x}"\n'
    '  session "second {x}"\n'
    '  session "third {x}"\n'
    "parallel:\n"
    '  a = do steps("a")\n'
    '  b = do steps("b")\n'
    '  c = do steps("c")\n'
    '  d = do steps("d")\n'
)


def _backend(delay: float) -> OfflineBackend:
    return OfflineBackend(failures={"second a": 1}, delay=delay)


def _ran(tmp_path: Path, engine: str, text: str, delay: float) -> tuple[Any, Any, list[str]]:
    """The run's result, its summary in its state, and its events' kinds."""
    here = tmp_path / engine
    here.mkdir()
    attachment = Attachment(backend=_backend(delay))
    options = Options(jitter=False, retry_base_delay=0.0)
    if engine == "dbos":
        result = _run(here, text, options, attachment=attachment)[2]
        spec = _spec(here, text, options)
    else:
        spec = _spec(here, text, options)
        result = asyncio.run(LocalExecutor().run(spec, None, attachment))
    info = spec.catalog().info(result.run_id)
    events = (Path(spec.runs_root) / result.run_id / "events.jsonl").read_text("utf-8")
    kinds = [json.loads(line)["event"] for line in events.splitlines()]
    return result, info, kinds


@pytest.mark.parametrize("engine", ["local", "dbos"])
@pytest.mark.parametrize("text", [SIBLINGS, BRANCHES], ids=["fan-out", "block"])
def test_a_failed_fan_out_reports_every_session_its_items_paid_for(
    tmp_path: Path, engine: str, text: str
) -> None:
    result, info, kinds = _ran(tmp_path, engine, text, delay=0.3)
    assert result.status == "error" and "second a" in result.error
    # Every item's first session was paid for before `a` failed.
    assert result.sessions >= 4
    # What the run reports is what its journal holds, and what it narrated.
    assert result.sessions == info.sessions == kinds.count("success")
    assert result.usage.input_tokens == info.input_tokens
    assert result.usage.output_tokens == info.output_tokens


def _outcome() -> BranchOutcome:
    return BranchOutcome(
        value="a value",
        error=("no a", 'throw "no {x}"', "thrown"),
        bindings=[StagedBinding("1@0", "1", 1, "b", "let", "v", "src", None, None, False)],
        events=[ev.Failure(step="1", level=1, message="no a")],
        recorded={0},
        usage=Usage(input_tokens=3, output_tokens=5),
        cost=0.25,
        sessions=1,
        scope={"b": "v"},
    )


def test_a_partial_outcome_keeps_the_narration_and_spending_and_nothing_bound(
    system_engine: Any,
) -> None:
    dbos_partials.make_table(system_engine)
    dbos_partials.make_table(system_engine)  # a second worker finds it made
    dbos_partials.keep(system_engine, "run-1", "run-1/1@0", _outcome())
    dbos_partials.keep(system_engine, "run-1", "run-1/1@0", BranchOutcome(sessions=9))
    found = asyncio.run(dbos_partials.collect(system_engine, ["run-1/1@0", "run-1/1@1"], 0))
    assert list(found) == ["run-1/1@0"]  # 1@1 wrote none; the first write stays
    kept = found["run-1/1@0"]
    assert isinstance(kept, BranchOutcome)
    assert (kept.value, kept.error, kept.bindings, kept.scope) == (None, None, [], {})
    assert kept.events == _outcome().events and kept.recorded == {0}
    assert (kept.usage, kept.cost, kept.sessions) == (Usage(3, 5), 0.25, 1)


def test_a_call_s_partial_outcome_keeps_the_narration_and_spending_and_no_result(
    system_engine: Any,
) -> None:
    dbos_partials.make_table(system_engine)
    called = CallOutcome(
        outputs={"report": "half"},
        events=[ev.Failure(step="1", level=1, message="late")],
        usage=Usage(input_tokens=4, output_tokens=6),
        cost=0.5,
        sessions=2,
        raised=("no", "use", "program"),
    )
    dbos_partials.keep(system_engine, "run-3", "run-3/2:call", called)
    kept = asyncio.run(dbos_partials.collect(system_engine, ["run-3/2:call"], 0))["run-3/2:call"]
    assert isinstance(kept, CallOutcome)
    assert (kept.status, kept.outputs, kept.raised) == ("cancelled", {}, None)
    assert kept.events == called.events
    assert (kept.usage, kept.cost, kept.sessions) == (Usage(4, 6), 0.5, 2)


def test_a_run_waits_for_a_partial_outcome_a_worker_writes_later(system_engine: Any) -> None:
    dbos_partials.make_table(system_engine)

    def later() -> None:
        time.sleep(0.3)
        dbos_partials.keep(system_engine, "run-2", "run-2/1@3", _outcome())

    writer = threading.Thread(target=later)
    writer.start()
    try:
        found = asyncio.run(dbos_partials.collect(system_engine, ["run-2/1@3"], 10))
    finally:
        writer.join()
    assert list(found) == ["run-2/1@3"]
    started = time.monotonic()
    assert asyncio.run(dbos_partials.collect(system_engine, ["run-2/1@4"], 0.2)) == {}
    assert time.monotonic() - started >= 0.2


# Every item studies, then b fails while the others are at their review.
STUDIED = (
    'parallel for x in ["a", "b", "c", "d"]:\n'
    '  session "Study {x}"\n'
    '  if x == "b":\n    throw "no {x}"\n'
    '  session "Review {x}"\n'
)


def test_a_run_taken_over_after_a_fail_fast_reports_the_partial_outcomes_once(
    tmp_path: Path,
) -> None:
    from openprose.vm.engines import dbos_engine as engine
    from openprose.vm.rundir import new_run_id
    from tests.vm.engines.test_dbos_branches import _lose_its_executor, _taken_over

    spec = _spec(tmp_path, STUDIED, Options(jitter=False), offline_delay=1.0)
    url = engine.system_database_url(spec.state, Path(spec.runs_root), environ={})
    run_id = new_run_id()
    first = asyncio.run(engine.DbosExecutor(url).run(spec, run_id, Attachment()))
    assert first.status == "error" and first.error == "no b"
    # The four studies; a review ended with b's failure or not, as timing has it.
    assert first.sessions >= 4
    _lose_its_executor(url, run_id)
    again = asyncio.run(_taken_over(url, run_id))
    assert again.status == "error" and again.error == first.error
    # The items' outcomes and partial outcomes, found again, are counted as the first time.
    assert (again.sessions, again.usage) == (first.sessions, first.usage)
    events = (Path(spec.runs_root) / run_id / "events.jsonl").read_text("utf-8")
    assert events.count('"event": "success"') == first.sessions  # narrated once


CHILD = 'session "child one"\nsession "child two"\nsession "slow child"\n'
# The called program completes two sessions, then the other branch decides the block.
CALLED_IN_A_RACE = 'use "./child" as child\nparallel ("first"):\n  child()\n  session "late win"\n'
CALLED_IN_A_FAILED_BLOCK = 'use "./child" as child\nparallel:\n  child()\n  session "late fail"\n'


async def _until(event: threading.Event) -> None:
    """Until ``event`` is set in any thread (up to 10 s), letting the loop run meanwhile."""
    for _ in range(2000):
        if event.is_set():
            return
        await asyncio.sleep(0.005)


class _AfterTheChild(OfflineBackend):
    """Sessions: "slow" ones wait until cancelled; "late" ones until the child's second session
    ended (in whichever thread the child runs), then a "late fail" fails."""

    def __init__(self) -> None:
        super().__init__()
        self.child_done = threading.Event()

    async def run_session(self, request: Any) -> Any:
        if request.prompt.startswith("slow"):
            await asyncio.Event().wait()
        if request.prompt.startswith("late"):
            await _until(self.child_done)
            if request.prompt.endswith("fail"):
                raise BackendError("late broke")
        result = await super().run_session(request)
        if request.prompt == "child two":
            self.child_done.set()
        return result


@pytest.mark.parametrize("engine", ["local", "dbos"])
@pytest.mark.parametrize(
    "text", [CALLED_IN_A_RACE, CALLED_IN_A_FAILED_BLOCK], ids=["race-loser", "fail-fast"]
)
def test_a_call_cancelled_with_its_caller_reports_what_it_paid_for(
    tmp_path: Path, engine: str, text: str
) -> None:
    # A race's loser calls a program (on the dbos engine a workflow of its own, its
    # partial outcome kept by its worker); a failed block's sibling does (there, the
    # call runs in the branch's workflow, whose partial outcome counts it).
    here = tmp_path / engine
    here.mkdir()
    (here / "child.prose").write_text(CHILD, encoding="utf-8")
    attachment = Attachment(backend=_AfterTheChild())
    options = Options(jitter=False)
    spec = _spec(here, text, options)
    if engine == "dbos":
        result = _run(here, text, options, attachment=attachment)[2]
    else:
        result = asyncio.run(LocalExecutor().run(spec, None, attachment))
    won = text == CALLED_IN_A_RACE
    assert result.status == ("success" if won else "error"), result.error
    # The child's two sessions, and the winner's.
    assert result.sessions == 2 + won
    assert result.breakdown.total.calls == result.sessions
    assert result.usage.output_tokens == result.breakdown.total.output_tokens
    assert result.sessions == spec.catalog().info(result.run_id).sessions


class _AfterB(OfflineBackend):
    """Session "Study a" ends once "Study b" has (in whichever thread b runs)."""

    def __init__(self) -> None:
        super().__init__()
        self.b_done = threading.Event()

    async def run_session(self, request: Any) -> Any:
        if request.prompt == "Study a":
            await _until(self.b_done)
        result = await super().run_session(request)
        if request.prompt == "Study b":
            self.b_done.set()
        return result


def test_an_item_cancelled_as_it_ends_reports_what_it_paid_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Item b has ended, and returns its outcome just as the run cancels it (a failed):
    # DBOS refuses to record that outcome. What b narrated and paid for still reaches the
    # run's report.
    from openprose.vm.engines import dbos_branches

    real = dbos_branches.execute_branch
    held: list[str] = []

    async def held_at_its_end(spec: Any, run_id: str, task: Any) -> Any:
        outcome = await real(spec, run_id, task)
        if task.index == 1:
            from dbos import DBOS

            held.append(str(DBOS.workflow_id))
            for _ in range(400):  # until the run cancels it, up to 10 s
                if await dbos_branches.workflow_status(held[0]) == "CANCELLED":
                    break
                await asyncio.sleep(0.025)
        return outcome

    monkeypatch.setattr(dbos_branches, "execute_branch", held_at_its_end)
    text = (
        'parallel for x in ["a", "b"]:\n  session "Study {x}"\n  if x == "a":\n    throw "no a"\n'
    )
    options = Options(jitter=False)
    backend = _AfterB()  # a fails only once b's session is over
    url, run_id, result = _run(tmp_path, text, options, attachment=Attachment(backend=backend))
    assert result.status == "error" and result.error == "no a"
    assert held and _items(url, run_id)[held[0]] == "CANCELLED"  # no outcome of b in DBOS
    assert result.sessions == 2  # a's study and b's
    info = _spec(tmp_path, text, options).catalog().info(run_id)
    assert info.sessions == 2
    events = (tmp_path / ".prose" / "runs" / run_id / "events.jsonl").read_text("utf-8")
    assert events.count('"event": "success"') == 2


def test_items_ending_together_keep_their_partial_outcomes_in_one_write(
    system_engine: Any,
) -> None:
    dbos_partials.make_table(system_engine)
    writes: list[int] = []

    def counted(engine: Any, kept: Any) -> None:
        writes.append(len(kept))
        dbos_partials.keep_all(engine, kept)

    async def ending_together() -> None:
        keeper = dbos_partials.Keeper(system_engine, counted)
        await asyncio.gather(*(keeper.keep("run-4", f"run-4/1@{i}", _outcome()) for i in range(10)))

    asyncio.run(ending_together())
    ids = [f"run-4/1@{i}" for i in range(10)]
    assert len(asyncio.run(dbos_partials.collect(system_engine, ids, 0))) == 10
    # The writer starts at the loop's next turn, when all ten are waiting.
    assert writes == [10]
    dbos_partials.drop(system_engine, ids[:4])
    assert sorted(asyncio.run(dbos_partials.collect(system_engine, ids, 0))) == ids[4:]


def test_a_run_drops_the_partial_outcomes_of_the_items_dbos_recorded(tmp_path: Path) -> None:
    import sqlalchemy as sa

    url, _run_id, result = _run(tmp_path, SIBLINGS)
    assert result.status == "success"
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                sa.text(f"SELECT count(*) FROM {dbos_partials.PARTIALS_TABLE}")
            ).scalar()
    finally:
        engine.dispose()
    assert rows == 0  # every item's row, written as it ended, was dropped at the join


def test_an_item_s_partial_outcome_waits_out_a_locked_system_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Written as DBOS writes its own rows: a locked SQLite file (or a lost connection) is
    # waited out and the write tried again, rather than failing the item that ended.
    import sqlite3

    import sqlalchemy as sa

    from openprose.vm.engines import dbos_branches

    real = dbos_partials.keep_all  # what dbos_branches writes with (keep_partials)
    tries: list[int] = []

    def locked_once(engine: Any, kept: Any) -> None:
        tries.append(len(kept))
        if len(tries) == 1:
            raise sa.exc.OperationalError(
                "INSERT", {}, sqlite3.OperationalError("database is locked")
            )
        real(engine, kept)

    monkeypatch.setattr(dbos_branches, "keep_partials", locked_once)
    _url, _run_id, result = _run(tmp_path, 'parallel for x in ["a"]:\n  session "Study {x}"\n')
    assert result.status == "success", result.error
    assert tries == [1, 1]  # refused, then written
