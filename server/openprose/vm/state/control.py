"""The state control plane (seed 003): describe, reset and compact what state exists.

A target is one run (its stores: ``bindings``, ``narration``, ``journal``, ``agents`` (its
run-scoped agent memory) and ``imports``), one persistent agent (its memory in the project
and user scopes), or, for a reset only, everything of the project.  Every operation answers
a ``StateReport``: what each store holds, what was cleared or compacted, what was asked
for and does not exist, and the errors of single stores (one broken store never hides the
others).

A reset is done precisely or not at all: a store that cannot clear exactly the target's
state (a run still running, a database shared with other projects) refuses, and the refusal
is in ``errors``; nothing wider is ever cleared instead.  A reset of a run clears its state
but keeps the run itself (its program, inputs and summary): resumed, it starts over.
``prose runs rm`` removes a run.

The store layouts read here are the spec's: the run directory of ``filesystem``, the
``state.db`` of ``sqlite`` (spec/state/sqlite.md, plus the journal's tables), and the
memory directories and ``agents.db`` files of persistent agents.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from openprose.vm.rundir import write_atomic
from openprose.vm.state.base import StateError
from openprose.vm.state.journal import process_alive

if TYPE_CHECKING:
    from openprose.vm.memory import AgentMemories

OPERATIONS = ("describe", "reset", "compact")
STRATEGIES = ("recent", "tokens")
RUN_STORES = ("bindings", "narration", "journal", "agents", "imports")
JOURNAL_FILE = "journal.db"
SQLITE_FILE = "state.db"
AGENTS_DB = "agents.db"
SQLITE_PREFIX = "x_"  # the journal's tables in a sqlite run's state.db (vm/state/sqlite.py)
_JOURNAL_TABLES = ("journal_steps", "journal_commits")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


# ---------------------------------------------------------------------- the report


@dataclass
class StoreReport:
    name: str
    enabled: bool = True
    exists: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    data: Any = None


@dataclass
class StoreError:
    store: str
    message: str


@dataclass
class StateReport:
    """The seed's ``StateOperationResult``; the target is ``run_id`` or ``agent`` (both
    None: the whole project)."""

    operation: str
    run_id: str | None = None
    agent: str | None = None
    stores: list[StoreReport] = field(default_factory=list)
    cleared: list[str] = field(default_factory=list)
    compacted: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    errors: list[StoreError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def render(self) -> str:
        """The report as text for a terminal (no data: that is for ``--json``)."""
        target = (
            f"run {self.run_id}"
            if self.run_id
            else f"agent {self.agent}"
            if self.agent
            else "the project"
        )
        lines = [f"{self.operation} {target}"]
        for store in self.stores:
            if not store.enabled:
                state = "not enabled"
            elif not store.exists:
                state = "empty"
            else:
                state = ", ".join(f"{n} {k}" for k, n in store.counts.items()) or "present"
            where = store.metadata.get("path") or store.metadata.get("location")
            suffix = f"  ({where})" if where else ""
            lines.append(f"  {store.name:<22} {state}{suffix}")
            if isinstance(store.data, str):
                lines.extend("    " + line for line in store.data.splitlines())
            elif store.data:
                lines.extend(f"    {_one_line(item)}" for item in _items(store.data))
        for title, names in (
            ("cleared", self.cleared),
            ("compacted", self.compacted),
            ("missing", self.missing),
        ):
            if names:
                lines.append(f"{title}: {', '.join(names)}")
        lines.extend(f"error: {error.store}: {error.message}" for error in self.errors)
        return "\n".join(lines)


def _items(data: Any) -> list[Any]:
    if isinstance(data, dict):
        return [f"{k}: {_one_line(v)}" for k, v in data.items()]
    return list(data) if isinstance(data, list) else [data]


def _one_line(value: Any, width: int = 100) -> str:
    if isinstance(value, dict):
        value = ", ".join(f"{k}={v}" for k, v in value.items())
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


# ---------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    """What an operation is about, and where the project's state is.  ``states``: the
    backends a run is looked for in (default filesystem and sqlite, which live under
    ``runs_root``); ``scopes``: the agent memory scopes (project, user)."""

    runs_root: Path
    run_id: str | None = None
    agent: str | None = None
    all: bool = False
    project_root: Path | None = None
    home: Path | None = None
    states: tuple[str, ...] = ("filesystem", "sqlite")
    scopes: tuple[str, ...] = ("project", "user")

    @property
    def project(self) -> Path:
        return self.project_root if self.project_root is not None else self.runs_root.parent.parent

    @property
    def user_home(self) -> Path:
        return self.home if self.home is not None else Path.home()

    def checked(self) -> Target:
        if sum((self.run_id is not None, self.agent is not None, self.all)) > 1:
            raise StateError("give one target: a run id, an agent, or everything")
        if self.run_id is not None and not _is_run_id(self.run_id):
            raise StateError(f"{self.run_id!r} is not a run id")
        if self.agent is not None and not _NAME.match(self.agent):
            raise StateError(f"{self.agent!r} is not an agent name")
        return self


def _is_run_id(run_id: str) -> bool:
    return bool(run_id) and "/" not in run_id and "\\" not in run_id and run_id not in (".", "..")


# ---------------------------------------------------------------------- stores


class Store(Protocol):
    name: str

    def describe(self, include_data: bool) -> StoreReport: ...

    def refusal(self) -> str | None:
        """Why this store cannot be reset precisely now (None: it can)."""
        ...

    def reset(self) -> None: ...


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
    connection = _sqlite(path)
    try:
        cursor = connection.cursor()
        cursor.execute("BEGIN IMMEDIATE")
        try:
            yield cursor
        except BaseException:
            connection.rollback()
            raise
        cursor.execute("COMMIT")
    finally:
        connection.close()


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


# ---------------------------------------------------------------------- agent memory


class AgentMemory:
    """One agent's memory in one scope and one layout (files, ``agents.db``, PostgreSQL);
    ``vm/memory.py`` reads, resets and compacts it under the agent's lock."""

    def __init__(self, name: str, memories: AgentMemories, agent: str, scope: str) -> None:
        self.name = name
        self.memories = memories
        self.agent = agent
        self.scope = scope

    def describe(self, include_data: bool) -> StoreReport:
        found = self.memories.describe(self.agent, self.scope, include_data)
        return StoreReport(
            self.name,
            exists=bool(found["exists"]),
            counts=dict(found["items"]),
            metadata={
                "scope": self.scope,
                "layout": found["store"],
                "location": found["location"],
                **found["metadata"],
            },
            data=found.get("data"),
        )

    def refusal(self) -> str | None:
        return None

    def reset(self) -> None:
        self.memories.reset(self.agent, self.scope)

    def compact(
        self, strategy: str, max_messages: int | None, max_tokens: int | None
    ) -> dict[str, Any]:
        found = self.memories.compact(self.agent, self.scope, strategy, max_messages, max_tokens)
        return {
            "before": found["before"]["segments"],
            "after": found["after"]["segments"],
            "folded": found["compacted"],
            "kept": found["kept"],
            "limit": found["limit"],
        }


