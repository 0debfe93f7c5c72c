"""Helpers of the state backends' tests: a crashed run, a binding read back from a
backend's own record."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

from openprose.vm.interpreter import RunResult
from openprose.vm.state import Catalog, RunStore

_DEAD: list[int] = []


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped): what a run's row holds
    after the process that ran it was killed."""
    if not _DEAD:
        child = subprocess.Popen([sys.executable, "-c", "pass"])
        child.wait()
        _DEAD.append(child.pid)
    return _DEAD[0]


def crash(store: RunStore) -> None:
    """As if the process running ``store`` had been killed: the run still says it is
    running, under a process that is gone.  The store's handles are released."""
    store.journal.update_run(pid=dead_pid())
    store.close()


def binding_text(store: RunStore, name: str, execution_id: int | None = None) -> str | None:
    """A committed binding's value as the backend's record holds it (rendered text), read
    from that record itself; None when there is none."""
    if store.state == "filesystem":
        assert store.path is not None
        suffix = f"__{execution_id}" if execution_id is not None else ""
        path = store.path / "bindings" / f"{name}{suffix}.md"
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
        return text.split("\n---\n\n", 1)[1].removesuffix("\n")
    if store.state == "sqlite":
        assert store.path is not None
        # A connection of its own: the store may have been closed already.
        with sqlite3.connect(store.path / "state.db") as db:
            row = db.execute(
                "SELECT value, attachment_path FROM bindings "
                "WHERE name = ? AND IFNULL(execution_id, -1) = IFNULL(?, -1)",
                (name, execution_id),
            ).fetchone()
        if row is None:
            return None
        if row[1]:
            return (store.path / row[1]).read_text(encoding="utf-8")
        return str(row[0])
    reader = getattr(store, "binding_text", None)
    assert reader is not None, f"the {store.state} store has no binding_text() to read"
    found: str | None = reader(name, execution_id)
    return found


@dataclass
class StateRun:
    result: RunResult
    store: RunStore  # the run's store (closed or not, as the run left it)
    catalog: Catalog


# run_in_state(catalog, source, inputs=None, *, backend=None, options=None, resume=None)
RunInState = Callable[..., StateRun]
