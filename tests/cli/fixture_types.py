"""The types of the command-line fixtures of `conftest.py`, for annotating the tests using them.

In a module of their own because a test does not import from a conftest (pytest loads it as a
plugin; importing it by name works only while the repository root is on `sys.path`)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

# The `prose` fixture: run `python -m openprose ARGS...`, return the finished child process.
RunProse = Callable[..., subprocess.CompletedProcess[str]]
# The `source` fixture: write (relative path, text) under the test's directory, return the path.
WriteSource = Callable[[str, str], Path]
