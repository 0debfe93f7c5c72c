"""The ``sqlite`` state backend (spec/state/sqlite.md).

A run is ``.prose/runs/{id}/`` with ``program.prose`` and ``state.db``: the spec's core
tables (``run``, ``execution``, ``bindings``, ``agents``, ``agent_segments``, ``imports``)
and, under the spec's ``x_`` prefix for extension tables, the journal of steps
(``x_journal_runs``, ``x_journal_steps``, ``x_journal_commits``), which is what a resume
reads.  Values larger than ``ATTACHMENT_BYTES`` go to ``attachments/``.

A program the run calls gets the same layout under ``imports/{name}/`` (its own
``state.db`` with the core tables; the steps stay in the calling run's journal).

The spec's ``PRIMARY KEY (name, IFNULL(execution_id, -1))`` is not valid SQLite (a primary
key holds columns only), so the invariant it means, one binding per name and scope, is a
unique index on that expression.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openprose.vm import events as ev
from openprose.vm.rundir import iso, publish, staged_directory, state_line, write_atomic
from openprose.vm.state.base import RunInfo, StateError
from openprose.vm.state.catalog import DirectoryCatalog, take_over
from openprose.vm.state.journal import (
    Journal,
    connect_sqlite,
    sqlite_transaction,
)
from openprose.vm.state.store import JournaledStore, Replay, end_fields
from openprose.vm.values import Value, render

DATABASE = "state.db"
PROGRAM = "program.prose"
ATTACHMENTS = "attachments"
ATTACHMENT_BYTES = 100 * 1024  # the spec's "~100KB"
PREFIX = "x_"  # the spec's prefix for extension tables

# The agent tables, shared with agent memory (vm/memory_sql.py), which may be the first
# to create them in a run's state.db.
AGENTS = """CREATE TABLE IF NOT EXISTS agents (
    name TEXT PRIMARY KEY,
    scope TEXT,
    memory TEXT,
    created_at TEXT DEFAULT (datetime('now')),
    updated_at TEXT DEFAULT (datetime('now'))
)"""
AGENT_SEGMENTS = """CREATE TABLE IF NOT EXISTS agent_segments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_name TEXT REFERENCES agents(name),
    segment_number INTEGER,
    timestamp TEXT DEFAULT (datetime('now')),
    prompt TEXT,
    summary TEXT,
    UNIQUE(agent_name, segment_number)
)"""

CORE_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS run (
        id TEXT PRIMARY KEY,
        program_path TEXT,
        program_source TEXT,
        started_at TEXT DEFAULT (datetime('now')),
        updated_at TEXT DEFAULT (datetime('now')),
        status TEXT DEFAULT 'running',
        state_mode TEXT DEFAULT 'sqlite'
    )""",
    """CREATE TABLE IF NOT EXISTS execution (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        statement_index INTEGER,
        statement_text TEXT,
        status TEXT,
        started_at TEXT,
        completed_at TEXT,
        error_message TEXT,
        parent_id INTEGER REFERENCES execution(id),
        metadata TEXT
    )""",
    # No primary key: the spec's is not valid SQLite; the unique index below holds it.
    """CREATE TABLE IF NOT EXISTS bindings (
        name TEXT NOT NULL,
        execution_id INTEGER,
        kind TEXT,
        value TEXT,
        source_statement TEXT,
        created_at TEXT DEFAULT (datetime('now')),
        updated_at TEXT DEFAULT (datetime('now')),
        attachment_path TEXT
    )""",
    """CREATE UNIQUE INDEX IF NOT EXISTS bindings_scope
        ON bindings (name, IFNULL(execution_id, -1))""",
    AGENTS,
    AGENT_SEGMENTS,
    """CREATE TABLE IF NOT EXISTS imports (
        alias TEXT PRIMARY KEY,
        source_url TEXT,
        fetched_at TEXT,
        inputs_schema TEXT,
        outputs_schema TEXT
    )""",
)

_UPSERT_BINDING = (
    "INSERT INTO bindings (name, execution_id, kind, value, source_statement, attachment_path) "
    "VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (name, IFNULL(execution_id, -1)) DO UPDATE SET kind = excluded.kind, "
    "value = excluded.value, source_statement = excluded.source_statement, "
    "attachment_path = excluded.attachment_path, updated_at = datetime('now')"
)


