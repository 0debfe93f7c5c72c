"""The control plane's stores of a run kept under the runs root: the run directory of
``filesystem`` (bindings/, state.md and events.jsonl, journal.db, imports/) and the
``state.db`` of ``sqlite`` (spec/state/sqlite.md, plus the journal's ``x_`` tables)."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from openprose.vm.rundir import write_atomic
from openprose.vm.state.base import StateError
from openprose.vm.state.control_types import StoreReport
from openprose.vm.state.journal import process_alive, sqlite_transaction

JOURNAL_FILE = "journal.db"
SQLITE_FILE = "state.db"
SQLITE_PREFIX = "x_"  # the journal's tables in a sqlite run's state.db (vm/state/sqlite.py)
_JOURNAL_TABLES = ("journal_steps", "journal_commits")


def _count_lines(path: Path) -> int:
    try:
        with path.open("rb") as handle:
            return sum(1 for _ in handle)
    except FileNotFoundError:
        return 0


class FileBindings:
    name = "bindings"

    def __init__(self, run_path: Path) -> None:
        self.directory = run_path / "bindings"

    def files(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.iterdir() if p.suffix == ".md" and p.is_file())

    def describe(self, include_data: bool) -> StoreReport:
        files = self.files()
        scoped = sum(1 for p in files if "__" in p.stem)
        report = StoreReport(
            self.name,
            exists=bool(files),
            counts={"bindings": len(files), "scoped": scoped},
            metadata={"path": str(self.directory)},
        )
        if include_data:
            report.data = [parse_binding(p.read_text(encoding="utf-8"), p.stem) for p in files]
        return report

    def refusal(self) -> str | None:
        return None

    def reset(self) -> None:
        for path in self.files():
            path.unlink()


def parse_binding(text: str, stem: str = "") -> dict[str, Any]:
    """A binding file of rundir.binding_file_text: name, kind, execution_id and value."""
    head, sep, value = text.partition("\n---\n\n")
    name = stem.split("__", 1)[0]
    kind, execution_id = "", None
    for line in head.splitlines():
        if line.startswith("# ") and not name:
            name = line[2:].strip()
        elif line.startswith("kind: "):
            kind = line[6:].strip()
        elif line.startswith("execution_id: "):
            with contextlib.suppress(ValueError):
                execution_id = int(line[14:])
    return {
        "name": name,
        "kind": kind,
        "execution_id": execution_id,
        "value": value.rstrip("\n") if sep else text,
    }


class FileNarration:
    name = "narration"

    def __init__(self, run_path: Path) -> None:
        self.state = run_path / "state.md"
        self.events = run_path / "events.jsonl"

    def describe(self, include_data: bool) -> StoreReport:
        markers = max(0, _count_lines(self.state) - 2)  # the title and its blank line
        events = _count_lines(self.events)
        report = StoreReport(
            self.name,
            exists=bool(markers or events),
            counts={"markers": markers, "events": events},
            metadata={"path": str(self.state)},
        )
        if include_data and self.state.is_file():
            report.data = self.state.read_text(encoding="utf-8")
        return report

    def refusal(self) -> str | None:
        return None

    def reset(self) -> None:
        if self.state.is_file():
            title = self.state.read_text(encoding="utf-8").split("\n", 1)[0]
            write_atomic(self.state, f"{title}\n\n", durable=True)
        self.events.unlink(missing_ok=True)


def _sqlite(path: Path) -> sqlite3.Connection:
    # No WAL pragma here: describing a store must not change its file.
    connection = sqlite3.connect(path, isolation_level=None, timeout=10)
    connection.execute("PRAGMA busy_timeout=10000")
    return connection


@contextlib.contextmanager
def _transaction(path: Path) -> Iterator[sqlite3.Cursor]:
    with (
        contextlib.closing(_sqlite(path)) as connection,
        sqlite_transaction(connection)() as cursor,
    ):
        yield cursor


def _tables(cursor: sqlite3.Cursor) -> set[str]:
    cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {row[0] for row in cursor.fetchall()}


def _rows(cursor: sqlite3.Cursor, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    cursor.execute(sql, tuple(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


class Journal:
    """The journal of steps of a run: ``journal.db`` (filesystem) or the journal's tables
    in ``state.db`` (sqlite).  A reset empties the run's steps and commits and its counters;
    the run's summary, program and inputs stay (a resume then starts over)."""

    name = "journal"

    def __init__(
        self, database: Path, run_id: str, legacy: Path | None = None, prefix: str = ""
    ) -> None:
        self.database = database
        self.run_id = run_id
        self.legacy = legacy  # journal.jsonl of runs made before journal.db
        self.prefix = prefix  # "x_" in a sqlite run's state.db (the spec's extension prefix)

    def describe(self, include_data: bool) -> StoreReport:
        report = StoreReport(self.name, metadata={"path": str(self.database)})
        legacy = _count_lines(self.legacy) if self.legacy else 0
        if legacy:
            report.counts["legacy_records"] = legacy
        if not self.database.is_file():
            report.exists = bool(legacy)
            return report
        with contextlib.closing(_sqlite(self.database)) as connection:
            cursor = connection.cursor()
            if not {self.prefix + t for t in _JOURNAL_TABLES} <= _tables(cursor):
                report.exists = bool(legacy)
                return report
            kinds = _rows(
                cursor,
                f"SELECT kind, COUNT(*) AS n FROM {self.prefix}journal_steps WHERE run_id = ? "
                "GROUP BY kind",
                (self.run_id,),
            )
            steps = sum(int(row["n"]) for row in kinds)
            (commits,) = cursor.execute(
                f"SELECT COUNT(*) FROM {self.prefix}journal_commits WHERE run_id = ?",
                (self.run_id,),
            ).fetchone()
            report.counts.update(steps=steps, commits=int(commits))
            report.metadata["kinds"] = {row["kind"]: int(row["n"]) for row in kinds}
            report.exists = bool(steps or commits or legacy)
            if include_data:
                report.data = _rows(
                    cursor,
                    "SELECT kind, key, hash, error, input_tokens, output_tokens, cost "
                    f"FROM {self.prefix}journal_steps WHERE run_id = ? ORDER BY recorded_at",
                    (self.run_id,),
                )
        return report

    def refusal(self) -> str | None:
        return None

    def reset(self) -> None:
        if self.database.is_file():
            with _transaction(self.database) as cursor:
                tables = _tables(cursor)
                for table in (self.prefix + t for t in _JOURNAL_TABLES):
                    if table in tables:
                        cursor.execute(f"DELETE FROM {table} WHERE run_id = ?", (self.run_id,))
                if f"{self.prefix}journal_runs" in tables:
                    cursor.execute(
                        f"UPDATE {self.prefix}journal_runs SET steps = 0, sessions = 0, "
                        "input_tokens = 0, output_tokens = 0, cost = 0, error = '', "
                        "failed_statement = '', "
                        "ended_at = NULL, status = 'interrupted' WHERE run_id = ?",
                        (self.run_id,),
                    )
        if self.legacy is not None:
            self.legacy.unlink(missing_ok=True)


