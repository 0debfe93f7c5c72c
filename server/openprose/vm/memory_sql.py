"""Agent memory in a database: the ``agents`` and ``agent_segments`` tables of
spec/state/sqlite.md and spec/state/postgres.md, plus ``x_agent_steps`` (the spec's prefix
for extension tables): one row per segment ever recorded, with the run and step that
recorded it, so that numbers are never reused after a compaction and a resumed run
replaying a step records nothing twice.

SQLite: one database per scope, as the spec says: the run's ``state.db`` (``persist:
true``), ``.prose/agents.db`` (project), ``~/.prose/agents.db`` (user), ``agents.db`` in a
``persist:`` path.  ``BEGIN IMMEDIATE`` holds the database's write lock for a whole
record, so two processes take turns.

PostgreSQL: the ``openprose`` schema, tables as ``state/postgres.py`` makes them: an agent
is (name, run_id), run_id NULL outside the run scope.  The spec's ``PRIMARY KEY (name,
COALESCE(run_id, ...))`` and ``UNIQUE (agent_name, COALESCE(run_id, ...), segment_number)``
are not valid SQL (a key holds columns, not expressions): they are unique indexes, and the
second is what keeps one segment per (agent, scope, number).  Project and user agents both
have run_id NULL, so user agents are named ``__user__{name}`` (the spec's own suggestion)
and a ``persist:`` path's agent ``__path__:{path}:{name}``.  A transaction-scoped advisory
lock on the agent serialises records.  The driver is not imported here: the store gets a
connection factory (psycopg 3).
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from openprose.vm.memory_store import Found, MemoryTxn, Segment
from openprose.vm.state import postgres_schema
from openprose.vm.state import sqlite as sqlite_state
from openprose.vm.state.base import StateError
from openprose.vm.state.journal import connect_sqlite, sqlite_transaction

SCOPES = {"true": "execution", "project": "project", "user": "user"}


def scope_label(scope: str) -> str:
    """The spec's ``scope`` column for a ``persist:`` value."""
    return SCOPES.get(scope, "custom")


SQLITE_SCHEMA = (
    sqlite_state.AGENTS,
    sqlite_state.AGENT_SEGMENTS,
    """CREATE TABLE IF NOT EXISTS x_agent_steps (
        agent_name TEXT NOT NULL,
        segment_number INTEGER NOT NULL,
        run_id TEXT NOT NULL DEFAULT '',
        step_key TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (agent_name, segment_number)
    )""",
    """CREATE UNIQUE INDEX IF NOT EXISTS x_agent_steps_step
        ON x_agent_steps (agent_name, run_id, step_key) WHERE step_key <> ''""",
)


