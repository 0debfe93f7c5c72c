"""The ``postgres`` state backend (spec/state/postgres.md), over psycopg 3.

All runs of a project live in one database, in the spec's ``openprose`` schema: ``run``,
``execution`` (the narration, one row per marker, append-only), ``bindings``, ``agents``,
``agent_segments`` and ``imports``, plus the journal of steps (``journal_runs``,
``journal_steps``, ``journal_commits``), which is what a resume reads.  The URL comes from
``postgres_url.find_url`` and is never shown with its password.

The tables, and the constraints the spec's keys mean but cannot be, are in
``postgres_schema``.

A run being run holds a session-level advisory lock on its store's connection: the lock
is how another process (on any host) tells a live run from one whose process died, and
what stops two processes resuming the same run.

An imported program's state is in its caller's run, as the spec says ("Import bindings:
prefix with import alias"): its bindings are named ``alias.name``, its narration rows
carry ``"import": alias``, and ``imports`` registers it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from openprose.vm import events as ev
from openprose.vm.rundir import iso, new_run_id, state_line
from openprose.vm.state.base import RunInfo, StateError, program_hash
from openprose.vm.state.journal import Journal, Transaction, info_from_row
from openprose.vm.state.postgres_schema import SCHEMA, create_schema
from openprose.vm.state.postgres_url import find_url, redact, scrub
from openprose.vm.state.store import IMPORT_NAME, JournaledStore, Replay, end_fields
from openprose.vm.values import Value, render

if TYPE_CHECKING:
    import psycopg

PREFIX = f"{SCHEMA}."
INSTALL = "pip install 'openprose[postgres]'"
CONNECT_TIMEOUT = 10  # seconds
# Advisory locks are two int4 keys; the first says "an OpenProse run" (b"op" + 1).
LOCK_CLASS = 0x6F7001
# The spec's statuses for `run` (its CHECK); our "cancelled" is its "interrupted".
# The server drops a silent client's session after about 30 + 3 * 10 seconds.
KEEPALIVE = (
    ("tcp_keepalives_idle", 30),
    ("tcp_keepalives_interval", 10),
    ("tcp_keepalives_count", 3),
)
P = ParamSpec("P")
T = TypeVar("T")
RUN_STATUS = {"completed": "completed", "failed": "failed", "cancelled": "interrupted"}

# ---------------------------------------------------------------------- connections


def _driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise StateError(f"the postgres state backend needs psycopg 3: {INSTALL}") from None
    return psycopg


def connect(url: str) -> psycopg.Connection[Any]:
    """An autocommit connection; every failure is a StateError that names the server
    without its password."""
    driver = _driver()
    try:
        connection: psycopg.Connection[Any] = driver.connect(
            url, autocommit=True, connect_timeout=CONNECT_TIMEOUT
        )
        return connection
    except driver.ProgrammingError:
        # libpq quotes the malformed part of the URL, which may be the password.
        raise StateError(f"invalid PostgreSQL URL {redact(url)}") from None
    except driver.Error as error:
        detail = scrub(_one_line(error), url)
        raise StateError(f"cannot connect to PostgreSQL at {redact(url)}: {detail}") from None


def _one_line(error: BaseException) -> str:
    """The driver's message on one line, without psycopg's "connection failed:" prefix."""
    text = "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return text.removeprefix("connection failed: ") or type(error).__name__


def transaction(connection: psycopg.Connection[Any], relaxed: bool = False) -> Transaction:
    """The journal's transaction: BEGIN ... COMMIT on an autocommit connection (a
    savepoint inside an enclosing one).  ``relaxed`` ones commit without waiting for the
    server's disk (``synchronous_commit = off``): the journal's commit entries, whose loss
    costs a rewrite on resume, never a model call (see journal.py)."""

    @contextlib.contextmanager
    def open_transaction() -> Iterator[psycopg.Cursor[Any]]:
        with connection.transaction(), connection.cursor() as cursor:
            if relaxed:
                cursor.execute("SET LOCAL synchronous_commit TO off")
            yield cursor

    return open_transaction


def lock_key(run_id: str) -> int:
    """The run's advisory lock key (the second int4 of the pair)."""
    digest = hashlib.sha256(run_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big", signed=True)


def _journal(
    connection: psycopg.Connection[Any],
    run_id: str,
    release: Callable[[psycopg.Connection[Any]], None] | None = None,
) -> Journal:
    return Journal(
        connection,
        run_id,
        transaction=transaction(connection),
        relaxed_transaction=transaction(connection, relaxed=True),
        prefix=PREFIX,
        placeholder="%s",
        real="DOUBLE PRECISION",
        release=release,
    )


def _guarded(
    method: Callable[Concatenate[PostgresStore, P], T],
) -> Callable[Concatenate[PostgresStore, P], T]:
    """A store's method whose database failures (a server gone, a connection cut) are
    StateErrors naming the server, not the driver's exceptions."""

    @functools.wraps(method)
    def guarded(store: PostgresStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(store, *args, **kwargs)
        except _driver().Error as error:
            where = store.record_rows.location or "PostgreSQL"
            raise StateError(f"run {store.run_id} in {where}: {_one_line(error)}") from None

    return guarded


def _when(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.UTC)


# ---------------------------------------------------------------------- the record


class RunRecord:
    """The spec's rows of one run (or of one program it imports, ``alias`` set), written
    on the store's own connection: the journal has its own, so a journal write from a
    session's worker thread never lands inside one of these transactions."""

    def __init__(
        self,
        connection: psycopg.Connection[Any],
        run_id: str,
        alias: str = "",
        lock: threading.Lock | None = None,
        location: str = "",
        reconnect: Callable[[], psycopg.Connection[Any]] | None = None,
    ) -> None:
        self.connection = connection
        self.run_id = run_id
        self.alias = alias
        self.reconnect = reconnect  # a connection for reading back after the store closed
        self.location = location  # the server, without the password (for messages)
        self.lock = lock or threading.Lock()
        self.frames: dict[int, int] = {}  # execution_id -> its FramePush row
        self.groups: dict[tuple[str, str, int], tuple[str, int]] = {}  # -> (id, row)
        self._group_count = 0

    def name(self, binding: str) -> str:
        return f"{self.alias}.{binding}" if self.alias else binding

    def write_binding(
        self,
        name: str,
        kind: str,
        source: str,
        value: Value,
        execution_id: int | None,
    ) -> None:
        connection = self.connection
        # One round trip (a pipeline) for BEGIN, SET, INSERT, COMMIT: over a network the
        # binding costs one latency, not four.
        with (
            self.lock,
            connection.pipeline(),
            connection.transaction(),
            connection.cursor() as cursor,
        ):
            # The narration commits asynchronously (see `_open_store`); a binding is on
            # disk before the journal says it was committed.
            cursor.execute("SET LOCAL synchronous_commit TO on")
            cursor.execute(
                "INSERT INTO openprose.bindings (name, run_id, execution_id, kind, value, "
                "source_statement) VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (name, run_id, COALESCE(execution_id, -1)) DO UPDATE SET "
                "kind = EXCLUDED.kind, value = EXCLUDED.value, "
                "source_statement = EXCLUDED.source_statement, updated_at = NOW()",
                (self.name(name), self.run_id, execution_id, kind, render(value), source),
            )

    def binding(self, name: str, execution_id: int | None = None) -> str | None:
        """A committed binding's value as its row holds it (also once the store closed)."""
        query = (
            "SELECT value FROM openprose.bindings WHERE name = %s AND run_id = %s "
            "AND COALESCE(execution_id, -1) = %s"
        )
        params = (self.name(name), self.run_id, -1 if execution_id is None else execution_id)
        if self.connection.closed and self.reconnect is not None:
            with self.reconnect() as connection:
                row = connection.execute(query, params).fetchone()
        else:
            with self.lock, self.connection.cursor() as cursor:
                row = cursor.execute(query, params).fetchone()
        return None if row is None else row[0]

    def append(
        self,
        step: str,
        text: str,
        status: str,
        metadata: Mapping[str, Any],
        *,
        ts: float,
        error: str | None = None,
        parent: int | None = None,
    ) -> int:
        """One row of ``execution``; rows are never updated (the narration is a log)."""
        index = re.match(r"\d+", step)
        meta = {"step": step, **metadata}
        if self.alias:
            meta["import"] = self.alias
        when = _when(ts)
        with self.lock, self.connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO openprose.execution (run_id, statement_index, statement_text, "
                "status, started_at, completed_at, error_message, parent_id, metadata) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb) RETURNING id",
                (
                    self.run_id,
                    int(index.group()) if index else 0,
                    text,
                    status,
                    when,
                    None if status == "executing" else when,
                    error,
                    parent,
                    json.dumps(meta, ensure_ascii=False, default=str),
                ),
            )
            row = cursor.fetchone()
        return int(row[0]) if row else 0

    def _group(self, prefix: str, event: ev.Event, new: bool) -> tuple[str, int | None]:
        """The id (``p1``, ``l2``) and row of the parallel or loop ``event`` belongs to.
        A branch's step is its parallel's plus a letter (``3`` -> ``3a``) at the same
        level: it belongs to the open group whose step is the longest prefix of its own."""
        slot = (prefix, event.step, event.level)
        if not new and slot not in self.groups:
            owners = [
                key
                for key in self.groups
                if key[0] == prefix and key[2] == event.level and event.step.startswith(key[1])
            ]
            if owners:
                slot = max(owners, key=lambda key: len(key[1]))
        if new or slot not in self.groups:
            self._group_count += 1
            self.groups[slot] = (f"{prefix}{self._group_count}", 0)
        group, row = self.groups[slot]
        return group, row or None

    def record(self, event: ev.Event) -> None:
        """The ``execution`` row of a narration event, as the spec's parallel, loop and
        error sections spell them; ``statement_text`` is the ``state.md`` marker where
        the event has one.  Events without a marker or a row in the spec are left out."""
        marker = state_line(event) or ""
        step, ts = event.step, event.ts
        if isinstance(event, ev.Position):
            self.append(step, event.statement, "executing", {"line": event.line}, ts=ts)
        elif isinstance(event, ev.Binding):
            if event.binding_kind == "input":
                return
            meta: dict[str, Any] = {"binding": self.name(event.name), "kind": event.binding_kind}
            parent = None
            if event.execution_id is not None:
                meta["execution_id"] = event.execution_id
                parent = self.frames.get(event.execution_id)
            self.append(step, marker, "completed", meta, ts=ts, parent=parent)
        elif isinstance(event, ev.ParallelEnter):
            group, _ = self._group("p", event, True)
            meta = {
                "parallel_id": group,
                "strategy": event.strategy,
                "branches": event.branches,
                "on_fail": event.on_fail,
            }
            if event.count is not None:
                meta["count"] = event.count
            row = self.append(step, marker, "executing", meta, ts=ts)
            self.groups[("p", event.step, event.level)] = (group, row)
        elif isinstance(event, ev.ParallelBranch):
            group, parent = self._group("p", event, False)
            status = {"done": "completed", "cancelled": "skipped"}.get(event.status, "failed")
            meta = {"parallel_id": group, "branch": event.branch}
            text = f"{step}→ ∥{event.branch} {event.status}"
            self.append(step, text, status, meta, ts=ts, parent=parent)
        elif isinstance(event, ev.ParallelJoin):
            group, parent = self._group("p", event, False)
            self.append(step, marker, "completed", {"parallel_id": group}, ts=ts, parent=parent)
        elif isinstance(event, ev.LoopStart):
            group, _ = self._group("l", event, True)
            meta = {"loop_id": group, "description": event.description}
            row = self.append(step, f"{step}→ loop", "executing", meta, ts=ts)
            self.groups[("l", event.step, event.level)] = (group, row)
        elif isinstance(event, ev.LoopIteration | ev.LoopExit):
            group, parent = self._group("l", event, False)
            meta = {
                "loop_id": group,
                "current_iteration": event.iteration,
                "max_iterations": event.maximum,
            }
            if isinstance(event, ev.LoopExit):
                meta["reason"] = event.reason
            self.append(step, marker, "completed", meta, ts=ts, parent=parent)
        elif isinstance(event, ev.FramePush):
            meta = {"block": event.block, "execution_id": event.execution_id}
            parent = self.frames.get(event.parent) if event.parent is not None else None
            row = self.append(step, marker, "executing", meta, ts=ts, parent=parent)
            self.frames[event.execution_id] = row
        elif isinstance(event, ev.FramePop):
            meta = {"block": event.block, "execution_id": event.execution_id}
            status = "failed" if event.failed else "completed"
            parent = self.frames.get(event.execution_id)
            self.append(step, marker, status, meta, ts=ts, parent=parent)
        elif isinstance(event, ev.Failure):
            self.append(step, marker, "failed", {}, ts=ts, error=event.message)
        elif isinstance(event, ev.Retry):
            meta = {"retry_attempt": event.attempt, "max_retries": event.maximum}
            self.append(step, marker, "failed", meta, ts=ts, error=event.error)
        elif isinstance(event, ev.ProgramEnd):
            status = str(end_fields(event)["status"])
            failed = status != "completed"
            meta = {"end": status}
            self.append(
                step,
                marker,
                "failed" if failed else "completed",
                meta,
                ts=ts,
                error=event.error or None,
            )

    def resumed(self, ts: float) -> None:
        self.append("", f"---resume {iso(ts)}", "executing", {"resume": True}, ts=ts)

    def set_status(self, status: str) -> None:
        with self.lock, self.connection.cursor() as cursor:
            cursor.execute(
                "UPDATE openprose.run SET status = %s, updated_at = NOW() WHERE id = %s",
                (RUN_STATUS.get(status, status), self.run_id),
            )


# ---------------------------------------------------------------------- the store


class PostgresStore(JournaledStore):
    state = "postgres"
    path: Path | None = None

    def __init__(
        self,
        record: RunRecord,
        journal: Journal,
        replay: Replay,
        *,
        called: bool = False,
        text: str = "",
    ) -> None:
        super().__init__(journal, replay, called=called)
        self.record_rows = record
        self.run_id = record.run_id
        self.alias = record.alias
        self._text = text

    def memory_connection(self) -> psycopg.Connection[Any]:
        """A new connection for agent memory (``vm.memory``), which closes it; a connection
        of its own because memory takes its locks in transactions of its own."""
        if self.record_rows.reconnect is None:
            raise StateError("postgres: this run's store cannot open a connection for memory")
        return self.record_rows.reconnect()

    # The shared ones, with the driver's failures as StateErrors.
    commit_binding = _guarded(JournaledStore.commit_binding)
    record = _guarded(JournaledStore.record)

    def _journal_name(self, name: str) -> str:
        return self.record_rows.name(name)

    def _write_binding(
        self, name: str, kind: str, source: str, value: Value, execution_id: int | None
    ) -> None:
        self.record_rows.write_binding(name, kind, source, value, execution_id)

    @_guarded
    def binding_text(self, name: str, execution_id: int | None = None) -> str | None:
        """The committed value of a binding as its row holds it."""
        return self.record_rows.binding(name, execution_id)

    def _narrate(self, event: ev.Event) -> None:
        self.record_rows.record(event)

    def _end(self, event: ev.ProgramEnd) -> None:
        super()._end(event)
        if not self._called:
            self.record_rows.set_status(str(end_fields(event)["status"]))

    @_guarded
    def inputs(self) -> dict[str, Value]:
        if not self._called:
            return self._journal.inputs()
        loaded = self._import_field("inputs")
        return loaded if isinstance(loaded, dict) else {}

    @_guarded
    def save_inputs(self, inputs: dict[str, Value]) -> None:
        if not self._called:
            self._journal.update_run(inputs=inputs)
            return
        rows = self.record_rows
        with rows.lock, rows.connection.cursor() as cursor:
            cursor.execute(
                "UPDATE openprose.imports SET metadata = jsonb_set(COALESCE(metadata, "
                "'{}'::jsonb), '{inputs}', %s::jsonb) WHERE alias = %s AND run_id = %s",
                (json.dumps(inputs, ensure_ascii=False, default=str), self.alias, self.run_id),
            )

    @_guarded
    def program_text(self) -> str:
        if not self._called:
            return self._journal.program_text()
        if not self._text:
            self._text = str(self._import_field("program_source") or "")
        return self._text

    def _import_field(self, field: str) -> Any:
        rows = self.record_rows
        with rows.lock, rows.connection.cursor() as cursor:
            cursor.execute(
                "SELECT metadata -> %s FROM openprose.imports WHERE alias = %s AND run_id = %s",
                (field, self.alias, self.run_id),
            )
            row = cursor.fetchone()
        return None if row is None else row[0]

    @_guarded
    def child(self, key: str, name: str, text: str, program_name: str) -> PostgresStore:
        rows = self.record_rows
        known = self._journal.committed(key, IMPORT_NAME, None)
        if known is None:
            # Killed after the call's `imports` row was written but before its name was
            # journaled: the row names the call's step key.
            known = self._import_of(key)
            if known is not None:
                self._journal.record_commit(key, IMPORT_NAME, None, known, durable=True)
        alias = known if known is not None and self._has_import(known) else None
        if alias is None:
            alias = self._new_import(self.record_rows.name(name), key, text, program_name)
            self._journal.record_commit(key, IMPORT_NAME, None, alias, durable=True)
        record = RunRecord(
            rows.connection, self.run_id, alias, rows.lock, rows.location, rows.reconnect
        )
        if known is not None and alias == known:
            record.resumed(time.time())
        return PostgresStore(record, self._journal, self._replay, called=True, text=text)

    def _import_of(self, key: str) -> str | None:
        rows = self.record_rows
        with rows.lock, rows.connection.cursor() as cursor:
            cursor.execute(
                "SELECT alias FROM openprose.imports WHERE run_id = %s AND metadata->>'key' = %s",
                (self.run_id, key),
            )
            row = cursor.fetchone()
        return str(row[0]) if row is not None else None

    def _has_import(self, alias: str) -> bool:
        rows = self.record_rows
        with rows.lock, rows.connection.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM openprose.imports WHERE alias = %s AND run_id = %s",
                (alias, self.run_id),
            )
            return cursor.fetchone() is not None

    def _new_import(self, base: str, key: str, text: str, program_name: str) -> str:
        rows = self.record_rows
        meta = json.dumps({"key": key, "program_source": text, "inputs": {}}, ensure_ascii=False)
        with rows.lock, rows.connection.cursor() as cursor:
            for n in range(1, 10_000):
                alias = base if n == 1 else f"{base}-{n}"
                cursor.execute(
                    "INSERT INTO openprose.imports (alias, run_id, source_url, fetched_at, "
                    "content_hash, metadata) VALUES (%s, %s, %s, NOW(), %s, %s::jsonb) "
                    "ON CONFLICT (alias, run_id) DO NOTHING RETURNING alias",
                    (alias, self.run_id, program_name, program_hash(text), meta),
                )
                if cursor.fetchone() is not None:
                    return alias
        raise StateError(f"run {self.run_id} calls {base!r} too many times")  # pragma: no cover

    def close(self) -> None:
        if self._called:
            return
        with contextlib.suppress(Exception):
            self.record_rows.connection.close()  # releases the run's advisory lock
        self._journal.close()


# ---------------------------------------------------------------------- the catalogue


class PostgresCatalog:
    """The runs in one PostgreSQL database (the ``openprose`` schema)."""

    state = "postgres"

    def __init__(self, url: str, origin: str = "") -> None:
        self._url = url
        self.origin = origin
        self.location = redact(url)
        self._schema_ready = False

    def __repr__(self) -> str:  # the URL's password stays out of tracebacks and logs
        return f"PostgresCatalog({self.location!r})"

    @classmethod
    def from_environment(
        cls, project_root: Path, environ: Mapping[str, str] | None = None
    ) -> PostgresCatalog:
        source = find_url(project_root, os.environ if environ is None else environ)
        return cls(source.url, source.origin)

    # -------------------------------------------------------------- connections

    def _connect(self) -> psycopg.Connection[Any]:
        connection = connect(self._url)
        if not self._schema_ready:
            try:
                create_schema(connection)
            except Exception as error:
                connection.close()
                raise self._error("cannot create the openprose schema", error) from None
            self._schema_ready = True
        return connection

    def _plain(self) -> psycopg.Connection[Any]:
        """A connection without the schema check (a bound method: its repr is the
        catalogue's, which hides the password, where a closure over the URL would not)."""
        return connect(self._url)

    def _error(self, what: str, error: BaseException) -> StateError:
        return StateError(f"{what} in {self.location}: {scrub(_one_line(error), self._url)}")

    def read_commits(self, run_id: str, reader: Callable[..., T]) -> T:
        """``reader(cursor, table, run_id, placeholder)`` over the run's journal commits
        (the accounting and context entries ``prose runs show`` reads); its errors are
        StateErrors that never show the URL's password."""
        with self._session() as connection, connection.cursor() as cursor:
            return reader(cursor, f"{SCHEMA}.journal_commits", run_id, "%s")

    @contextlib.contextmanager
    def _session(self) -> Iterator[psycopg.Connection[Any]]:
        connection = self._connect()
        try:
            yield connection
        except StateError:
            raise
        except _driver().Error as error:
            raise self._error("PostgreSQL failed", error) from None
        finally:
            connection.close()

    def _open_store(self, run_id: str) -> tuple[psycopg.Connection[Any], Journal]:
        """The two connections of a run's store, the first holding the run's lock."""
        rows = self._connect()
        try:
            with rows.cursor() as cursor:
                # The narration may trail a server crash by a fraction of a second; the
                # bindings and the journal are synchronous (see RunRecord.write_binding).
                cursor.execute("SET synchronous_commit TO off")
                # The lock must outlive its process by seconds, not by the kernel's two
                # hours of TCP keepalive, when the client's machine dies without a word.
                for setting, seconds in KEEPALIVE:
                    cursor.execute(f"SET {setting} = {seconds}")
                cursor.execute(
                    "SELECT pg_try_advisory_lock(%s, %s)", (LOCK_CLASS, lock_key(run_id))
                )
                row = cursor.fetchone()
            if not row or not row[0]:
                raise StateError(f"run {run_id} is being run by another process")
            journal = _journal(self._connect(), run_id)
        except BaseException:
            rows.close()
            raise
        return rows, journal

    # -------------------------------------------------------------- Catalog

    def create(
        self,
        program_text: str,
        program_name: str,
        inputs: dict[str, Value],
        *,
        backend: str = "",
        run_id: str | None = None,
    ) -> PostgresStore:
        for _ in range(20):
            rid = run_id or new_run_id()
            rows, journal = self._open_store(rid)
            try:
                with rows.transaction(), rows.cursor() as cursor:
                    cursor.execute(
                        "INSERT INTO openprose.run (id, program_path, program_source, status, "
                        "state_mode, metadata) VALUES (%s, %s, %s, 'running', 'postgres', "
                        "%s::jsonb) ON CONFLICT (id) DO NOTHING RETURNING id",
                        (
                            rid,
                            program_name,
                            program_text,
                            json.dumps({"program_name": program_name}, ensure_ascii=False),
                        ),
                    )
                    created = cursor.fetchone() is not None
                if created:
                    journal.start_run(
                        self.state,
                        program_name,
                        program_text,
                        program_hash(program_text),
                        inputs,
                        backend,
                    )
            except _driver().Error as error:
                rows.close()
                journal.close()
                raise self._error(f"cannot create run {rid}", error) from None
            if created:
                record = RunRecord(rows, rid, location=self.location, reconnect=self._plain)
                return PostgresStore(record, journal, Replay(False))
            rows.close()
            journal.close()
            if run_id is not None:
                raise StateError(f"run {run_id} exists already in {self.location}")
        raise StateError(f"no free run id in {self.location}")  # pragma: no cover

    def open(self, run_id: str) -> PostgresStore:
        info = self.info(run_id)
        if info.status == "running":
            raise StateError(f"run {run_id} is still running (process {info.pid} on {info.host})")
        rows, journal = self._open_store(run_id)
        try:
            journal.load()
            journal.claim()
            record = RunRecord(rows, run_id, location=self.location, reconnect=self._plain)
            record.set_status("running")
            record.resumed(time.time())
        except _driver().Error as error:
            rows.close()
            journal.close()
            raise self._error(f"cannot open run {run_id}", error) from None
        return PostgresStore(record, journal, Replay(bool(journal.steps or journal.commits)))

    def branch_journal(self, run_id: str, under: str) -> Journal:
        """The run's journal, read under one step key, without the run's lock, which
        the run holds (vm/branches.py), on a connection of this process's pool
        (postgres_pool.py): a worker executes many items, each for a short time.  The
        run made the schema before it had items."""
        from openprose.vm.state import postgres_pool

        _driver()
        connection = postgres_pool.borrow(self._url, CONNECT_TIMEOUT)
        give_back = functools.partial(postgres_pool.give_back, self._url)
        journal = _journal(connection, run_id, give_back)
        try:
            journal.load(under)
        except _driver().Error as error:
            journal.close()
            raise self._error(f"cannot open run {run_id}", error) from None
        return journal

    def branch_store(self, run_id: str, journal: Journal) -> PostgresStore:
        try:
            rows = self._connect()
        except _driver().Error as error:
            raise self._error(f"cannot open run {run_id}", error) from None
        record = RunRecord(rows, run_id, location=self.location, reconnect=self._plain)
        return PostgresStore(record, journal, Replay(False))

    def info(self, run_id: str) -> RunInfo:
        found = self._infos(run_id)
        if not found:
            raise StateError(f"no run {run_id!r} in {self.location}")
        return found[0]

    def program_text(self, run_id: str) -> str:
        with self._session() as connection, connection.cursor() as cursor:
            cursor.execute(
                "SELECT program_text FROM openprose.journal_runs WHERE run_id = %s", (run_id,)
            )
            row = cursor.fetchone()
        if row is None:
            raise StateError(f"no run {run_id!r} in {self.location}")
        return str(row[0])

    def runs(self) -> list[RunInfo]:
        return self._infos(None)

    def _infos(self, run_id: str | None) -> list[RunInfo]:
        """The summaries of one run or of all, in two queries however many runs there
        are: the rows, then the runs' locks (a run says `running` only while held)."""
        where, params = ("WHERE run_id = %s", (run_id,)) if run_id is not None else ("", ())
        with self._session() as connection, connection.cursor() as cursor:
            cursor.execute(
                f"SELECT * FROM openprose.journal_runs {where} ORDER BY run_id DESC", params
            )
            names = [column.name for column in cursor.description or ()]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            cursor.execute(
                "SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' "
                "AND classid = %s::bigint::oid AND objsubid = 2 AND granted",
                (LOCK_CLASS,),
            )
            held = {int(row[0]) for row in cursor.fetchall()}
        found = []
        for row in rows:
            info = info_from_row(row, self.location)
            if row.get("status") == "running":
                live = lock_key(row["run_id"]) % 2**32 in held  # objid is the key, unsigned
                info.status = "running" if live else "interrupted"
            found.append(info)
        return found

    def remove(self, run_id: str) -> None:
        with self._session() as connection, connection.transaction(), connection.cursor() as cursor:
            # Holding the run's lock for the transaction: no store can open it meanwhile.
            cursor.execute(
                "SELECT pg_try_advisory_xact_lock(%s, %s)", (LOCK_CLASS, lock_key(run_id))
            )
            row = cursor.fetchone()
            if not row or not row[0]:
                raise StateError(f"run {run_id} is still running")
            cursor.execute("SELECT 1 FROM openprose.journal_runs WHERE run_id = %s", (run_id,))
            if cursor.fetchone() is None:
                raise StateError(f"no run {run_id!r} in {self.location}")
            for table, column in (
                ("run", "id"),  # cascades to execution, bindings, imports
                ("agents", "run_id"),
                ("agent_segments", "run_id"),
                ("journal_steps", "run_id"),
                ("journal_commits", "run_id"),
                ("journal_runs", "run_id"),
            ):
                cursor.execute(
                    f"DELETE FROM openprose.{table} WHERE {column} = %s",
                    (run_id,),
                )
