"""Writing a reformatted file back where it came from, without breaking links.

A symbolic link stays a link: the file it points to is rewritten.  That file is replaced
atomically (a temporary file beside it, then a rename) when it has one name, so a crash
never leaves half a program; a file with several hard links is overwritten in place
instead, as black and ruff do, because a rename would give the other names the old
content.  A file without any write permission bit is refused even where the rename would
work (in a writable directory, or as root): the user marked it read-only.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile


class ReadOnlyError(OSError):
    """The file's mode has no write bit; nothing was written."""

    def __init__(self) -> None:
        super().__init__("the file is read-only")
        self.strerror = "the file is read-only"


def write_back(path: str, data: bytes) -> None:
    """Replace the content of the file ``path`` names by ``data``. Raises OSError."""
    target = os.path.realpath(path)
    status = os.stat(target)
    # The mode bits, not os.access: root may write anything, which is no reason to.
    if not status.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise ReadOnlyError()
    if status.st_nlink > 1:
        _overwrite(target, data)
    else:
        _replace(target, data, status.st_mode)


def _overwrite(target: str, data: bytes) -> None:
    # No O_TRUNC: the old content stays until the new bytes are in, and is cut after.
    descriptor = os.open(target, os.O_WRONLY | getattr(os, "O_BINARY", 0))
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(data)
        stream.truncate()


def _replace(target: str, data: bytes, mode: int) -> None:
    directory = os.path.dirname(target)
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".prose-fmt-", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
        if sys.platform != "win32":
            os.chmod(temporary, stat.S_IMODE(mode))
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
