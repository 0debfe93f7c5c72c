"""Loading, checking and running a program file: what ``prose run`` and tests call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from openprose.checking import check_text
from openprose.files import read_text
from openprose.syntax import parse
from openprose.vm.backends.base import Backend
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import (
    Clock,
    Confirm,
    EventSink,
    Interpreter,
    Options,
    RunResult,
)
from openprose.vm.rundir import RunDirectory
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
    project_root: Path | None = None,
) -> RunResult:
    """Check and run ``path``; its run directory goes under ``runs_root`` (None: none).
    ``project_root`` is where project-scoped agent memory lives (default: the nearest
    directory above ``path`` holding ``.prose/``, else the program's directory)."""
    text, module = checked if checked is not None else load_checked(path)
    run_dir = RunDirectory.create(runs_root, text, path.name) if runs_root is not None else None
    interpreter = Interpreter(
        module,
        backend or OfflineBackend(),
        program_path=path,
        program_name=path.name,
        run_dir=run_dir,
        sinks=sinks,
        options=options,
        clock=clock,
        load_program=load_import,
        confirm=confirm,
        project_root=project_root,
    )
    return await interpreter.run(inputs)


run_program = run_file
