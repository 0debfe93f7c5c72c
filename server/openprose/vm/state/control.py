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

The stores follow the spec's layouts: ``control_local`` (the run directory of
``filesystem``, the ``state.db`` of ``sqlite``), ``control_postgres`` (a run's rows of the
``openprose`` schema) and ``control_memory`` (agent memory, through ``vm/memory.py``); the
report and the target are in ``control_types``.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from openprose.vm.state.base import StateError
from openprose.vm.state.control_local import (
    JOURNAL_FILE,
    SQLITE_FILE,
    SQLITE_PREFIX,
    Combined,
    FileBindings,
    FileNarration,
    Journal,
    Running,
    SqliteTables,
    Tree,
    journal_info,
    parse_binding,
)
from openprose.vm.state.control_memory import AgentMemory, RunAgents, memories
from openprose.vm.state.control_types import (
    OPERATIONS,
    RUN_STORES,
    STRATEGIES,
    StateReport,
    Store,
    StoreError,
    StoreReport,
    Target,
)

__all__ = [
    "JOURNAL_FILE",
    "OPERATIONS",
    "RUN_STORES",
    "STRATEGIES",
    "AgentMemory",
    "RunPlace",
    "StateError",
    "StateReport",
    "Store",
    "StoreError",
    "StoreReport",
    "Target",
    "binding_list",
    "compact",
    "describe",
    "find_run",
    "no_run_message",
    "parse_binding",
    "reset",
    "run_stores",
    "suggest",
]


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
        guard = Running(place.run_id, lambda: journal_info(database, place.run_id, SQLITE_PREFIX))
        return stores, [guard]
    journal = path / JOURNAL_FILE
    stores = [
        FileBindings(path),
        FileNarration(path),
        Journal(journal, place.run_id, path / "journal.jsonl"),
        agents,
        Tree("imports", path / "imports", "programs"),
    ]
    return stores, [Running(place.run_id, lambda: journal_info(journal, place.run_id))]


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
