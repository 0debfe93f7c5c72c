"""A ``parallel for`` of a thousand items on the dbos engine, spread over the workers that
serve its queue, and what becomes of it when a worker is killed in the middle: child
processes, the offline backend, PostgreSQL (three workers) and SQLite (one worker,
restarted)."""

from __future__ import annotations

import json
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Fixtures: importing them makes them visible to this module's tests.
from tests.cli.test_worker_command import (  # noqa: F401
    _bindings,
    _detach,
    _environment,
    _log,
    _wait_for,
    postgres_db_url,
    workers,
)
from tests.support.extras import require

require("dbos", "pip install 'openprose[dbos]'")

ITEMS = 1000


def _listed(items: int) -> str:
    return ", ".join(f'"{n}"' for n in range(items))


def _studies(items: int, report: bool = False) -> str:
    """A ``parallel for`` of one session an item, each naming its item as #N#; ``report``:
    and a report after it."""
    text = f'let out = parallel for x in [{_listed(items)}]:\n  session "Study item #{{x}}#"\n'
    return text + ('output report = session "Report on the study"\n' if report else "")


FAN_OUT = (
    f"let items = [{_listed(ITEMS)}]\n"
    "let out = parallel for x in items:\n"
    '  session "Study item #{x}#"\n'
    'output report = session "Report on the study"\n'
)
# The run's own items in flight at once; each worker executes up to 16 (of any run).
RUN_ARGS = ("--concurrency", "48", "--offline-delay", "0.05")
WORKER_ARGS = ("--concurrency", "1", "--branch-concurrency", "16")


def _status_on_postgres(prose: Any, run_id: str, env: dict[str, str]) -> str | None:
    """The run's status in its PostgreSQL state (None: not made yet)."""
    done = prose("runs", "show", run_id, "--json", "--state", "postgres", **env)
    return json.loads(done.stdout)["status"] if done.returncode == 0 else None


def _exchanges(recording: Path) -> list[str]:
    """The step key of every exchange a backend answered (each worker appends to the
    recording for the items it executes)."""
    if not recording.is_file():
        return []
    lines = recording.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["key"] for line in lines if '"key"' in line]


def _show(
    prose: Any, run_id: str, *args: str, cwd: Path | None = None, **env: str
) -> dict[str, Any]:
    done = prose("runs", "show", run_id, "--json", *args, cwd=cwd, **env)
    assert done.returncode == 0, done.stderr
    shown: dict[str, Any] = json.loads(done.stdout)
    return shown


def _out(shown: dict[str, Any]) -> list[str]:
    [binding] = [b for b in shown["bindings"] if b["name"] == "out"]
    value = binding["value"]
    items: list[str] = json.loads(value) if isinstance(value, str) else value
    return items


def _check_every_item_once(out: list[str]) -> None:
    assert len(out) == ITEMS
    for n, answer in enumerate(out):
        # Item n's answer, in item n's place, naming no other item.
        assert re.findall(r"#(\d+)#", answer) == [str(n)], (n, answer)


def _check_no_completed_step_ran_again(keys: list[str], in_flight: int) -> None:
    asked = Counter(keys)
    assert len(asked) == ITEMS + 1, len(asked)  # every item's session and the report
    again = [key for key, times in asked.items() if times > 1]
    # Only an exchange in flight at the kill may have been asked twice.
    assert all(asked[key] == 2 for key in again), again
    assert len(again) <= in_flight, again


def _system(tmp_path: Path, sql: str, *params: Any) -> list[Any]:
    """Rows of the project's SQLite system database."""
    system = sqlite3.connect(tmp_path / ".prose" / "dbos.sqlite", timeout=10)
    try:
        return system.execute(sql, params).fetchall()
    finally:
        system.close()


def _items_running(tmp_path: Path, worker: subprocess.Popen[str]) -> int:
    """How many fan-out items ``worker`` is executing now (SQLite system database): a kill
    meant to leave items in flight waits for some (between two polls of its queue, a
    worker whose items all finished executes none)."""
    [(running,)] = _system(
        tmp_path,
        "SELECT count(*) FROM workflow_status WHERE name = 'openprose.branch' "
        "AND status = 'PENDING' AND executor_id = ?",
        f"{socket.gethostname()}:{worker.pid}",
    )
    return int(running)