class SqlTxn:
    """One agent's rows, in a transaction that holds its lock.  ``name`` is the agent's
    name in the tables; ``run`` its run in PostgreSQL (None outside the run scope), where
    ``per_run`` is set; ``?`` in the SQL becomes ``marker``."""

    def __init__(
        self,
        cursor: Any,
        name: str,
        scope: str,
        *,
        schema: str = "",
        marker: str = "?",
        per_run: bool = False,
        run: str | None = None,
    ) -> None:
        self.cursor = cursor
        self.name = name
        self.scope = scope
        self.s = schema
        self.marker = marker
        self.per_run = per_run
        self.run = run
        self.params: tuple[Any, ...] = (name, run) if per_run else (name,)

    def _run(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        self.cursor.execute(sql.replace("?", self.marker), params)
        return self.cursor

    def _where(self, table: str) -> str:
        """The condition naming this agent in ``table`` (parameters: ``self.params``)."""
        name = "name" if table == "agents" else "agent_name"
        if not self.per_run:
            return f"{name} = ?"
        run = "agent_run" if table == "x_agent_steps" else "run_id"
        return f"{name} = ? AND {run} IS NOT DISTINCT FROM ?"

    def _columns(self, table: str) -> str:
        name = "name" if table == "agents" else "agent_name"
        if not self.per_run:
            return name
        return f"{name}, {'agent_run' if table == 'x_agent_steps' else 'run_id'}"

    def _values(self) -> str:
        return ", ".join("?" for _ in self.params)

    def _select(self, columns: str, table: str, tail: str = "", extra: tuple[Any, ...] = ()) -> Any:
        return self._run(
            f"SELECT {columns} FROM {self.s}{table} WHERE {self._where(table)}{tail}",
            (*self.params, *extra),
        )

    def memory(self) -> str | None:
        row = self._select("memory", "agents").fetchone()
        return None if row is None else row[0]

    def numbers(self) -> list[int]:
        rows = self._select("segment_number", "agent_segments", " ORDER BY segment_number")
        return [int(row[0]) for row in rows.fetchall()]

    def segments(self) -> list[Segment]:
        rows = self._select(
            "segment_number, timestamp, prompt, summary",
            "agent_segments",
            " ORDER BY segment_number",
        ).fetchall()
        steps = {
            int(number): (run, step)
            for number, run, step in self._select(
                "segment_number, run_id, step_key", "x_agent_steps"
            ).fetchall()
        }
        found = []
        for number, stamp, prompt, summary in rows:
            run, step = steps.get(int(number), ("", ""))
            found.append(
                Segment(int(number), _text_time(stamp), prompt or "", summary or "", run, step)
            )
        return found

    def last_number(self) -> int:
        most = 0
        for table in ("agent_segments", "x_agent_steps"):
            row = self._select("MAX(segment_number)", table).fetchone()
            most = max(most, int(row[0] or 0))
        return most

    def find(self, run: str, step: str) -> Found | None:
        row = self._select(
            "segment_number", "x_agent_steps", " AND run_id = ? AND step_key = ?", (run, step)
        ).fetchone()
        # A record is one transaction: what is there is complete.
        return None if row is None else Found(int(row[0]))

    def put_segment(self, segment: Segment) -> None:
        stamp = "?" if self.marker == "?" else "?::timestamptz"
        self._run(
            f"INSERT INTO {self.s}agent_segments ({self._columns('agent_segments')}, "
            f"segment_number, timestamp, prompt, summary) "
            f"VALUES ({self._values()}, ?, {stamp}, ?, ?)",
            (*self.params, segment.number, _stamp(segment), segment.prompt, segment.summary),
        )

    def put_memory(self, text: str) -> None:
        if self.per_run:
            conflict, now = "name, COALESCE(run_id, '__project__')", "NOW()"
        else:
            conflict, now = "name", "datetime('now')"
        self._run(
            f"INSERT INTO {self.s}agents ({self._columns('agents')}, scope, memory) "
            f"VALUES ({self._values()}, ?, ?) ON CONFLICT ({conflict}) DO UPDATE SET "
            f"memory = excluded.memory, updated_at = {now}",
            (*self.params, scope_label(self.scope), text),
        )

    def note(self, segment: Segment) -> None:
        self._run(
            f"INSERT INTO {self.s}x_agent_steps ({self._columns('x_agent_steps')}, "
            f"segment_number, run_id, step_key) VALUES ({self._values()}, ?, ?, ?)",
            (*self.params, segment.number, segment.run, segment.step),
        )

    def remove_segments(self, numbers: list[int]) -> None:
        for number in numbers:
            self._run(
                f"DELETE FROM {self.s}agent_segments WHERE {self._where('agent_segments')} "
                "AND segment_number = ?",
                (*self.params, number),
            )

    def clear(self) -> None:
        for table in ("agent_segments", "x_agent_steps", "agents"):
            self._run(f"DELETE FROM {self.s}{table} WHERE {self._where(table)}", self.params)


def _stamp(segment: Segment) -> Any:
    return segment.timestamp or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _text_time(value: Any) -> str:
    if value is None:
        return ""
    if hasattr(value, "strftime"):  # a datetime from PostgreSQL
        return str(value.strftime("%Y-%m-%dT%H:%M:%SZ"))
    return str(value)


class SqliteMemoryStore:
    """``database(scope)`` is the database file of a scope (None: no place)."""

    name = "sqlite"

    def __init__(self, database: Callable[[str], Path | None]) -> None:
        self._database = database

    def location(self, agent: str, scope: str) -> str | None:
        path = self._database(scope)
        return f"{path} (agents, name={agent!r})" if path is not None else None

    @contextlib.contextmanager
    def _connection(self, scope: str, create: bool) -> Iterator[sqlite3.Connection | None]:
        path = self._database(scope)
        if path is None or (not create and not path.is_file()):
            yield None
            return
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        connection = connect(path)
        try:
            if create:
                with sqlite_transaction(connection)() as cursor:
                    for statement in SQLITE_SCHEMA:
                        cursor.execute(statement)
            elif not _has_tables(connection):
                yield None
                return
            yield connection
        finally:
            connection.close()

    def exists(self, agent: str, scope: str) -> bool:
        with self.transaction(agent, scope, create=False) as txn:
            return txn is not None and (txn.memory() is not None or bool(txn.numbers()))

    def read_memory(self, agent: str, scope: str) -> str | None:
        with self._connection(scope, False) as connection:
            if connection is None:
                return None
            row = connection.execute("SELECT memory FROM agents WHERE name = ?", (agent,))
            found = row.fetchone()
            return None if found is None else found[0]

    @contextlib.contextmanager
    def transaction(self, agent: str, scope: str, *, create: bool) -> Iterator[MemoryTxn | None]:
        with self._connection(scope, create) as connection:
            if connection is None:
                yield None
                return
            # BEGIN IMMEDIATE: the database's write lock for the whole record.
            with sqlite_transaction(connection)() as cursor:
                yield SqlTxn(cursor, agent, scope)

    def agents(self, scope: str) -> list[str]:
        with self._connection(scope, False) as connection:
            if connection is None:
                return []
            rows = connection.execute(
                "SELECT name FROM agents UNION SELECT agent_name FROM agent_segments"
            ).fetchall()
        return sorted(str(row[0]) for row in rows if row[0])


def connect(path: Path) -> sqlite3.Connection:
    """``journal.connect_sqlite`` (WAL, synchronous=FULL, a 10 s wait for writers), except
    that two processes creating the database at once both get it: switching to WAL takes
    a lock that SQLite does not wait for, so the loser retries."""
    for attempt in range(200):
        try:
            return connect_sqlite(path)
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or attempt == 199:
                raise
            time.sleep(0.01)
    raise AssertionError("unreachable")  # pragma: no cover


def _has_tables(connection: sqlite3.Connection) -> bool:
    rows = connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "AND name IN ('agents', 'agent_segments', 'x_agent_steps')"
    ).fetchall()
    return len(rows) == 3


