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
import time
from pathlib import Path

from openprose.vm import events as ev
from openprose.vm.values import Value, render

PROGRAM = "program.prose"  # the program a run was started with, in its directory
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def new_run_id(now: float | None = None) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{''.join(secrets.choice(_ALPHABET) for _ in range(6))}"


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def write_atomic(path: Path, text: str, durable: bool = False) -> None:
    """Replace ``path`` with ``text`` so that a reader sees the old or the new file, never
    part of one.  The temporary name is fixed per target: the VM writes from one thread,
    and a fixed name saves ``mkstemp``'s random names (a third of a binding's cost).

    ``durable``: the file's data is on disk before it replaces the old one.  The rename
    itself is not synced: the run's next synced journal step commits the filesystem's
    journal with it (ext4, xfs), and a resumed run rewrites a committed binding whose file
    is missing (``FilesystemStore.commit_binding``)."""
    temporary = path.with_name(f".{path.name}.tmp")
    data = text.encode("utf-8")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class _Log:
    """An append-only file kept open for the run: one ``write`` a line (``O_APPEND``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None

    def append(self, line: str) -> None:
        if self.fd is None:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self.fd, (line + "\n").encode("utf-8"))

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


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
        self._state_log = _Log(self.state)
        self._event_log = _Log(self.events)

    @classmethod
    def open(cls, path: Path) -> RunDirectory:
        """An existing run's directory (to resume it); raises OSError when it is not one."""
        if not (path / "state.md").is_file() or not (path / PROGRAM).is_file():
            raise FileNotFoundError(f"{path} is not a run directory")
        return cls(path, path.name)

    def append_state(self, line: str) -> None:
        self._state_log.append(line)

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
        return cls.fill(path, rid, program_text, program_name)

    @classmethod
    def fill(cls, path: Path, run_id: str, program_text: str, program_name: str) -> RunDirectory:
        """Make the run files in the existing, empty directory ``path``; ``state.md``
        last, so that a directory with one is complete."""
        (path / "bindings").mkdir(exist_ok=True)
        write_atomic(path / PROGRAM, program_text)
        write_atomic(path / "state.md", f"# run:{run_id} {program_name}\n\n")
        return cls(path, run_id)

    def binding_path(self, name: str, execution_id: int | None) -> Path:
        suffix = f"__{execution_id}" if execution_id is not None else ""
        return self.bindings / f"{name}{suffix}.md"

    def write_binding(
        self,
        name: str,
        kind: str,
        source: str,
        value: Value,
        execution_id: int | None,
        durable: bool = False,
    ) -> Path:
        path = self.binding_path(name, execution_id)
        write_atomic(path, binding_file_text(name, kind, source, value, execution_id), durable)
        return path

    def record(self, event: ev.Event) -> None:
        self._event_log.append(ev.render_json(event))
        line = state_line(event)
        if line is not None:
            self._state_log.append(line)
        if isinstance(event, ev.ProgramEnd):
            self.close()

    def close(self) -> None:
        self._state_log.close()
        self._event_log.close()


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


def sync_directory(directory: Path) -> None:
    """Make the entries of ``directory`` (a rename into it) durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def staged_directory(root: Path, name: str) -> Path:
    """An empty directory beside ``root / name`` to build it in before renaming it into
    place (``publish``): a run killed while it is made leaves no half-made run behind, only
    a hidden ``.{name}.{pid}.new``, which the next staging in ``root`` removes once its
    process is gone."""
    import shutil

    root.mkdir(parents=True, exist_ok=True)
    for entry in root.iterdir():
        pid = _staging_pid(entry.name)
        if pid is not None and not pid_alive(pid):
            shutil.rmtree(entry, ignore_errors=True)
    staging = root / f".{name}.{os.getpid()}.new"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    return staging


def _staging_pid(name: str) -> int | None:
    if not (name.startswith(".") and name.endswith(".new")):
        return None
    pid = name[:-4].rsplit(".", 1)[-1]
    return int(pid) if pid.isdigit() else None


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine still runs (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return status.rsplit(")", 1)[-1].split()[0] != "Z"


def publish(staging: Path, target: Path) -> None:
    """Rename a staged directory into place (FileExistsError if the name is taken)."""
    try:
        os.rename(staging, target)
    except OSError as error:
        if target.exists():
            raise FileExistsError(target) from error
        raise
    sync_directory(target.parent)


def _max(maximum: int | None) -> str:
    return str(maximum) if maximum is not None else "∞"
