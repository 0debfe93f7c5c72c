"""``prose runs wait`` as a user runs it: a run queued with ``--detach``, a ``prose worker``
and the waiting command in child processes on one machine (the DBOS system database in
SQLite beside the runs), the offline backend.  What the waiter prints at the end must be
what ``prose run --engine dbos`` prints for the same program."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# Fixtures: importing them makes them visible to this module's tests.
from tests.cli.test_worker_command import (  # noqa: F401
    ASKING,
    SEQUENTIAL,
    _detach,
    _environment,
    _wait_for,
    workers,
)
from tests.support.extras import require

require("dbos", "pip install 'openprose[dbos]'")

FAILING = 'let notes = session "Collect notes"\nthrow "no sources for {notes}"\n'


class Waiter:
    """A ``prose runs wait`` child process, its output in files read while it runs."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.out = tmp_path / f"wait-{len(list(tmp_path.glob('wait-*.out')))}.out"
        self.err = self.out.with_suffix(".err")
        with (
            open(self.out, "w", encoding="utf-8") as out,
            open(self.err, "w", encoding="utf-8") as err,
        ):
            self.child = subprocess.Popen(
                [sys.executable, "-m", "openprose", "runs", "wait", *args],
                cwd=tmp_path,
                stdout=out,
                stderr=err,
                text=True,
                env=_environment(),
            )

    def stderr(self) -> str:
        return self.err.read_text(encoding="utf-8")

    def stdout(self) -> str:
        return self.out.read_text(encoding="utf-8")

    def says(self, text: str) -> None:
        _wait_for(lambda: text in self.stderr(), 60)

    def end(self) -> int:
        return self.child.wait(60)


@pytest.fixture
def waiters(tmp_path: Path) -> Iterator[Callable[..., Waiter]]:
    started: list[Waiter] = []

    def start(*args: str) -> Waiter:
        started.append(Waiter(tmp_path, *args))
        return started[-1]

    yield start
    for waiter in started:
        if waiter.child.poll() is None:
            waiter.child.kill()
            waiter.child.wait()


def _attached(prose: Any, tmp_path: Path, text: str, *extra: str) -> tuple[Any, str]:
    """The same program run attached on the dbos engine, in a directory of its own, and
    its run id."""
    here = tmp_path / "attached"
    here.mkdir()
    (here / "main.prose").write_text(text, encoding="utf-8")
    done = prose("run", "main.prose", "--engine", "dbos", *extra, cwd=here)
    [run_dir] = (here / ".prose" / "runs").iterdir()
    return done, run_dir.name


def _summary(stderr: str, run_id: str) -> list[str]:
    """The run's report on standard error, from its first line, with its id and its state's
    place masked."""
    lines = stderr.replace(run_id, "RUN").splitlines()
    start = next(
        i
        for i, line in enumerate(lines)
        if line.startswith(("prose: run RUN succeeded", "prose: error: run RUN"))
    )
    return [line.split("; state in ")[0] for line in lines[start:]]


def test_a_detached_run_waited_for_reports_as_the_attached_run_does(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
    waiters: Callable[..., Waiter],
) -> None:
    run_id = _detach(prose, tmp_path, SEQUENTIAL, "--offline-delay", "0.3")
    waiter = waiters(run_id)
    waiter.says(f"prose: run {run_id} is queued: a `prose worker` starts it")
    worker = workers()
    waiter.says(f"prose: run {run_id} is running on executor ")
    assert waiter.end() == 0, waiter.stderr()
    assert f":{worker.pid}" in waiter.stderr().split("is running on executor ")[1].splitlines()[0]
    attached, attached_id = _attached(prose, tmp_path, SEQUENTIAL, "--offline-delay", "0.3")
    assert attached.returncode == 0, attached.stderr
    assert waiter.stdout() == attached.stdout
    assert "report = " in waiter.stdout()
    assert _summary(waiter.stderr(), run_id) == _summary(attached.stderr, attached_id)
    # A run over is reported at once, as JSON too.
    again = prose("runs", "wait", run_id, "--json")
    assert again.returncode == 0, again.stderr
    assert "is queued" not in again.stderr and "is running" not in again.stderr
    result = json.loads(again.stdout)
    assert result["run_id"] == run_id and result["status"] == "success"
    assert (
        result["outputs"]
        == json.loads(
            prose(
                "run", "main.prose", "--engine", "dbos", "--json", cwd=tmp_path / "attached"
            ).stdout
        )["outputs"]
    )