class SqliteRunDatabase:
    """One ``state.db``'s core tables.  Two connections: bindings and the run row commit
    with ``synchronous=FULL`` (a committed binding survives a power loss); the narration
    rows of ``execution`` with ``NORMAL``, like ``state.md``, which is not fsynced either
    (after a crash the journal, not the narration, says what was done)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = connect_sqlite(path)
        self._data_tx = sqlite_transaction(self.data)
        self.narration = connect_sqlite(path)
        self.narration.execute("PRAGMA synchronous=NORMAL")
        self._narration_tx = sqlite_transaction(self.narration)
        # Where each block invocation's row is, for the parent_id of rows inside it.
        self.frames: dict[int, int] = {}
        # The current parallel_id / loop_id of a statement, by (step, level).
        self.groups: dict[tuple[str, str, int], str] = {}
        self._group_count = 0

    def create_tables(self) -> None:
        with self._data_tx() as cursor:
            for statement in CORE_SCHEMA:
                cursor.execute(statement)

    def start(self, run_id: str, program_name: str, program_text: str) -> None:
        with self._data_tx() as cursor:
            cursor.execute(
                "INSERT INTO run (id, program_path, program_source, status, state_mode) "
                "VALUES (?, ?, ?, 'running', 'sqlite')",
                (run_id, program_name, program_text),
            )

    def set_status(self, status: str) -> None:
        with self._data_tx() as cursor:
            cursor.execute("UPDATE run SET status = ?, updated_at = datetime('now')", (status,))

    def write_binding(
        self,
        name: str,
        kind: str,
        source: str,
        value: Value,
        execution_id: int | None,
    ) -> None:
        text = render(value)
        attachment = None
        if len(text.encode("utf-8")) > ATTACHMENT_BYTES:
            suffix = f"__{execution_id}" if execution_id is not None else ""
            attachment = f"{ATTACHMENTS}/{name}{suffix}.md"
            directory = self.path.parent / ATTACHMENTS
            directory.mkdir(exist_ok=True)
            write_atomic(self.path.parent / attachment, text, durable=True)
            size = len(text.encode("utf-8")) // 1024
            text = f"{name} ({size} KB) - see {attachment}"
        with self._data_tx() as cursor:
            cursor.execute(
                _UPSERT_BINDING, (name, execution_id, kind, text, source.strip(), attachment)
            )

    def binding_text(self, name: str, execution_id: int | None) -> str | None:
        row = self.data.execute(
            "SELECT value, attachment_path FROM bindings "
            "WHERE name = ? AND IFNULL(execution_id, -1) = IFNULL(?, -1)",
            (name, execution_id),
        ).fetchone()
        if row is None:
            return None
        value, attachment = row
        if attachment:
            return (self.path.parent / str(attachment)).read_text(encoding="utf-8")
        return str(value)

    def append(
        self,
        step: str,
        text: str,
        status: str,
        metadata: dict[str, Any],
        *,
        error: str | None = None,
        parent: int | None = None,
        ts: float | None = None,
    ) -> int:
        """Append one row to ``execution`` (the spec's tables are append-only)."""
        index = re.match(r"\d+", step)
        when = iso(ts) if ts else iso(time.time())
        with self._narration_tx() as cursor:
            cursor.execute(
                "INSERT INTO execution (statement_index, statement_text, status, started_at, "
                "completed_at, error_message, parent_id, metadata) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    int(index.group()) if index else None,
                    text,
                    status,
                    when,
                    when if status != "started" else None,
                    error,
                    parent,
                    json.dumps({"step": step, **metadata}, ensure_ascii=False),
                ),
            )
            return int(cursor.lastrowid or 0)

    def _group(self, prefix: str, event: ev.Event, new: bool) -> str:
        step = event.step
        if not new:
            step = parallel_step(step, lambda s: (prefix, s, event.level) in self.groups)
        slot = (prefix, step, event.level)
        if new or slot not in self.groups:
            self._group_count += 1
            self.groups[slot] = f"{prefix}{self._group_count}"
        return self.groups[slot]

    def record(self, event: ev.Event) -> None:
        """The ``execution`` row(s) of an event, as the spec's parallel, loop and error
        sections spell them; ``statement_text`` is the ``state.md`` marker where there
        is one."""
        marker = state_line(event)
        step, ts = event.step, event.ts
        meta: dict[str, Any]
        status: str
        if isinstance(event, ev.Binding):
            if marker is None:
                return
            meta = {"name": event.name, "kind": event.binding_kind}
            if event.execution_id is not None:
                meta["execution_id"] = event.execution_id
            parent = self.frames.get(event.execution_id) if event.execution_id is not None else None
            self.append(step, marker, "completed", meta, parent=parent, ts=ts)
        elif isinstance(event, ev.ParallelEnter):
            meta = {
                "parallel_id": self._group("p", event, True),
                "branches": event.branches,
                "strategy": event.strategy,
                "on_fail": event.on_fail,
            }
            if event.count is not None:
                meta["count"] = event.count
            self.append(step, "parallel:", "started", meta, ts=ts)
        elif isinstance(event, ev.ParallelBranch):
            status = "completed" if event.status == "done" else event.status
            meta = {"parallel_id": self._group("p", event, False), "branch": event.branch}
            self.append(step, f"parallel:{event.branch}", status, meta, ts=ts)
        elif isinstance(event, ev.ParallelJoin):
            meta = {"parallel_id": self._group("p", event, False)}
            self.append(step, "parallel:", "joined", meta, ts=ts)
        elif isinstance(event, ev.LoopStart):
            meta = {"loop_id": self._group("l", event, True), "description": event.description}
            self.append(step, "loop", "started", meta, ts=ts)
        elif isinstance(event, ev.LoopIteration):
            meta = {
                "loop_id": self._group("l", event, False),
                "iteration": event.iteration,
                "max": event.maximum,
            }
            self.append(step, marker or "loop", "iteration", meta, ts=ts)
        elif isinstance(event, ev.LoopExit):
            meta = {
                "loop_id": self._group("l", event, False),
                "iteration": event.iteration,
                "max": event.maximum,
                "reason": event.reason,
            }
            self.append(step, marker or "loop", "exited", meta, ts=ts)
        elif isinstance(event, ev.FramePush):
            meta = {"block": event.block, "execution_id": event.execution_id}
            parent = self.frames.get(event.parent) if event.parent is not None else None
            row = self.append(step, marker or "", "executing", meta, parent=parent, ts=ts)
            self.frames[event.execution_id] = row
        elif isinstance(event, ev.FramePop):
            meta = {"block": event.block, "execution_id": event.execution_id}
            status = "failed" if event.failed else "completed"
            parent = self.frames.get(event.execution_id)
            self.append(step, marker or "", status, meta, parent=parent, ts=ts)
        elif isinstance(event, ev.Failure):
            self.append(step, marker or "", "failed", {}, error=event.message, ts=ts)
        elif isinstance(event, ev.Retry):
            meta = {"attempt": event.attempt, "max": event.maximum}
            self.append(step, marker or "", "retry", meta, error=event.error, ts=ts)
        elif isinstance(event, ev.ProgramEnd):
            status = str(end_fields(event)["status"])
            self.append(step, marker or "", status, {}, error=event.error or None, ts=ts)
            self.set_status(status)

    def close(self) -> None:
        for connection in (self.data, self.narration):
            with contextlib.suppress(sqlite3.Error):
                connection.close()


