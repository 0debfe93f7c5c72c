"""``openprose.files``: every layer reads program and configuration files through it, so that
a FIFO cannot block and a device or a huge file cannot fill memory (issue 12, finding 18)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openprose.files import (
    DEFAULT_MAX_FILE_SIZE,
    FileTooLarge,
    NotRegularFile,
    read_bytes,
    read_text,
)
from tests.fifos import finishes

needs_fifos = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


def test_regular_file_is_read_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "a.prose"
    path.write_bytes(b'\xef\xbb\xbfsession "a"\r\nsession "\xc3\xa9"\r')
    assert read_bytes(path) == path.read_bytes()
    # The byte-order mark goes, line endings stay: positions are positions in the file.
    assert read_text(path) == 'session "a"\r\nsession "é"\r'


def test_undecodable_text(tmp_path: Path) -> None:
    path = tmp_path / "a.prose"
    path.write_bytes(b"ok \xff")
    with pytest.raises(UnicodeDecodeError):
        read_text(path)
    assert read_text(path, errors="replace") == "ok \ufffd"


@needs_fifos
def test_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.prose"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile) as raised:
        finishes(lambda: read_bytes(fifo), fifo)
    assert raised.value.strerror == "not a regular file"
    assert raised.value.filename == str(fifo)


@needs_fifos
def test_device_behind_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "zero.prose"
    link.symlink_to("/dev/zero")
    with pytest.raises(NotRegularFile):
        read_bytes(link)


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        read_bytes(tmp_path)


def test_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.prose"
    path.write_bytes(b"#" * 101)
    assert read_bytes(path, 101) == b"#" * 101
    with pytest.raises(FileTooLarge) as raised:
        read_bytes(path, 100)
    assert (raised.value.size, raised.value.limit) == (101, 100)
    assert raised.value.strerror == "larger than 100 bytes"
    assert DEFAULT_MAX_FILE_SIZE == 10 * 1024 * 1024


def test_refusals_are_os_errors(tmp_path: Path) -> None:
    # Callers that already skip unreadable files (except OSError) skip these as well.
    assert issubclass(NotRegularFile, OSError) and issubclass(FileTooLarge, OSError)
    with pytest.raises(FileNotFoundError):
        read_bytes(tmp_path / "missing.prose")
