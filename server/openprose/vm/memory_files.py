"""Agent memory in files (spec/state/filesystem.md): ``memory.md`` and ``{name}-NNN.md``
in the agent's directory, plus two files of our own there:

- ``.lock``: every change holds an exclusive ``flock`` on it, so that two runs (two
  processes) updating one project agent take turns: numbers never collide and each
  run's segment is kept.  It is never deleted (a process waiting on a deleted lock file
  would lock a file nobody else sees);
- ``.segments.jsonl``: one line per recorded segment (number, run, step), appended last.
  It keeps the numbers of compacted segments (never reused) and which step of which run
  recorded each, so that a resumed run replaying a step records nothing twice.

Every file is replaced whole (``write_atomic``), so a reader without the lock sees an old
or a new ``memory.md``, never part of one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from openprose.vm.memory_store import (
    Found,
    MemoryTxn,
    Segment,
    parse_segment,
    render_segment,
    segment_name,
)
from openprose.vm.rundir import write_atomic

MEMORY = "memory.md"
LOCK = ".lock"
LEDGER = ".segments.jsonl"

Place = Callable[[str, str], Path | None]


class FileTxn:
    """One agent's directory while its lock is held."""

    def __init__(self, directory: Path, agent: str) -> None:
        self.directory = directory
        self.agent = agent
        self._pattern = re.compile(re.escape(agent) + r"-(\d{3,})\.md")
        self._ledger: dict[int, tuple[str, str]] | None = None

    def _files(self) -> dict[int, Path]:
        found = {}
        for entry in self.directory.iterdir():
            match = self._pattern.fullmatch(entry.name)
            if match:
                found[int(match.group(1))] = entry
        return found

    def ledger(self) -> dict[int, tuple[str, str]]:
        if self._ledger is None:
            self._ledger = {}
            try:
                text = (self.directory / LEDGER).read_text(encoding="utf-8")
            except FileNotFoundError:
                text = ""
            for line in text.splitlines():
                # A line a crash cut short is skipped: its segment is found by its file.
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    entry = json.loads(line)
                    self._ledger[int(entry["n"])] = (str(entry["run"]), str(entry["step"]))
        return self._ledger

    def memory(self) -> str | None:
        try:
            return (self.directory / MEMORY).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def numbers(self) -> list[int]:
        return sorted(self._files())

    def segments(self) -> list[Segment]:
        return [
            parse_segment(number, path.read_text(encoding="utf-8"))
            for number, path in sorted(self._files().items())
        ]

    def last_number(self) -> int:
        return max([0, *self._files(), *self.ledger()])

    def find(self, run: str, step: str) -> Found | None:
        ledger = self.ledger()
        for number, recorded in ledger.items():
            if recorded == (run, step):
                return Found(number)
        # A segment written by a record that died before its ledger line.
        for number, path in self._files().items():
            if number not in ledger:
                segment = parse_segment(number, path.read_text(encoding="utf-8"))
                if (segment.run, segment.step) == (run, step):
                    return Found(number, complete=False)
        return None

    def put_segment(self, segment: Segment) -> None:
        write_atomic(
            self.directory / segment_name(self.agent, segment.number),
            render_segment(segment),
            durable=True,
        )

    def put_memory(self, text: str) -> None:
        write_atomic(self.directory / MEMORY, text, durable=True)

    def note(self, segment: Segment) -> None:
        line = json.dumps({"n": segment.number, "run": segment.run, "step": segment.step})
        path = self.directory / LEDGER
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            size = os.fstat(fd).st_size
            # After a torn last line, start on a line of our own.
            torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
            os.write(fd, (("\n" if torn else "") + line + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        self.ledger()[segment.number] = (segment.run, segment.step)

    def remove_segments(self, numbers: list[int]) -> None:
        files = self._files()
        for number in numbers:
            if number in files:
                files[number].unlink()
        _sync_directory(self.directory)

    def clear(self) -> None:
        for path in [*self._files().values(), self.directory / MEMORY, self.directory / LEDGER]:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        _sync_directory(self.directory)
        self._ledger = {}


class FileMemoryStore:
    """``place(agent, scope)`` is the agent's directory (None: no place, memory stays in
    the process); ``root(scope)`` the directory holding a scope's agents."""

    name = "filesystem"

    def __init__(self, place: Place, root: Callable[[str], Path | None]) -> None:
        self._place = place
        self._root = root

    def location(self, agent: str, scope: str) -> str | None:
        directory = self._place(agent, scope)
        return str(directory) if directory is not None else None

    def exists(self, agent: str, scope: str) -> bool:
        directory = self._place(agent, scope)
        if directory is None or not directory.is_dir():
            return False
        return (directory / MEMORY).is_file() or bool(FileTxn(directory, agent).numbers())

    def read_memory(self, agent: str, scope: str) -> str | None:
        directory = self._place(agent, scope)
        if directory is None:
            return None
        try:
            return (directory / MEMORY).read_text(encoding="utf-8")
        except OSError:
            return None

    @contextlib.contextmanager
    def transaction(self, agent: str, scope: str, *, create: bool) -> Iterator[MemoryTxn | None]:
        directory = self._place(agent, scope)
        if directory is None or (not create and not directory.is_dir()):
            yield None
            return
        directory.mkdir(parents=True, exist_ok=True)
        with open(directory / LOCK, "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield FileTxn(directory, agent)
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def agents(self, scope: str) -> list[str]:
        root = self._root(scope)
        if root is None or not root.is_dir():
            return []
        return sorted(
            entry.name
            for entry in root.iterdir()
            if entry.is_dir() and self.exists(entry.name, scope)
        )


def _sync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