class RunAgents:
    """The memory of a run's agents (``persist: true``), every agent together, in each
    layout the run may keep it in."""

    name = "agents"

    def __init__(self, *layouts: AgentMemories) -> None:
        self.layouts = layouts

    def members(self) -> list[AgentMemory]:
        found = []
        for layout in self.layouts:
            suffix = (
                "" if len(self.layouts) == 1 or layout.state == "filesystem" else f":{layout.state}"
            )
            found += [
                AgentMemory(f"agents/{agent}{suffix}", layout, agent, "true")
                for agent in layout.agents("true")
            ]
        return found

    def describe(self, include_data: bool) -> StoreReport:
        members = [(m.name, m.describe(include_data)) for m in self.members()]
        report = StoreReport(
            self.name,
            exists=any(found.exists for _, found in members),
            counts={
                "agents": len(members),
                "segments": sum(found.counts.get("segments", 0) for _, found in members),
            },
            metadata={"agents": [name.split("/", 1)[1] for name, _ in members]},
        )
        if members:
            report.metadata["location"] = members[0][1].metadata.get("location")
        if include_data:
            report.data = {name.split("/", 1)[1]: found.data for name, found in members}
        return report

    def refusal(self) -> str | None:
        return None

    def reset(self) -> None:
        for member in self.members():
            member.reset()