def _two_workers(
    tmp_path: Path, start: Callable[..., subprocess.Popen[str]], branches: int
) -> list[subprocess.Popen[str]]:
    """Two workers of one run slot and ``branches`` item slots each, both up: a run queued
    after them finds both serving the items' queue."""
    started = [start("--concurrency", "1", "--branch-concurrency", str(branches)) for _ in "ab"]
    _wait_for(lambda: all("takes runs" in _log(tmp_path, n) for n in range(2)))
    return started


def _executors(started: list[subprocess.Popen[str]]) -> set[str]:
    return {f"{socket.gethostname()}:{w.pid}" for w in started}


def _item_executors(tmp_path: Path, run_id: str) -> set[str]:
    """The executors of the run's item workflows (SQLite system database)."""
    rows = _system(
        tmp_path,
        "SELECT DISTINCT executor_id FROM workflow_status "
        "WHERE name = 'openprose.branch' AND workflow_uuid LIKE ?",
        f"{run_id}/%",
    )
    return {executor for (executor,) in rows}


def _check_called_study(run_dir: Path, items: int) -> None:
    """The state of the program ``_studies(items, report=True)`` the run called: every
    item's answer bound in order, each item narrated once, the join once, then the
    report."""
    called = run_dir / "imports" / "local--study-1"
    out = (called / "bindings" / "out.md").read_text(encoding="utf-8")
    assert [int(n) for n in re.findall(r"#(\d+)#", out)] == list(range(items))
    narration = (called / "state.md").read_text(encoding="utf-8").splitlines()
    assert narration.count("1→ ✓") == items, narration
    assert narration.count("1→ ∥done") == 1 and narration[-2] == "2→ report ✓"


def _local_out(prose: Any, tmp_path: Path) -> list[str]:
    here = tmp_path / "local"
    here.mkdir()
    (here / "main.prose").write_text(FAN_OUT, encoding="utf-8")
    done = prose("run", "main.prose", "--json", cwd=here)
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    return _out(_show(prose, run_id, cwd=here))


