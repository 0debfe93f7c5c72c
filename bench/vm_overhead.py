"""The bundled VM's own cost on the offline backend (issue 9 figures).

1. Interpreter overhead per statement, model time excluded: a program of N statements run on
   a backend that answers at once; with and without the run directory (whose atomic binding
   files and appended logs cost file-system time).  Goal: < 0.2 ms a statement.
2. A ``parallel for`` over 1,000 items at concurrency 8.  Goal: < 1 s.
3. ``prose run`` from starting the process to its first backend call (the timestamp of the
   first session's ``success`` event in the JSON trace).  Goal: < 300 ms.
4. On the dbos engine, deciding whether a fan-out's items may travel to workers
   (``branches.why_local``) when they call a program: the first time a run reaches the
   fan-out and each later time (inside a loop).  It once loaded and checked the called
   program every time: about 1 ms a time for a 31-statement program.

Prints figures; asserts nothing.  The machine is shared, so figures are noisy: the median of
several runs is shown.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
try:
    import openprose  # noqa: F401
except ImportError:  # pragma: no cover - running from a bare checkout
    sys.path.insert(0, str(REPO_ROOT / "server"))

from openprose.syntax import parse  # noqa: E402
from openprose.vm.backends.base import SessionRequest, SessionResult  # noqa: E402
from openprose.vm.backends.offline import OfflineBackend  # noqa: E402
from openprose.vm.interpreter import Interpreter, Options  # noqa: E402
from openprose.vm.state.filesystem import FilesystemCatalog  # noqa: E402


class Instant(OfflineBackend):
    """Answers every session at once with a fixed text: no model time at all."""

    async def run_session(self, request: SessionRequest) -> SessionResult:
        return SessionResult(text="ok", session_ref="instant")


TMP_ROOT: str | None = None  # where run directories go (--tmp); None: the system default


def timed_run(text: str, with_dir: bool, options: Options | None = None) -> float:
    module = parse(text)
    with tempfile.TemporaryDirectory(dir=TMP_ROOT) as directory:
        catalog = FilesystemCatalog(Path(directory))
        store = catalog.create(text, "bench.prose", {}) if with_dir else None
        interpreter = Interpreter(module, Instant(), store=store, options=options)
        start = time.perf_counter()
        result = asyncio.run(interpreter.run({}))
        elapsed = time.perf_counter() - start
    assert result.status == "success", result.error
    return elapsed


def per_statement(n: int, repeats: int) -> None:
    programs = {
        "let of a literal": "".join(f'let v{i} = "x{i}"\n' for i in range(n)),
        "anonymous session": "".join(f'session "Step {i}"\n' for i in range(n)),
        "let of a session, with context": 'let seed = "s"\n'
        + "".join(f'let r{i} = session "Step {i}"\n  context: seed\n' for i in range(n)),
    }
    print(f"1. interpreter overhead per statement ({n} statements, median of {repeats}; "
          "goal < 0.2 ms)")  # fmt: skip
    for label, text in programs.items():
        for with_dir in (False, True):
            times = [timed_run(text, with_dir) for _ in range(repeats)]
            ms = statistics.median(times) / n * 1000
            where = "with run directory" if with_dir else "in memory"
            print(f"   {label:32} {where:19} {ms:7.3f} ms/statement")


def parallel_for(repeats: int) -> None:
    items = ", ".join(f'"i{k}"' for k in range(1000))
    text = f'let items = [{items}]\nlet out = parallel for x in items:\n  session "Do {{x}}"\n'
    print("2. parallel for over 1,000 items at concurrency 8 (goal < 1 s)")
    for with_dir in (False, True):
        times = [timed_run(text, with_dir, Options(concurrency=8)) for _ in range(repeats)]
        where = "with run directory" if with_dir else "in memory"
        print(f"   {where:19} {statistics.median(times):6.3f} s (median of {repeats})")


def start_to_first_call(repeats: int) -> None:
    print("3. `prose run` start to the first backend call (goal < 300 ms)")
    samples = []
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "main.prose"
        path.write_text('session "First"\nsession "Second"\n', encoding="utf-8")
        for _ in range(repeats):
            start = time.time()
            done = subprocess.run(
                [sys.executable, "-m", "openprose", "run", str(path), "--trace",
                 "--trace-format", "json", "--run-dir", directory],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            events = [json.loads(x) for x in done.stderr.splitlines() if x.startswith("{")]
            first = next(e for e in events if e["event"] == "position")
            samples.append((first["ts"] - start) * 1000)
    print(f"   median {statistics.median(samples):.0f} ms, min {min(samples):.0f} ms "
          f"({repeats} runs; process start to the first session's [Position], the instant "
          "before the backend is called)")  # fmt: skip


def travel_verdict(repeats: int) -> None:
    from openprose.syntax import tree as t
    from openprose.vm.branches import why_local
    from openprose.vm.runner import load_import
    from openprose.vm.state.filesystem import FilesystemCatalog

    study = "".join(f'let s{i} = session "Study {{topic}} {i}"\n' for i in range(30))
    text = (
        'use "./study" as study\nlet out = parallel for x in ["a", "b", "c"]:\n  study(topic: x)\n'
    )
    print(
        f"4. judging whether a fan-out calling a 31-statement program travels ({repeats} fan-outs)"
    )
    with tempfile.TemporaryDirectory(dir=TMP_ROOT) as directory:
        root = Path(directory)
        (root / "study.prose").write_text('input topic: "t"\n' + study, encoding="utf-8")
        (root / "main.prose").write_text(text, encoding="utf-8")
        store = FilesystemCatalog(root / "runs").create(text, "main.prose", {})
        module = parse(text)
        interpreter = Interpreter(
            module, Instant(), program_path=root / "main.prose", store=store,
            load_program=load_import,
        )  # fmt: skip
        interpreter.collect()
        [host] = [node for node in t.iter_nodes(module) if isinstance(node, t.ForEach)]
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            verdict = why_local(interpreter, host)
            times.append(time.perf_counter() - start)
        store.close()
    assert verdict is None, verdict
    later = statistics.median(times[1:]) if len(times) > 1 else times[0]
    print(f"   first fan-out {times[0] * 1000:.3f} ms, each later one {later * 1e6:.1f} µs "
          "(median)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--statements", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--tmp", help="directory for the run directories (e.g. /dev/shm to leave the disk out)"
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run: 50 statements, 1 repeat")
    args = parser.parse_args()
    if args.quick:
        args.statements, args.repeats = 50, 1
    global TMP_ROOT
    TMP_ROOT = args.tmp
    print(f"run directories under {args.tmp or tempfile.gettempdir()}")
    per_statement(args.statements, args.repeats)
    parallel_for(args.repeats)
    start_to_first_call(args.repeats)
    travel_verdict(20 if args.quick else 200)


if __name__ == "__main__":
    main()