def memories(
    state: str, run_path: Path | None, target: Target, run_id: str | None = None
) -> AgentMemories:
    from openprose.vm.memory import AgentMemories

    connect = _postgres_connect(target) if state == "postgres" else None
    return AgentMemories(
        run_path, target.project, target.user_home, state=state, run_id=run_id, connect=connect
    )


def _postgres_connect(target: Target) -> Callable[[], Any]:
    from openprose.vm.state.control_postgres import connector

    return connector(target.project)[0]


# ---------------------------------------------------------------------- finding stores


@dataclass
class RunPlace:
    """Where one run's state is: its backend and its directory."""

    run_id: str
    state: str
    path: Path


def find_run(target: Target) -> RunPlace:
    """The run ``target.run_id`` in the first of ``target.states`` that has it; raises
    StateError (naming a close run id when there is one)."""
    run_id = target.run_id or ""
    path = target.runs_root / run_id
    for state in target.states:
        if state == "filesystem" and (
            (path / JOURNAL_FILE).is_file() or (path / "state.md").is_file()
        ):
            return RunPlace(run_id, state, path)
        if state == "sqlite" and (path / SQLITE_FILE).is_file():
            return RunPlace(run_id, state, path)
        if state == "postgres":
            from openprose.vm.state import control_postgres

            if control_postgres.has_run(target, run_id):
                return RunPlace(run_id, state, path)
    if target.states == ("in-context",):
        raise StateError(
            "in-context state keeps nothing outside the conversation that ran it: "
            "there is no run state to manage"
        )
    known = known_runs(target)
    where: Any = target.runs_root
    if "postgres" in target.states:
        from openprose.vm.state import control_postgres

        known = [*known, *control_postgres.run_ids(target)]
        where = "PostgreSQL" if target.states == ("postgres",) else where
    raise StateError(no_run_message(run_id, where, known))


def known_runs(target: Target) -> list[str]:
    if not target.runs_root.is_dir():
        return []
    names = []
    for entry in target.runs_root.iterdir():
        if (
            any((entry / f).is_file() for f in (JOURNAL_FILE, SQLITE_FILE, "state.md"))
            and entry.name != "imports"
        ):
            names.append(entry.name)
    return sorted(names, reverse=True)


def no_run_message(run_id: str, root: Path | str, known: Sequence[str]) -> str:
    message = f"no run {run_id!r} in {root}"
    near = suggest(run_id, known)
    return f"{message}; did you mean {near!r}?" if near else message


def suggest(word: str, known: Sequence[str]) -> str | None:
    """A known run id close to ``word``: the only one it starts or ends, or the closest
    by spelling."""
    import difflib

    if not word:
        return None
    partial = [k for k in known if k.startswith(word) or k.endswith(word)]
    if len(partial) == 1:
        return partial[0]
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.75)
    return close[0] if close else None


