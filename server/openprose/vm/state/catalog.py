"""What the catalogues of runs kept in directories (``filesystem``, ``sqlite``) do alike:
``.prose/runs/{id}/`` is a run when it holds the backend's ``MARKER`` file; a run is made
in a hidden directory and renamed into place; a run whose summary says it is running is
not resumed, nor removed while its process lives."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from openprose.vm.rundir import PROGRAM, new_run_id, publish, staged_directory
from openprose.vm.state.base import RunInfo, StateError, program_hash
from openprose.vm.state.journal import Journal, process_alive
from openprose.vm.state.store import JournaledStore, Replay
from openprose.vm.values import Value

S = TypeVar("S", bound=JournaledStore)


class Closable(Protocol):
    def close(self) -> None: ...


def take_over(run_id: str, info: RunInfo | None, journal: Journal, *opened: Closable) -> Replay:
    """Claim a run to resume it; refuses one whose summary says it is still running,
    closing its journal and whatever else was opened for it.  The Replay says whether it
    has steps to re-walk."""
    if info is not None and info.status == "running":
        for resource in (journal, *opened):
            resource.close()
        raise StateError(f"run {run_id} is still running (process {info.pid})")
    journal.claim()
    return Replay(bool(journal.steps or journal.commits))


class DirectoryCatalog(Generic[S]):
    """The runs under ``root`` (``.prose/runs``) that hold a ``MARKER`` file.  A backend
    fills in ``_make`` (a new run's files, in its staging directory), ``_store``, ``open``
    and ``info``."""

    state: str
    MARKER: str

    def __init__(self, root: Path) -> None:
        self.root = root

    def create(
        self,
        program_text: str,
        program_name: str,
        inputs: dict[str, Value],
        *,
        backend: str = "",
        run_id: str | None = None,
    ) -> S:
        # Made in a hidden directory and renamed into place once its journal holds the
        # run's row: a run killed while it is made is not half there.
        for _ in range(20):
            rid = run_id or new_run_id()
            if not (self.root / rid).exists():
                break
            if run_id is not None:
                raise FileExistsError(self.root / rid)
        staging = staged_directory(self.root, rid)
        journal = self._make(staging, rid, program_text, program_name, inputs)
        journal.start_run(
            self.state, program_name, program_text, program_hash(program_text), inputs, backend
        )
        journal.close()
        path = self.root / rid
        publish(staging, path)
        return self._store(path, rid)

    def _make(
        self, staging: Path, run_id: str, text: str, program_name: str, inputs: dict[str, Value]
    ) -> Journal:
        """A new run's files in ``staging``; returns its journal, with its tables made."""
        raise NotImplementedError

    def _store(self, path: Path, run_id: str) -> S:
        """The store of the run just made at ``path``."""
        raise NotImplementedError

    def _path(self, run_id: str) -> Path:
        """The run's ``MARKER`` file; StateError when there is no such run."""
        if not run_id or "/" in run_id or run_id in (".", ".."):
            raise StateError(f"no run {run_id!r} in {self.root}")
        path = self.root / run_id / self.MARKER
        if not path.is_file():
            raise StateError(f"no run {run_id!r} in {self.root}")
        return path

    def info(self, run_id: str) -> RunInfo:
        raise NotImplementedError

    def runs(self) -> list[RunInfo]:
        found = []
        if self.root.is_dir():
            for entry in sorted(self.root.iterdir(), reverse=True):
                if (entry / self.MARKER).is_file() and not entry.name.startswith("."):
                    try:
                        found.append(self.info(entry.name))
                    except (StateError, OSError, sqlite3.Error):  # a broken run is listed as such
                        found.append(RunInfo(entry.name, self.state, status="unreadable"))
        return found

    def program_text(self, run_id: str) -> str:
        try:
            return (self._path(run_id).parent / PROGRAM).read_text(encoding="utf-8")
        except OSError as error:
            raise StateError(f"cannot read run {run_id}: {error}") from None

    def remove(self, run_id: str) -> None:
        info = self.info(run_id)
        if info.status == "running" and process_alive(info.pid, info.host):
            raise StateError(f"run {run_id} is still running (process {info.pid})")
        shutil.rmtree(self.root / run_id)
