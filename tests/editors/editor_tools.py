"""What the Neovim and Emacs tests share: the programs both editors are driven with, running an
editor, and what to do when an editor, Node.js or an npm install is missing.

On a developer's machine a missing tool skips the test and says how to install it, so the
README's test command works on a fresh checkout. Under CI (the `CI` variable is set, as
`.ci/run` and every hosted CI service do) a missing tool is a failure: CI installs them all,
so a skip there would hide a broken set-up.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import site
import subprocess
from pathlib import Path
from typing import NoReturn

import pytest


def unavailable(message: str) -> NoReturn:
    """Skip (or, under CI, fail) because a tool the test drives is not installed."""
    if os.environ.get("CI"):
        pytest.fail(
            f"{message} (CI is set, so missing tools fail instead of skipping)", pytrace=False
        )
    pytest.skip(message)


TIMEOUT_S = 90  # for one editor run

PROGRAM = '''\
# A brief, drafted and reviewed.
agent writer:
    model: sonnet
    prompt: "You write \\"plain\\" briefs"

let draft = session: writer
    prompt: "Write a draft"

let summary = session: editor
  prompt: """
Summarise {draft} and keep the "open questions".
"""
  context: draft

if **the summary is too long**:
  summary = session: writer
    prompt: "Shorten it"
    context: summary
'''

MISINDENTED = """\
agent a:
model: opus
    prompt: "x"
let d = session: a
prompt: "y"
let e = session "z"
if **c**:
session "a"
else:
session "b"
"""

INDENTED = """\
agent a:
  model: opus
  prompt: "x"
let d = session: a
  prompt: "y"
let e = session "z"
if **c**:
  session "a"
else:
  session "b"
"""


def line_of(prefix: str, text: str = PROGRAM) -> int:
    return next(i for i, line in enumerate(text.split("\n")) if line.startswith(prefix))


def editor(command: str, package: str) -> str:
    found = shutil.which(command)
    if found is None:
        unavailable(f"`{command}` is not installed: apt-get install -y {package}")
    return found


def run_editor(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """Runs an editor in its own process group; on timeout the whole group is killed."""
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"{argv[0]} did not finish in {TIMEOUT_S} s\n{stdout}\n{stderr}")
    finally:
        with contextlib.suppress(ProcessLookupError):  # a server that outlived the editor
            os.killpg(process.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def editor_env(home: Path, **prose: str) -> dict[str, str]:
    """The environment an editor under test runs in: its own HOME, this checkout's server on
    the Python path, and the ``PROSE_*`` variables its driver script reads."""
    root = Path(__file__).resolve().parents[2]
    return {
        **os.environ,
        "HOME": str(home),
        # The server's packages may be in the user's site directory (pip install --user).
        "PYTHONUSERBASE": site.getuserbase(),
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(root / "server"), os.environ.get("PYTHONPATH", "")) if p
        ),
        **{f"PROSE_{name.upper()}": value for name, value in prose.items()},
    }