def run_stores(place: RunPlace, target: Target) -> tuple[list[Any], list[Any]]:
    """The stores of one run, and what refuses its reset."""
    path = place.path
    if place.state == "postgres":
        from openprose.vm.state import control_postgres

        agents = RunAgents(memories("postgres", None, target, place.run_id))
        return control_postgres.run_stores(place.run_id, target, agents)
    layouts = [memories(place.state, path, target, place.run_id)]
    if place.state != "filesystem":  # agents kept in files by a run of an earlier version
        layouts.append(memories("filesystem", path, target, place.run_id))
    agents = RunAgents(*layouts)
    if place.state == "sqlite":
        database = path / SQLITE_FILE
        stores: list[Any] = [
            Combined(
                "bindings",
                SqliteTables("bindings", database, ("bindings",)),
                Tree("bindings", path / "attachments", "attachments", files=True),
            ),
            SqliteTables("narration", database, ("execution",)),
            Journal(database, place.run_id, prefix=SQLITE_PREFIX),
            agents,
            Combined(
                "imports",
                SqliteTables("imports", database, ("imports",)),
                Tree("imports", path / "imports", "programs"),
            ),
        ]
        guard = Running(place.run_id, lambda: _journal_info(database, place.run_id, SQLITE_PREFIX))
        return stores, [guard]
    journal = path / JOURNAL_FILE
    stores = [
        FileBindings(path),
        FileNarration(path),
        Journal(journal, place.run_id, path / "journal.jsonl"),
        agents,
        Tree("imports", path / "imports", "programs"),
    ]
    return stores, [Running(place.run_id, lambda: _journal_info(journal, place.run_id))]


def binding_list(place: RunPlace, target: Target) -> list[dict[str, Any]]:
    """A run's bindings (name, kind, execution_id, value), whatever keeps them."""
    stores, _ = run_stores(place, target)
    data = next(s for s in stores if s.name == "bindings").describe(True).data
    rows = data if isinstance(data, list) else _table_rows(data, "bindings")
    fields = ("name", "kind", "execution_id", "value")
    return [{name: row.get(name) for name in fields} for row in rows]


def _table_rows(data: Any, table: str) -> list[dict[str, Any]]:
    """The rows of ``table`` in a store's data (nested under its parts for a sqlite run)."""
    if not isinstance(data, dict):
        return []
    if isinstance(data.get(table), list):
        return list(data[table])
    for part in data.values():
        rows = _table_rows(part, table)
        if rows:
            return rows
    return []


def _journal_info(database: Path, run_id: str, prefix: str = "") -> Any:
    from openprose.vm.state.journal import info_from_row

    if not database.is_file():
        return None
    with contextlib.closing(_sqlite(database)) as connection:
        cursor = connection.cursor()
        if f"{prefix}journal_runs" not in _tables(cursor):
            return None
        rows = _rows(cursor, f"SELECT * FROM {prefix}journal_runs WHERE run_id = ?", (run_id,))
    return info_from_row(rows[0]) if rows else None


def agent_stores(target: Target) -> list[Any]:
    agent = target.agent or ""
    stores: list[Any] = []
    for scope in target.scopes:
        for layout in memory_layouts(target):
            suffix = "" if layout == "filesystem" else f":{layout}"
            stores.append(
                AgentMemory(f"memory:{scope}{suffix}", memories(layout, None, target), agent, scope)
            )
    return stores


def memory_layouts(target: Target) -> list[str]:
    """Where agent memory outside runs may be kept: files and ``agents.db`` always,
    PostgreSQL when it is the chosen backend."""
    return ["filesystem", "sqlite", *(["postgres"] if "postgres" in target.states else [])]


def _store_failure(store: Any, error: BaseException) -> StoreError:
    if isinstance(error, sqlite3.Error):
        message = f"cannot read {getattr(store, 'database', 'its database')}: {error}"
    elif isinstance(error, OSError):
        message = f"{error.strerror or error}: {error.filename or ''}".rstrip(": ")
    else:
        message = str(error)
    return StoreError(store.name, message)


_BASE_FAILURES = (StateError, OSError, sqlite3.Error, UnicodeDecodeError, ValueError)


def _failures() -> tuple[type[BaseException], ...]:
    """What a store may fail with: the database drivers' errors too (psycopg's only when it
    was loaded: importing it for every command would cost more than the command)."""
    psycopg = sys.modules.get("psycopg")
    return (*_BASE_FAILURES, psycopg.Error) if psycopg is not None else _BASE_FAILURES


# ---------------------------------------------------------------------- operations


