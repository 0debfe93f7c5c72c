"""First start of the VSIX's bundled server: process start to `initialize` answered.

Lays out a copy of the extension's ``bundled/libs`` in a scratch directory (by default the
pinned distributions of vscode-extension/server-requirements.txt as installed in this
environment, plus the checkout's ``server/openprose``; with ``--libs`` an existing layout, for
example vscode-extension/bundled/libs after ``npm run bundle-server``), then starts the server
as the extension does (``<python> -m openprose.lsp``, the libs first on PYTHONPATH and as the
working directory), sends ``initialize`` on stdin as soon as the process exists and times the
answer. Three cases, ``--runs`` starts each (interleaved, so a burst of load on the shared
machine hits all three alike):

* ``no bytecode``: every ``__pycache__`` removed before each start: the first start of a VSIX
  that ships no bytecode (Python compiles every module and writes timestamp bytecode).
* ``bytecode of an earlier start``: the bytecode that such a start wrote: its later starts.
* ``shipped bytecode``: what scripts/bundle-server.py ships (unchecked-hash bytecode): the
  first start of the VSIX. The run also checks that the start writes no file into the libs.

Wall time (``time.perf_counter``) from just before the process is created to the answer read;
CPU time (user + system, from ``os.wait4``) of the whole server process, which also shuts down
after answering. ``python -c pass`` is the interpreter's own start with this environment's
site-packages, for reference. Asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import IO

from common import REPO_ROOT, format_table, median

EXTENSION = REPO_ROOT / "vscode-extension"
GOAL_S = 0.5
# Settings of the environment that would change what is measured (where bytecode is written,
# whether it is written), dropped from the server's environment.
UNSET = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "PYTHONPATH", "PYTHONSTARTUP")


def bundle_script() -> ModuleType:
    """vscode-extension/scripts/bundle-server.py, for its compile step (a file, not a module)."""
    path = EXTENSION / "scripts" / "bundle-server.py"
    spec = importlib.util.spec_from_file_location("bundle_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assemble(libs: Path, package: Path) -> list[str]:
    """The bundle's layout from this environment: each pinned distribution's files (from its
    RECORD, without bytecode) and ``package``. Returns notes on versions that differ from
    the pins (the figures are then for other versions than the VSIX's)."""
    notes = []
    pinned = (EXTENSION / "server-requirements.txt").read_text("utf-8")
    for name, version in re.findall(r"^([A-Za-z0-9._-]+)==(\S+)", pinned, re.MULTILINE):
        dist = metadata.distribution(name)
        if dist.version != version:
            notes.append(f"{name} {dist.version} installed, {version} pinned")
        for file in dist.files or []:
            if file.parts[0] == ".." or "__pycache__" in file.parts or file.suffix == ".pyc":
                continue  # console scripts, and bytecode this environment made
            source = Path(str(dist.locate_file(file)))
            if source.is_file():
                (libs / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, libs / file)
    shutil.copytree(
        package, libs / "openprose", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    return notes


def remove_bytecode(libs: Path) -> None:
    for cache in list(libs.rglob("__pycache__")):
        shutil.rmtree(cache)


def file_count(libs: Path) -> int:
    return sum(1 for path in libs.rglob("*") if path.is_file())


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def read_message(stream: IO[bytes]) -> dict[str, object]:
    length = None
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    if length is None:
        raise RuntimeError("the server closed its output before answering")
    message: dict[str, object] = json.loads(stream.read(length))
    return message


def answer(stream: IO[bytes], request_id: int) -> dict[str, object]:
    while True:
        message = read_message(stream)
        if message.get("id") == request_id:
            return message


def start(python: str, libs: Path, env: dict[str, str]) -> tuple[float, float]:
    """One start: (wall seconds to the initialize answer, CPU seconds of the process)."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": os.getpid(), "rootUri": None, "capabilities": {}},
    }
    began = time.perf_counter()
    process = subprocess.Popen(
        [python, "-m", "openprose.lsp"],
        cwd=libs,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(frame(initialize))
    process.stdin.flush()
    reply = answer(process.stdout, 1)
    wall = time.perf_counter() - began
    if "result" not in reply:
        raise RuntimeError(f"initialize failed: {reply}")
    process.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    process.stdin.flush()
    answer(process.stdout, 2)
    process.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    process.stdin.close()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stdout.close()
    return wall, usage.ru_utime + usage.ru_stime


def interpreter_start(python: str, env: dict[str, str]) -> tuple[float, float]:
    began = time.perf_counter()
    process = subprocess.Popen([python, "-c", "pass"], env=env)
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return time.perf_counter() - began, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="starts per case (default 9)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 starts per case")
    parser.add_argument("--libs", type=Path, help="an existing bundled/libs to copy and time")
    parser.add_argument(
        "--package",
        type=Path,
        default=REPO_ROOT / "server" / "openprose",
        help="the openprose package to bundle when --libs is not given (default: the checkout's)",
    )
    parser.add_argument("--python", default=sys.executable, help="the Python that runs the server")
    args = parser.parse_args()
    runs = 2 if args.quick else args.runs

    compile_bytecode = bundle_script().compile_bytecode
    with tempfile.TemporaryDirectory(prefix="prose-startup-") as scratch:
        libs = Path(scratch) / "libs"
        if args.libs is not None:
            shutil.copytree(args.libs, libs)
            notes = [f"layout copied from {args.libs}"]
        else:
            libs.mkdir()
            notes = assemble(libs, args.package)
        env = {k: v for k, v in os.environ.items() if k not in UNSET}
        server_env = {**env, "PYTHONPATH": str(libs)}

        def no_bytecode() -> tuple[float, float]:
            remove_bytecode(libs)
            return start(args.python, libs, server_env)

        def earlier_start() -> tuple[float, float]:
            remove_bytecode(libs)
            start(args.python, libs, server_env)  # writes the bytecode, untimed
            return start(args.python, libs, server_env)

        def shipped() -> tuple[float, float]:
            remove_bytecode(libs)
            compile_bytecode(libs)
            before = file_count(libs)
            result = start(args.python, libs, server_env)
            if file_count(libs) != before:
                notes.append("the start with shipped bytecode wrote files into the libs")
            return result

        cases: list[tuple[str, Callable[[], tuple[float, float]]]] = [
            ("python -c pass", lambda: interpreter_start(args.python, env)),
            ("no bytecode (first start, before)", no_bytecode),
            ("bytecode of an earlier start", earlier_start),
            ("shipped bytecode (first start)", shipped),
        ]
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in cases}
        for _ in range(runs):
            for name, case in cases:
                samples[name].append(case())

    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    print(f"server start to `initialize` answered, {runs} starts per case, Python {version}")
    rows = []
    for name, _ in cases:
        walls = [wall * 1000 for wall, _ in samples[name]]
        cpus = [cpu * 1000 for _, cpu in samples[name]]
        rows.append(
            [
                name,
                f"{median(walls):.0f}",
                f"{min(walls):.0f}",
                f"{max(walls):.0f}",
                f"{median(cpus):.0f}",
                "" if name.startswith("python") else f"<= {GOAL_S * 1000:.0f}",
            ]
        )
    header = ["case", "p50 wall ms", "min ms", "max ms", "p50 CPU ms", "goal"]
    print(format_table(header, rows))
    for note in notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
