"""Loading, checking and running a program file: what ``prose run`` and tests call."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from openprose.checking import check_text
from openprose.files import read_text
from openprose.syntax import parse
from openprose.vm.backends.base import Backend, bind_run
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.backends.replay import JournalBackend
from openprose.vm.interpreter import (
    Ask,
    Branches,
    Budget,
    Clock,
    Confirm,
    EventSink,
    Interpreter,
    Options,
    RunResult,
    Summaries,
)
from openprose.vm.remote import Fetched, RemoteLoader
from openprose.vm.rundir import write_atomic
from openprose.vm.state import Catalog, RunStore, open_catalog
from openprose.vm.telemetry import Telemetry
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
    resume: RunStore | None = None,
    remote: RemoteLoader | None = None,
    fetched: Fetched | None = None,
    state: str = "filesystem",
    catalog: Catalog | None = None,
    telemetry: Telemetry | None = None,
    run_id: str | None = None,
    branches: Branches | None = None,
    budget: Budget | None = None,
    summaries: Summaries | None = None,
    durable_steps: Callable[[Backend], Backend] | None = None,
) -> RunResult:
    """Check and run ``path``; its state goes under ``runs_root`` (None: no state) in the
    ``state`` backend (or in ``catalog``, when given).  ``project_root`` is where
    project-scoped agent memory lives (default: the nearest directory above ``path``
    holding ``.prose/``, else the program's directory).

    ``resume`` continues an earlier run (``Catalog.open``), with its own inputs: every
    model exchange of a run is journaled, and the steps the earlier run took are answered
    from the journal (no model call) until the run reaches a step it never took.

    ``remote`` fetches the remote programs the run imports (None: they are refused);
    ``fetched`` is given when ``path`` itself came from the network (``path`` then only
    names it): its source and sha256 go to ``source.json`` in the run directory.

    ``telemetry`` traces the run (vm/telemetry.py): it wraps the journal, so that a step
    answered from it still has its span, marked replayed and counted in no metric.

    ``run_id`` names a new run (an engine that chose it beforehand: the DBOS workflow's id);
    by default the catalogue makes one.

    ``branches`` runs the items of the run's fan-outs elsewhere (an engine's
    ``interpreter.Branches``); by default they are tasks of this process.  ``budget``
    counts what the run spends against its limits (by default in this process);
    ``summaries`` shares the run's summaries with its items elsewhere (by default each is
    asked once by this process); ``durable_steps`` wraps the journaled backend, for an
    engine that checkpoints each exchange itself too (dbos_steps)."""
    text, module = checked if checked is not None else load_checked(path)
    if fetched is not None and project_root is None:
        # A fetched program has no directory: project memory lives where it is run from.
        from openprose.analysis.contracts import project_root_of

        project_root = project_root_of(path.resolve())
    model: Backend = backend or OfflineBackend()
    store = resume
    if resume is not None:
        inputs = resume.inputs()
    elif catalog is not None or runs_root is not None:
        if catalog is None:
            assert runs_root is not None
            catalog = open_catalog(state, runs_root, project_root=project_root)
        store = catalog.create(
            text, path.name, dict(inputs or {}), backend=model.name, run_id=run_id
        )
        if fetched is not None and store.path is not None:
            write_atomic(store.path / "source.json", fetched.source_json())
    if store is not None:
        bind_run(model, store.run_id)
        model = JournalBackend(model, store.journal, getattr(store, "went_live", None))
        if durable_steps is not None:
            model = durable_steps(model)
    if telemetry is not None:
        model = telemetry.backend(model)
    interpreter = Interpreter(
        module,
        model,
        program_path=None if fetched is not None else path,
        program_name=path.name,
        store=store,
        sinks=sinks,
        options=options,
        clock=clock,
        load_program=load_import,
        confirm=confirm,
        ask=ask,
        project_root=project_root,
        remote=remote,
        fetched=fetched is not None,
        budget=budget,
    )
    interpreter.branches = branches
    interpreter.summaries = summaries
    try:
        if telemetry is None:
            return await interpreter.run(inputs)
        run_id = store.run_id if store is not None else ""
        workflow = telemetry.run(
            path.name, run_id, getattr(store, "state", state), resumed=resume is not None
        )
        result: RunResult = await workflow.around(interpreter.run(inputs))
        return result
    finally:
        if store is not None:
            store.close()  # its connections and log descriptors, now rather than at exit


run_program = run_file