class Tree:
    """A directory of a run that belongs to one store whole (``agents/``, ``imports/``)."""

    def __init__(self, name: str, directory: Path, unit: str, *, files: bool = False) -> None:
        self.name = name
        self.directory = directory
        self.unit = unit
        self.files = files  # its entries are files (attachments), not directories

    def entries(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.iterdir() if p.is_file() == self.files)

    def describe(self, include_data: bool) -> StoreReport:
        entries = self.entries()
        report = StoreReport(
            self.name,
            exists=bool(entries),
            counts={self.unit: len(entries)},
            metadata={"path": str(self.directory), "names": [p.name for p in entries]},
        )
        if include_data:
            report.data = [p.name for p in entries]
        return report

    def refusal(self) -> str | None:
        return None

    def reset(self) -> None:
        if self.directory.is_dir():
            shutil.rmtree(self.directory)


class Combined:
    """One store kept in two places (a table and a directory of a sqlite run)."""

    def __init__(self, name: str, *parts: Any) -> None:
        self.name = name
        self.parts = parts

    def describe(self, include_data: bool) -> StoreReport:
        report = StoreReport(self.name, metadata={})
        data: dict[str, Any] = {}
        for part in self.parts:
            found = part.describe(include_data)
            report.exists = report.exists or found.exists
            for key, count in found.counts.items():
                report.counts[key] = report.counts.get(key, 0) + count
            report.metadata.setdefault("path", found.metadata.get("path"))
            if include_data:
                data[type(part).__name__.lower()] = found.data
        if include_data:
            report.data = data
        return report

    def refusal(self) -> str | None:
        return None

    def reset(self) -> None:
        for part in self.parts:
            part.reset()


class SqliteTables:
    """One store of a run's ``state.db`` (spec/state/sqlite.md): whole tables, since the
    database holds that one run."""

    def __init__(self, name: str, database: Path, tables: Sequence[str]) -> None:
        self.name = name
        self.database = database
        self.tables = tuple(tables)

    def describe(self, include_data: bool) -> StoreReport:
        report = StoreReport(self.name, metadata={"path": str(self.database)})
        if not self.database.is_file():
            return report
        with contextlib.closing(_sqlite(self.database)) as connection:
            cursor = connection.cursor()
            present = _tables(cursor)
            data: dict[str, Any] = {}
            for table in self.tables:
                if table not in present:
                    continue
                (count,) = cursor.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
                report.counts[table] = int(count)
                if include_data:
                    data[table] = _rows(cursor, f"SELECT * FROM {table}")
        report.exists = any(report.counts.values())
        if include_data:
            report.data = data
        return report

    def refusal(self) -> str | None:
        return None

    def reset(self) -> None:
        if not self.database.is_file():
            return
        with _transaction(self.database) as cursor:
            present = _tables(cursor)
            # The run's own summary row stays (a reset keeps the run).
            for table in self.tables:
                if table in present and table != "run":
                    cursor.execute(f"DELETE FROM {table}")


class Running:
    """Refuses every reset of a run whose process still runs (its state is in use)."""

    def __init__(self, run_id: str, info: Callable[[], Any]) -> None:
        self.run_id = run_id
        self.info = info

    def refusal(self) -> str | None:
        try:
            info = self.info()
        except (StateError, OSError, sqlite3.Error):
            return None
        if info is not None and info.status == "running" and process_alive(info.pid, info.host):
            return f"run {self.run_id} is still running (process {info.pid}); stop it first"
        return None


def journal_info(database: Path, run_id: str, prefix: str = "") -> Any:
    from openprose.vm.state.journal import info_from_row

    if not database.is_file():
        return None
    with contextlib.closing(_sqlite(database)) as connection:
        cursor = connection.cursor()
        if f"{prefix}journal_runs" not in _tables(cursor):
            return None
        rows = _rows(cursor, f"SELECT * FROM {prefix}journal_runs WHERE run_id = ?", (run_id,))
    return info_from_row(rows[0]) if rows else None