def test_a_run_waiting_for_an_input_is_said_to_and_ends_once_it_is_sent(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
    waiters: Callable[..., Waiter],
) -> None:
    run_id = _detach(prose, tmp_path, ASKING)
    workers()
    waiter = waiters(run_id)
    waiter.says(
        f"prose: run {run_id} waits for the input `angle` (Which angle to take): "
        f"prose runs send {run_id} angle=VALUE"
    )
    assert waiter.child.poll() is None
    # `prose runs list` says it waits, rather than that it runs.
    assert _listed(prose, run_id)["status"] == "waiting"
    table = prose("runs", "list").stdout
    assert any(line.split()[:2] == [run_id, "waiting"] for line in table.splitlines())
    sent = prose("runs", "send", run_id, "angle=cost")
    assert sent.returncode == 0, sent.stderr
    assert waiter.end() == 0, waiter.stderr()
    assert "from the cost angle" in waiter.stdout()
    assert waiter.stdout().startswith("summary = ")
    assert _listed(prose, run_id)["status"] == "completed"


def _listed(prose: Any, run_id: str) -> dict[str, Any]:
    done = prose("runs", "list", "--json")
    assert done.returncode == 0, done.stderr
    [run] = [run for run in json.loads(done.stdout) if run["run_id"] == run_id]
    return dict(run)


def test_a_wait_gives_up_at_its_timeout_and_a_cancelled_run_ends_it_with_status_1(
    prose: Any, tmp_path: Path, waiters: Callable[..., Waiter]
) -> None:
    run_id = _detach(prose, tmp_path, SEQUENTIAL)
    timed = prose("runs", "wait", run_id, "--timeout", "0.5")
    assert timed.returncode == 124
    assert f"prose: run {run_id} is queued" in timed.stderr
    assert f"prose: run {run_id} is not over after 0.5 s; it goes on" in timed.stderr
    assert timed.stdout == ""
    waiter = waiters(run_id, "--json")
    waiter.says("is queued")
    cancelled = prose("runs", "cancel", run_id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert waiter.end() == 1
    assert f"failed: cancelled (`prose runs cancel {run_id}`)" in waiter.stderr()
    assert json.loads(waiter.stdout())["status"] == "cancelled"


def test_a_failed_run_waited_for_fails_as_the_attached_run_does(
    prose: Any,
    tmp_path: Path,
    workers: Callable[..., subprocess.Popen[str]],  # noqa: F811
) -> None:
    run_id = _detach(prose, tmp_path, FAILING)
    workers()
    waited = prose("runs", "wait", run_id)
    attached, attached_id = _attached(prose, tmp_path, FAILING)
    assert waited.returncode == attached.returncode == 1
    assert f"prose: error: run {run_id} failed at `throw" in waited.stderr
    assert "no sources for" in waited.stderr
    assert _summary(waited.stderr, run_id) == _summary(attached.stderr, attached_id)
    assert "Traceback" not in waited.stderr


def test_what_cannot_be_waited_for_is_a_usage_error(prose: Any, tmp_path: Path) -> None:
    (tmp_path / "main.prose").write_text(SEQUENTIAL, encoding="utf-8")
    local = prose("run", "main.prose", "--json")
    assert local.returncode == 0, local.stderr
    run_id = json.loads(local.stdout)["run_id"]
    for ask in ((run_id,), (run_id, "--state", "filesystem")):
        before = prose("runs", "wait", *ask)  # no system database yet
        assert before.returncode == 2
        assert f"run {run_id} ran on the local engine" in before.stderr
    _detach(prose, tmp_path, SEQUENTIAL)  # now there is one
    after = prose("runs", "wait", run_id)
    assert after.returncode == 2
    assert f"run {run_id} ran on the local engine" in after.stderr
    assert "it is completed" in after.stderr
    unknown = prose("runs", "wait", "20990101-000000-nosuch")
    assert unknown.returncode == 2
    assert "no run '20990101-000000-nosuch'" in unknown.stderr
    for bad in ("-1", "soon", "nan"):
        refused = prose("runs", "wait", run_id, "--timeout", bad)
        assert refused.returncode == 2
        assert "expected a number of seconds, 0 or more" in refused.stderr
