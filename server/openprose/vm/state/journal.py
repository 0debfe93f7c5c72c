"""The journal of steps: what makes a resumed run exact.

Three tables, the same on every backend that has a database (SQLite in the run directory
for ``filesystem``, inside ``state.db`` for ``sqlite``, in the ``openprose`` schema for
``postgres``):

- ``{prefix}journal_steps``: one row per model exchange, keyed by (run, kind, step key),
  with the input hash, the answer (or the failure) and its usage and cost;
- ``{prefix}journal_commits``: one row per committed binding, keyed by (run, step key,
  name, execution_id), with a hash of its value;
- ``{prefix}journal_runs``: one row per run, the summary ``prose runs`` prints, plus the
  program's text and the run's inputs (what a resume needs).

Every write is its own transaction, committed before the call returns: with SQLite in WAL
mode and ``synchronous=FULL`` a committed step survives a crash of the process and of the
machine.  Commit entries are written with a relaxed sync (``synchronous=NORMAL``; on
PostgreSQL ``synchronous_commit = off``): they survive the process, and the machine once
the next step is synced.  Losing one to a power cut costs only a rewrite of the same value
when the run resumes, where losing a step would pay for a model call twice.

The whole journal of a run is read once when the run opens (a resume of a
thousand steps reads one query), then kept in memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from openprose.vm.rundir import pid_alive
from openprose.vm.state.base import RunInfo, StepRecord
from openprose.vm.values import Value

ROOT_SCOPE = -1  # execution_id of the root scope (NULL cannot be part of a primary key)
COUNTER_KEY = "@numbers"  # the step key of a run's counters (``Journal.number``)

_RUN_FIELDS = (
    "program_name",
    "program_hash",
    "status",
    "started_at",
    "ended_at",
    "backend",
    "steps",
    "sessions",
    "input_tokens",
    "output_tokens",
    "cost",
    "error",
    "failed_statement",
    "pid",
    "host",
)


def schema(prefix: str = "", real: str = "REAL") -> list[str]:
    return [
        f"""CREATE TABLE IF NOT EXISTS {prefix}journal_runs (
            run_id TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            program_name TEXT NOT NULL DEFAULT '',
            program_hash TEXT NOT NULL DEFAULT '',
            program_text TEXT NOT NULL DEFAULT '',
            inputs TEXT NOT NULL DEFAULT '{{}}',
            status TEXT NOT NULL DEFAULT 'running',
            started_at {real} NOT NULL DEFAULT 0,
            ended_at {real},
            backend TEXT NOT NULL DEFAULT '',
            steps INTEGER NOT NULL DEFAULT 0,
            sessions INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cost {real} NOT NULL DEFAULT 0,
            error TEXT NOT NULL DEFAULT '',
            failed_statement TEXT NOT NULL DEFAULT '',
            pid INTEGER,
            host TEXT NOT NULL DEFAULT ''
        )""",
        f"""CREATE TABLE IF NOT EXISTS {prefix}journal_steps (
            run_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            hash TEXT NOT NULL,
            result TEXT,
            error TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            cost {real} NOT NULL DEFAULT 0,
            recorded_at {real} NOT NULL,
            PRIMARY KEY (run_id, kind, key)
        )""",
        f"""CREATE TABLE IF NOT EXISTS {prefix}journal_commits (
            run_id TEXT NOT NULL,
            key TEXT NOT NULL,
            name TEXT NOT NULL,
            execution_id INTEGER NOT NULL,
            value_hash TEXT NOT NULL,
            recorded_at {real} NOT NULL,
            PRIMARY KEY (run_id, key, name, execution_id)
        )""",
    ]


Transaction = Callable[[], contextlib.AbstractContextManager[Any]]


class Journal:
    """One run's journal over a DB-API connection.  ``placeholder`` is the driver's
    parameter marker (``?`` for sqlite3, ``%s`` for psycopg); ``transaction`` opens a
    transaction on the connection and commits it on exit."""

    def __init__(
        self,
        connection: Any,
        run_id: str,
        *,
        transaction: Transaction,
        prefix: str = "",
        placeholder: str = "?",
        real: str = "REAL",
        owns_connection: bool = True,
        relaxed_transaction: Transaction | None = None,
        read_transaction: Transaction | None = None,
        release: Callable[[Any], None] | None = None,
    ) -> None:
        self.connection = connection
        self.run_id = run_id
        self.prefix = prefix
        self.placeholder = placeholder
        self.real = real
        self._transaction = transaction
        # For commit entries: durable against a crash of the process (see the module).
        self._relaxed = relaxed_transaction or transaction
        # For reading only: on SQLite it takes no write lock, which a writing one waits for.
        self._read = read_transaction or transaction
        self._owns = owns_connection
        # What closing does with an owned connection (None: closes it); a pool's journal
        # gives it back.
        self._release = release
        self._lock = threading.Lock()  # sessions of claude-code answer from worker threads
        self.steps: dict[tuple[str, str], StepRecord] = {}
        self.commits: dict[tuple[str, str, int], str] = {}

    # ------------------------------------------------------------------ opening

    @classmethod
    def sqlite(cls, path: Path, run_id: str, prefix: str = "", *, made: bool = False) -> Journal:
        """The journal in the SQLite file ``path``; ``made``: its tables exist (the run's
        process made them), so that opening it writes nothing."""
        connection = connect_sqlite(path)
        journal = cls(
            connection,
            run_id,
            transaction=sqlite_transaction(connection),
            prefix=prefix,
            relaxed_transaction=sqlite_transaction(connection, relaxed=True),
            read_transaction=sqlite_transaction(connection, read=True),
        )
        if not made:
            journal.create_tables()
        return journal

    def create_tables(self) -> None:
        with self._transaction() as cursor:
            for statement in schema(self.prefix, self.real):
                cursor.execute(statement)

    def _sql(self, text: str) -> str:
        text = text.replace("{p}", self.prefix)
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)

    def load(self, under: str = "") -> None:
        """Read the run's steps and commits (once, when a run is resumed); ``under``: only
        those of step keys that start with it (one item of a fan-out, in another process),
        and the run's summaries, which are keyed by their content, not by a step."""
        where = "WHERE run_id = ?"
        params: tuple[object, ...] = (self.run_id,)
        if under:
            where += " AND substr(key, 1, ?) = ?"
            params = (self.run_id, len(under), under)
        steps = where.replace("substr(key, 1, ?) = ?", "(substr(key, 1, ?) = ? OR kind = ?)")
        step_params = (*params, "summarise") if under else params
        with self._read() as cursor:
            cursor.execute(
                self._sql(
                    "SELECT kind, key, hash, result, error, input_tokens, output_tokens, "
                    "cache_read_tokens, cache_write_tokens, cost FROM {p}journal_steps " + steps
                ),
                step_params,
            )
            for row in cursor.fetchall():
                kind, key, hashed, result, error, i, o, cr, cw, cost = row
                self.steps[(kind, key)] = StepRecord(
                    kind,
                    key,
                    hashed,
                    json.loads(result) if result is not None else None,
                    error,
                    {
                        "input_tokens": i,
                        "output_tokens": o,
                        "cache_read_tokens": cr,
                        "cache_write_tokens": cw,
                    },
                    cost,
                )
            cursor.execute(
                self._sql(
                    "SELECT key, name, execution_id, value_hash FROM {p}journal_commits " + where
                ),
                params,
            )
            for key, name, execution_id, hashed in cursor.fetchall():
                self.commits[(key, name, execution_id)] = hashed

    def stored_commit(self, key: str, name: str) -> str | None:
        """A commit of the run's root scope read from the database, for one a journal
        loaded ``under`` an item's key does not hold (the text of the called program the
        item is in, vm/branches.py)."""
        with self._transaction() as cursor:
            return self._root_commit(cursor, key, name)

    # ------------------------------------------------------------------ steps

    def step(self, kind: str, key: str) -> StepRecord | None:
        return self.steps.get((kind, key))

    def record_step(self, record: StepRecord, *, session: bool = False) -> None:
        usage = record.usage
        values = (
            self.run_id,
            record.kind,
            record.key,
            record.hash,
            json.dumps(record.result, ensure_ascii=False) if record.result is not None else None,
            record.error,
            usage.get("input_tokens", 0),
            usage.get("output_tokens", 0),
            usage.get("cache_read_tokens", 0),
            usage.get("cache_write_tokens", 0),
            record.cost,
            time.time(),
        )
        with self._lock, self._transaction() as cursor:
            # A step that ran again (it was in flight when the run died, or its input
            # changed under --force) replaces its row: the journal holds the last answer.
            cursor.execute(
                self._sql(
                    "INSERT INTO {p}journal_steps (run_id, kind, key, hash, result, error, "
                    "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, "
                    "cost, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (run_id, kind, key) DO UPDATE SET hash = excluded.hash, "
                    "result = excluded.result, error = excluded.error, "
                    "input_tokens = excluded.input_tokens, "
                    "output_tokens = excluded.output_tokens, "
                    "cache_read_tokens = excluded.cache_read_tokens, "
                    "cache_write_tokens = excluded.cache_write_tokens, "
                    "cost = excluded.cost, recorded_at = excluded.recorded_at"
                ),
                values,
            )
            cursor.execute(
                self._sql(
                    "UPDATE {p}journal_runs SET steps = steps + ?, sessions = sessions + ?, "
                    "input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, "
                    "cost = cost + ? WHERE run_id = ?"
                ),
                (
                    0 if record.kind == "memory" else 1,  # what an agent remembered: not a call
                    1 if session else 0,
                    usage.get("input_tokens", 0),
                    usage.get("output_tokens", 0),
                    record.cost,
                    self.run_id,
                ),
            )
        self.steps[(record.kind, record.key)] = record

    # ------------------------------------------------------------------ commits

    def committed(self, key: str, name: str, execution_id: int | None) -> str | None:
        scope = ROOT_SCOPE if execution_id is None else execution_id
        return self.commits.get((key, name, scope))

    def record_commit(
        self,
        key: str,
        name: str,
        execution_id: int | None,
        hashed: str,
        *,
        durable: bool = False,
    ) -> None:
        """A committed binding (or a name the run handed out).  ``durable``: synced like a
        step, for an entry whose loss would make a resumed run pick another name."""
        scope = ROOT_SCOPE if execution_id is None else execution_id
        with self._lock, (self._transaction if durable else self._relaxed)() as cursor:
            cursor.execute(
                self._sql(
                    "INSERT INTO {p}journal_commits (run_id, key, name, execution_id, "
                    "value_hash, recorded_at) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (run_id, key, name, execution_id) DO UPDATE SET "
                    "value_hash = excluded.value_hash, recorded_at = excluded.recorded_at"
                ),
                (self.run_id, key, name, scope, hashed, time.time()),
            )
        self.commits[(key, name, scope)] = hashed

    def number(self, key: str, name: str, *, durable: bool = False) -> int:
        """The number of kind ``name`` that the thing made at step ``key`` has (a block's
        execution id, an anonymous binding's, a called program's directory): the one it
        was given before, else the next of the run's counter for ``name``.  The counter
        lives in the database, so processes that run items of one run (and a run resumed
        after them) never hand out the same number twice.  ``durable``: as in
        ``record_commit``."""
        known = self.committed(key, name, None)
        if known is not None:
            return int(known)
        now = time.time()
        with self._lock, (self._transaction if durable else self._relaxed)() as cursor:
            row = self._root_commit(cursor, key, name)
            if row is None:
                # The counter's row is locked by the UPDATE (or the conflicting INSERT)
                # until this transaction ends: a concurrent caller waits, then counts on.
                cursor.execute(
                    self._sql(
                        "UPDATE {p}journal_commits SET value_hash = "
                        "CAST(CAST(value_hash AS INTEGER) + 1 AS TEXT), recorded_at = ? "
                        "WHERE run_id = ? AND key = ? AND name = ? AND execution_id = ?"
                    ),
                    (now, self.run_id, COUNTER_KEY, name, ROOT_SCOPE),
                )
                if cursor.rowcount == 0:
                    # The run's first number of this kind, counted on from any a run gave
                    # before its journal had counters.
                    cursor.execute(
                        self._sql(
                            "INSERT INTO {p}journal_commits (run_id, key, name, execution_id, "
                            "value_hash, recorded_at) SELECT ?, ?, ?, ?, "
                            "CAST(COALESCE(MAX(CAST(value_hash AS INTEGER)), 0) + 1 AS TEXT), ? "
                            "FROM {p}journal_commits WHERE run_id = ? AND name = ? "
                            "ON CONFLICT (run_id, key, name, execution_id) DO UPDATE SET "
                            "value_hash = CAST(CAST({p}journal_commits.value_hash AS INTEGER) "
                            "+ 1 AS TEXT), recorded_at = excluded.recorded_at"
                        ),
                        (self.run_id, COUNTER_KEY, name, ROOT_SCOPE, now, self.run_id, name),
                    )
                counter = self._root_commit(cursor, COUNTER_KEY, name)
                assert counter is not None
                row = counter
                cursor.execute(
                    self._sql(
                        "INSERT INTO {p}journal_commits (run_id, key, name, execution_id, "
                        "value_hash, recorded_at) VALUES (?, ?, ?, ?, ?, ?)"
                    ),
                    (self.run_id, key, name, ROOT_SCOPE, row, now),
                )
        self.commits[(key, name, ROOT_SCOPE)] = row
        return int(row)

    def _root_commit(self, cursor: Any, key: str, name: str) -> str | None:
        cursor.execute(
            self._sql(
                "SELECT value_hash FROM {p}journal_commits "
                "WHERE run_id = ? AND key = ? AND name = ? AND execution_id = ?"
            ),
            (self.run_id, key, name, ROOT_SCOPE),
        )
        found = cursor.fetchone()
        return None if found is None else str(found[0])

    # ------------------------------------------------------------------ the run

    def start_run(
        self,
        state: str,
        program_name: str,
        program_text: str,
        program_hash: str,
        inputs: dict[str, Value],
        backend: str,
    ) -> None:
        with self._lock, self._transaction() as cursor:
            cursor.execute(
                self._sql(
                    "INSERT INTO {p}journal_runs (run_id, state, program_name, program_hash, "
                    "program_text, inputs, status, started_at, backend, pid, host) "
                    "VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)"
                ),
                (
                    self.run_id,
                    state,
                    program_name,
                    program_hash,
                    program_text,
                    json.dumps(inputs, ensure_ascii=False),
                    time.time(),
                    backend,
                    os.getpid(),
                    socket.gethostname(),
                ),
            )

    def update_run(self, **fields: Any) -> None:
        if "inputs" in fields:
            fields["inputs"] = json.dumps(fields["inputs"], ensure_ascii=False)
        names = sorted(fields)
        assignments = ", ".join(f"{name} = ?" for name in names)
        with self._lock, self._transaction() as cursor:
            cursor.execute(
                self._sql(f"UPDATE {{p}}journal_runs SET {assignments} WHERE run_id = ?"),
                (*[fields[n] for n in names], self.run_id),
            )

    def claim(self) -> None:
        """This process now runs the run (a resume): status running, our pid."""
        self.update_run(status="running", pid=os.getpid(), host=socket.gethostname(), ended_at=None)

    def run_row(self) -> dict[str, Any] | None:
        with self._transaction() as cursor:
            cursor.execute(
                self._sql("SELECT * FROM {p}journal_runs WHERE run_id = ?"), (self.run_id,)
            )
            row = cursor.fetchone()
            if row is None:
                return None
            names = [d[0] for d in cursor.description]
        return dict(zip(names, row, strict=True))

    def inputs(self) -> dict[str, Value]:
        row = self.run_row()
        return json.loads(row["inputs"]) if row else {}

    def program_text(self) -> str:
        row = self.run_row()
        return str(row["program_text"]) if row else ""

    def run_info(self, location: str = "") -> RunInfo | None:
        row = self.run_row()
        return info_from_row(row, location) if row else None

    def close(self) -> None:
        if self._owns:
            with contextlib.suppress(Exception):
                if self._release is not None:
                    self._release(self.connection)
                else:
                    self.connection.close()


