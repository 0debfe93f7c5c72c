"""What only the sqlite backend does: state.db's schema as spec/state/sqlite.md has it, the
unique binding per name and scope, attachments, and the append-only execution rows."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from openprose.vm import events as ev
from openprose.vm.state import StateError
from openprose.vm.state.base import StepRecord
from openprose.vm.state.sqlite import ATTACHMENT_BYTES, SqliteCatalog, SqliteStore
from tests.vm.state.state_support import RunInState, crash

PROGRAM = 'let a = session "One"\n'


@pytest.fixture
def catalog(tmp_path: Path) -> SqliteCatalog:
    return SqliteCatalog(tmp_path / ".prose" / "runs")


@pytest.fixture
def store(catalog: SqliteCatalog) -> SqliteStore:
    return catalog.create(PROGRAM, "main.prose", {}, backend="offline")


def db(store: SqliteStore) -> sqlite3.Connection:
    assert store.path is not None
    return sqlite3.connect(store.path / "state.db")


def rows(store: SqliteStore) -> list[tuple[Any, ...]]:
    """The execution rows: (statement_index, statement_text, status, metadata, error)."""
    with db(store) as connection:
        found = connection.execute(
            "SELECT statement_index, statement_text, status, metadata, error_message "
            "FROM execution ORDER BY id"
        ).fetchall()
    return [(i, text, status, json.loads(meta), error) for i, text, status, meta, error in found]


def test_state_db_has_the_core_tables_and_the_journal_under_x(store: SqliteStore) -> None:
    assert store.path is not None
    assert sorted(p.name for p in store.path.iterdir() if not p.name.startswith("state.db-")) == [
        "program.prose",
        "state.db",
    ]
    with db(store) as connection:
        tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}
        mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
        run = connection.execute("SELECT id, program_path, status, state_mode FROM run").fetchall()
    core = {"run", "execution", "bindings", "agents", "agent_segments", "imports"}
    journal = {"x_journal_runs", "x_journal_steps", "x_journal_commits"}
    assert core | journal <= tables
    assert not {"journal_runs", "journal_steps", "journal_commits"} & tables
    assert mode == "wal"
    assert run == [(store.run_id, "main.prose", "running", "sqlite")]


def test_the_store_commits_with_synchronous_full(store: SqliteStore) -> None:
    full = 2
    assert store.database.data.execute("PRAGMA synchronous").fetchone()[0] == full
    assert store.journal.connection.execute("PRAGMA synchronous").fetchone()[0] == full


def test_one_binding_per_name_and_scope(store: SqliteStore) -> None:
    store.commit_binding("1", "a", "let", 'let a = session "One"', "first", None)
    store.commit_binding("1", "a", "let", 'let a = session "One"', "second", None)
    store.commit_binding("1/b:1", "a", "let", 'let a = session "One"', "scoped", 1)
    with db(store) as connection:
        found = connection.execute(
            "SELECT name, execution_id, kind, value, source_statement, attachment_path "
            "FROM bindings ORDER BY IFNULL(execution_id, -1)"
        ).fetchall()
        assert found == [
            ("a", None, "let", "second", 'let a = session "One"', None),
            ("a", 1, "let", "scoped", 'let a = session "One"', None),
        ]
        # What the spec's invalid PRIMARY KEY (name, IFNULL(execution_id, -1)) meant: a
        # second row for a root binding is refused although NULL = NULL is not true.
        with pytest.raises(sqlite3.IntegrityError):
            connection.execute("INSERT INTO bindings (name, execution_id) VALUES ('a', NULL)")
        with pytest.raises(sqlite3.IntegrityError):
            connection.execute("INSERT INTO bindings (name, execution_id) VALUES ('a', 1)")


def test_a_large_value_goes_to_an_attachment(store: SqliteStore) -> None:
    big = "x" * (ATTACHMENT_BYTES + 1)
    store.commit_binding("1", "report", "let", "let report = session", big, None)
    store.commit_binding("2/b:3", "report", "let", "let report = session", big + "y", 3)
    store.commit_binding("3", "small", "let", "let small = session", "x" * ATTACHMENT_BYTES, None)
    assert store.path is not None
    with db(store) as connection:
        found = dict(
            connection.execute(
                "SELECT name || IFNULL('__' || execution_id, ''), attachment_path FROM bindings"
            ).fetchall()
        )
        summary = connection.execute(
            "SELECT value FROM bindings WHERE name = 'report' AND execution_id IS NULL"
        ).fetchone()[0]
    assert found == {
        "report": "attachments/report.md",
        "report__3": "attachments/report__3.md",
        "small": None,
    }
    assert (store.path / "attachments" / "report.md").read_text(encoding="utf-8") == big
    assert (store.path / "attachments" / "report__3.md").read_text(encoding="utf-8") == big + "y"
    assert "attachments/report.md" in summary and len(summary) < 100
    assert store.binding_text("report") == big


def test_parallel_loop_and_error_rows_follow_the_spec(store: SqliteStore) -> None:
    events = [
        ev.ParallelEnter(step="2", branches=["a", "b"], strategy="all"),
        ev.ParallelBranch(step="2b", branch="b", status="done"),
        ev.ParallelBranch(step="2", branch="a", status="failed"),
        ev.ParallelJoin(step="2"),
        ev.LoopStart(step="3", description="loop until **done** (max: 5)"),
        ev.LoopIteration(step="3", iteration=1, maximum=5),
        ev.LoopIteration(step="3", iteration=2, maximum=5),
        ev.LoopExit(step="3", iteration=2, maximum=5, reason="**done**"),
        ev.Retry(step="4", attempt=2, maximum=3, error="timeout"),
        ev.Failure(step="4", message="timeout"),
    ]
    for event in events:
        store.record(event)
    found = rows(store)
    parallel = {r[3]["parallel_id"] for r in found if "parallel_id" in r[3]}
    loop = {r[3]["loop_id"] for r in found if "loop_id" in r[3]}
    assert len(parallel) == 1 and len(loop) == 1
    assert [(r[0], r[1], r[2]) for r in found] == [
        (2, "parallel:", "started"),
        (2, "parallel:b", "completed"),
        (2, "parallel:a", "failed"),
        (2, "parallel:", "joined"),
        (3, "loop", "started"),
        (3, "3→ loop:1/5", "iteration"),
        (3, "3→ loop:2/5", "iteration"),
        (3, "3→ loop:2/5 exit(**done**)", "exited"),
        (4, "4→ retry:2/3", "retry"),
        (4, "4→ ✗ timeout", "failed"),
    ]
    assert found[0][3]["branches"] == ["a", "b"]
    assert found[1][3]["branch"] == "b"
    assert [r[3].get("iteration") for r in found[5:8]] == [1, 2, 2]
    assert found[7][3]["reason"] == "**done**"
    assert (found[8][3]["attempt"], found[8][3]["max"], found[8][4]) == (2, 3, "timeout")
    assert found[9][4] == "timeout"


def test_rows_inside_a_block_point_at_its_invocation(store: SqliteStore) -> None:
    store.record(ev.FramePush(step="5", block="process", execution_id=1))
    store.record(ev.FramePush(step="5", block="process", execution_id=2, parent=1))
    store.record(ev.Binding(step="5", name="r", execution_id=2))
    store.record(ev.FramePop(step="5", block="process", execution_id=2))
    with db(store) as connection:
        found = connection.execute("SELECT id, statement_text, parent_id FROM execution").fetchall()
    assert found == [
        (1, "5→ block:process#1", None),
        (2, "5→ block:process#2", 1),
        (3, "5→ r ✓", 2),
        (4, "5→ #2 done", 2),
    ]


def test_program_end_marks_the_run_row(catalog: SqliteCatalog, store: SqliteStore) -> None:
    store.record(ev.ProgramEnd(step="0", ts=1_900_000_000.0, status="error", error="boom"))
    with db(store) as connection:
        assert connection.execute("SELECT status FROM run").fetchone() == ("failed",)
    assert rows(store)[-1][1:3] == ("---error 2030-03-17T17:46:40Z boom", "failed")
    assert catalog.info(store.run_id).status == "failed"


def test_a_replayed_run_narrates_only_what_is_new(catalog: SqliteCatalog) -> None:
    store = catalog.create(PROGRAM, "main.prose", {})
    store.journal.record_step(StepRecord("session", "1", "h", {"text": "x"}))
    store.record(ev.Binding(step="1", name="a"))
    run_id = store.run_id
    crash(store)
    resumed = catalog.open(run_id)
    assert resumed.replaying
    resumed.record(ev.Binding(step="1", name="a"))  # already in the record
    resumed.record(ev.Failure(step="2", message="why it stopped"))
    resumed.went_live()
    resumed.record(ev.Binding(step="2", name="b"))
    found = [(text, status) for _i, text, status, _m, _e in rows(resumed)]
    assert found[0] == ("1→ a ✓", "completed")
    assert found[1][0].startswith("---resume ") and found[1][1] == "resumed"
    assert found[2:] == [("2→ ✗ why it stopped", "failed"), ("2→ b ✓", "completed")]
    with db(resumed) as connection:
        assert connection.execute("SELECT status FROM run").fetchone() == ("running",)
    resumed.close()


def test_a_called_program_has_its_own_state_db(store: SqliteStore) -> None:
    called = store.child("3", "local--lib-1", "output y = 1\n", "lib.prose")
    assert store.path is not None and called.path == store.path / "imports" / "local--lib-1"
    assert (called.path / "program.prose").read_text(encoding="utf-8") == "output y = 1\n"
    called.commit_binding("3/lib:1", "y", "output", "output y = 1", "1", None)
    with sqlite3.connect(called.path / "state.db") as connection:
        assert connection.execute("SELECT name, value FROM bindings").fetchall() == [("y", "1")]
        assert connection.execute("SELECT id, program_path FROM run").fetchall() == [
            ("local--lib-1", "lib.prose")
        ]
    with db(store) as connection:
        assert connection.execute("SELECT alias, source_url FROM imports").fetchall() == [
            ("local--lib-1", "lib.prose")
        ]
        assert connection.execute("SELECT count(*) FROM bindings").fetchone() == (0,)
    called.close()


def test_a_program_runs_with_sqlite_state(catalog: SqliteCatalog, run_in_state: RunInState) -> None:
    run = run_in_state(
        catalog,
        """\
        input topic: "t"
        parallel:
          b = session "Two {topic}"
          c = session "Three"
        output out = session "Five"
          context: [b, c]
        """,
        {"topic": "bees"},
    )
    assert run.result.status == "success"
    statuses = [(r[1], r[2]) for r in rows(run.store)]  # type: ignore[arg-type]
    assert statuses[0] == ("parallel:", "started")
    assert ("parallel:", "joined") in statuses
    assert statuses[-2][0] == "3→ out ✓"
    assert statuses[-1][0].startswith("---end ")
    with db(run.store) as connection:  # type: ignore[arg-type]
        names = [r[0] for r in connection.execute("SELECT name FROM bindings ORDER BY rowid")]
        assert connection.execute("SELECT status FROM run").fetchone() == ("completed",)
    assert names == ["topic", "b", "c", "out"]


def test_a_state_db_without_a_journal_is_not_a_run(catalog: SqliteCatalog) -> None:
    stray = catalog.root / "20260101-000000-stray1"
    stray.mkdir(parents=True)
    sqlite3.connect(stray / "state.db").execute("CREATE TABLE run (id TEXT)").connection.close()
    with pytest.raises(StateError, match="cannot open run"):
        catalog.open(stray.name)
    with pytest.raises(StateError, match="cannot read run"):
        catalog.info(stray.name)
    assert [(i.run_id, i.status) for i in catalog.runs()] == [(stray.name, "unreadable")]
