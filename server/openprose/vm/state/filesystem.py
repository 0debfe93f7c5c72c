"""The ``filesystem`` state backend (spec/state/filesystem.md), the default.

The run directory of ``rundir.RunDirectory`` (``program.prose``, ``state.md``,
``bindings/``, ``events.jsonl``, ``inputs.json``), plus ``journal.db``: the journal of
steps in SQLite (WAL), which is what a resume reads.  No server.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from openprose.vm import events as ev
from openprose.vm.rundir import (
    RunDirectory,
    new_run_id,
    publish,
    staged_directory,
    write_atomic,
)
from openprose.vm.state.base import RunInfo, StateError, program_hash
from openprose.vm.state.journal import Journal, process_alive
from openprose.vm.state.store import JournaledStore, Replay
from openprose.vm.values import Value

JOURNAL = "journal.db"


class FilesystemStore(JournaledStore):
    state = "filesystem"

    def __init__(self, directory: RunDirectory, journal: Journal, replay: Replay) -> None:
        super().__init__(journal, replay, called=directory.path.parent.name == "imports")
        self.directory = directory
        self.run_id = directory.run_id
        self.path: Path | None = directory.path

    def _write_binding(
        self, name: str, kind: str, source: str, value: Value, execution_id: int | None
    ) -> None:
        self.directory.write_binding(name, kind, source, value, execution_id, durable=True)

    def _committed_before(
        self, name: str, kind: str, source: str, value: Value, execution_id: int | None
    ) -> None:
        if not self.directory.binding_path(name, execution_id).exists():
            # Committed, but its file did not survive (a power cut before the rename
            # reached the disk): write it again, quietly.
            self._write_binding(name, kind, source, value, execution_id)

    def _narrate(self, event: ev.Event) -> None:
        self.directory.record(event)

    def _end(self, event: ev.ProgramEnd) -> None:
        super()._end(event)
        self.directory.close()

    def inputs(self) -> dict[str, Value]:
        given = self.directory.path / "inputs.json"
        try:
            loaded = json.loads(given.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return self._journal.inputs()
        return loaded if isinstance(loaded, dict) else {}

    def save_inputs(self, inputs: dict[str, Value]) -> None:
        write_atomic(self.directory.path / "inputs.json", json.dumps(inputs) + "\n", durable=True)
        self._journal.update_run(inputs=inputs)

    def program_text(self) -> str:
        return (self.directory.path / "program.prose").read_text(encoding="utf-8")

    def child(self, key: str, name: str, text: str, program_name: str) -> FilesystemStore:
        root = self.directory.path / "imports"
        known = self._import_name(key, name, lambda n: (root / n).exists())
        if (root / known / "state.md").is_file():
            directory = RunDirectory(root / known, known)
            directory.append_state(f"---resume {_now()}")
        else:
            staging = staged_directory(root, known)
            RunDirectory.fill(staging, known, text, program_name)
            publish(staging, root / known)
            directory = RunDirectory(root / known, known)
        return FilesystemStore(directory, self._journal, self._replay)

    def close(self) -> None:
        self.directory.close()
        if not self._called:
            self._journal.close()


def _now() -> str:
    import time

    from openprose.vm.rundir import iso

    return iso(time.time())


class FilesystemCatalog:
    """The runs under ``root`` (``.prose/runs``) that have a journal."""

    state = "filesystem"

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
    ) -> FilesystemStore:
        # Made in a hidden directory and renamed into place once its journal holds the
        # run's row: a run killed while it is made is not half there.
        for _ in range(20):
            rid = run_id or new_run_id()
            if not (self.root / rid).exists():
                break
            if run_id is not None:
                raise FileExistsError(self.root / rid)
        staging = staged_directory(self.root, rid)
        RunDirectory.fill(staging, rid, program_text, program_name)
        write_atomic(staging / "inputs.json", json.dumps(inputs) + "\n", durable=True)
        journal = Journal.sqlite(staging / JOURNAL, rid)
        journal.start_run(
            self.state,
            program_name,
            program_text,
            program_hash(program_text),
            inputs,
            backend,
        )
        journal.close()
        publish(staging, self.root / rid)
        path = self.root / rid
        return FilesystemStore(
            RunDirectory(path, rid), Journal.sqlite(path / JOURNAL, rid), Replay(False)
        )

    def _journal_path(self, run_id: str) -> Path:
        if not run_id or "/" in run_id or run_id in (".", ".."):
            raise StateError(f"no run {run_id!r} in {self.root}")
        path = self.root / run_id / JOURNAL
        if not path.is_file():
            raise StateError(f"no run {run_id!r} in {self.root}")
        return path

    def open(self, run_id: str) -> FilesystemStore:
        path = self._journal_path(run_id)
        try:
            directory = RunDirectory.open(path.parent)
        except OSError as error:
            raise StateError(f"cannot open run {run_id}: {error}") from None
        journal = Journal.sqlite(path, run_id)
        journal.load()
        info = journal.run_info()
        if info is not None and info.status == "running":
            journal.close()
            raise StateError(f"run {run_id} is still running (process {info.pid})")
        journal.claim()
        directory.append_state(f"---resume {_now()}")
        replay = Replay(bool(journal.steps or journal.commits))
        return FilesystemStore(directory, journal, replay)

    def info(self, run_id: str) -> RunInfo:
        journal = Journal.sqlite(self._journal_path(run_id), run_id)
        try:
            info = journal.run_info(str(self.root / run_id))
        finally:
            journal.close()
        if info is None:
            raise StateError(f"run {run_id} has no summary in its journal")
        return info

    def runs(self) -> list[RunInfo]:
        found = []
        if self.root.is_dir():
            for entry in sorted(self.root.iterdir(), reverse=True):
                if (entry / JOURNAL).is_file() and not entry.name.startswith("."):
                    try:
                        found.append(self.info(entry.name))
                    except (StateError, OSError, sqlite3.Error):  # a broken run is listed as such
                        found.append(RunInfo(entry.name, self.state, status="unreadable"))
        return found

    def remove(self, run_id: str) -> None:
        info = self.info(run_id)
        if info.status == "running" and process_alive(info.pid, info.host):
            raise StateError(f"run {run_id} is still running (process {info.pid})")
        shutil.rmtree(self.root / run_id)
