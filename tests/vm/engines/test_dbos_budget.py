"""A run's spending limits counted across processes (engines/dbos_budget.py): the rows of
an attempt in the system database, on SQLite and PostgreSQL, and a limited run whose items
travel.  Across worker processes: tests/cli/test_worker_fan_out.py."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.engines.base import Attachment
from openprose.vm.interpreter import Budget, Options
from openprose.vm.rundir import new_run_id

# A fixture (it skips without PostgreSQL locally, and fails under CI).
from tests.postgres_cluster import postgres_db_url  # noqa: F401
from tests.support.extras import require
from tests.vm.engines.test_dbos_branches import _items, _run, _spec
from tests.vm.vm_support import Recording

require("dbos", "pip install 'openprose[dbos]'")


def _budget(engine: Any, attempt: str) -> Any:
    from openprose.vm.engines.dbos_budget import SharedBudget

    return SharedBudget(engine=engine, budget=attempt)


def test_sessions_are_counted_once_each_against_the_limit_by_every_process(
    system_engine: Any,
) -> None:
    attempt = f"{new_run_id()}/attempt-1"
    run, item = _budget(system_engine, attempt), _budget(system_engine, attempt)

    async def go() -> list[bool]:
        return [
            await run.start_session("session:1#attempt1", 3),
            await item.start_session("session:2@0#attempt1", 3),
            await item.start_session("session:2@1#attempt1", 3),
            await run.start_session("session:3#attempt1", 3),  # a fourth: refused
            # The item run again (its worker died) asks its counted session again.
            await _budget(system_engine, attempt).start_session("session:2@1#attempt1", 3),
            # Another attempt of the run counts from nothing.
            await _budget(system_engine, attempt + "x").start_session("session:1#attempt1", 3),
        ]

    assert asyncio.run(go()) == [True, True, True, False, True, True]
    # What each process counted itself, which its outcome brings back to the run.
    assert (run.started, item.started) == (1, 2)


def test_costs_and_tokens_are_summed_over_every_process_and_set_once_a_call(
    system_engine: Any,
) -> None:
    attempt = f"{new_run_id()}/attempt-1"
    run, item = _budget(system_engine, attempt), _budget(system_engine, attempt)

    async def go() -> list[tuple[float, int]]:
        await run.start_session("session:1#attempt1", None)
        await run.charge("session:1#attempt1", 0.25, 100)
        await item.charge("judge:2@0#if1", 0.5, 40)
        first = await run.spent()
        await _budget(system_engine, attempt).charge("judge:2@0#if1", 0.5, 40)  # again
        again = await item.spent()
        other = await _budget(system_engine, attempt + "x").spent()
        return [first, again, other]

    assert asyncio.run(go()) == [(0.75, 140), (0.75, 140), (0.0, 0)]
    assert (run.cost, run.tokens, item.cost, item.tokens) == (0.25, 100, 0.5, 40)


def test_a_run_counts_in_the_database_only_what_it_limits(system_engine: Any) -> None:
    from openprose.vm.engines.dbos_budget import SharedBudget

    attempt = f"{new_run_id()}/attempt-1"
    sessions_only = SharedBudget(engine=system_engine, budget=attempt, spending=False)
    spending_only = SharedBudget(engine=system_engine, budget=attempt, sessions=False)
    full = _budget(system_engine, attempt)

    async def go() -> list[Any]:
        await sessions_only.charge("session:1#attempt1", 0.5, 10)  # not written
        await spending_only.start_session("session:2#attempt1", None)  # not written
        return [
            await full.spent(),
            await full.start_session("session:3#attempt1", 1),  # the only one written
            await sessions_only.start_session("session:4#attempt1", 1),
        ]

    assert asyncio.run(go()) == [(0.0, 0), True, False]
    # Each still counts what it spent itself.
    assert (sessions_only.cost, spending_only.started) == (0.5, 1)


def test_sessions_started_at_one_instant_by_many_threads_never_pass_the_limit(
    system_engine: Any,
) -> None:
    attempt = f"{new_run_id()}/attempt-1"
    barrier = threading.Barrier(12)
    started: list[bool] = []

    def start(n: int) -> None:
        budget = _budget(system_engine, attempt)
        barrier.wait()
        started.append(budget._start(f"session:1@{n}#attempt1", 5))

    threads = [threading.Thread(target=start, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(started) == [False] * 7 + [True] * 5


def test_the_local_budget_counts_in_this_process() -> None:
    budget = Budget()

    async def go() -> list[Any]:
        started = [
            await budget.start_session("session:1#attempt1", 1),
            await budget.start_session("session:2#attempt1", 1),
        ]
        await budget.charge("session:1#attempt1", 0.5, 10)
        return [*started, await budget.spent()]

    assert asyncio.run(go()) == [True, False, (0.5, 10)]
    assert not Budget.shared


ITEMS = 'let out = parallel for x in ["a", "b", "c", "d"]:\n  session "Study {x}"\n'


def test_a_limited_run_s_items_travel_and_its_limit_holds(tmp_path: Path) -> None:
    url, run_id, result = _run(tmp_path, ITEMS, Options(jitter=False, max_sessions=10))
    assert result.status == "success", result.error
    assert set(_items(url, run_id).values()) == {"SUCCESS"} and len(_items(url, run_id)) == 4


def test_a_session_limit_stops_a_fan_out_of_travelling_items_as_here(tmp_path: Path) -> None:
    from openprose.vm.engines.local import LocalExecutor

    options = Options(jitter=False, max_sessions=2, concurrency=1)
    backend = Recording(OfflineBackend())
    url, run_id, result = _run(tmp_path, ITEMS, options, attachment=Attachment(backend=backend))
    here = tmp_path / "local"
    here.mkdir()
    local_backend = Recording(OfflineBackend())
    local = asyncio.run(
        LocalExecutor().run(_spec(here, ITEMS, options), None, Attachment(backend=local_backend))
    )
    assert (result.status, result.error) == (local.status, local.error)
    assert result.error == "session limit reached (2 sessions)"
    assert len(backend.sessions) == len(local_backend.sessions) == 2
    assert _items(url, run_id)  # the items were workflows


def test_a_token_limit_counts_what_the_items_spent_in_other_workflows(tmp_path: Path) -> None:
    from openprose.vm.engines.local import LocalExecutor

    # Each study is about 10 tokens with the offline backend: the cap stops the run
    # after some of them, as it does here.
    options = Options(jitter=False, max_tokens=30, concurrency=1)
    text = ITEMS + 'session "Report"\n'
    _url, _run_id, result = _run(tmp_path, text, options)
    here = tmp_path / "local"
    here.mkdir()
    local = asyncio.run(LocalExecutor().run(_spec(here, text, options), None, Attachment()))
    assert result.status == local.status == "error"
    assert result.error == local.error and "token limit reached" in result.error


def test_a_limited_run_s_program_calls_travel_and_count_against_its_limit(
    tmp_path: Path,
) -> None:
    from openprose.vm.engines.local import LocalExecutor
    from tests.vm.engines.test_dbos_branches import CALLER, HELPER

    # Three sessions: the calls' two, and the run's own last one, which the limit refuses.
    options = Options(jitter=False, max_sessions=2)
    (tmp_path / "helper.prose").write_text(HELPER, encoding="utf-8")
    url, run_id, result = _run(tmp_path, CALLER, options)
    here = tmp_path / "local"
    here.mkdir()
    (here / "helper.prose").write_text(HELPER, encoding="utf-8")
    local = asyncio.run(LocalExecutor().run(_spec(here, CALLER, options), None, Attachment()))
    assert (result.status, result.error) == (local.status, local.error)
    assert result.error == "session limit reached (2 sessions)"
    assert _items(url, run_id) == {f"{run_id}/2:call": "SUCCESS", f"{run_id}/3:call": "SUCCESS"}
