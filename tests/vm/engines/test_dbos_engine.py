"""The dbos engine in process: what it asks of DBOS, how it names things, and how it judges
that an executor is gone.  The whole construct suite runs on it too (tests/vm/conftest.py,
marker ``both_engines``), and tests/cli/test_worker_command.py drives workers end to end."""

from __future__ import annotations

import asyncio
import os
import pickle
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.engines import dbos_branches as branches
from openprose.vm.engines import dbos_engine as engine
from openprose.vm.engines.base import Attachment, RunSpec
from openprose.vm.interpreter import Options
from openprose.vm.rundir import new_run_id

# A fixture (it skips without PostgreSQL locally, and fails under CI).
from tests.postgres_cluster import postgres_db_url  # noqa: F401
from tests.support.extras import require

require("dbos", "pip install 'openprose[dbos]'")

PROGRAM = 'let notes = session "Take notes"\noutput summary = session "Summarise {notes}"\n'


def _spec(tmp_path: Path, text: str = PROGRAM) -> RunSpec:
    main = tmp_path / "main.prose"
    main.write_text(text, encoding="utf-8")
    return RunSpec(str(main), text, runs_root=str(tmp_path / ".prose" / "runs"))


def test_a_run_is_the_workflow_whose_id_is_the_run_id(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    url = engine.system_database_url(spec.state, Path(spec.runs_root), environ={})
    run_id = new_run_id()
    result = asyncio.run(engine.DbosExecutor(url).run(spec, run_id, Attachment()))
    assert result.status == "success" and result.run_id == run_id
    assert (Path(spec.runs_root) / run_id / "state.md").is_file()
    with engine.client(url) as client:
        [workflow] = client.list_workflows(workflow_ids=[run_id])
    assert workflow.name == engine.RUN_WORKFLOW
    assert workflow.status == "SUCCESS"
    assert workflow.app_version == branches.APP_VERSION
    assert workflow.executor_id == engine.this_executor()
    assert workflow.output.outputs == result.outputs


def test_a_spec_and_a_result_survive_the_checkpoint(tmp_path: Path) -> None:
    # DBOS pickles a workflow's input and output.
    spec = _spec(tmp_path)
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert spec.run_options().concurrency == 8


def test_the_system_database(tmp_path: Path) -> None:
    runs = tmp_path / ".prose" / "runs"
    assert engine.system_database_url("filesystem", runs, environ={}) == (
        f"sqlite:///{tmp_path / '.prose' / 'dbos.sqlite'}"
    )
    assert engine.system_database_url("sqlite", runs, environ={}).endswith("/.prose/dbos.sqlite")
    given = {"OPENPROSE_DBOS_URL": "postgresql://u:secret@127.0.0.1:5/db"}
    assert (
        engine.system_database_url("filesystem", runs, environ=given) == given["OPENPROSE_DBOS_URL"]
    )
    postgres = {"OPENPROSE_POSTGRES_URL": "postgresql://u:pw@127.0.0.1:5433/runs"}
    # The postgres state backend's database, found as that backend finds it.
    assert (
        engine.system_database_url("postgres", runs, environ=postgres)
        == (postgres["OPENPROSE_POSTGRES_URL"])
    )
    assert engine.shown(given["OPENPROSE_DBOS_URL"]) == "postgresql://u:***@127.0.0.1:5/db"


def test_an_executor_is_gone_when_its_process_on_this_machine_is() -> None:
    host = socket.gethostname()
    assert engine.this_executor() == f"{host}:{os.getpid()}"
    assert engine.executor_alive(engine.this_executor())
    gone = f"{host}:{_finished_pid()}"
    assert not engine.executor_alive(gone)
    # What cannot be judged is taken to be alive: nothing is taken from it.
    assert engine.executor_alive("local")
    assert engine.executor_alive(None)


def test_an_executor_on_another_machine_is_gone_when_its_heartbeat_is_stale() -> None:
    now = time.time()
    beats = {"elsewhere:10": now - 2, "elsewhere:11": now - engine.STALE_SECONDS - 1}
    assert engine.executor_alive("elsewhere:10", beats)
    assert not engine.executor_alive("elsewhere:11", beats)
    assert engine.executor_alive("elsewhere:12", beats)  # never beat: not of this version


def _finished_pid() -> str:
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return finished.stdout.strip()


def test_the_private_calls_of_dbos_the_engine_relies_on_are_there() -> None:
    # Pinned below dbos 3.5: a dead worker's runs are put back on the queue through DBOS's
    # own recovery step, and a client makes a new system database's tables.
    from dbos._sys_db import SystemDatabase

    assert callable(SystemDatabase.reenqueue_for_recovery)
    assert callable(SystemDatabase.run_migrations)
    # ... and the items queued together retry as DBOS's own writes do.
    from dbos._sys_db import db_retry

    assert callable(db_retry(sys_db=None))
    # ... and a run cancelled while it runs stops as DBOS stops a cancelled workflow.
    from dbos._error import DBOSWorkflowCancelledError

    assert issubclass(DBOSWorkflowCancelledError, BaseException)
    # ... and an exchange's step tells another exchange's checkpoint at its place, and a
    # checkpoint refused to a workflow no longer this execution's (dbos_steps).
    from dbos._error import DBOSUnexpectedStepError, DBOSWorkflowConflictIDError

    assert issubclass(DBOSUnexpectedStepError, Exception)
    assert issubclass(DBOSWorkflowConflictIDError, BaseException)


def test_recovery_takes_only_the_runs_of_dead_executors(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    url = engine.system_database_url(spec.state, Path(spec.runs_root), environ={})
    executor = engine.DbosExecutor(url)
    here = socket.gethostname()
    owners = {
        new_run_id(): f"{here}:{_finished_pid()}",  # its process on this machine is gone
        new_run_id(): engine.this_executor(),  # alive: this process
        new_run_id(): "elsewhere:7",  # another machine, silent for a minute
        new_run_id(): "elsewhere:8",  # another machine, beating
    }
    for run_id in owners:
        executor.submit(spec, run_id)

    def pending_on(run_id: str, executor_id: str) -> None:
        # As a worker that dequeued it would leave it: pending on that executor.
        sys_db = branches.system_database()
        table = sys_db.tables.workflow_status
        with sys_db.engine.begin() as connection:
            connection.execute(
                table.update()
                .where(table.c.workflow_uuid == run_id)
                .values(status="PENDING", executor_id=executor_id)
            )

    def beat(executor_id: str, at: float) -> None:
        table = engine._beats_table()
        with branches.system_database().engine.begin() as connection:
            connection.execute(table.insert().values(executor_id=executor_id, beat_at=at))

    async def scenario() -> tuple[list[str], dict[str, float]]:
        engine.launch(url, engine.this_executor(), [])
        try:
            for run_id, owner in owners.items():
                pending_on(run_id, owner)
            beat("elsewhere:7", time.time() - 60)
            beat("elsewhere:8", time.time())
            recovered = await engine.recover_dead_executors()
            return recovered, engine.heartbeats(branches.system_database().engine)
        finally:
            engine.shut_down()

    recovered, beats = asyncio.run(scenario())
    ids = list(owners)
    assert sorted(recovered) == sorted([ids[0], ids[2]])
    # This process beat while it was launched.
    assert time.time() - beats[engine.this_executor()] < 10
    with engine.client(url) as client:
        statuses = {w.workflow_id: w.status for w in client.list_workflows(load_input=False)}
    assert statuses == {
        ids[0]: "ENQUEUED",
        ids[1]: "PENDING",
        ids[2]: "ENQUEUED",
        ids[3]: "PENDING",
    }
    # Queued runs are listed with their program, for `prose runs list`, and so are the
    # runs a worker has taken (pending) before their state exists.
    assert sorted((run_id, s.program) for run_id, s, _ in engine.queued(url)) == sorted(
        (run_id, spec.program) for run_id in ids
    )


def test_a_take_over_waits_for_the_dead_executor_s_claim_to_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from openprose.vm.state import StateError

    class Catalog:
        def __init__(self, refusals: list[str]) -> None:
            self.refusals = refusals

        def open(self, run_id: str) -> str:
            if self.refusals:
                raise StateError(self.refusals.pop(0))
            return f"store of {run_id}"

    slept: list[float] = []

    async def no_wait(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", no_wait)  # the module the engine waits with
    still = "run r is still running (process 12 on elsewhere)"
    assert asyncio.run(engine._taken_over(Catalog([still, still]), "r")) == "store of r"
    assert slept == [1.0, 1.0]
    # Anything else is not waited for.
    with pytest.raises(StateError, match="no run"):
        asyncio.run(engine._taken_over(Catalog(["no run 'r' in /x"]), "r"))
    # Nor a claim that outlives the wait.
    monkeypatch.setattr(engine, "TAKEOVER_SECONDS", -1.0)
    with pytest.raises(StateError, match="still running"):
        asyncio.run(engine._taken_over(Catalog([still]), "r"))


def _workflow(workflow_id: str, status: str, name: str = engine.RUN_WORKFLOW) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(workflow_id=workflow_id, status=status, name=name)


def test_a_resumed_run_is_its_next_attempt_once_every_attempt_is_over() -> None:
    run = "20261207-101010-abcdef"
    assert engine.next_attempt([], run) == run  # a run of the local engine: its first
    ended = [_workflow(run, "SUCCESS"), _workflow(f"{run}/1@0", "ERROR", "openprose.branch")]
    assert engine.next_attempt(ended, run) == f"{run}/attempt-2"
    later = [*ended, _workflow(f"{run}/attempt-2", "CANCELLED")]
    assert engine.next_attempt(later, run) == f"{run}/attempt-3"
    assert engine.run_of(f"{run}/attempt-3") == run and engine.run_of(run) == run
    assert engine.run_of(f"{run}/attempt-3/4@17") == engine.run_of(f"{run}/3:call") == run
    # Another run whose id begins with this one's is not an attempt of it.
    assert engine.next_attempt([_workflow(run + "x", "SUCCESS")], run) == run
    with pytest.raises(engine.EngineError, match="is queued on the dbos engine"):
        engine.next_attempt([*later, _workflow(f"{run}/attempt-3", "ENQUEUED")], run)
    with pytest.raises(engine.EngineError, match="is not over"):
        engine.next_attempt([*ended, _workflow(f"{run}/attempt-2", "PENDING")], run)


@pytest.mark.parametrize("state", ["filesystem", "postgres"])
def test_a_failed_run_resumed_runs_as_its_next_attempt_and_ends_as_the_run(
    tmp_path: Path, state: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = PROGRAM + 'output more = session "Go further"\n'
    spec = replace(_spec(tmp_path, text), state=state)
    environ = {}
    if state == "postgres":
        environ["OPENPROSE_POSTGRES_URL"] = request.getfixturevalue("postgres_db_url")
        monkeypatch.setenv("OPENPROSE_POSTGRES_URL", environ["OPENPROSE_POSTGRES_URL"])
    url = engine.system_database_url(spec.state, Path(spec.runs_root), environ=environ)
    run_id = new_run_id()
    executor = engine.DbosExecutor(url)
    limited = replace(spec, options={**spec.options, "max_sessions": 1})
    first = asyncio.run(executor.run(limited, run_id, Attachment()))
    assert first.status == "error" and "session limit" in first.error
    resumed = asyncio.run(executor.run(spec, run_id, Attachment(), resume=True))
    assert resumed.status == "success" and resumed.run_id == run_id
    assert resumed.outputs["more"].startswith("[dry run] Go further")
    with engine.client(url) as client:
        found = client.list_workflows(workflow_id_prefix=run_id, load_input=False)
        assert {w.workflow_id: w.status for w in found} == {
            run_id: "SUCCESS",
            f"{run_id}/attempt-2": "SUCCESS",
        }
        assert engine.workflows_of(url, new_run_id()) is None
    held = engine.workflows_of(url, run_id)
    assert held is not None and [a["status"] for a in held["attempts"]] == ["SUCCESS"] * 2
    runs = Path(spec.runs_root)
    catalog = spec.catalog()
    # One run, completed, each of its three sessions asked once across both attempts.
    assert [info.run_id for info in catalog.runs()] == [run_id]
    assert catalog.info(run_id).status == "completed" and catalog.info(run_id).steps == 3
    assert catalog.program_text(run_id) == text
    if state == "filesystem":
        assert (runs / run_id / "bindings" / "more.md").is_file()


def test_a_worker_names_the_workflows_it_recovers() -> None:
    run = "20261207-101010-abcdef"
    assert engine.described(run) == f"run {run}"
    assert engine.described(f"{run}/4@17") == f"item 4@17 of run {run}"
    assert engine.described(f"{run}/3.2@1a/helper") == f"item 3.2@1a/helper of run {run}"
    assert engine.described(f"{run}/attempt-2") == f"run {run} (attempt 2)"
    assert engine.described(f"{run}/attempt-2/5b") == f"item 5b of run {run} (attempt 2)"
    assert engine.described(f"{run}/3:call") == f"program call at step 3 of run {run}"
    assert engine.described(f"{run}/attempt-2/3:call") == (
        f"program call at step 3 of run {run} (attempt 2)"
    )


@pytest.mark.parametrize("state", ["sqlite", "postgres"])
def test_forgetting_a_run_removes_its_workflows_and_the_engine_s_rows_of_it(
    tmp_path: Path, state: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlalchemy as sa

    from openprose.vm.branches import BranchOutcome
    from openprose.vm.engines.dbos_partials import keep as keep_partial
    from tests.vm.engines.test_dbos_branches import _run as _run_here
    from tests.vm.engines.test_dbos_summaries import SHARED

    if state == "postgres":
        monkeypatch.setenv("OPENPROSE_POSTGRES_URL", request.getfixturevalue("postgres_db_url"))
    options = Options(jitter=False, verbatim_below=10, max_sessions=20)
    runs = []
    for _ in range(2):
        url, run_id, result = _run_here(tmp_path, SHARED, options, state=state)
        assert result.status == "success", result.error
        runs.append(run_id)
    gone, kept = runs

    # A partial outcome of one of each run's items, as a worker keeps a cancelled item's.
    with engine.client(url) as dbos_client:
        for run_id in runs:
            keep_partial(dbos_client._sys_db.engine, run_id, f"{run_id}/1@0", BranchOutcome())

    def held(run_id: str) -> tuple[int, int, int, int]:
        with engine.client(url) as dbos_client:
            workflows = dbos_client.list_workflows(workflow_id_prefix=run_id, load_input=False)
            with dbos_client._sys_db.engine.connect() as connection:
                rows = [
                    connection.execute(
                        sa.text(f"SELECT count(*) FROM {table} WHERE {column} = :run"),
                        {"run": run_id},
                    ).scalar_one()
                    for table, column in [
                        ("openprose_spending", "budget"),
                        ("openprose_summaries", "attempt"),
                        ("openprose_partials", "attempt"),
                    ]
                ]
        return len(workflows), rows[0], rows[1], rows[2]

    before = held(gone)
    # The run and its six items; eight sessions; one summary; one partial outcome.
    assert before == (7, 8, 1, 1)
    assert engine.forget(url, gone) == 7
    assert held(gone) == (0, 0, 0, 0)
    assert held(kept) == before
    assert engine.forget(url, gone) == 0
