"""The control plane's stores of a ``postgres`` run (vm/state/postgres.py): its rows of the
``openprose`` schema, every table keyed by ``run_id``, so that a reset deletes exactly the
run's rows.  The database is shared by every run of a project (and maybe other projects):
nothing here ever deletes a row of another run.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from openprose.vm.state.base import StateError

SCHEMA = "openprose"
# A run's rows, by store; the journal's are counted as steps and commits.
STORES = {
    "bindings": ("bindings",),
    "narration": ("execution",),
    "imports": ("imports",),
}
JOURNAL = ("journal_steps", "journal_commits")

Connect = Callable[[], Any]


def connector(project: Any) -> tuple[Connect, str]:
    """A factory of connections to the project's database, and the URL (for scrubbing)."""
    from openprose.vm.state.postgres import connect
    from openprose.vm.state.postgres_url import find_url

    url = find_url(project, os.environ).url
    return (lambda: connect(url)), url


def catalog(target: Any) -> Any:
    from openprose.vm.state import open_catalog

    return open_catalog("postgres", target.runs_root, project_root=target.project)


@contextlib.contextmanager
def _cursor(connect: Connect, url: str, write: bool = False) -> Iterator[Any]:
    """A cursor (in a transaction when writing); a driver failure is a StateError without
    the URL's password."""
    from openprose.vm.state.postgres import _driver
    from openprose.vm.state.postgres_url import scrub

    connection = connect()
    try:
        transaction = connection.transaction() if write else contextlib.nullcontext()
        with transaction, connection.cursor() as cursor:
            yield cursor
    except _driver().Error as error:
        first = " ".join(str(error).split()) or type(error).__name__
        raise StateError(f"PostgreSQL: {scrub(first, url)}") from None
    finally:
        connection.close()


def _rows(cursor: Any, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    cursor.execute(sql, tuple(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


class RunRows:
    """One store of a postgres run: its rows of ``tables``."""

    def __init__(
        self, name: str, connect: Connect, url: str, run_id: str, tables: Sequence[str]
    ) -> None:
        self.name = name
        self.connect = connect
        self.url = url
        self.run_id = run_id
        self.tables = tuple(tables)

    def describe(self, include_data: bool) -> Any:
        from openprose.vm.state.control_types import StoreReport

        report = StoreReport(self.name, metadata={"location": f"{SCHEMA} schema"})
        data: dict[str, Any] = {}
        with _cursor(self.connect, self.url) as cursor:
            for table in self.tables:
                cursor.execute(
                    f"SELECT COUNT(*) FROM {SCHEMA}.{table} WHERE run_id = %s", (self.run_id,)
                )
                row = cursor.fetchone()
                report.counts[_count_name(table)] = int(row[0]) if row else 0
                if include_data:
                    data[table] = _rows(
                        cursor, f"SELECT * FROM {SCHEMA}.{table} WHERE run_id = %s", (self.run_id,)
                    )
        report.exists = any(report.counts.values())
        if include_data:
            report.data = data
        return report

    def refusal(self) -> str | None:
        return None

    def reset(self) -> None:
        with _cursor(self.connect, self.url, write=True) as cursor:
            for table in self.tables:
                cursor.execute(f"DELETE FROM {SCHEMA}.{table} WHERE run_id = %s", (self.run_id,))
            if self.name == "journal":
                # The run stays (its summary, program and inputs): resumed, it starts over.
                cursor.execute(
                    f"UPDATE {SCHEMA}.journal_runs SET steps = 0, sessions = 0, "
                    "input_tokens = 0, output_tokens = 0, cost = 0, error = '', "
                    "failed_statement = '', ended_at = NULL, status = 'interrupted' "
                    "WHERE run_id = %s",
                    (self.run_id,),
                )


def _count_name(table: str) -> str:
    return {"journal_steps": "steps", "journal_commits": "commits"}.get(table, table)


class Live:
    """Refuses a reset while the run runs (its process holds the run's advisory lock,
    which the catalogue's ``info`` reads)."""

    name = "run"

    def __init__(self, run_id: str, info: Callable[[], Any]) -> None:
        self.run_id = run_id
        self.info = info

    def refusal(self) -> str | None:
        info = self.info()
        if info.status == "running":
            return f"run {self.run_id} is still running; stop it first"
        return None


def run_stores(run_id: str, target: Any, agents: Any) -> tuple[list[Any], list[Any]]:
    """The stores of a postgres run (``agents``: its agent memory store) and its guard."""
    connect, url = connector(target.project)
    stores: list[Any] = [
        RunRows("bindings", connect, url, run_id, STORES["bindings"]),
        RunRows("narration", connect, url, run_id, STORES["narration"]),
        RunRows("journal", connect, url, run_id, JOURNAL),
        agents,
        RunRows("imports", connect, url, run_id, STORES["imports"]),
    ]
    runs = catalog(target)
    return stores, [Live(run_id, lambda: runs.info(run_id))]


def run_ids(target: Any) -> list[str]:
    return [info.run_id for info in catalog(target).runs()]


def has_run(target: Any, run_id: str) -> bool:
    try:
        catalog(target).info(run_id)
    except StateError as error:
        if str(error).startswith("no run "):
            return False
        raise
    return True
