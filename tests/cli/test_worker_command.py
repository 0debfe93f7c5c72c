"""``prose run --engine dbos [--detach]``, ``prose worker`` and ``prose runs send|cancel`` as
a user runs them: child processes on one machine, the DBOS system database in SQLite beside
the runs (.prose/dbos.sqlite), the offline backend."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# A fixture: importing it makes it visible to this module's tests.
from tests.postgres_cluster import postgres_db_url  # noqa: F401
from tests.support.extras import require

require("dbos", "pip install 'openprose[dbos]'")

SEQUENTIAL = "".join(f'let s{i} = session "Step {i} of the study"\n' for i in range(1, 9)) + (
    'output report = session "Report on {s8}"\n'
)
ASKING = (
    'let notes = session "Collect notes"\n'
    'input angle: "Which angle to take"\n'
    'output summary = session "Summarise {notes} from the {angle} angle"\n'
)


def _environment() -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    environment.pop("OPENPROSE_DBOS_URL", None)
    environment["PYTHONIOENCODING"] = "utf-8"
    return environment


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start ``prose worker`` processes in ``tmp_path``; every one still alive is stopped
    (SIGTERM, then SIGKILL) at the end."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str, **env: str) -> subprocess.Popen[str]:
        log = open(tmp_path / f"worker-{len(started)}.log", "w", encoding="utf-8")  # noqa: SIM115
        child = subprocess.Popen(
            [sys.executable, "-m", "openprose", "worker", *args],
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            env={**_environment(), **env},
        )
        log.close()
        started.append(child)
        return child

    yield start
    for child in started:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def _log(tmp_path: Path, index: int) -> str:
    return (tmp_path / f"worker-{index}.log").read_text(encoding="utf-8")


def _runs(prose: Any) -> list[dict[str, Any]]:
    done = prose("runs", "list", "--json")
    assert done.returncode == 0, done.stderr
    listed: list[dict[str, Any]] = json.loads(done.stdout)
    return listed


def _wait_for(what: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached in {seconds} s")
        time.sleep(0.1)


def _status(prose: Any, run_id: str) -> str | None:
    for run in _runs(prose):
        if run["run_id"] == run_id:
            return str(run["status"])
    return None


def _detach(prose: Any, tmp_path: Path, text: str, *extra: str, **env: str) -> str:
    (tmp_path / "main.prose").write_text(text, encoding="utf-8")
    done = prose("run", "main.prose", "--engine", "dbos", "--detach", *extra, **env)
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip()
    assert run_id and run_id in done.stderr, done.stderr
    return run_id


def _bindings(run_dir: Path) -> dict[str, str]:
    return {
        path.name: path.read_text(encoding="utf-8")
        for path in sorted((run_dir / "bindings").iterdir())
    }


def _local_run(prose: Any, tmp_path: Path, text: str, *extra: str) -> dict[str, Any]:
    """The same program run to its end by the local engine, in a directory of its own."""
    here = tmp_path / "local"
    here.mkdir()
    (here / "main.prose").write_text(text, encoding="utf-8")
    done = prose("run", "main.prose", "--json", *extra, cwd=here)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_a_run_queued_while_no_worker_is_up_starts_when_one_starts(
    prose: Any, tmp_path: Path, workers: Callable[..., subprocess.Popen[str]]
) -> None:
    run_id = _detach(prose, tmp_path, SEQUENTIAL)
    time.sleep(0.5)
    assert _status(prose, run_id) == "queued"
    assert not (tmp_path / ".prose" / "runs" / run_id).exists()
    shown = prose("runs", "show", run_id)  # from the queue: it has no state yet
    assert shown.returncode == 0, shown.stderr
    assert "status:  queued (no worker has begun it)" in shown.stdout
    assert json.loads(prose("runs", "show", run_id, "--json").stdout)["status"] == "queued"
    workers()
    _wait_for(lambda: _status(prose, run_id) == "completed")
    local = _local_run(prose, tmp_path, SEQUENTIAL)
    # The same bindings as the local engine's run of the same program.
    assert _bindings(tmp_path / ".prose" / "runs" / run_id) == _bindings(Path(local["run_dir"]))


def test_a_killed_worker_s_run_is_taken_over_and_no_completed_step_runs_again(
    prose: Any, tmp_path: Path, workers: Callable[..., subprocess.Popen[str]]
) -> None:
    recording = tmp_path / "exchanges.jsonl"
    run_id = _detach(
        prose, tmp_path, SEQUENTIAL, "--offline-delay", "0.3", "--record", str(recording)
    )
    first = workers()

    def exchanges() -> list[str]:
        """The step key of every exchange a backend answered, in order (a recording is
        appended to by each worker that runs the run)."""
        lines = recording.read_text(encoding="utf-8").splitlines()[1:]  # after the header
        return [json.loads(line)["key"] for line in lines]

    _wait_for(lambda: len(exchanges()) >= 3)
    first.send_signal(signal.SIGKILL)
    first.wait()
    done_before = len(exchanges())
    assert _status(prose, run_id) == "interrupted"  # its process is gone
    workers()
    _wait_for(lambda: _status(prose, run_id) == "completed")
    assert f"run {run_id} lost its worker: back on the queue" in _log(tmp_path, 1)
    asked = Counter(exchanges())
    # Every step was asked, and each once, but the one in flight at the kill.
    assert len(asked) == 9
    again = [key for key, times in asked.items() if times > 1]
    assert len(again) <= 1 and all(asked[key] == 2 for key in again)
    assert sum(asked.values()) in (9, 10)
    assert done_before >= 3
    local = _local_run(prose, tmp_path, SEQUENTIAL)
    assert _bindings(tmp_path / ".prose" / "runs" / run_id) == _bindings(Path(local["run_dir"]))
    state = (tmp_path / ".prose" / "runs" / run_id / "state.md").read_text(encoding="utf-8")
    assert "---resume" in state  # the narration says where the second worker took over


def test_a_mid_program_input_is_sent_to_the_waiting_run(
    prose: Any, tmp_path: Path, workers: Callable[..., subprocess.Popen[str]]
) -> None:
    run_id = _detach(prose, tmp_path, ASKING)
    workers()
    run_dir = tmp_path / ".prose" / "runs" / run_id
    _wait_for(lambda: (run_dir / "bindings" / "notes.md").is_file())
    time.sleep(0.5)
    assert _status(prose, run_id) == "waiting"  # for `angle`, which `prose runs send` gives
    shown = prose("runs", "show", run_id)
    assert (
        f"waits for: the input `angle` (Which angle to take): prose runs send {run_id} angle=VALUE"
    ) in shown.stdout
    as_json = json.loads(prose("runs", "show", run_id, "--json").stdout)
    assert as_json["dbos"]["awaiting_input"] == {"name": "angle", "prompt": "Which angle to take"}
    sent = prose("runs", "send", run_id, "angle=cost")
    assert sent.returncode == 0, sent.stderr
    _wait_for(lambda: _status(prose, run_id) == "completed")
    assert "waits for" not in prose("runs", "show", run_id).stdout
    assert (
        json.loads(prose("runs", "show", run_id, "--json").stdout)["dbos"]["awaiting_input"] is None
    )
    summary = (run_dir / "bindings" / "summary.md").read_text(encoding="utf-8")
    assert "from the cost angle" in summary


def test_a_cancelled_queued_run_never_starts(
    prose: Any, tmp_path: Path, workers: Callable[..., subprocess.Popen[str]]
) -> None:
    run_id = _detach(prose, tmp_path, SEQUENTIAL)
    cancelled = prose("runs", "cancel", run_id)
    assert cancelled.returncode == 0, cancelled.stderr
    later = _detach(prose, tmp_path, SEQUENTIAL)
    workers()
    # The run queued after it is executed; the cancelled one is not, and is no longer queued.
    _wait_for(lambda: _status(prose, later) == "completed")
    assert _status(prose, run_id) is None
    assert not (tmp_path / ".prose" / "runs" / run_id).exists()


def test_an_attached_dbos_run_reports_as_a_local_one_does(prose: Any, tmp_path: Path) -> None:
    (tmp_path / "main.prose").write_text(SEQUENTIAL, encoding="utf-8")
    done = prose("run", "main.prose", "--engine", "dbos", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    local = _local_run(prose, tmp_path, SEQUENTIAL)
    assert result["status"] == local["status"] == "success"
    assert result["outputs"] == local["outputs"]
    assert result["sessions"] == local["sessions"] == 9
    assert _bindings(Path(result["run_dir"])) == _bindings(Path(local["run_dir"]))
    assert (tmp_path / ".prose" / "dbos.sqlite").is_file()


# Branch b fails while branch a is in the middle of its second session (a model exchange,
# which the dbos engine makes a DBOS step).
FAILS_MID_SESSION = (
    "parallel:\n"
    '  do:\n    session "a one"\n    session "a two"\n'
    '  do:\n    session "b one"\n    throw "no b"\n'
)


def test_an_attached_dbos_run_that_fails_fast_says_what_a_local_one_says(
    prose: Any, tmp_path: Path
) -> None:
    # The sibling it cancels is the engine's doing: nothing of DBOS's about its cancelled
    # step reaches the user (it printed a warning naming an internal function).
    (tmp_path / "main.prose").write_text(FAILS_MID_SESSION, encoding="utf-8")
    said = {}
    for engine in ("local", "dbos"):
        # Sessions of a second: the cancellation reaches a's second session well before
        # its end, however slow the machine (on the dbos engine it takes a poll or two).
        done = prose("run", "main.prose", "--engine", engine, "--offline-delay", "1.0")
        assert done.returncode == 1, done.stderr
        said[engine] = re.sub(r"\d{8}-\d{6}-\w{6}", "RUN", done.stderr)
    assert said["dbos"] == said["local"]
    assert 'failed at `throw "no b"`: parallel branch b failed: no b' in said["dbos"]
    assert "2 sessions" in said["dbos"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "main.prose", "--detach"), "--detach goes with --engine dbos"),
        (("run", "main.prose", "--engine", "dbos", "--state", "in-context"), "in-context"),
        (("run", "main.prose", "--engine", "dbos", "--resume", "x"), "cannot resume x: no run"),
        (("worker", "--concurrency", "0"), "--concurrency must be at least 1"),
        (("worker", "--global-branch-concurrency", "0"), "--global-branch-concurrency must be"),
        (("worker", "--rate-limit", "gemini=5/s"), "is not BACKEND=LIMIT with BACKEND one of"),
        (("worker", "--rate-limit", "offline=5/day"), 'a rate limit is "N/s"'),
        (("runs", "send", "r1", "angle"), "expected NAME=VALUE"),
        (("runs", "cancel", "r1"), "no run of the dbos engine"),
    ],
)
def test_usage_errors(prose: Any, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    (tmp_path / "main.prose").write_text(SEQUENTIAL, encoding="utf-8")
    done = prose(*args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr


def test_a_failed_run_resumes_on_the_dbos_engine_it_ran_on(prose: Any, tmp_path: Path) -> None:
    (tmp_path / "main.prose").write_text(SEQUENTIAL, encoding="utf-8")
    recording = tmp_path / "exchanges.jsonl"
    failed = prose(
        "run", "main.prose", "--engine", "dbos", "--max-sessions", "3", "--json",
        "--record", str(recording),
    )  # fmt: skip
    assert failed.returncode == 1, failed.stderr
    run_id = json.loads(failed.stdout)["run_id"]
    # `prose runs resume` resumes it on the engine it ran on (no --engine given).
    second = tmp_path / "resumed.jsonl"
    done = prose("runs", "resume", run_id, "--json", "--record", str(second))
    assert done.returncode == 0, done.stderr
    assert f"resuming run {run_id}" in done.stderr
    result = json.loads(done.stdout)
    assert result["run_id"] == run_id and result["status"] == "success"

    def asked(path: Path) -> list[str]:
        lines = path.read_text(encoding="utf-8").splitlines()[1:]  # after the header
        return [json.loads(line)["key"] for line in lines]

    # Three sessions asked by the first attempt, the six others by the second.
    assert len(asked(recording)) == 3 and len(asked(second)) == 6
    assert len(set(asked(recording)) | set(asked(second))) == 9
    shown = json.loads(prose("runs", "show", run_id, "--json").stdout)
    assert shown["status"] == "completed" and shown["steps"] == 9
    assert [a["workflow_id"] for a in shown["dbos"]["attempts"]] == [run_id, f"{run_id}/attempt-2"]
    lines = {
        name: value.strip()
        for name, _, value in (
            line.partition(":") for line in prose("runs", "show", run_id).stdout.splitlines()
        )
    }
    assert lines["engine"].startswith(f"dbos (workflow {run_id}/attempt-2, DBOS status SUCCESS")
    assert lines["attempts"] == "2 (prose runs resume)"
    # The second attempt's workflow checkpointed every exchange: the three the journal
    # answered, then the six it asked.
    assert shown["dbos"]["exchanges"]["count"] == 9
    last = shown["dbos"]["exchanges"]["last"]
    assert last.startswith("openprose.session ") and last.endswith("#attempt1")
    assert lines["exchanges"] == (
        f"9 checkpointed as DBOS steps, the last `{last.removeprefix('openprose.')}`"
    )
    local = _local_run(prose, tmp_path, SEQUENTIAL)
    assert result["outputs"] == local["outputs"]
    assert _bindings(tmp_path / ".prose" / "runs" / run_id) == _bindings(Path(local["run_dir"]))
    with sqlite3.connect(tmp_path / ".prose" / "dbos.sqlite") as database:
        attempts = database.execute(
            "SELECT workflow_uuid FROM workflow_status WHERE name = 'openprose.run' "
            "ORDER BY created_at"
        ).fetchall()
    assert attempts == [(run_id,), (f"{run_id}/attempt-2",)]


def test_a_cancelled_run_resumed_detached_is_queued_then_finished_by_a_worker(
    prose: Any, tmp_path: Path, workers: Callable[..., subprocess.Popen[str]]
) -> None:
    recording = tmp_path / "exchanges.jsonl"
    options = ("--offline-delay", "0.3", "--record", str(recording))
    run_id = _detach(prose, tmp_path, SEQUENTIAL, *options)
    worker = workers()

    def exchanges() -> list[str]:
        lines = recording.read_text(encoding="utf-8").splitlines()[1:]  # after the header
        return [json.loads(line)["key"] for line in lines]

    _wait_for(lambda: recording.is_file() and len(exchanges()) >= 3)
    cancelled = prose("runs", "cancel", run_id)
    assert cancelled.returncode == 0, cancelled.stderr
    # It stops at its next exchange, whose step DBOS refuses, or sooner.
    _wait_for(lambda: _status(prose, run_id) == "cancelled", 10)
    worker.send_signal(signal.SIGTERM)
    worker.wait(30)
    assert "Traceback" not in _log(tmp_path, 0)  # a cancellation is asked for, not a fault
    resumed = prose(
        "run", "main.prose", "--engine", "dbos", "--resume", run_id, "--detach", *options
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == run_id and "`prose worker` resumes it" in resumed.stderr
    assert _status(prose, run_id) == "queued"  # until a worker claims it
    again = prose("run", "main.prose", "--engine", "dbos", "--resume", run_id)
    assert again.returncode == 2 and "is queued on the dbos engine" in again.stderr
    # Nor does the local engine resume it meanwhile: a worker would take it too.
    here = prose("run", "main.prose", "--engine", "local", "--resume", run_id)
    assert here.returncode == 2 and "is queued on the dbos engine" in here.stderr
    workers()
    _wait_for(lambda: _status(prose, run_id) == "completed")
    asked = Counter(exchanges())
    # Every step asked; each once but the one in flight when the run was cancelled.
    assert len(asked) == 9 and sum(asked.values()) in (9, 10)
    local = _local_run(prose, tmp_path, SEQUENTIAL)
    assert _bindings(tmp_path / ".prose" / "runs" / run_id) == _bindings(Path(local["run_dir"]))


def test_an_attached_run_cancelled_from_elsewhere_ends_as_cancelled(
    prose: Any, tmp_path: Path
) -> None:
    (tmp_path / "main.prose").write_text(SEQUENTIAL, encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, "-m", "openprose", "run", "main.prose", "--engine", "dbos",
         "--offline-delay", "0.3"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environment(),
    )  # fmt: skip
    try:
        runs = tmp_path / ".prose" / "runs"
        _wait_for(lambda: runs.is_dir() and any(runs.glob("*/bindings/s2.md")))
        [run_dir] = [path for path in runs.iterdir() if not path.name.startswith(".")]
        cancelled = prose("runs", "cancel", run_dir.name)
        assert cancelled.returncode == 0, cancelled.stderr
        _, stderr = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 1
    assert f"prose runs cancel {run_dir.name}" in stderr and "Traceback" not in stderr
    assert _status(prose, run_dir.name) == "cancelled"
    assert not (run_dir / "bindings" / "report.md").exists()


def test_sending_to_a_run_that_does_not_exist_is_a_usage_error(prose: Any, tmp_path: Path) -> None:
    _detach(prose, tmp_path, SEQUENTIAL)  # the system database exists
    done = prose("runs", "send", "20990101-000000-nosuch", "angle=cost")
    assert done.returncode == 2
    assert "no DBOS run 20990101-000000-nosuch" in done.stderr


def test_three_workers_share_runs_on_postgresql_and_survive_one_s_death(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],
    postgres_db_url: str,  # noqa: F811
) -> None:
    """PostgreSQL holds the runs and DBOS's tables; three workers take the queued runs; one
    is killed while it executes some: every run completes, each step answered once but those
    in flight at the kill."""
    env = {"OPENPROSE_POSTGRES_URL": postgres_db_url}
    (tmp_path / "main.prose").write_text(SEQUENTIAL, encoding="utf-8")
    runs = []
    for index in range(12):
        record = tmp_path / f"exchanges-{index}.jsonl"
        done = prose(
            "run", "main.prose", "--engine", "dbos", "--detach", "--state", "postgres",
            "--offline-delay", "0.5", "--record", str(record), **env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        runs.append((done.stdout.strip(), record))
    assert not (tmp_path / ".prose" / "dbos.sqlite").exists()  # DBOS is in PostgreSQL
    started = [workers("--state", "postgres", "--concurrency", "2", **env) for _ in range(3)]

    def listed() -> dict[str, dict[str, Any]]:
        done = prose("runs", "list", "--state", "postgres", "--json", **env)
        assert done.returncode == 0, done.stderr
        return {run["run_id"]: run for run in json.loads(done.stdout)}

    claimed: set[int] = set()

    def every_worker_took_some() -> bool:
        claimed.update(run["pid"] for run in listed().values() if run["pid"])
        return {w.pid for w in started} <= claimed

    _wait_for(every_worker_took_some)
    # The victim is killed while it executes a run.
    victim = started[0]
    _wait_for(
        lambda: any(
            run["pid"] == victim.pid and run["status"] == "running" for run in listed().values()
        )
    )
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    _wait_for(lambda: all(run["status"] == "completed" for run in listed().values())
              and len(listed()) == 12, 120)  # fmt: skip
    taken_over = [run_id for run_id, _ in runs if f"run {run_id} lost its worker" in (
        _log(tmp_path, 1) + _log(tmp_path, 2))]  # fmt: skip
    # The run the killed worker was executing was taken over by one of the two others.
    assert taken_over
    local = _local_run(prose, tmp_path, SEQUENTIAL)
    for run_id, record in runs:
        keys = [json.loads(line)["key"] for line in record.read_text("utf-8").splitlines()[1:]]
        asked = Counter(keys)
        assert len(asked) == 9, (run_id, asked)
        again = [key for key, times in asked.items() if times > 1]
        # Only a run the killed worker was executing asks one step again: its step in flight.
        assert not again or (run_id in taken_over and len(again) == 1), (run_id, asked)
        outputs = listed()[run_id]
        assert outputs["steps"] == local["sessions"]
    # A run taken over is reported by `prose runs wait` as by its first worker.
    waited = prose("runs", "wait", taken_over[0], "--state", "postgres", "--json", **env)
    assert waited.returncode == 0, waited.stderr
    result = json.loads(waited.stdout)
    assert (result["status"], result["outputs"]) == ("success", local["outputs"])


def test_listing_postgres_runs_leaves_a_database_dbos_never_used_as_it_was(
    prose: Any,
    tmp_path: Path,
    postgres_db_url: str,  # noqa: F811
) -> None:
    import psycopg

    done = prose("runs", "list", "--state", "postgres", OPENPROSE_POSTGRES_URL=postgres_db_url)
    assert done.returncode == 0, done.stderr
    with psycopg.connect(postgres_db_url) as connection:
        schemas = {row[0] for row in connection.execute("SELECT nspname FROM pg_namespace")}
    assert "dbos" not in schemas


def _console_spans(text: str) -> list[dict[str, Any]]:
    """The spans the console exporter printed (one JSON object after another)."""
    decoder = json.JSONDecoder()
    spans = []
    index = text.find("{\n")
    while index != -1:
        span, end = decoder.raw_decode(text, index)
        if isinstance(span, dict) and "context" in span:
            spans.append(span)
        index = text.find("{\n", end)
    return spans


def test_a_worker_with_otel_traces_its_runs_and_their_items(
    prose: Any, tmp_path: Path, workers: Callable[..., subprocess.Popen[str]]
) -> None:
    require("opentelemetry.sdk", "pip install 'openprose[otel]'")
    text = 'let out = parallel for x in ["a", "b", "c"]:\n  session "Study {x}"\n'
    run_id = _detach(prose, tmp_path, text)
    worker = workers("--otel", OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="none")
    _wait_for(lambda: _status(prose, run_id) == "completed")
    worker.send_signal(signal.SIGTERM)  # its telemetry exports what is left as it ends
    worker.wait(30)
    spans = _console_spans(_log(tmp_path, 0))
    [workflow] = [s for s in spans if s["name"] == "invoke_workflow main.prose"]
    assert workflow["attributes"]["openprose.run_id"] == run_id
    items = [s for s in spans if s["name"].startswith("invoke_agent")]
    assert len(items) == 3  # each item's session, executed as an item's workflow
    for span in items:
        assert span["context"]["trace_id"] == workflow["context"]["trace_id"]
        assert span["parent_id"] == workflow["context"]["span_id"]


def _held(tmp_path: Path, run_id: str) -> dict[str, int]:
    """What the SQLite system database holds of a run: its workflows (attempts, items,
    calls), their recorded steps, and the engine's rows of its attempts (a table no worker
    made holds none)."""
    system = sqlite3.connect(tmp_path / ".prose" / "dbos.sqlite", timeout=10)
    tables = {name for (name,) in system.execute("SELECT name FROM sqlite_master")}
    held = {}
    try:
        for what, table, column in [
            ("workflows", "workflow_status", "workflow_uuid"),
            ("steps", "operation_outputs", "workflow_uuid"),
            ("spending", "openprose_spending", "budget"),
            ("summaries", "openprose_summaries", "attempt"),
        ]:
            query = f"SELECT count(*) FROM {table} WHERE {column} = ? OR {column} LIKE ?"
            found = system.execute(query, (run_id, f"{run_id}/%")) if table in tables else None
            held[what] = found.fetchone()[0] if found is not None else 0
    finally:
        system.close()
    return held


SUMMARISED = (
    'input doc: "A long document"\n'
    'let out = parallel for x in ["a", "b", "c"]:\n'
    '  session "Study {x}"\n'
    "    context: doc\n"
)


def test_removing_a_dbos_run_removes_what_the_engine_holds_of_it(
    prose: Any, tmp_path: Path
) -> None:
    (tmp_path / "main.prose").write_text(SUMMARISED, encoding="utf-8")
    doc = "doc=" + "A paragraph of the long document. " * 100
    ran = [
        prose("run", "main.prose", "--engine", "dbos", "--json", "--input", doc,
              "--max-sessions", "10")
        for _ in range(2)
    ]  # fmt: skip
    assert all(done.returncode == 0 for done in ran), [done.stderr for done in ran]
    gone, kept = (json.loads(done.stdout)["run_id"] for done in ran)
    before = _held(tmp_path, gone)
    # The run, its three items; their sessions counted, the summary claimed.
    assert before["workflows"] == 4 and before["spending"] == 3 and before["summaries"] == 1
    done = prose("runs", "rm", gone, "--yes")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / ".prose" / "runs" / gone).exists()
    assert _held(tmp_path, gone) == {"workflows": 0, "steps": 0, "spending": 0, "summaries": 0}
    assert _held(tmp_path, kept) == before  # the other run's are left as they were
    assert _status(prose, kept) == "completed"
    again = prose("runs", "rm", gone, "--yes")
    assert again.returncode == 2 and f"no run {gone!r}" in again.stderr, again.stderr


def test_a_queued_dbos_run_is_removed_only_once_cancelled(prose: Any, tmp_path: Path) -> None:
    run_id = _detach(prose, tmp_path, SEQUENTIAL)
    refused = prose("runs", "rm", run_id, "--yes")
    assert refused.returncode == 2, refused.stderr
    assert f"run {run_id} is queued on the dbos engine" in refused.stderr
    assert _status(prose, run_id) == "queued"
    assert prose("runs", "cancel", run_id).returncode == 0
    # It has no state (no worker began it): what the engine holds of it is removed.
    done = prose("runs", "rm", run_id, "--yes")
    assert done.returncode == 0, done.stderr
    assert _held(tmp_path, run_id)["workflows"] == 0


def test_pruning_removes_old_dbos_runs_with_what_the_engine_holds_but_not_queued_ones(
    prose: Any, tmp_path: Path
) -> None:
    from tests.cli.test_runs_command import _backdate

    (tmp_path / "main.prose").write_text(SEQUENTIAL, encoding="utf-8")

    def ran(*extra: str) -> str:
        done = prose("run", "main.prose", "--engine", "dbos", "--json", *extra)
        return str(json.loads(done.stdout)["run_id"])

    old, requeued, recent = ran(), ran("--max-sessions", "3"), ran()
    # The failed one resumed on a worker's queue (no worker is up): its next attempt waits.
    resumed = prose("runs", "resume", requeued, "--detach")
    assert resumed.returncode == 0, resumed.stderr
    for run_id in (old, requeued):
        _backdate(tmp_path, run_id, 40)
    done = prose("runs", "prune", "--older-than", "30d", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [old]
    assert f"kept run {requeued}: the dbos engine has it queued or running" in done.stderr
    assert _held(tmp_path, old) == {"workflows": 0, "steps": 0, "spending": 0, "summaries": 0}
    assert _held(tmp_path, requeued)["workflows"] == 2  # its two attempts
    assert _held(tmp_path, recent)["workflows"] == 1
    assert {run["run_id"] for run in _runs(prose)} == {requeued, recent}
