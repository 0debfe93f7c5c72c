"""``prose runs list|show|rm|resume`` in a child process, on runs made by ``prose run`` on the
offline backend."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# A fixture: importing it makes it visible to this module's tests.
from tests.postgres_cluster import postgres_db_url  # noqa: F401

PROGRAM = 'let notes = session "Take notes"\noutput summary = session "Summarise"\n'


def make_run(prose: Any, tmp_path: Path, *extra: str, name: str = "main.prose") -> str:
    (tmp_path / name).write_text(PROGRAM, encoding="utf-8")
    done = prose("run", name, *extra)
    match = re.search(r"run (\d{8}-\d{6}-[a-z0-9]{6})", done.stderr)
    assert match, done.stderr
    return match.group(1)


def test_list_shows_runs_newest_first_with_their_summary(prose: Any, tmp_path: Path) -> None:
    first = make_run(prose, tmp_path)
    failed = make_run(prose, tmp_path, "--max-sessions", "1")
    sqlite = make_run(prose, tmp_path, "--state", "sqlite")
    done = prose("runs", "list")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == [
        "RUN", "ID", "STATUS", "PROGRAM", "STARTED", "DURATION", "STEPS", "TOKENS", "COST",
        "FAILED", "AT",
    ]  # fmt: skip
    ids = [line.split()[0] for line in lines[1:]]
    assert sorted(ids) == sorted([first, failed, sqlite])
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows[first][1:3] == ["completed", "main.prose"]
    assert rows[failed][1] == "failed"
    assert rows[sqlite][1] == "completed"
    assert rows[first][6] == "2"  # steps
    listed = json.loads(prose("runs", "list", "--json").stdout)
    # Newest first (one second apart at most: ties are broken by id, also newest first).
    assert [r["started_at"] for r in listed] == sorted(
        (r["started_at"] for r in listed), reverse=True
    )
    assert {r["state"] for r in listed} == {"filesystem", "sqlite"}
    only = json.loads(prose("runs", "list", "--json", "--state", "sqlite").stdout)
    assert [r["run_id"] for r in only] == [sqlite]


def _interrupted_run(tmp_path: Path) -> str:
    """A run whose process died without closing it: created by a child that exits at once."""
    script = (
        "import sys; from pathlib import Path; from openprose.vm.state import open_catalog; "
        "store = open_catalog('filesystem', Path('.prose/runs')).create("
        "'session \"x\"\\n', 'main.prose', {}); print(store.run_id)"
    )
    child = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    return child.stdout.strip()


def test_an_interrupted_run_is_listed_as_interrupted(prose: Any, tmp_path: Path) -> None:
    run_id = _interrupted_run(tmp_path)
    listed = json.loads(prose("runs", "list", "--json").stdout)
    assert [(r["run_id"], r["status"]) for r in listed] == [(run_id, "interrupted")]


def test_show_prints_the_summary_and_the_bindings(prose: Any, tmp_path: Path) -> None:
    run_id = make_run(prose, tmp_path)
    done = prose("runs", "show", run_id)
    assert done.returncode == 0, done.stderr
    assert f"run:      {run_id}" in done.stdout
    assert "status:   completed" in done.stdout
    assert "  notes (let) = [dry run] Take notes" in done.stdout
    shown = json.loads(prose("runs", "show", run_id, "--json").stdout)
    assert shown["run_id"] == run_id and shown["steps"] == 2 and shown["backend"] == "offline"
    assert shown["dbos"] is None  # a run of the local engine
    assert [b["name"] for b in shown["bindings"]] == ["notes", "summary"]
    assert shown["bindings"][1]["kind"] == "output"
    sqlite = make_run(prose, tmp_path, "--state", "sqlite")
    shown = json.loads(prose("runs", "show", sqlite, "--json").stdout)
    assert shown["state"] == "sqlite"
    assert sorted(b["name"] for b in shown["bindings"]) == ["notes", "summary"]


def test_an_unknown_run_is_a_usage_error_naming_a_near_one(prose: Any, tmp_path: Path) -> None:
    run_id = make_run(prose, tmp_path)
    for action in ("show", "rm", "resume"):
        done = prose("runs", action, run_id[:-1] + "_")
        assert done.returncode == 2, (action, done.stderr)
        assert f"did you mean '{run_id}'?" in done.stderr
    done = prose("runs", "show", "nothing-like-it")
    assert done.returncode == 2 and "did you mean" not in done.stderr
    assert "no run 'nothing-like-it'" in done.stderr


def test_rm_needs_yes_off_a_terminal_and_removes_the_run(prose: Any, tmp_path: Path) -> None:
    run_id = make_run(prose, tmp_path)
    refused = prose("runs", "rm", run_id)
    assert refused.returncode == 2 and "needs --yes" in refused.stderr
    assert (tmp_path / ".prose" / "runs" / run_id).is_dir()
    done = prose("runs", "rm", run_id, "--yes")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / ".prose" / "runs" / run_id).exists()
    assert prose("runs", "show", run_id).returncode == 2


def test_rm_refuses_a_running_run(prose: Any, tmp_path: Path) -> None:
    script = (
        "import sys; from pathlib import Path; from openprose.vm.state import open_catalog; "
        "store = open_catalog('filesystem', Path('.prose/runs')).create("
        "'session \"x\"\\n', 'main.prose', {}); print(store.run_id, flush=True); "
        "sys.stdin.read()"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        run_id = child.stdout.readline().strip()
        done = prose("runs", "rm", run_id, "--yes")
        assert done.returncode == 2
        assert "still running" in done.stderr
        assert (tmp_path / ".prose" / "runs" / run_id).is_dir()
    finally:
        child.communicate("")


def test_resume_continues_a_failed_run_like_prose_run_resume(prose: Any, tmp_path: Path) -> None:
    run_id = make_run(prose, tmp_path, "--max-sessions", "1")
    done = prose("runs", "resume", run_id, "--json")
    assert done.returncode == 0, done.stderr
    assert f"resuming run {run_id}" in done.stderr
    result = json.loads(done.stdout)
    assert result["run_id"] == run_id and result["status"] == "success"
    shown = json.loads(prose("runs", "show", run_id, "--json").stdout)
    # The first session was answered from the journal: two steps in all, not three.
    assert shown["status"] == "completed" and shown["steps"] == 2


def test_resume_of_a_changed_program_needs_force(prose: Any, tmp_path: Path) -> None:
    run_id = make_run(prose, tmp_path, "--max-sessions", "1")
    (tmp_path / "main.prose").write_text(PROGRAM + 'session "More"\n', encoding="utf-8")
    refused = prose("runs", "resume", run_id)
    assert refused.returncode == 2 and "changed since run" in refused.stderr
    forced = prose("runs", "resume", run_id, "--force")
    assert forced.returncode == 0, forced.stderr


def test_resume_finds_the_program_elsewhere_with_program(prose: Any, tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    run_id = make_run(prose, tmp_path, "--max-sessions", "1", name="work/flow.prose")
    missing = prose("runs", "resume", run_id)
    assert missing.returncode == 2 and "--program FILE" in missing.stderr
    done = prose("runs", "resume", run_id, "--program", "work/flow.prose")
    assert done.returncode == 0, done.stderr


def test_list_of_an_empty_project(prose: Any, tmp_path: Path) -> None:
    done = prose("runs", "list")
    assert (done.returncode, done.stdout) == (0, "")
    assert "no runs in" in done.stderr
    assert json.loads(prose("runs", "list", "--json").stdout) == []


def test_runs_and_state_of_the_postgres_backend(
    prose: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres_db_url")  # skips without a cluster
    env = {"OPENPROSE_POSTGRES_URL": url}
    (tmp_path / "main.prose").write_text(PROGRAM, encoding="utf-8")
    made = prose("run", "main.prose", "--state", "postgres", **env)
    assert made.returncode == 0, made.stderr
    listed = json.loads(prose("runs", "list", "--state", "postgres", "--json", **env).stdout)
    assert [r["state"] for r in listed] == ["postgres"]
    run_id = listed[0]["run_id"]
    shown = json.loads(prose("runs", "show", run_id, "--state", "postgres", "--json", **env).stdout)
    assert sorted(b["name"] for b in shown["bindings"]) == ["notes", "summary"]
    described = prose("state", "describe", run_id, "--state", "postgres", "--json", **env)
    assert described.returncode == 0, described.stderr
    password = url.split("@")[0].rsplit(":", 1)[1]
    assert password not in described.stdout + described.stderr
    reset = prose("state", "reset", run_id, "--state", "postgres", "--yes", "--json", **env)
    assert json.loads(reset.stdout)["cleared"] == ["bindings", "narration", "journal"]
    removed = prose("runs", "rm", run_id, "--state", "postgres", "--yes", **env)
    assert removed.returncode == 0, removed.stderr
    assert json.loads(prose("runs", "list", "--state", "postgres", "--json", **env).stdout) == []


def _backdate(tmp_path: Path, run_id: str, days: float) -> None:
    """Move a run's start and end ``days`` into the past, in its journal (filesystem:
    journal.db, sqlite: state.db, whose tables are prefixed)."""
    import sqlite3

    run_dir = tmp_path / ".prose" / "runs" / run_id
    for name, table in (("journal.db", "journal_runs"), ("state.db", "x_journal_runs")):
        if (run_dir / name).is_file():
            journal = sqlite3.connect(run_dir / name)
            with journal:
                journal.execute(
                    f"UPDATE {table} SET started_at = started_at - ?, "
                    "ended_at = ended_at - ? WHERE run_id = ?",
                    (days * 86400, days * 86400, run_id),
                )
            journal.close()
            return
    raise AssertionError(f"no journal in {run_dir}")


def test_prune_removes_the_runs_that_ended_before_the_age_given(prose: Any, tmp_path: Path) -> None:
    old = make_run(prose, tmp_path)
    old_failed = make_run(prose, tmp_path, "--max-sessions", "1")
    old_sqlite = make_run(prose, tmp_path, "--state", "sqlite")
    recent = make_run(prose, tmp_path)
    for run_id in (old, old_failed, old_sqlite):
        _backdate(tmp_path, run_id, 40)
    listed = prose("runs", "prune", "--older-than", "30d", "--dry-run")
    assert listed.returncode == 0, listed.stderr
    assert sorted(listed.stdout.split()) == sorted([old, old_failed, old_sqlite])
    assert "3 runs ended before" in listed.stderr and "nothing removed" in listed.stderr
    assert len(json.loads(prose("runs", "list", "--json").stdout)) == 4
    refused = prose("runs", "prune", "--older-than", "30d")
    assert refused.returncode == 2 and "needs --yes" in refused.stderr
    done = prose("runs", "prune", "--older-than", "30d", "--yes")
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == sorted([old, old_failed, old_sqlite])
    assert [r["run_id"] for r in json.loads(prose("runs", "list", "--json").stdout)] == [recent]
    assert not (tmp_path / ".prose" / "runs" / old).exists()
    again = prose("runs", "prune", "--older-than", "1w", "--yes")
    assert again.returncode == 0 and again.stdout == "" and "no run ended before" in again.stderr


def test_prune_keeps_interrupted_runs_which_can_be_resumed(prose: Any, tmp_path: Path) -> None:
    interrupted = _interrupted_run(tmp_path)
    _backdate(tmp_path, interrupted, 40)
    done = prose("runs", "prune", "--older-than", "1d", "--yes")
    assert done.returncode == 0 and done.stdout == "", done.stderr
    [listed] = json.loads(prose("runs", "list", "--json").stdout)
    assert (listed["run_id"], listed["status"]) == (interrupted, "interrupted")


@pytest.mark.parametrize("given", ["30", "thirty days", "30y", "-3d", "d"])
def test_prune_needs_an_age_with_its_unit(prose: Any, tmp_path: Path, given: str) -> None:
    done = prose("runs", "prune", f"--older-than={given}", "--yes")
    assert done.returncode == 2
    assert f"{given!r} is not an age: a number and a unit" in done.stderr


def test_ages_are_read_in_seconds() -> None:
    from openprose.cli.runs import age

    assert [age(t) for t in ("45s", "90m", "12h", "30d", "1.5w", " 2d ")] == [
        45, 5400, 43200, 2592000, 907200, 172800,
    ]  # fmt: skip
