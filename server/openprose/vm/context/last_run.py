"""The last run of a program, for the editor: each statement's tokens, cost and budgets.

The editor shows, beside a session, what it took the last time the program ran (issue 11,
"in the editor").  This reads the project's runs as ``prose runs`` finds them (the runs
root is ``.prose/runs`` in the nearest ancestor holding a ``.prose`` directory), picks the
newest run of the program by its file name, and groups the run's ``@account`` entries
(``vm/accounting.py``) and ``@context:session`` budgets (``record.py``) by the line of the
statement that made them.  Only the ``filesystem`` and ``sqlite`` runs are read: a
``postgres`` run lives in a server the editor would have to be configured to reach.

It is asked on every hover and inlay request, so it must be cheap and quiet: the journal
is opened read-only with a short busy timeout, what was read is kept until the journal's
files change, and any failure (a journal locked, half written, of another version) is
``None``: no figures rather than an error in the editor.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from openprose.vm.accounting import Entry, Tally, entries_from
from openprose.vm.context.record import SessionBudget, budgets_from

PROJECT_MARKER = ".prose"
# The journal of each local state backend in a run directory, and its tables' prefix
# (vm/state/control_local.py: JOURNAL_FILE, SQLITE_FILE, SQLITE_PREFIX).
JOURNALS = (("filesystem", "journal.db", ""), ("sqlite", "state.db", "x_"))
# A reader waits this long for a writer's lock; in WAL mode readers are rarely blocked.
BUSY_TIMEOUT = 0.2
READ_CACHE_SIZE = 32  # journals whose figures are kept (one per program asked about)


@dataclass(frozen=True)
class StatementRun:
    """What one statement of the program took in the run (every call and attempt)."""

    line: int  # 1-based, as journaled
    statement: str  # its first line, as journaled
    tally: Tally = field(default_factory=Tally)
    budgets: tuple[SessionBudget, ...] = ()  # in the order written: the last is the latest


@dataclass(frozen=True)
class LastRun:
    run_id: str
    started_at: float  # seconds since the epoch
    state: str  # filesystem or sqlite
    program: str  # the program's file name
    statements: dict[int, StatementRun]  # by line
    agents: dict[str, Tally]  # by agent name ("" for sessions without one)


@dataclass(frozen=True)
class _Header:
    run_id: str
    state: str
    program: str
    started_at: float
    journal: Path
    prefix: str


_lock = threading.Lock()
UNREADABLE = _Header("", "", "", 0.0, Path(), "")  # a run whose journal could not be read
# A run directory's header never changes once published (program and start are written
# when the run is made), so it is read once per directory.
_headers: dict[Path, _Header] = {}
# The newest run of each program, per runs root, while the root's listing is unchanged.
_newest: dict[Path, tuple[int, dict[str, _Header]]] = {}
# What a journal held, while its files are unchanged.
_read: dict[tuple[Path, str, str], tuple[tuple[int, ...], LastRun | None]] = {}


def project_root(program: Path) -> Path:
    """The nearest ancestor of ``program`` holding a ``.prose`` directory, else its folder."""
    directory = program.parent
    for candidate in (directory, *directory.parents):
        if (candidate / PROJECT_MARKER).is_dir():
            return candidate
    return directory


def last_run(program: Path) -> LastRun | None:
    """The newest run of ``program`` (an absolute file path) in its project, with its
    statements' figures; None when there is none or it cannot be read."""
    try:
        root = project_root(program) / PROJECT_MARKER / "runs"
        header = _newest_runs(root).get(program.name)
        if header is None:
            return None
        return _figures(header)
    except Exception:  # the editor asks: a failure is no figures, never an error
        return None


def clear_cache() -> None:
    with _lock:
        _headers.clear()
        _newest.clear()
        _read.clear()


def _newest_runs(root: Path) -> dict[str, _Header]:
    try:
        stamp = root.stat().st_mtime_ns
    except OSError:
        return {}
    with _lock:
        cached = _newest.get(root)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    newest: dict[str, _Header] = {}
    complete = True
    for directory in _run_directories(root):
        header = _header(directory)
        if header is UNREADABLE:
            complete = False
            continue
        if header is None:
            continue
        best = newest.get(header.program)
        if best is None or (header.started_at, header.run_id) > (best.started_at, best.run_id):
            newest[header.program] = header
    if complete:  # an unreadable run may read next time: nothing cached without it
        with _lock:
            _newest[root] = (stamp, newest)
    return newest


