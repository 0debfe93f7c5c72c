"""The run directory of spec/state/filesystem.md, written from the interpreter's events.

``.prose/runs/{YYYYMMDD}-{HHMMSS}-{random6}/`` holds ``program.prose``, ``state.md`` (an
append-only log in the file's own markers), ``bindings/{name}.md`` (``{name}__{id}.md``
inside block invocations) and ``events.jsonl`` (every event, one JSON object a line).
Binding files are replaced atomically (a temporary file, then ``os.replace``); the logs are
appended one line per ``write`` on a descriptor opened with ``O_APPEND``, so a reader never
sees half a line.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
import time
from pathlib import Path

from openprose.vm import events as ev
from openprose.vm.values import Value, render

_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def new_run_id(now: float | None = None) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{''.join(secrets.choice(_ALPHABET) for _ in range(6))}"


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _append(path: Path, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def binding_file_text(
    name: str, kind: str, source: str, value: Value, execution_id: int | None
) -> str:
    scope = f"execution_id: {execution_id}\n" if execution_id is not None else ""
    return (
        f"# {name}\n\nkind: {kind}\n{scope}\nsource:\n```prose\n{source.strip()}\n```\n\n"
        f"---\n\n{render(value)}\n"
    )


class RunDirectory:
    """One run's directory.  ``create`` makes it; the interpreter calls ``write_binding``
    and ``record`` (as an event sink)."""

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        self.bindings = path / "bindings"
        self.state = path / "state.md"
        self.events = path / "events.jsonl"

    @classmethod
    def create(
        cls, root: Path, program_text: str, program_name: str, run_id: str | None = None
    ) -> RunDirectory:
        """A new directory under ``root`` (usually ``.prose/runs``)."""
        for _ in range(20):
            rid = run_id or new_run_id()
            path = root / rid
            try:
                path.mkdir(parents=True, exist_ok=False)
            except FileExistsError:
                if run_id is not None:
                    raise
                continue
            break
        else:  # pragma: no cover - 36^6 names a second
            raise FileExistsError(root)
        (path / "bindings").mkdir()
        write_atomic(path / "program.prose", program_text)
        write_atomic(path / "state.md", f"# run:{rid} {program_name}\n\n")
        return cls(path, rid)

    def binding_path(self, name: str, execution_id: int | None) -> Path:
        suffix = f"__{execution_id}" if execution_id is not None else ""
        return self.bindings / f"{name}{suffix}.md"

    def write_binding(
        self, name: str, kind: str, source: str, value: Value, execution_id: int | None
    ) -> Path:
        path = self.binding_path(name, execution_id)
        write_atomic(path, binding_file_text(name, kind, source, value, execution_id))
        return path

    def record(self, event: ev.Event) -> None:
        _append(self.events, ev.render_json(event))
        line = state_line(event)
        if line is not None:
            _append(self.state, line)


def state_line(event: ev.Event) -> str | None:
    """The ``state.md`` marker of an event, or None when the event has none."""
    n = event.step
    if isinstance(event, ev.Binding):
        if event.binding_kind == "input":
            return None
        if event.binding_kind == "anonymous":
            return f"{n}→ ✓"
        return f"{n}→ {event.name} ✓"
    if isinstance(event, ev.ParallelEnter):
        return f"{n}→ ∥start {','.join(event.branches)}"
    if isinstance(event, ev.ParallelJoin):
        return f"{n}→ ∥done"
    if isinstance(event, ev.LoopIteration):
        return f"{n}→ loop:{event.iteration}/{_max(event.maximum)}"
    if isinstance(event, ev.LoopExit):
        return f"{n}→ loop:{event.iteration}/{_max(event.maximum)} exit({event.reason})"
    if isinstance(event, ev.FramePush):
        return f"{n}→ block:{event.block}#{event.execution_id}"
    if isinstance(event, ev.FramePop):
        return f"{n}→ #{event.execution_id} done"
    if isinstance(event, ev.Failure):
        return f"{n}→ ✗ {event.message}"
    if isinstance(event, ev.Retry):
        return f"{n}→ retry:{event.attempt}/{event.maximum}"
    if isinstance(event, ev.ProgramEnd):
        if event.status == "success":
            return f"---end {iso(event.ts)}"
        return f"---error {iso(event.ts)} {event.error}"
    return None


def _max(maximum: int | None) -> str:
    return str(maximum) if maximum is not None else "∞"