# The spec's tables with its keys written as unique indexes (state/postgres_schema.py's
# own statements: whichever creates them first, they are the same).
POSTGRES_SCHEMA = (
    "CREATE SCHEMA IF NOT EXISTS openprose",
    postgres_schema.AGENTS,
    postgres_schema.AGENTS_SCOPE,
    postgres_schema.AGENT_SEGMENTS,
    postgres_schema.AGENT_SEGMENTS_NUMBER,
    """CREATE TABLE IF NOT EXISTS openprose.x_agent_steps (
        agent_name TEXT NOT NULL,
        agent_run TEXT,
        segment_number INTEGER NOT NULL,
        run_id TEXT NOT NULL DEFAULT '',
        step_key TEXT NOT NULL DEFAULT ''
    )""",
    """CREATE UNIQUE INDEX IF NOT EXISTS x_agent_steps_number ON openprose.x_agent_steps
        (agent_name, COALESCE(agent_run, '__project__'), segment_number)""",
    """CREATE UNIQUE INDEX IF NOT EXISTS x_agent_steps_step ON openprose.x_agent_steps
        (agent_name, COALESCE(agent_run, '__project__'), run_id, step_key)
        WHERE step_key <> ''""",
)


_SCHEMA_OBJECTS = (
    "openprose.agents",
    "openprose.agents_scope",
    "openprose.agent_segments",
    "openprose.agent_segments_number",
    "openprose.x_agent_steps",
    "openprose.x_agent_steps_number",
    "openprose.x_agent_steps_step",
)


def postgres_name(agent: str, scope: str, place: str | None) -> str:
    """An agent's ``name`` in PostgreSQL.  Project and user agents both have run_id NULL;
    postgres.md suggests telling them apart by a ``__user__`` prefix, and a ``persist:``
    path's agent gets ``__path__:{path}:`` likewise."""
    label = scope_label(scope)
    if label == "user":
        return f"__user__{agent}"
    if label == "custom":
        return f"__path__:{place}:{agent}"
    return agent


