"""Only regular files are read, up to a size limit: ``prose check``, ``fmt`` and ``compile``.

A FIFO or a device named on the command line (or a FIFO named ``*.prose`` in a directory)
used to hang the command or read until memory ran out.  Every child here runs with a
short timeout and a cap on its address space, so a regression fails instead of hanging the
suite or starving the machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")

TIMEOUT = 30  # seconds; a correct run takes well under one
MEMORY_CAP = 1 << 30  # bytes of address space for the child

PROGRAM = 'session  "Hello"\n'
TIDY_PROGRAM = 'session "Hello"\n'


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def prose(cwd: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    environment["PYTHONIOENCODING"] = "utf-8"
    completed = subprocess.run(
        [sys.executable, "-m", "openprose", *args],
        cwd=cwd,
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=environment,
        timeout=TIMEOUT,
        preexec_fn=_cap_memory,
    )
    return subprocess.CompletedProcess(
        completed.args,
        completed.returncode,
        completed.stdout.decode("utf-8", "replace"),
        completed.stderr.decode("utf-8", "replace"),
    )


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.prose"
    os.mkfifo(path)
    return path


# --------------------------------------------------------------------------- not regular files


@pytest.mark.parametrize("command", ["check", "fmt", "compile"])
def test_fifo_named_on_the_command_line_is_refused(
    tmp_path: Path, fifo: Path, command: str
) -> None:
    result = prose(tmp_path, command, "pipe.prose")
    assert result.returncode == 2, result.stderr
    assert "prose: error: cannot read pipe.prose: not a regular file" in result.stderr


def test_fifo_found_in_a_directory_is_reported_and_the_rest_checked(
    tmp_path: Path, fifo: Path
) -> None:
    (tmp_path / "real.prose").write_text('session "unterminated\n', encoding="utf-8")
    result = prose(tmp_path, "check", "--format", "concise", ".")
    assert result.returncode == 2
    assert "cannot read pipe.prose: not a regular file" in result.stderr
    assert "real.prose:1:9: error[E001]" in result.stdout


def test_fmt_formats_the_rest_of_a_directory_with_a_fifo(tmp_path: Path, fifo: Path) -> None:
    real = tmp_path / "real.prose"
    real.write_text(PROGRAM, encoding="utf-8")
    result = prose(tmp_path, "fmt", ".")
    assert result.returncode == 2
    assert "cannot read pipe.prose: not a regular file" in result.stderr
    assert real.read_text(encoding="utf-8") == TIDY_PROGRAM
    assert fifo.exists() and not fifo.is_file()


@pytest.mark.parametrize("command", ["check", "fmt", "compile"])
def test_a_device_is_refused(tmp_path: Path, command: str) -> None:
    result = prose(tmp_path, command, "/dev/zero")
    assert result.returncode == 2, result.stderr
    assert "cannot read /dev/zero: not a regular file" in result.stderr


# --------------------------------------------------------------------------- size limit


def test_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big.prose").write_text("# padding\n" * 300, encoding="utf-8")  # 3,000 bytes
    result = prose(tmp_path, "check", "--max-file-size", "2K", "big.prose")
    assert result.returncode == 2
    assert (
        "prose: error: cannot read big.prose: 3000 bytes, more than the limit of 2048 "
        "(see --max-file-size)"
    ) in result.stderr


def test_file_within_the_limit_is_read(tmp_path: Path) -> None:
    (tmp_path / "big.prose").write_text("# padding\n" * 300, encoding="utf-8")
    result = prose(tmp_path, "check", "--max-file-size", "3000", "big.prose")
    assert result.returncode == 0, result.stderr


def test_default_limit_is_ten_mebibytes(tmp_path: Path) -> None:
    line = "# " + "x" * 1021 + "\n"  # 1 KiB
    (tmp_path / "huge.prose").write_text(line * (10 * 1024 + 1), encoding="utf-8")
    (tmp_path / "fits.prose").write_text(line * 4, encoding="utf-8")
    result = prose(tmp_path, "check", "huge.prose", "fits.prose")
    assert result.returncode == 2
    assert "cannot read huge.prose: 10486784 bytes, more than the limit of 10485760" in (
        result.stderr
    )
    assert "1 path could not be read" in result.stderr


@pytest.mark.parametrize("command", ["fmt", "compile"])
def test_limit_applies_to_fmt_and_compile(tmp_path: Path, command: str) -> None:
    path = tmp_path / "big.prose"
    path.write_text(PROGRAM * 100, encoding="utf-8")
    result = prose(tmp_path, command, "--max-file-size", "1K", "big.prose")
    assert result.returncode == 2
    assert "more than the limit of 1024" in result.stderr
    assert path.read_text(encoding="utf-8") == PROGRAM * 100


@pytest.mark.parametrize("command", ["check", "fmt", "compile"])
def test_standard_input_over_the_limit_is_refused(tmp_path: Path, command: str) -> None:
    result = prose(tmp_path, command, "--max-file-size", "1K", "-", stdin=b"# x\n" * 1000)
    assert result.returncode == 2
    assert "cannot read <stdin>: more than the limit of 1024 bytes" in result.stderr


def test_endless_standard_input_is_cut_at_the_limit(tmp_path: Path) -> None:
    with open("/dev/zero", "rb") as zeros:
        completed = subprocess.run(
            [sys.executable, "-m", "openprose", "check", "--max-file-size", "1M", "-"],
            cwd=tmp_path,
            stdin=zeros,
            capture_output=True,
            timeout=TIMEOUT,
            preexec_fn=_cap_memory,
        )
    assert completed.returncode == 2
    assert b"cannot read <stdin>: more than the limit of 1048576 bytes" in completed.stderr


def test_standard_input_within_the_limit_is_read(tmp_path: Path) -> None:
    result = prose(tmp_path, "fmt", "--max-file-size", "1K", "-", stdin=PROGRAM.encode())
    assert result.returncode == 0, result.stderr
    assert result.stdout == TIDY_PROGRAM


@pytest.mark.parametrize(
    ("written", "expected"),
    [("512", "512"), ("4k", "4096"), ("3M", "3145728"), ("1G", "1073741824")],
)
def test_sizes_take_binary_suffixes(tmp_path: Path, written: str, expected: str) -> None:
    (tmp_path / "big.prose").write_text("#\n" * 1000, encoding="utf-8")
    result = prose(tmp_path, "check", "--max-file-size", written, "big.prose")
    if int(expected) < 2000:
        assert f"more than the limit of {expected} " in result.stderr
    else:
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("bad", ["", "ten", "-1", "0", "5X", "1.5M"])
def test_bad_sizes_are_usage_errors(tmp_path: Path, bad: str) -> None:
    result = prose(tmp_path, "check", "--max-file-size", bad, ".")
    assert result.returncode == 2
    assert "--max-file-size" in result.stderr
    assert "Traceback" not in result.stderr


# --------------------------------------------------------------------------- files read on the way


def test_imported_fifo_is_reported_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "x.prose")
    (tmp_path / "main.prose").write_text('use "./x" as x\n', encoding="utf-8")
    result = prose(tmp_path, "check", "--format", "concise", "main.prose")
    assert result.returncode == 1, result.stderr
    assert "main.prose:1:5: error[E072]" in result.stdout
    assert "x.prose` cannot be read: not a regular file" in result.stdout


def test_imported_device_is_reported_not_read(tmp_path: Path) -> None:
    (tmp_path / "x.prose").symlink_to("/dev/zero")
    (tmp_path / "main.prose").write_text('use "./x.prose" as x\n', encoding="utf-8")
    result = prose(tmp_path, "check", "--format", "concise", "main.prose")
    assert result.returncode == 1, result.stderr
    assert "`/dev/zero` cannot be read: not a regular file" in result.stdout


@pytest.mark.parametrize("name", ["prose.toml", "pyproject.toml"])
def test_configuration_fifo_is_an_invalid_configuration(tmp_path: Path, name: str) -> None:
    os.mkfifo(tmp_path / name)
    (tmp_path / "main.prose").write_text(TIDY_PROGRAM, encoding="utf-8")
    found = prose(tmp_path, "check", "main.prose")
    named = prose(tmp_path, "check", "--config", name, "main.prose")
    for result in (found, named):
        assert result.returncode == 2
        assert result.stderr.startswith("prose: error: invalid configuration in ")
        assert f"{name}: cannot read it: not a regular file" in result.stderr


def test_configuration_device_is_an_invalid_configuration(tmp_path: Path) -> None:
    (tmp_path / "main.prose").write_text(TIDY_PROGRAM, encoding="utf-8")
    result = prose(tmp_path, "check", "--config", "/dev/zero", "main.prose")
    assert result.returncode == 2
    assert (
        "prose: error: invalid configuration in /dev/zero: cannot read it: not a regular file"
    ) in result.stderr
