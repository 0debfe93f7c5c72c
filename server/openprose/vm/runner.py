"""Loading, checking and running a program file: what ``prose run`` and tests call."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from openprose.checking import check_text
from openprose.files import read_text
from openprose.syntax import parse
from openprose.vm.backends.base import Backend, bind_run
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.backends.replay import JournalBackend, load_records
from openprose.vm.interpreter import (
    Ask,
    Clock,
    Confirm,
    EventSink,
    Interpreter,
    Options,
    RunResult,
)
from openprose.vm.remote import Fetched, RemoteLoader
from openprose.vm.rundir import RunDirectory, iso, write_atomic
from openprose.vm.values import ProseError, Value


def errors_of(diagnostics: Iterable[Any]) -> list[Any]:
    return [d for d in diagnostics if getattr(d, "is_error", False)]


class ProgramInvalid(Exception):
    """A program with errors does not run; ``diagnostics`` holds every diagnostic."""

    def __init__(self, path: Path, text: str, diagnostics: list[Any]) -> None:
        super().__init__(f"{path} has errors")
        self.path = path
        self.text = text
        self.diagnostics = diagnostics


def load_checked(path: Path) -> tuple[str, Any]:
    """The text and tree of a program; raises ProgramInvalid when it has errors (and
    OSError/UnicodeDecodeError when it cannot be read)."""
    text = read_text(path)
    diagnostics = check_text(text, str(path))
    if errors_of(diagnostics):
        raise ProgramInvalid(path, text, diagnostics)
    return text, parse(text)


def load_import(path: Path) -> tuple[str, Any]:
    try:
        return load_checked(path)
    except ProgramInvalid as invalid:
        first = errors_of(invalid.diagnostics)[0]
        raise ProseError(f"{path.name} has errors: {first.message}", "", "program") from None
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise ProseError(f"cannot read {path}: {reason}", "", "program") from None


async def run_file(
    path: Path,
    inputs: Mapping[str, Value] | None = None,
    *,
    backend: Backend | None = None,
    runs_root: Path | None = None,
    sinks: Iterable[EventSink] = (),
    options: Options | None = None,
    clock: Clock | None = None,
    checked: tuple[str, Any] | None = None,
    confirm: Confirm | None = None,
    ask: Ask | None = None,
    project_root: Path | None = None,
    resume: RunDirectory | None = None,
    remote: RemoteLoader | None = None,
    fetched: Fetched | None = None,
) -> RunResult:
    """Check and run ``path``; its run directory goes under ``runs_root`` (None: none).
    ``project_root`` is where project-scoped agent memory lives (default: the nearest
    directory above ``path`` holding ``.prose/``, else the program's directory).

    ``resume`` continues an earlier run in its own directory, with its own inputs: every
    model exchange of a run is journaled, and the steps the earlier run took are answered
    from the journal (no model call) until the run reaches a step it never took.

    ``remote`` fetches the remote programs the run imports (None: they are refused);
    ``fetched`` is given when ``path`` itself came from the network (``path`` then only
    names it): its source and sha256 go to ``source.json`` in the run directory."""
    text, module = checked if checked is not None else load_checked(path)
    if fetched is not None and project_root is None:
        # A fetched program has no directory: project memory lives where it is run from.
        from openprose.analysis.contracts import project_root_of

        project_root = project_root_of(path.resolve())
    model: Backend = backend or OfflineBackend()
    run_dir = resume
    journal: dict[tuple[str, str], dict[str, Any]] = {}
    if resume is not None:
        journal = load_records(resume.read_journal())
        inputs = json.loads((resume.path / "inputs.json").read_text(encoding="utf-8"))
        resume.append_state(f"---resume {iso(time.time())}")
    elif runs_root is not None:
        run_dir = RunDirectory.create(runs_root, text, path.name)
        write_atomic(run_dir.path / "inputs.json", json.dumps(dict(inputs or {})) + "\n")
        if fetched is not None:
            write_atomic(run_dir.path / "source.json", fetched.source_json())
    if run_dir is not None:
        bind_run(model, run_dir.run_id)
        model = JournalBackend(model, run_dir.append_journal, journal)
    interpreter = Interpreter(
        module,
        model,
        program_path=None if fetched is not None else path,
        program_name=path.name,
        run_dir=run_dir,
        sinks=sinks,
        options=options,
        clock=clock,
        load_program=load_import,
        confirm=confirm,
        ask=ask,
        project_root=project_root,
        remote=remote,
        fetched=fetched is not None,
    )
    return await interpreter.run(inputs)


run_program = run_file