def _run_directories(root: Path) -> Iterator[Path]:
    try:
        entries = list(root.iterdir())
    except OSError:
        return
    for entry in entries:
        # A run being made is in a hidden staging directory until it is published.
        if not entry.name.startswith("."):
            yield entry


def _header(directory: Path) -> _Header | None:
    """The run's program and start; None when the directory is no run of a local state
    backend (an in-context run's, say), ``UNREADABLE`` when its journal cannot be read."""
    with _lock:
        known = _headers.get(directory)
    if known is not None:
        return known
    for state, name, prefix in JOURNALS:
        journal = directory / name
        if not journal.is_file():
            continue
        try:
            with _connection(journal) as connection:
                row = connection.execute(
                    f"SELECT program_name, started_at FROM {prefix}journal_runs WHERE run_id = ?",
                    (directory.name,),
                ).fetchone()
        except (sqlite3.Error, OSError):
            return UNREADABLE
        if row is None:
            return UNREADABLE
        header = _Header(directory.name, state, str(row[0]), float(row[1] or 0), journal, prefix)
        with _lock:
            _headers[directory] = header
        return header
    return None  # runs are published whole (a rename): this one will not gain a journal


@contextlib.contextmanager
def _connection(path: Path) -> Iterator[sqlite3.Connection]:
    # Read-only: reading must not checkpoint, create or otherwise change a run's journal.
    connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT)
    try:
        yield connection
    finally:
        connection.close()


def _stamp(journal: Path) -> tuple[int, ...]:
    """What changes when the journal does: its file's and its write-ahead log's times and
    sizes (a WAL database takes its writes in the log until a checkpoint)."""
    parts: list[int] = []
    for path in (journal, journal.with_name(journal.name + "-wal")):
        try:
            status = path.stat()
        except OSError:
            parts.extend((0, 0))
            continue
        parts.extend((status.st_mtime_ns, status.st_size))
    return tuple(parts)


def _figures(header: _Header) -> LastRun | None:
    key = (header.journal, header.run_id, header.program)
    stamp = _stamp(header.journal)
    with _lock:
        cached = _read.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        with _connection(header.journal) as connection:
            cursor = connection.cursor()
            table = f"{header.prefix}journal_commits"
            entries = entries_from(cursor, table, header.run_id)
            budgets = budgets_from(cursor, table, header.run_id)
    except (sqlite3.Error, OSError):
        return None  # not cached: a locked journal may read next time
    found = _grouped(header, entries, budgets)
    with _lock:
        if len(_read) >= READ_CACHE_SIZE:
            _read.clear()  # older runs' figures: the newest is read again on the next ask
        _read[key] = (stamp, found)
    return found


def _statement_of(
    figure: Entry | SessionBudget, program: str, statements: dict[int, StatementRun]
) -> StatementRun | None:
    """The figures of the statement ``figure`` was made by, found in ``statements`` or added to
    them; None when that statement is not one of ``program``'s lines."""
    if figure.program != program or figure.line <= 0:
        return None
    found = statements.get(figure.line)
    if found is None:
        found = statements[figure.line] = StatementRun(figure.line, figure.statement)
    return found


def _grouped(header: _Header, entries: list[Entry], budgets: list[SessionBudget]) -> LastRun:
    """The run's figures by statement line and by agent, of this program only: an imported
    program's calls are in the same journal, named by their own program."""
    statements: dict[int, StatementRun] = {}
    agents: dict[str, Tally] = {}
    for entry in entries:
        found = _statement_of(entry, header.program, statements)
        if found is None:
            continue
        found.tally.add(entry.usage, entry.cost)
        if entry.kind == "session":
            agents.setdefault(entry.agent, Tally()).add(entry.usage, entry.cost)
    for budget in budgets:
        found = _statement_of(budget, header.program, statements)
        if found is None:
            continue
        statements[budget.line] = StatementRun(
            found.line, found.statement, found.tally, (*found.budgets, budget)
        )
    return LastRun(
        header.run_id, header.started_at, header.state, header.program, statements, agents
    )
