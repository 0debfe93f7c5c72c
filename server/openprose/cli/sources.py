"""Finding the ``.prose`` files named on the command line and reading them as text."""

from __future__ import annotations

import codecs
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass

PROSE_SUFFIX = ".prose"
STDIN_PATH = "-"
STDIN_DISPLAY = "<stdin>"


class SourceError(Exception):
    """A path that cannot be read; ``str()`` is the one-line message the CLI prints."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot read {path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True, slots=True)
class SourceFile:
    display_path: str  # how the user named it, shown in every diagnostic
    fs_path: str | None  # None: standard input


def discover(paths: Iterable[str]) -> tuple[list[SourceFile], list[SourceError]]:
    """Expand PATH arguments into files, keeping the order the user gave.

    Files are taken whatever their extension (the user named them); directories contribute
    their ``*.prose`` files recursively in sorted order so that output is deterministic.
    A file reached twice is checked once.
    """
    found: list[SourceFile] = []
    errors: list[SourceError] = []
    seen: set[str] = set()

    def add(source: SourceFile) -> None:
        key = STDIN_PATH if source.fs_path is None else os.path.realpath(source.fs_path)
        if key not in seen:
            seen.add(key)
            found.append(source)

    for path in paths:
        if path == STDIN_PATH:
            add(SourceFile(STDIN_DISPLAY, None))
        elif os.path.isdir(path):
            for file_path in _walk_prose_files(path, errors):
                add(SourceFile(file_path, file_path))
        elif os.path.exists(path):
            add(SourceFile(path, path))
        else:
            errors.append(SourceError(path, "No such file or directory"))
    return found, errors


def _walk_prose_files(root: str, errors: list[SourceError]) -> list[str]:
    def report(error: OSError) -> None:
        errors.append(SourceError(error.filename or root, _reason(error)))

    found: list[tuple[str, ...]] = []
    # os.walk does not follow symbolic links to directories, so a link cycle cannot loop.
    for directory, subdirectories, files in os.walk(root, onerror=report):
        # Hidden directories (.git, .venv, .prose run state) hold no sources of the user's.
        subdirectories[:] = [d for d in subdirectories if not d.startswith(".")]
        relative = os.path.relpath(directory, root)
        parts = () if relative == os.curdir else tuple(relative.split(os.sep))
        found.extend((*parts, name) for name in files if name.endswith(PROSE_SUFFIX))
    # Sorted by path components, so "a/z.prose" < "b.prose" on every platform and file system.
    found.sort()
    if root == os.curdir:
        # `prose check` with no argument walks "."; show "a.prose", not "./a.prose".
        return [os.path.join(*parts) for parts in found]
    return [os.path.join(root, *parts) for parts in found]


def read_source(source: SourceFile) -> str:
    """The file's text, decoded as UTF-8 with an optional byte-order mark removed.

    Line endings are kept as they are (no newline translation) so that the positions the
    parser reports are positions in the file.  Raises SourceError, never anything else
    for an unreadable or undecodable file.
    """
    return read_source_and_bom(source)[0]


def read_source_and_bom(source: SourceFile) -> tuple[str, bool]:
    """``read_source``, and whether the bytes began with a byte-order mark (standard input
    cannot be read twice, so a caller that writes the text back asks here)."""
    try:
        if source.fs_path is None:
            data = sys.stdin.buffer.read()
        else:
            with open(source.fs_path, "rb") as stream:
                data = stream.read()
    except OSError as error:
        raise SourceError(source.display_path, _reason(error)) from None
    return decode_source(data, source.display_path), data.startswith(codecs.BOM_UTF8)


def decode_source(data: bytes, display_path: str) -> str:
    # Not parso.utils.python_bytes_to_unicode: it reads `# coding: x` comments as encoding
    # declarations, which is Python's rule, not ours.
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
        offset = error.start + bom
        line = data.count(b"\n", 0, offset) + 1
        reason = f"not valid UTF-8 (byte 0x{data[offset]:02x} on line {line}, offset {offset})"
        raise SourceError(display_path, reason) from None


def _reason(error: OSError) -> str:
    return error.strerror or str(error)
