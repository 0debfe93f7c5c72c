"""What every ``RunStore`` does alike, whatever holds its state: the journal and the
replay flag it shares with the programs it calls, a binding's commit (value, then journal
entry), and the narration sink's replay filter and end of run.

A backend subclasses ``JournaledStore`` and fills in where its state lives:
``_write_binding`` (the value), ``_narrate`` (a narration marker) and, where the end of a
run closes more than the journal's summary, ``_end``.
"""

from __future__ import annotations

from collections.abc import Callable

from openprose.vm import events as ev
from openprose.vm.state.base import value_hash
from openprose.vm.state.journal import Journal
from openprose.vm.values import Value

IMPORT_NAME = "@import"  # a journal commit naming the state of a call's program


class Replay:
    """Whether a resumed run is still re-walking what it did before; shared by a run and
    the programs it calls."""

    def __init__(self, active: bool) -> None:
        self.active = active


def end_fields(event: ev.ProgramEnd) -> dict[str, object]:
    status = {"success": "completed", "error": "failed"}.get(event.status, event.status)
    return {
        "status": status,
        "ended_at": event.ts,
        "error": event.error,
        "failed_statement": event.statement,
    }


def free_import_name(journal: Journal, name: str, taken: Callable[[str], bool]) -> str:
    """``name``, else ``name-2``, ``name-3``...: the first that no call of the run has
    journaled and ``taken`` does not refuse."""
    journaled = {v for (_k, n, _e), v in journal.commits.items() if n == IMPORT_NAME}
    for n in range(1, 10_000):
        candidate = name if n == 1 else f"{name}-{n}"
        if candidate not in journaled and not taken(candidate):
            return candidate
    raise FileExistsError(name)  # pragma: no cover - ten thousand calls of one program


class JournaledStore:
    """The shared half of a ``RunStore``.  ``called`` marks the store of a program the run
    calls: it shares the run's journal, and neither ends the run's summary nor closes it."""

    def __init__(self, journal: Journal, replay: Replay, *, called: bool = False) -> None:
        self._journal = journal
        self._replay = replay
        self._called = called

    @property
    def journal(self) -> Journal:
        return self._journal

    @property
    def replaying(self) -> bool:
        return self._replay.active

    def went_live(self) -> None:
        """The run did something it had not done before: from here on it is narrated."""
        self._replay.active = False

    def commit_binding(
        self,
        key: str,
        name: str,
        kind: str,
        source: str,
        value: Value,
        execution_id: int | None,
    ) -> bool:
        hashed = value_hash(value)
        journal_name = self._journal_name(name)
        if self._journal.committed(key, journal_name, execution_id) == hashed:
            self._committed_before(name, kind, source, value, execution_id)
            return False
        self.went_live()
        self._write_binding(name, kind, source, value, execution_id)
        self._journal.record_commit(key, journal_name, execution_id, hashed)
        return True

    def record(self, event: ev.Event) -> None:
        final = isinstance(event, ev.ProgramEnd)
        # A replayed step's narration is in the record already (RunStore.replaying);
        # a failure and the run's end are written even while replaying.
        if not self._replay.active or final or isinstance(event, ev.Failure):
            self._narrate(event)
        if isinstance(event, ev.ProgramEnd):
            self._end(event)

    def _import_name(self, key: str, name: str, taken: Callable[[str], bool]) -> str:
        """The name of the state of the program called at step ``key``: the journaled
        one, else a free one, journaled before the state is made, so that a run killed
        in between makes the same one when it resumes, never a second."""
        known = self._journal.committed(key, IMPORT_NAME, None)
        if known is None:
            known = free_import_name(self._journal, name, taken)
            self._journal.record_commit(key, IMPORT_NAME, None, known, durable=True)
        return known

    # ------------------------------------------------------------ what a backend fills in

    def _journal_name(self, name: str) -> str:
        """The binding's name in the journal."""
        return name

    def _write_binding(
        self, name: str, kind: str, source: str, value: Value, execution_id: int | None
    ) -> None:
        raise NotImplementedError

    def _committed_before(
        self, name: str, kind: str, source: str, value: Value, execution_id: int | None
    ) -> None:
        """A binding the journal says is committed already: nothing to write, unless
        the backend finds its value missing."""

    def _narrate(self, event: ev.Event) -> None:
        raise NotImplementedError

    def _end(self, event: ev.ProgramEnd) -> None:
        """The run ended: its summary says how (a called program's end is not the run's)."""
        if not self._called:
            self._journal.update_run(**end_fields(event))