def parallel_step(step: str, is_open: Callable[[str], bool]) -> str:
    """The step of the parallel block a branch event belongs to: a completed branch
    carries its own step (the block's, plus the branch's letters)."""
    candidate = step
    while candidate and not is_open(candidate) and candidate[-1].isalpha():
        candidate = candidate[:-1]
    return candidate if is_open(candidate) else step


class SqliteStore(JournaledStore):
    state = "sqlite"

    def __init__(
        self,
        path: Path,
        run_id: str,
        database: SqliteRunDatabase,
        journal: Journal,
        replay: Replay,
        *,
        called: bool = False,
    ) -> None:
        super().__init__(journal, replay, called=called)
        self.path: Path | None = path
        self.directory = path
        self.run_id = run_id
        self.database = database

    def _write_binding(
        self, name: str, kind: str, source: str, value: Value, execution_id: int | None
    ) -> None:
        self.database.write_binding(name, kind, source, value, execution_id)

    def _narrate(self, event: ev.Event) -> None:
        self.database.record(event)

    def binding_text(self, name: str, execution_id: int | None = None) -> str | None:
        """The committed value of a binding as its row (or attachment) holds it."""
        return self.database.binding_text(name, execution_id)

    def inputs(self) -> dict[str, Value]:
        return self._journal.inputs()

    def save_inputs(self, inputs: dict[str, Value]) -> None:
        self._journal.update_run(inputs=inputs)

    def program_text(self) -> str:
        return (self.directory / PROGRAM).read_text(encoding="utf-8")

    def child(self, key: str, name: str, text: str, program_name: str) -> SqliteStore:
        root = self.directory / "imports"
        known = self._import_name(key, name, lambda n: (root / n).exists())
        if (root / known / DATABASE).is_file():
            database = SqliteRunDatabase(root / known / DATABASE)
            database.append("", f"---resume {iso(time.time())}", "resumed", {})
        else:
            staging = staged_directory(root, known)
            _create_run(staging, known, text, program_name).close()
            publish(staging, root / known)
            database = SqliteRunDatabase(root / known / DATABASE)
        # Every time, not only when made: a run killed before the row was written
        # writes it when it resumes.
        with self.database._data_tx() as cursor:
            cursor.execute(
                "INSERT OR IGNORE INTO imports (alias, source_url, fetched_at) "
                "VALUES (?, ?, datetime('now'))",
                (known, program_name),
            )
        return SqliteStore(
            database.path.parent, known, database, self._journal, self._replay, called=True
        )

    def close(self) -> None:
        self.database.close()
        if not self._called:
            self._journal.close()


