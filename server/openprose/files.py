"""Reading program and configuration files without blocking or filling memory.

Every layer (analysis, ide, lsp, cli, config) reads files through here, so that a FIFO
named ``*.prose`` cannot block (in the language server, one blocked read stalls the
workspace index or every request behind it) and ``/dev/zero`` or a huge file cannot fill
memory: only regular files are read, and only up to a size limit.  A refusal is an
``OSError`` whose ``strerror`` is the reason, so a caller that already copes with an
unreadable file copes with these too.  This module imports nothing from the package.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

# 200 times the largest program of the shared corpus (49 KB). `prose check` on a generated
# 10 MB program takes about 25 s and 400 MB: slow but bounded, and anything larger is more
# likely a mistake (a log, a data file) than a program.
DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024

_CHUNK = 1 << 20


class RefusedFile(OSError):
    """A file not read on purpose; ``strerror`` says why, ``filename`` names it."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.strerror = reason
        self.filename = path


class NotRegularFile(RefusedFile):
    """A FIFO, a device, a socket or a directory (after following symbolic links)."""

    def __init__(self, path: str) -> None:
        super().__init__(path, "not a regular file")


class FileTooLarge(RefusedFile):
    """More than ``limit`` bytes; ``size`` is None when the file grew while being read."""

    def __init__(self, path: str, limit: int, size: int | None = None) -> None:
        super().__init__(path, f"larger than {limit} bytes")
        self.limit = limit
        self.size = size


def _check(path: str, status: os.stat_result, max_size: int) -> None:
    if not stat.S_ISREG(status.st_mode):
        raise NotRegularFile(path)
    if status.st_size > max_size:
        raise FileTooLarge(path, max_size, status.st_size)


def read_bytes(path: str | os.PathLike[str], max_size: int = DEFAULT_MAX_FILE_SIZE) -> bytes:
    """The bytes of a regular file of at most ``max_size`` bytes.

    Raises ``NotRegularFile``, ``FileTooLarge`` or any other ``OSError``.
    """
    name = os.fspath(path)
    # Checked before opening, so a device is never opened (opening some has effects) ...
    _check(name, os.stat(name), max_size)
    # ... and again on the open file, since the path may have been replaced in between.
    # Non-blocking, so that opening a FIFO returns at once instead of waiting for a writer;
    # a regular file ignores the flag.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    with os.fdopen(os.open(name, flags), "rb") as stream:
        _check(name, os.fstat(stream.fileno()), max_size)
        data = read_at_most(stream, max_size + 1)
    if len(data) > max_size:
        raise FileTooLarge(name, max_size)
    return data


def read_text(
    path: str | os.PathLike[str], max_size: int = DEFAULT_MAX_FILE_SIZE, errors: str = "strict"
) -> str:
    """``read_bytes`` decoded as UTF-8, a leading byte-order mark removed.

    Line endings are kept as they are (no newline translation), so that positions in the
    text are positions in the file.  With ``errors="strict"`` an undecodable file raises
    ``UnicodeDecodeError``.
    """
    return read_bytes(path, max_size).decode("utf-8-sig", errors)


def read_at_most(stream: BinaryIO, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``stream`` (fewer at its end)."""
    # In chunks: read(limit) would allocate the whole limit up front, even for 10 bytes.
    data = bytearray()
    while len(data) < limit:
        chunk = stream.read(min(_CHUNK, limit - len(data)))
        if not chunk:
            break
        data += chunk
    return bytes(data)
