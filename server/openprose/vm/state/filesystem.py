"""The ``filesystem`` state backend (spec/state/filesystem.md), the default.

The run directory of ``rundir.RunDirectory`` (``program.prose``, ``state.md``,
``bindings/``, ``events.jsonl``, ``inputs.json``), plus ``journal.db``: the journal of
steps in SQLite (WAL), which is what a resume reads.  No server.
"""

from __future__ import annotations

import json
from pathlib import Path

from openprose.vm import events as ev
from openprose.vm.rundir import RunDirectory, publish, staged_directory, write_atomic
from openprose.vm.state.base import RunInfo, StateError
from openprose.vm.state.catalog import DirectoryCatalog, take_over
from openprose.vm.state.journal import Journal
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


class FilesystemCatalog(DirectoryCatalog[FilesystemStore]):
    """The runs under ``root`` (``.prose/runs``) that have a journal."""

    state = "filesystem"
    MARKER = JOURNAL

    def _make(
        self, staging: Path, run_id: str, text: str, program_name: str, inputs: dict[str, Value]
    ) -> Journal:
        RunDirectory.fill(staging, run_id, text, program_name)
        write_atomic(staging / "inputs.json", json.dumps(inputs) + "\n", durable=True)
        return Journal.sqlite(staging / JOURNAL, run_id)

    def _store(self, path: Path, run_id: str) -> FilesystemStore:
        return FilesystemStore(
            RunDirectory(path, run_id), Journal.sqlite(path / JOURNAL, run_id), Replay(False)
        )

    def open(self, run_id: str) -> FilesystemStore:
        path = self._path(run_id)
        try:
            directory = RunDirectory.open(path.parent)
        except OSError as error:
            raise StateError(f"cannot open run {run_id}: {error}") from None
        journal = Journal.sqlite(path, run_id)
        journal.load()
        replay = take_over(run_id, journal.run_info(), journal)
        directory.append_state(f"---resume {_now()}")
        return FilesystemStore(directory, journal, replay)

    def branch_journal(self, run_id: str, under: str) -> Journal:
        """The run's journal, read under one step key, for an item of a fan-out that
        runs in another process while the run holds it (vm/branches.py)."""
        journal = Journal.sqlite(self._path(run_id), run_id, made=True)
        journal.load(under)
        return journal

    def branch_store(self, run_id: str, journal: Journal) -> FilesystemStore:
        self._path(run_id)  # StateError when there is no such run
        return FilesystemStore(RunDirectory(self.root / run_id, run_id), journal, Replay(False))

    def info(self, run_id: str) -> RunInfo:
        journal = Journal.sqlite(self._path(run_id), run_id)
        try:
            info = journal.run_info(str(self.root / run_id))
        finally:
            journal.close()
        if info is None:
            raise StateError(f"run {run_id} has no summary in its journal")
        return info