def _create_run(path: Path, run_id: str, text: str, program_name: str) -> SqliteRunDatabase:
    write_atomic(path / PROGRAM, text, durable=True)
    database = SqliteRunDatabase(path / DATABASE)
    database.create_tables()
    database.start(run_id, program_name, text)
    return database


def _journal(path: Path, run_id: str) -> Journal:
    """The journal in ``state.db`` at ``path``, on its own connection (claude-code sessions
    record their steps from worker threads while the interpreter writes bindings)."""
    connection = connect_sqlite(path)
    return Journal(
        connection,
        run_id,
        transaction=sqlite_transaction(connection),
        prefix=PREFIX,
        relaxed_transaction=sqlite_transaction(connection, relaxed=True),
        read_transaction=sqlite_transaction(connection, read=True),
    )


class SqliteCatalog(DirectoryCatalog[SqliteStore]):
    """The runs under ``root`` (``.prose/runs``) that have a ``state.db``."""

    state = "sqlite"
    MARKER = DATABASE

    def _make(
        self, staging: Path, run_id: str, text: str, program_name: str, inputs: dict[str, Value]
    ) -> Journal:
        database = _create_run(staging, run_id, text, program_name)
        journal = _journal(database.path, run_id)
        journal.create_tables()
        database.close()
        return journal

    def _store(self, path: Path, run_id: str) -> SqliteStore:
        database = SqliteRunDatabase(path / DATABASE)
        return SqliteStore(path, run_id, database, _journal(database.path, run_id), Replay(False))

    def open(self, run_id: str) -> SqliteStore:
        path = self._path(run_id)
        database = journal = None
        try:
            database = SqliteRunDatabase(path)
            journal = _journal(database.path, run_id)
            journal.load()
            info = journal.run_info()
        except sqlite3.Error as error:
            for opened in (journal, database):
                if opened is not None:
                    opened.close()
            raise StateError(f"cannot open run {run_id}: {error}") from None
        replay = take_over(run_id, info, journal, database)
        database.set_status("running")
        database.append("", f"---resume {iso(time.time())}", "resumed", {})
        return SqliteStore(path.parent, run_id, database, journal, replay)

    def branch_journal(self, run_id: str, under: str) -> Journal:
        """The run's journal, read under one step key (vm/branches.py)."""
        journal = _journal(self._path(run_id), run_id)
        journal.load(under)
        return journal

    def branch_store(self, run_id: str, journal: Journal) -> SqliteStore:
        path = self._path(run_id)
        try:
            database = SqliteRunDatabase(path)
        except sqlite3.Error as error:
            raise StateError(f"cannot open run {run_id}: {error}") from None
        return SqliteStore(path.parent, run_id, database, journal, Replay(False))

    def info(self, run_id: str) -> RunInfo:
        path = self._path(run_id)
        try:
            connection = connect_sqlite(path)
        except sqlite3.Error as error:
            raise StateError(f"cannot read run {run_id}: {error}") from None
        journal = Journal(
            connection, run_id, transaction=sqlite_transaction(connection), prefix=PREFIX
        )
        try:
            info = journal.run_info(str(path.parent))
        except sqlite3.Error as error:
            raise StateError(f"cannot read run {run_id}: {error}") from None
        finally:
            journal.close()
        if info is None:
            raise StateError(f"run {run_id} has no summary in its journal")
        return info
