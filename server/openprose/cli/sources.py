"""Finding the ``.prose`` files named on the command line and reading them as text."""

from __future__ import annotations

import argparse
import codecs
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from openprose.files import (
    DEFAULT_MAX_FILE_SIZE,
    FileTooLarge,
    NotRegularFile,
    read_at_most,
    read_bytes,
)

PROSE_SUFFIX = ".prose"
STDIN_PATH = "-"
STDIN_DISPLAY = "<stdin>"
_SIZE = re.compile(r"([0-9]+)([kmg]?)", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


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


def add_size_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-file-size",
        type=parse_size,
        default=DEFAULT_MAX_FILE_SIZE,
        metavar="SIZE",
        help="refuse files (and standard input) larger than this many bytes; K, M and G "
        "multiply by 1024, 1024^2 and 1024^3 (default: 10M)",
    )


def parse_size(text: str) -> int:
    """A size for ``--max-file-size``: bytes, or a whole number of K, M or G (binary)."""
    match = _SIZE.fullmatch(text.strip())
    size = int(match.group(1)) * _SIZE_UNITS[match.group(2).lower()] if match else 0
    if size <= 0:
        raise argparse.ArgumentTypeError(
            f"invalid size {text!r}: expected a positive number of bytes, such as 500K or 10M"
        )
    return size


def read_source(source: SourceFile, max_size: int = DEFAULT_MAX_FILE_SIZE) -> str:
    """The file's text, decoded as UTF-8 with an optional byte-order mark removed.

    Line endings are kept as they are (no newline translation) so that the positions the
    parser reports are positions in the file.  Raises SourceError, never anything else
    for an unreadable or undecodable file, for anything but a regular file, and for more
    than ``max_size`` bytes.
    """
    return read_source_and_bom(source, max_size)[0]


def read_source_and_bom(
    source: SourceFile, max_size: int = DEFAULT_MAX_FILE_SIZE
) -> tuple[str, bool]:
    """``read_source``, and whether the bytes began with a byte-order mark (standard input
    cannot be read twice, so a caller that writes the text back asks here)."""
    too_large = f"more than the limit of {max_size} bytes (see --max-file-size)"
    try:
        if source.fs_path is None:
            data = read_at_most(sys.stdin.buffer, max_size + 1)
        else:
            data = read_bytes(source.fs_path, max_size)
    except NotRegularFile:
        raise SourceError(source.display_path, "not a regular file") from None
    except FileTooLarge as error:
        if error.size is not None:
            too_large = (
                f"{error.size} bytes, more than the limit of {max_size} (see --max-file-size)"
            )
        raise SourceError(source.display_path, too_large) from None
    except OSError as error:
        raise SourceError(source.display_path, _reason(error)) from None
    if len(data) > max_size:  # standard input
        raise SourceError(source.display_path, too_large)
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