class PostgresMemoryStore:
    """``connect()`` opens a new DB-API connection (psycopg 3) that this store closes;
    ``run_id`` is the run whose ``persist: true`` agents it holds; ``place(scope)`` the
    ``persist:`` path of a custom scope, relative to the project (None: no place)."""

    name = "postgres"

    def __init__(
        self,
        connect: Callable[[], Any],
        run_id: str | None,
        place: Callable[[str], str | None],
    ) -> None:
        self._connect = connect
        self._run_id = run_id
        self._place = place
        self._ready = False

    def _identity(self, agent: str, scope: str) -> tuple[str, str | None] | None:
        """The agent's (name, run_id) in the tables; None when the scope has no place."""
        label = scope_label(scope)
        if label == "execution":
            return (agent, self._run_id) if self._run_id else None
        place = self._place(scope) if label == "custom" else ""
        return None if place is None else (postgres_name(agent, scope, place), None)

    def location(self, agent: str, scope: str) -> str | None:
        identity = self._identity(agent, scope)
        if identity is None:
            return None
        name, run = identity
        where = f"name={name!r}, " + (f"run_id={run!r}" if run else "run_id NULL")
        return f"postgres openprose.agents ({where})"

    @contextlib.contextmanager
    def _cursor(self, lock: str | None) -> Iterator[Any]:
        try:
            connection = self._connect()
        except Exception as error:  # the driver's own errors; the message has no password
            raise StateError(f"postgres: cannot connect ({type(error).__name__})") from None
        try:
            with contextlib.suppress(AttributeError):
                connection.autocommit = False  # the advisory lock lasts a transaction
            cursor = connection.cursor()
            if not self._ready:
                self._create_schema(connection, cursor)
                self._ready = True
            if lock is not None:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_id(lock),))
            try:
                yield cursor
            except BaseException:
                connection.rollback()
                raise
            else:
                connection.commit()
        finally:
            connection.close()

    @staticmethod
    def _create_schema(connection: Any, cursor: Any) -> None:
        """The tables and indexes, when one is missing.  Checked first and created one
        statement a transaction: ``CREATE INDEX IF NOT EXISTS`` locks its table even when
        the index exists, and holding those locks together with another run's writes to
        both tables deadlocked."""
        cursor.execute(
            "SELECT " + " AND ".join(f"to_regclass('{n}') IS NOT NULL" for n in _SCHEMA_OBJECTS)
        )
        row = cursor.fetchone()
        connection.commit()
        if row is not None and row[0]:
            return
        for statement in POSTGRES_SCHEMA:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_id("schema"),))
            cursor.execute(statement)
            connection.commit()

    @contextlib.contextmanager
    def transaction(self, agent: str, scope: str, *, create: bool) -> Iterator[MemoryTxn | None]:
        identity = self._identity(agent, scope)
        if identity is None:
            yield None
            return
        name, run = identity
        with self._cursor(f"agent\0{name}\0{run or ''}") as cursor:
            txn = SqlTxn(
                cursor, name, scope, schema="openprose.", marker="%s", per_run=True, run=run
            )
            if not create and txn.memory() is None and not txn.numbers():
                yield None
                return
            yield txn

    def exists(self, agent: str, scope: str) -> bool:
        with self.transaction(agent, scope, create=False) as txn:
            return txn is not None

    def read_memory(self, agent: str, scope: str) -> str | None:
        with self.transaction(agent, scope, create=False) as txn:
            return None if txn is None else txn.memory()

    def agents(self, scope: str) -> list[str]:
        label = scope_label(scope)
        if label == "custom" or (label == "execution" and not self._run_id):
            return []
        run = self._run_id if label == "execution" else None
        with self._cursor(None) as cursor:
            cursor.execute(
                "SELECT name FROM openprose.agents WHERE scope = %s "
                "AND run_id IS NOT DISTINCT FROM %s UNION SELECT agent_name "
                "FROM openprose.agent_segments WHERE run_id IS NOT DISTINCT FROM %s",
                (label, run, run),
            )
            names = [str(row[0]) for row in cursor.fetchall()]
        if label == "user":
            return sorted(n[len("__user__") :] for n in names if n.startswith("__user__"))
        return sorted(n for n in names if not n.startswith(("__user__", "__path__:")))


def _lock_id(text: str) -> int:
    # A stable bigint key of our own: hashtext() is internal to PostgreSQL and may change.
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)