def test_a_thousand_items_spread_over_three_workers_on_postgresql_survive_a_kill(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
    postgres_db_url: str,  # noqa: F811
) -> None:
    import psycopg

    env = {"OPENPROSE_POSTGRES_URL": postgres_db_url}
    recording = tmp_path / "exchanges.jsonl"
    run_id = _detach(
        prose, tmp_path, FAN_OUT, "--state", "postgres", *RUN_ARGS, "--record", str(recording),
        **env,
    )  # fmt: skip
    started = [workers("--state", "postgres", *WORKER_ARGS, **env) for _ in range(3)]

    def listed() -> dict[str, Any]:
        done = prose("runs", "list", "--state", "postgres", "--json", **env)
        assert done.returncode == 0, done.stderr
        return {run["run_id"]: run for run in json.loads(done.stdout)}[run_id]

    _wait_for(lambda: listed()["status"] == "running")
    _wait_for(lambda: len(_exchanges(recording)) >= ITEMS // 3, 120)
    # The worker executing the run is killed: the run is taken over, and with it the
    # items that worker had in flight.
    victim = next(w for w in started if w.pid == listed()["pid"])
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    _wait_for(lambda: listed()["status"] == "completed", 300)

    survivors = "".join(_log(tmp_path, i) for i, w in enumerate(started) if w is not victim)
    assert f"run {run_id} lost its worker: back on the queue" in survivors
    _check_no_completed_step_ran_again(_exchanges(recording), in_flight=16)
    out = _out(_show(prose, run_id, "--state", "postgres", OPENPROSE_POSTGRES_URL=postgres_db_url))
    _check_every_item_once(out)
    assert out == _local_out(prose, tmp_path)  # as the local engine binds it

    with psycopg.connect(postgres_db_url) as connection:
        rows = connection.execute(
            "SELECT executor_id, count(*) FROM dbos.workflow_status "
            "WHERE name = 'openprose.branch' AND workflow_uuid LIKE %s GROUP BY executor_id",
            (f"{run_id}/%",),
        ).fetchall()
    shares = {executor: count for executor, count in rows}
    assert sum(shares.values()) == ITEMS  # one workflow an item, however often it ran
    host = socket.gethostname()
    # Each of the three executed a share (the victim, those it finished before its death).
    assert {f"{host}:{w.pid}" for w in started} <= set(shares), shares


def test_a_thousand_items_on_sqlite_survive_the_restart_of_their_only_worker(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    recording = tmp_path / "exchanges.jsonl"
    run_id = _detach(prose, tmp_path, FAN_OUT, *RUN_ARGS, "--record", str(recording))
    first = workers(*WORKER_ARGS)
    _wait_for(
        lambda: len(_exchanges(recording)) >= ITEMS // 3 and _items_running(tmp_path, first) > 0,
        120,
    )
    first.send_signal(signal.SIGKILL)
    first.wait()
    done_before = len(_exchanges(recording))
    workers(*WORKER_ARGS)
    run_dir = tmp_path / ".prose" / "runs" / run_id
    _wait_for(lambda: (run_dir / "bindings" / "report.md").is_file(), 300)
    assert f"run {run_id} lost its worker: back on the queue" in _log(tmp_path, 1)
    assert "of run " + run_id in _log(tmp_path, 1)  # its items in flight, too
    assert ITEMS // 3 <= done_before < ITEMS
    _check_no_completed_step_ran_again(_exchanges(recording), in_flight=16)
    out = _out(_show(prose, run_id))
    _check_every_item_once(out)
    assert out == _local_out(prose, tmp_path)


def test_cancelling_a_run_cancels_the_items_it_has_not_collected(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    recording = tmp_path / "exchanges.jsonl"
    run_id = _detach(
        prose, tmp_path, FAN_OUT, "--concurrency", "4", "--offline-delay", "0.2",
        "--record", str(recording),
    )  # fmt: skip
    workers(*WORKER_ARGS)
    _wait_for(lambda: len(_exchanges(recording)) >= 8)
    cancelled = prose("runs", "cancel", run_id)
    assert cancelled.returncode == 0, cancelled.stderr
    _wait_for(lambda: _show(prose, run_id)["status"] != "running")
    asked = len(_exchanges(recording))
    time.sleep(1.5)
    # Nothing more is asked: the items queued or in flight were cancelled with the run.
    assert len(_exchanges(recording)) <= asked + 4
    assert len(_exchanges(recording)) < ITEMS


def test_the_items_a_failed_fan_out_cancels_stop_in_their_worker(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    text = (
        'parallel for x in ["a", "b", "c", "d"]:\n'
        '  if x == "b":\n    throw "no {x}"\n'
        '  session "Study {x}"\n'
    )
    run_id = _detach(prose, tmp_path, text, "--offline-delay", "3")
    workers(*WORKER_ARGS)
    _wait_for((tmp_path / ".prose" / "runs" / run_id).is_dir)
    _wait_for(lambda: _show(prose, run_id)["status"] == "failed", 60)
    time.sleep(4)  # past the sessions the other items were in when b threw
    # Their sessions were stopped, not asked to their end (a cancelled item once went on
    # calling the model), and the worker says nothing of DBOS's about them.
    journal = sqlite3.connect(tmp_path / ".prose" / "runs" / run_id / "journal.db")
    steps = journal.execute("SELECT key FROM journal_steps WHERE kind = 'session'").fetchall()
    journal.close()
    assert steps == []
    log = _log(tmp_path, 0)
    assert "outcome was not recorded" not in log and "Traceback" not in log, log
    # `runs show` says what became of the items.
    shown = prose("runs", "show", run_id).stdout
    assert "items:     4 workflows: 3 CANCELLED, 1 SUCCESS; 1 worker" in shown, shown


BLOCK = (
    "parallel:\n"
    + "".join(f'  repeat 12 as i:\n    session "Branch {b}, step #{{i}}#"\n' for b in "ABC")
    + 'output report = session "Report on the branches"\n'
)


def test_a_parallel_block_s_branches_survive_the_restart_of_their_worker(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    recording = tmp_path / "exchanges.jsonl"
    run_id = _detach(prose, tmp_path, BLOCK, "--offline-delay", "0.1", "--record", str(recording))
    first = workers(*WORKER_ARGS)
    _wait_for(lambda: len(_exchanges(recording)) >= 12, 120)
    first.send_signal(signal.SIGKILL)
    first.wait()
    workers(*WORKER_ARGS)
    run_dir = tmp_path / ".prose" / "runs" / run_id
    _wait_for(lambda: (run_dir / "bindings" / "report.md").is_file(), 120)
    # Each branch is a workflow of its own, taken over with the run.
    assert f"run {run_id} lost its worker: back on the queue" in _log(tmp_path, 1)
    assert "of run " + run_id in _log(tmp_path, 1)  # "item 1a of run ...", its branches
    asked = Counter(_exchanges(recording))
    assert len(asked) == 3 * 12 + 1
    again = [key for key, times in asked.items() if times > 1]
    assert len(again) <= 3 and all(asked[key] == 2 for key in again), again  # one a branch

    here = tmp_path / "local"
    here.mkdir()
    (here / "main.prose").write_text(BLOCK, encoding="utf-8")
    done = prose("run", "main.prose", "--json", cwd=here)
    assert done.returncode == 0, done.stderr
    local_dir = here / ".prose" / "runs" / json.loads(done.stdout)["run_id"]
    assert _bindings(run_dir) == _bindings(local_dir)  # 37 bindings, named alike


def test_a_worker_s_rate_limit_paces_the_items_of_its_backend_s_runs(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    from openprose.vm.engines import dbos_engine as engine

    # The project's limit, overridden by the worker's option.
    (tmp_path / "prose.toml").write_text('[run]\nrate-limits = { offline = "100/s" }\n')
    text = _studies(18)
    run_id = _detach(prose, tmp_path, text, "--concurrency", "18")
    workers(*WORKER_ARGS, "--rate-limit", "offline=6/s")
    _wait_for((tmp_path / ".prose" / "runs" / run_id).is_dir)
    _wait_for(lambda: _show(prose, run_id)["status"] == "completed", 120)
    assert "offline runs: 6 requests and 6 item starts per 1 s, across all workers" in _log(
        tmp_path, 0
    )
    out = _out(_show(prose, run_id))
    assert [re.findall(r"#(\d+)#", answer) for answer in out] == [[str(n)] for n in range(18)]

    with engine.client(f"sqlite:///{tmp_path / '.prose' / 'dbos.sqlite'}") as client:
        rows = client.list_workflows(name="openprose.branch", load_input=False)
    assert {w.queue_name for w in rows} == {"openprose-branches-offline"}
    starts = sorted(w.dequeued_at for w in rows)
    assert len(starts) == 18
    # Never more than 6 in a rolling second: 18 items start over 2 s at least.
    assert all(sum(s <= t < s + 1000 for t in starts) <= 6 for s in starts), starts
    assert starts[-1] - starts[0] >= 2000, starts


def test_the_project_s_global_cap_bounds_the_items_of_all_workers_together(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
    postgres_db_url: str,  # noqa: F811
) -> None:
    import psycopg

    # On PostgreSQL, where DBOS counts the queue's running workflows in a REPEATABLE READ
    # transaction (on SQLite two workers claiming at one instant may each see room).
    env = {"OPENPROSE_POSTGRES_URL": postgres_db_url}
    caps = "[run]\nglobal-concurrency = { runs = 1, branches = 3 }\n"
    (tmp_path / "prose.toml").write_text(caps)
    text = _studies(12)
    run_id = _detach(
        prose, tmp_path, text, "--state", "postgres", "--concurrency", "12",
        "--offline-delay", "0.4", **env,
    )  # fmt: skip
    for _ in range(2):
        # Two runs a worker is above the global cap of one: the worker runs one.
        workers(*WORKER_ARGS, "--concurrency", "2", "--state", "postgres", **env)

    _wait_for(lambda: _status_on_postgres(prose, run_id, env) == "completed", 120)
    assert "at most 3 items a queue at once, across all workers" in _log(tmp_path, 1)
    assert "at most 1 run at once, across all workers" in _log(tmp_path, 1)
    with psycopg.connect(postgres_db_url) as connection:
        items = connection.execute(
            "SELECT count(*) FROM dbos.workflow_status "
            "WHERE name = 'openprose.branch' AND workflow_uuid LIKE %s",
            (f"{run_id}/%",),
        ).fetchone()
        # The sessions' times are the journal's. A session of 0.4 s ended at
        # `recorded_at`; it ran within its item, so counting the sessions running at each
        # instant never counts more items than ran.
        ends = [
            t
            for (t,) in connection.execute(
                "SELECT recorded_at FROM openprose.journal_steps WHERE run_id = %s", (run_id,)
            ).fetchall()
        ]
    assert items == (12,)  # one workflow an item
    assert len(ends) == 12
    spans = [(end - 0.4, end) for end in ends]
    busiest = max(sum(s <= t < e for s, e in spans) for t, _ in spans)
    # Never more than three at once, where two workers of 16 slots would run all twelve.
    assert busiest <= 3, sorted(ends)
    assert max(ends) - min(ends) >= 1.0, sorted(ends)  # four rounds of 0.4 s, not one


def test_an_interrupted_attached_run_leaves_its_items_to_the_worker_taking_it_over(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    recording = tmp_path / "exchanges.jsonl"
    text = _studies(12)
    (tmp_path / "main.prose").write_text(text, encoding="utf-8")
    attached = subprocess.Popen(
        [sys.executable, "-m", "openprose", "run", "main.prose", "--engine", "dbos",
         "--concurrency", "4", "--offline-delay", "0.5", "--record", str(recording)],
        cwd=tmp_path, stderr=subprocess.PIPE, text=True, env=_environment(),
    )  # fmt: skip
    _wait_for(lambda: len(_exchanges(recording)) >= 2, 60)
    attached.send_signal(signal.SIGINT)  # Ctrl-C, in the middle of the fan-out
    _, stderr = attached.communicate(timeout=60)
    assert attached.returncode == 130
    assert "Traceback" not in stderr and "task cancelled" not in stderr, stderr
    assert "interrupted; the run is not over: a `prose worker` here takes it over" in stderr
    # Its items were left pending, not cancelled: the worker taking the run over collects
    # them, and the run completes with every item's answer.
    workers(*WORKER_ARGS)
    [run_dir] = (tmp_path / ".prose" / "runs").iterdir()
    _wait_for(lambda: _show(prose, run_dir.name)["status"] == "completed", 120)
    out = _out(_show(prose, run_dir.name))
    assert [re.findall(r"#(\d+)#", answer) for answer in out] == [[str(n)] for n in range(12)]


CALLING = (
    'use "./polish" as polish\n'
    "block study(x):\n"
    '  let note = session "Study item #{x}#"\n'
    "  let better = polish(text: note)\n"
    "let out = parallel for x in [" + _listed(60) + "]:\n"
    "  do study(x)\n"
)
POLISH = 'input text: "A note"\noutput polished = session "Polish {text}"\n'


def test_items_calling_a_block_and_a_program_on_two_workers_share_the_run_s_counters(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
    postgres_db_url: str,  # noqa: F811
) -> None:
    import psycopg

    env = {"OPENPROSE_POSTGRES_URL": postgres_db_url}
    (tmp_path / "polish.prose").write_text(POLISH, encoding="utf-8")
    run_id = _detach(
        prose, tmp_path, CALLING, "--state", "postgres", "--concurrency", "60",
        "--offline-delay", "0.05", **env,
    )  # fmt: skip
    # An item that calls a program holds two connections to PostgreSQL: 8 at once in each.
    worker_args = ("--concurrency", "1", "--branch-concurrency", "8")
    started = [workers("--state", "postgres", *worker_args, **env) for _ in range(2)]

    _wait_for(lambda: _status_on_postgres(prose, run_id, env) == "completed", 120)
    shown = _show(prose, run_id, "--state", "postgres", OPENPROSE_POSTGRES_URL=postgres_db_url)
    notes = [b for b in shown["bindings"] if b["name"] == "note"]
    # One execution of study per item, each with an id of its own, whichever worker ran it.
    names = Counter(b["name"].split(".")[-1] for b in shown["bindings"])
    assert sorted(b["execution_id"] for b in notes) == list(range(1, 61)), (run_id, names)
    found = sorted(int(n) for b in notes for n in re.findall(r"#(\d+)#", str(b["value"])))
    assert found == list(range(60))
    with psycopg.connect(postgres_db_url) as connection:
        # One state per call of polish, named by the run's counter, each with its binding.
        called = connection.execute(
            "SELECT i.alias, b.value FROM openprose.imports i JOIN openprose.bindings b "
            "ON b.run_id = i.run_id AND b.name = i.alias || '.polished' WHERE i.run_id = %s",
            (run_id,),
        ).fetchall()
        assert sorted(alias for alias, _value in called) == sorted(
            f"local--polish-{n}" for n in range(1, 61)
        )
        polished = sorted(int(n) for _a, value in called for n in re.findall(r"#(\d+)#", value))
        assert polished == list(range(60))
        rows = connection.execute(
            "SELECT DISTINCT executor_id FROM dbos.workflow_status "
            "WHERE name = 'openprose.branch' AND workflow_uuid LIKE %s",
            (f"{run_id}/%",),
        ).fetchall()
    assert {executor for (executor,) in rows} == _executors(started)


STUDY_LONG = (
    'input topic: "t"\n'
    + "".join(f'let s{i} = session "Study {{topic}}, part {i}"\n' for i in range(1, 9))
    + 'output found = session "Sum up {topic}"\n'
)
CALLS_STUDY = (
    'use "./study" as study\n'
    'let r = study(topic: "tides")\n'
    'output out = session "Report on {r.found}"\n'
)


def test_a_program_call_survives_the_death_of_its_worker(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    (tmp_path / "study.prose").write_text(STUDY_LONG, encoding="utf-8")
    recording = tmp_path / "exchanges.jsonl"
    run_id = _detach(
        prose, tmp_path, CALLS_STUDY, "--offline-delay", "0.3", "--record", str(recording)
    )
    first = workers(*WORKER_ARGS)
    _wait_for(lambda: len(_exchanges(recording)) >= 3, 60)
    first.send_signal(signal.SIGKILL)  # in the middle of the called program
    first.wait()
    workers(*WORKER_ARGS)
    _wait_for(lambda: _show(prose, run_id)["status"] == "completed", 120)
    log = _log(tmp_path, 1)
    assert f"program call at step 2 of run {run_id} lost its worker" in log, log
    asked = Counter(_exchanges(recording))
    # The called program's nine exchanges and the run's report, each asked once but the
    # one in flight at the kill.
    assert len(asked) == 10, asked
    assert sum(asked.values()) in (10, 11) and set(asked.values()) <= {1, 2}
    shown = _show(prose, run_id)
    [out] = [b["value"] for b in shown["bindings"] if b["name"] == "out"]
    assert "Report on [dry run] Sum up tides" in str(out)
    called = tmp_path / ".prose" / "runs" / run_id / "imports"
    assert sorted(p.name for p in called.iterdir()) == ["local--study-1"]  # not a second
    assert shown["dbos"]["calls"]["count"] == 1


def test_a_session_limit_holds_across_the_workers_of_a_run_s_items(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    # Six items at once in each worker: twelve need both, and both are up before the run
    # is queued.
    started = _two_workers(tmp_path, workers, 6)
    text = _studies(12)
    run_id = _detach(
        prose, tmp_path, text, "--concurrency", "12", "--offline-delay", "1",
        "--max-sessions", "9",
    )  # fmt: skip
    _wait_for((tmp_path / ".prose" / "runs" / run_id).is_dir)
    _wait_for(lambda: _show(prose, run_id)["status"] == "failed", 120)
    shown = _show(prose, run_id)
    assert shown["error"] == "session limit reached (9 sessions)"
    # Counted once for the run, not once an item or a worker: nine sessions were sent
    # (each records its context budget as it goes; the tenth item's was refused, and the
    # run, failing fast, stopped the nine in flight).
    assert len(shown["context"]) == 9, shown["context"]
    time.sleep(1.5)  # past the look for cancellations of the items still starting
    sessions = _system(
        tmp_path, "SELECT count(*) FROM openprose_spending WHERE budget = ? AND session", run_id
    )
    assert _item_executors(tmp_path, run_id) == _executors(started)
    # An item the failure cancelled as it started its session found the run's count too.
    assert sessions == [(9,)]
    assert len(_show(prose, run_id)["context"]) == 9


def test_a_limited_run_s_items_run_again_after_a_kill_are_not_counted_twice(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    recording = tmp_path / "exchanges.jsonl"
    items = 60
    text = _studies(items, report=True)
    # Exactly the run's sessions: one counted twice would stop it.
    run_id = _detach(
        prose, tmp_path, text, *RUN_ARGS, "--offline-delay", "0.2",
        "--max-sessions", str(items + 1), "--record", str(recording),
    )  # fmt: skip
    first = workers(*WORKER_ARGS)
    _wait_for(
        lambda: len(_exchanges(recording)) >= items // 3 and _items_running(tmp_path, first) > 0,
        120,
    )
    first.send_signal(signal.SIGKILL)
    first.wait()
    workers(*WORKER_ARGS)
    _wait_for(lambda: _show(prose, run_id)["status"] in ("completed", "failed"), 120)
    shown = _show(prose, run_id)
    assert shown["status"] == "completed", shown["error"]
    assert "of run " + run_id in _log(tmp_path, 1)  # its items in flight were run again
    asked = Counter(_exchanges(recording))
    assert len(asked) == items + 1, asked
    sessions = _system(
        tmp_path, "SELECT count(*) FROM openprose_spending WHERE budget = ? AND session", run_id
    )
    assert sessions == [(items + 1,)]


def test_a_called_program_s_items_spread_over_two_workers(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    items = 40
    study = (
        'input topic: "t"\n'
        "let out = parallel for x in [" + _listed(items) + "]:\n"
        '  session "Study {topic} item #{x}#"\n'
        'output report = session "Report on {topic}"\n'
    )
    main = 'use "./study" as study\nlet r = study(topic: "tides")\noutput done = r.report\n'
    (tmp_path / "study.prose").write_text(study, encoding="utf-8")
    started = _two_workers(tmp_path, workers, 8)
    run_id = _detach(prose, tmp_path, main, "--concurrency", "40", "--offline-delay", "0.3")
    _wait_for((tmp_path / ".prose" / "runs" / run_id).is_dir)
    _wait_for(lambda: _show(prose, run_id)["status"] == "completed", 120)
    rows = _system(
        tmp_path,
        "SELECT executor_id, count(*) FROM workflow_status "
        "WHERE name = 'openprose.branch' AND workflow_uuid LIKE ? GROUP BY executor_id",
        f"{run_id}/2/study:2@%",
    )
    # Each of the called program's items a workflow, executed by both workers.
    assert {executor for executor, _n in rows} == _executors(started)
    assert sum(n for _executor, n in rows) == items
    called = tmp_path / ".prose" / "runs" / run_id / "imports" / "local--study-1"
    out = (called / "bindings" / "out.md").read_text(encoding="utf-8")
    assert [int(n) for n in re.findall(r"#(\d+)#", out)] == list(range(items))

    here = tmp_path / "local"
    here.mkdir()
    (here / "study.prose").write_text(study, encoding="utf-8")
    (here / "main.prose").write_text(main, encoding="utf-8")
    done = prose("run", "main.prose", "--json", cwd=here)
    assert done.returncode == 0, done.stderr
    local_run = here / ".prose" / "runs" / json.loads(done.stdout)["run_id"]
    assert _bindings(called) == _bindings(local_run / "imports" / "local--study-1")


def test_a_call_waiting_for_its_items_leaves_them_a_slot_in_a_worker_of_one_of_each(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    # One worker: one run, one call and one item at once. The run waits for its call, the
    # call for its items: on one queue, the call would hold the slot its items need.
    (tmp_path / "study.prose").write_text(_studies(4, report=True), encoding="utf-8")
    main = 'use "./study" as study\nlet r = study()\noutput done = r.report\n'
    run_id = _detach(prose, tmp_path, main)
    workers("--concurrency", "1", "--branch-concurrency", "1")
    _wait_for(lambda: _show(prose, run_id)["status"] == "completed", 60)
    rows = _system(
        tmp_path,
        "SELECT workflow_uuid, queue_name FROM workflow_status "
        "WHERE name = 'openprose.branch' AND workflow_uuid LIKE ? ORDER BY workflow_uuid",
        f"{run_id}/%",
    )
    assert rows == [(f"{run_id}/2/study:1@{i}", "openprose-branches") for i in range(4)] + [
        (f"{run_id}/2:call", "openprose-calls")
    ]


def test_a_called_program_s_items_survive_the_restart_of_their_only_worker(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    items = 120
    study = _studies(items, report=True)
    main = 'use "./study" as study\nlet r = study()\noutput done = r.report\n'
    (tmp_path / "study.prose").write_text(study, encoding="utf-8")
    recording = tmp_path / "exchanges.jsonl"
    run_id = _detach(prose, tmp_path, main, *RUN_ARGS, "--record", str(recording))
    first = workers(*WORKER_ARGS)
    _wait_for(lambda: len(_exchanges(recording)) >= items // 3, 120)
    first.send_signal(signal.SIGKILL)
    first.wait()
    workers(*WORKER_ARGS)
    _wait_for(lambda: _show(prose, run_id)["status"] in ("completed", "failed"), 180)
    shown = _show(prose, run_id)
    assert shown["status"] == "completed", shown["error"]
    assert f"run {run_id} lost its worker: back on the queue" in _log(tmp_path, 1)
    asked = Counter(_exchanges(recording))
    assert len(asked) == items + 1, len(asked)  # every item's session and the report
    again = [key for key, times in asked.items() if times > 1]
    assert all(asked[key] == 2 for key in again) and len(again) <= 16, again
    # Its narration records each item once, though the process that wrote it died: the
    # items it had applied are not narrated again by the process taking the run over.
    _check_called_study(tmp_path / ".prose" / "runs" / run_id, items)


def test_a_call_whose_worker_dies_mid_fan_out_is_taken_over_and_narrates_each_item_once(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    items = 120
    (tmp_path / "study.prose").write_text(_studies(items, report=True), encoding="utf-8")
    main = 'use "./study" as study\nlet r = study()\noutput done = r.report\n'
    recording = tmp_path / "exchanges.jsonl"
    run_id = _detach(
        prose, tmp_path, main, "--concurrency", "48", "--offline-delay", "0.2",
        "--record", str(recording),
    )  # fmt: skip
    # One worker executes the run and the items; another only the call, which spreads the
    # items and applies their outcomes to the called program's state.
    workers("--queues", "openprose-runs,openprose-branches", *WORKER_ARGS)
    call_worker = workers("--queues", "openprose-calls", *WORKER_ARGS)
    _wait_for(lambda: len(_exchanges(recording)) >= 20, 60)
    call_worker.send_signal(signal.SIGKILL)
    call_worker.wait()
    _wait_for(
        lambda: f"program call at step 2 of run {run_id} lost its worker" in _log(tmp_path, 0)
    )
    workers("--queues", "openprose-calls", *WORKER_ARGS)
    _wait_for(lambda: _show(prose, run_id)["status"] in ("completed", "failed"), 120)
    shown = _show(prose, run_id)
    assert shown["status"] == "completed", shown["error"]
    asked = Counter(_exchanges(recording))
    # The items ran in the worker that lived: each asked once, the report too.
    assert len(asked) == items + 1 and set(asked.values()) == {1}, asked
    # Each item narrated once in the called program's state, by the dead call's worker or
    # by the one that took the call over.
    _check_called_study(tmp_path / ".prose" / "runs" / run_id, items)
    assert shown["dbos"]["calls"]["count"] == 1


def test_a_value_every_item_gets_is_summarised_once_for_the_run_on_two_workers(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    items = 24
    recording = tmp_path / "exchanges.jsonl"
    # A value too long to pass as it is: each item's session gets its summary.
    text = (
        'input doc: "A long document"\n'
        f"let out = parallel for x in [{_listed(items)}]:\n"
        '  session "Study item #{x}#"\n'
        "    context: doc\n"
    )
    started = _two_workers(tmp_path, workers, 6)
    doc = "A paragraph of the long document. " * 100
    run_id = _detach(
        prose, tmp_path, text, "--input", f"doc={doc}", "--concurrency", "24",
        "--offline-delay", "0.3", "--record", str(recording),
    )  # fmt: skip
    _wait_for((tmp_path / ".prose" / "runs" / run_id).is_dir)
    _wait_for(lambda: _show(prose, run_id)["status"] == "completed", 120)
    assert _item_executors(tmp_path, run_id) == _executors(started)
    asked = _exchanges(recording)
    # Asked by the first item that wanted it, in one worker; the 23 others were given it.
    assert len([key for key in asked if key.startswith("summary:")]) == 1, asked
    assert len(asked) == items + 1
    events = (tmp_path / ".prose" / "runs" / run_id / "events.jsonl").read_text(encoding="utf-8")
    actions = [json.loads(line).get("action") for line in events.splitlines()]
    assert actions.count("summarised") == 1
    [summary] = _system(
        tmp_path, "SELECT holder, answered FROM openprose_summaries WHERE attempt = ?", run_id
    )
    assert summary[0].startswith(f"{run_id}/2@") and summary[1]