def info_from_row(row: dict[str, Any], location: str = "") -> RunInfo:
    info = RunInfo(run_id=row["run_id"], state=row["state"], location=location)
    for name in _RUN_FIELDS:
        if row.get(name) is not None:
            setattr(info, name, row[name])
    if info.status == "running" and not process_alive(info.pid, info.host):
        info.status = "interrupted"
    return info


def process_alive(pid: int | None, host: str) -> bool:
    """Whether the process that claimed a run still runs.  A run claimed on another host
    is taken to be alive: we cannot tell, and a resume must not race it."""
    if pid is None:
        return False
    if host and host != socket.gethostname():
        return True
    return pid_alive(pid)


def connect_sqlite(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode, WAL, ``synchronous=FULL`` (a commit is on disk
    when it returns), waiting up to 10 s for another writer."""
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    return connection


def sqlite_transaction(
    connection: sqlite3.Connection, relaxed: bool = False, read: bool = False
) -> Transaction:
    """Transactions on ``connection``; ``relaxed`` ones commit with ``synchronous=NORMAL``
    (in WAL mode: durable against a crash of the process, and on disk with the next
    ``FULL`` commit, which syncs the whole log); ``read`` ones only read, from one snapshot,
    without the write lock (a deferred transaction)."""

    @contextlib.contextmanager
    def transaction() -> Iterator[sqlite3.Cursor]:
        cursor = connection.cursor()
        if relaxed:
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("BEGIN" if read else "BEGIN IMMEDIATE")
        try:
            yield cursor
        except BaseException:
            connection.rollback()
            raise
        else:
            cursor.execute("COMMIT")
        finally:
            if relaxed:
                cursor.execute("PRAGMA synchronous=FULL")
            cursor.close()

    return transaction