def describe(target: Target, include_data: bool = False) -> StateReport:
    target = target.checked()
    if target.all:
        raise StateError("describe takes a run id, an agent, or nothing (the whole project)")
    report = StateReport("describe", target.run_id, target.agent)
    if target.run_id is None and target.agent is None:
        return _describe_project(target, report, include_data)
    stores = _stores(target)
    for store in stores:
        _describe_into(report, store, include_data)
    return report


def _describe_into(report: StateReport, store: Any, include_data: bool) -> StoreReport | None:
    try:
        found: StoreReport = store.describe(include_data)
    except _failures() as error:
        report.errors.append(_store_failure(store, error))
        report.stores.append(StoreReport(store.name, metadata={"error": True}))
        return None
    report.stores.append(found)
    if not found.exists:
        report.missing.append(found.name)
    return found


def _describe_project(target: Target, report: StateReport, include_data: bool) -> StateReport:
    runs = StoreReport("runs", metadata={"path": str(target.runs_root)})
    ids = known_runs(target)
    by_state: dict[str, int] = {}
    for run_id in ids:
        path = target.runs_root / run_id
        state = "sqlite" if (path / SQLITE_FILE).is_file() else "filesystem"
        by_state[state] = by_state.get(state, 0) + 1
    runs.counts = {"runs": len(ids), **by_state}
    runs.exists = bool(ids)
    if include_data:
        runs.data = ids
    report.stores.append(runs)
    if not ids:
        report.missing.append("runs")
    for scope in target.scopes:
        names: set[str] = set()
        places = []
        for layout in memory_layouts(target):
            store = memories(layout, None, target)
            try:
                names.update(store.agents(scope))
            except _failures() as error:
                report.errors.append(StoreError(f"memory:{scope}", str(error)))
            places.append(store.store.location("*", scope))
        found = StoreReport(
            f"memory:{scope}",
            exists=bool(names),
            counts={"agents": len(names)},
            metadata={"agents": sorted(names), "locations": places},
        )
        report.stores.append(found)
        if not names:
            report.missing.append(found.name)
    return report


def _stores(target: Target) -> list[Any]:
    if target.run_id is not None:
        stores, _ = run_stores(find_run(target), target)
        return stores
    return agent_stores(target)


def reset(target: Target) -> StateReport:
    """Clear the target's state, store by store; nothing at all when one store refuses."""
    target = target.checked()
    report = StateReport("reset", target.run_id, target.agent)
    if target.all:
        return _reset_all(target, report)
    if target.run_id is None and target.agent is None:
        raise StateError("reset needs a target: a run id, --agent NAME or --all")
    if target.run_id is not None:
        stores, guards = run_stores(find_run(target), target)
    else:
        stores, guards = agent_stores(target), []
    _reset_stores(report, stores, guards)
    return report


def _reset_stores(
    report: StateReport, stores: Sequence[Any], guards: Sequence[Any], prefix: str = ""
) -> None:
    present = []
    for store in stores:
        found = _describe_into(report, store, False)
        if found is not None and found.exists:
            present.append(store)
    refusals = [(g, g.refusal()) for g in (*guards, *present)]
    refused = [(g, why) for g, why in refusals if why]
    if refused or report.errors:
        for guard, why in refused:
            report.errors.append(StoreError(getattr(guard, "name", "run"), str(why)))
        report.errors.append(StoreError(prefix + "reset", "refused: nothing was cleared"))
        return
    for store in present:
        try:
            store.reset()
        except _failures() as error:
            report.errors.append(_store_failure(store, error))
        else:
            report.cleared.append(prefix + store.name)


