"""Fixtures for running the real command line in a child process on files we write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.fixture_types import RunProse, WriteSource


@pytest.fixture
def prose(tmp_path: Path) -> RunProse:
    """Run ``python -m openprose ARGS...`` in ``tmp_path`` (or ``cwd``), capturing output."""

    def run(
        *args: str, cwd: Path | None = None, stdin: str | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
        environment.update(PYTHONIOENCODING="utf-8", **env)
        return subprocess.run(
            [sys.executable, "-m", "openprose", *args],
            cwd=cwd or tmp_path,
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=environment,
            timeout=60,
        )

    return run


@pytest.fixture
def source(tmp_path: Path) -> WriteSource:
    """Write a file under ``tmp_path`` byte for byte (UTF-8, no newline translation)."""

    def write(relative: str, text: str) -> Path:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return path

    return write
