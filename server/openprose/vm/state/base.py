"""The seam every state backend implements: one run's durable state, and the catalogue of
a project's runs.

A run's state is three things, each with one owner here:

- the spec's record of the run (spec/state/*.md): its bindings and narration markers, in
  files, tables or the narration itself depending on the backend;
- the journal of steps (``journal.Journal``): every model exchange and every committed
  binding, keyed deterministically, so that a resumed run answers the steps it already
  took without calling a model, and writes nothing twice;
- the run's summary (``RunInfo``): what ``prose runs list|show`` print.

A binding is made durable in one order on every backend: the value (atomic write, fsync or
a committed transaction), then its journal entry, then the narration marker.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from openprose.vm import events as ev
from openprose.vm.values import Value

BACKENDS = ("filesystem", "sqlite", "postgres", "in-context")

# What `status` means in RunInfo.  A run whose process died keeps "running" in its store;
# the catalogue reports it as "interrupted" when the process that ran it is gone.
STATUSES = ("running", "completed", "failed", "interrupted", "cancelled")


class StateError(Exception):
    """A state backend cannot do what was asked (no such run, a store it cannot reach, a
    reset it cannot do precisely).  The message is for the user and never holds a password."""


@dataclass
class RunInfo:
    run_id: str
    state: str  # the backend: filesystem | sqlite | postgres | in-context
    program_name: str = ""
    program_hash: str = ""
    status: str = "running"
    started_at: float = 0.0
    ended_at: float | None = None
    backend: str = ""  # the model backend that answered it
    steps: int = 0  # journaled model exchanges
    sessions: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    error: str = ""
    failed_statement: str = ""
    pid: int | None = None
    host: str = ""
    location: str = ""  # where the state lives: a directory, or a URL without its password

    @property
    def duration(self) -> float | None:
        return None if self.ended_at is None else max(0.0, self.ended_at - self.started_at)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["duration"] = self.duration
        return data


def program_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def value_hash(value: Value) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class StepRecord:
    """One journaled model exchange (or program call)."""

    kind: str  # session | judge | choose | summarise | memory
    key: str
    hash: str
    result: dict[str, Any] | None = None
    error: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    cost: float = 0.0


class RunStore(Protocol):
    """One run's state.  The interpreter calls it from one thread."""

    state: str  # which backend (BACKENDS)
    run_id: str
    # The run's directory where the backend has one (agents with `persist: true` and the
    # runs of imported programs live under it); None for postgres and in-context.
    path: Path | None

    @property
    def journal(self) -> Any:  # journal.Journal
        ...

    @property
    def replaying(self) -> bool:
        """True while a resumed run re-walks steps it already took: the narration of
        those steps is in the record already and is not written again."""
        ...

    def commit_binding(
        self,
        key: str,
        name: str,
        kind: str,
        source: str,
        value: Value,
        execution_id: int | None,
    ) -> bool:
        """Make a binding durable (value, then journal entry).  ``key`` is the step key of
        the statement that binds it.  Returns False when this very binding was committed
        before (a resumed run replaying it): nothing is written then."""
        ...

    def record(self, event: ev.Event) -> None:
        """The narration sink: the backend's marker for ``event``; ``ProgramEnd`` also
        closes the run's summary (status, end time)."""
        ...

    def inputs(self) -> dict[str, Value]: ...

    def save_inputs(self, inputs: dict[str, Value]) -> None: ...

    def program_text(self) -> str: ...

    def child(self, key: str, name: str, text: str, program_name: str) -> RunStore:
        """The state of a program this run calls at step ``key``, named after ``name``;
        a resumed run gets the same child back for the same step.  It shares the run's
        journal (its step keys are under ``key``)."""
        ...

    def close(self) -> None: ...


class Catalog(Protocol):
    """The runs one backend holds for a project."""

    state: str

    def create(
        self,
        program_text: str,
        program_name: str,
        inputs: dict[str, Value],
        *,
        backend: str = "",
        run_id: str | None = None,
    ) -> RunStore: ...

    def open(self, run_id: str) -> RunStore:
        """An existing run, to resume it; raises StateError when there is none."""
        ...

    def runs(self) -> list[RunInfo]:
        """Every run, newest first."""
        ...

    def info(self, run_id: str) -> RunInfo: ...

    def program_text(self, run_id: str) -> str:
        """The program a run was started with, read without claiming the run (a resume
        another process executes compares it with the program now)."""
        ...

    def remove(self, run_id: str) -> None: ...

    def branch_journal(self, run_id: str, under: str) -> Any:
        """The journal of a run another process holds, read under the step key ``under``
        (an item of its fan-out, vm/branches.py); StateError where the journal cannot be
        shared."""
        ...

    def branch_store(self, run_id: str, journal: Any) -> RunStore:
        """The store of a run another process holds, over ``journal`` (its
        ``branch_journal``), without the run's claim; closing it closes the journal.  An
        item of the run's fan-out commits nothing to it and narrates nothing in it
        (vm/branches.BranchStore): it makes there the states of the programs it calls
        (``child``)."""
        ...