def _reset_all(target: Target, report: StateReport) -> StateReport:
    """Every run under the runs root (of the chosen backends) and the project's agent
    memory; refused whole when any run is running or any store is unreadable (a partial
    reset of everything is not done).  User-scope memory is never part of it: it is shared
    with other projects."""
    if any(state not in ("filesystem", "sqlite") for state in target.states):
        others = [s for s in target.states if s not in ("filesystem", "sqlite")]
        report.errors.append(
            StoreError(
                ",".join(others),
                "a reset of everything is not done on a shared database or on in-context "
                "state: reset its runs one by one",
            )
        )
        return report
    plans: list[tuple[str, list[Any], list[Any]]] = []
    for run_id in known_runs(target):
        try:
            place = find_run(replace(target, run_id=run_id, all=False))
        except StateError:
            continue  # a run of a backend not chosen
        stores, guards = run_stores(place, target)
        plans.append((f"{run_id}/", stores, guards))
    for layout in ("filesystem", "sqlite"):
        store = memories(layout, None, target)
        suffix = "" if layout == "filesystem" else f":{layout}"
        try:
            names = store.agents("project")
        except _failures() as error:
            plans.append(
                (f"memory:project{suffix}/", [Broken(f"memory:project{suffix}", error)], [])
            )
            continue
        for name in names:
            member = AgentMemory(f"memory:project{suffix}", store, name, "project")
            plans.append((f"agent {name}/", [member], []))
    # First every check, then every reset: one refusal leaves everything as it was.
    probe = StateReport("reset")
    present: list[tuple[str, Any]] = []
    for prefix, stores, guards in plans:
        for store in stores:
            found = _describe_into(probe, store, False)
            if found is not None and found.exists:
                present.append((prefix, store))
        for guard in (*guards, *[s for p, s in present if p == prefix]):
            why = guard.refusal()
            if why:
                probe.errors.append(StoreError(prefix + getattr(guard, "name", "run"), why))
    report.stores = [StoreReport(p + s.name, exists=True) for p, s in present]
    if probe.errors:
        report.errors = [*probe.errors, StoreError("reset", "refused: nothing was cleared")]
        return report
    if not present:
        report.missing.append("runs")
    for prefix, store in present:
        try:
            store.reset()
        except _failures() as error:
            failure = _store_failure(store, error)
            report.errors.append(StoreError(prefix + failure.store, failure.message))
        else:
            report.cleared.append(prefix + store.name)
    return report


class Broken:
    """A store that could not even be listed: its error, reported by describe."""

    def __init__(self, name: str, error: BaseException) -> None:
        self.name = name
        self.error = error

    def describe(self, include_data: bool) -> StoreReport:
        raise self.error

    def refusal(self) -> str | None:
        return str(self.error)

    def reset(self) -> None:
        raise self.error


def compact(
    target: Target,
    strategy: str,
    max_messages: int | None = None,
    max_tokens: int | None = None,
) -> StateReport:
    """Compact agent memory: the run-scoped agents of a run, or one agent's project and
    user memory.  The journal, bindings and narration are never compacted: a resume needs
    them exact."""
    target = target.checked()
    if strategy not in STRATEGIES:
        raise StateError(f"unknown strategy {strategy!r} (one of {', '.join(STRATEGIES)})")
    for name, value in (("--max-messages", max_messages), ("--max-tokens", max_tokens)):
        if value is not None and value < 0:
            raise StateError(f"{name} cannot be negative")
    if target.all or (target.run_id is None and target.agent is None):
        raise StateError("compact needs a run id or --agent NAME")
    report = StateReport("compact", target.run_id, target.agent)
    if target.run_id is not None:
        place = find_run(target)
        try:
            run_agents = next(s for s in run_stores(place, target)[0] if s.name == "agents")
            stores: list[Any] = run_agents.members()
        except _failures() as error:
            report.errors.append(StoreError("agents", str(error)))
            stores = []
        if not stores and not report.errors:
            report.missing.append("agents")
    else:
        stores = agent_stores(target)
    for store in stores:
        found = _describe_into(report, store, False)
        if found is None or not found.exists:
            continue
        try:
            counts = store.compact(strategy, max_messages, max_tokens)
        except _failures() as error:
            report.errors.append(_store_failure(store, error))
            continue
        found.metadata.update(strategy=strategy, **counts)
        if counts["after"] < counts["before"]:
            report.compacted.append(store.name)
    return report
