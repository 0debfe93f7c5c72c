"""What durability costs (issue 10 figures), on each state backend available here.

1. Journal cost per step: a program of N sessions run on a backend that answers at once,
   with the backend's state (every answer journaled, every binding committed: value,
   then journal entry, then marker) minus the same run with no state, per step.
   Goal: < 1 ms on filesystem and sqlite.
2. Resume of a run with 1,000 journaled steps to its first new backend call: the run stops
   after 1,000 sessions; the resume (opening the run, re-walking the 1,000 steps from the
   journal) is timed until the backend is called for session 1,001.  Goal: < 1 s.
3. Bindings committed per second, calling the store directly.
4. What a block call's execution id costs (``Journal.number``), beside the single journal
   entry it cost before the run's counter.

PostgreSQL is measured when ``--postgres-url`` is given (or OPENPROSE_POSTGRES_URL is set),
or with ``--postgres-cluster``: a throwaway cluster with PostgreSQL's default durability
settings, started as the tests start theirs (needs Debian's postgresql).
Prints figures; asserts nothing.  The machine is shared: the median of several runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
try:
    import openprose  # noqa: F401
except ImportError:  # pragma: no cover - running from a bare checkout
    sys.path.insert(0, str(REPO_ROOT / "server"))

from common import postgres_server  # noqa: E402

from openprose.syntax import parse  # noqa: E402
from openprose.vm.backends.base import SessionRequest, SessionResult  # noqa: E402
from openprose.vm.backends.offline import OfflineBackend  # noqa: E402
from openprose.vm.interpreter import Options  # noqa: E402
from openprose.vm.runner import run_file  # noqa: E402
from openprose.vm.state import StateError, open_catalog  # noqa: E402


class Instant(OfflineBackend):
    """Answers every session at once; remembers when it was first called."""

    def __init__(self) -> None:
        super().__init__()
        self.first_call: float | None = None

    async def run_session(self, request: SessionRequest) -> SessionResult:
        if self.first_call is None:
            self.first_call = time.perf_counter()
        return SessionResult(text="ok", session_ref="instant")


def available(postgres_url: str | None) -> list[str]:
    found = ["filesystem"]
    for state, module in (("sqlite", "sqlite"), ("in-context", "in_context")):
        try:
            __import__(f"openprose.vm.state.{module}")
            found.append(state)
        except ImportError:
            print(f"   ({state}: not available in this checkout)")
    if postgres_url:
        os.environ["OPENPROSE_POSTGRES_URL"] = postgres_url
        found.append("postgres")
    else:
        print("   (postgres: give --postgres-url to measure it)")
    return found


def program(n: int) -> str:
    return "".join(f'let r{i} = session "Step {i}"\n' for i in range(n))


def run_once(root: Path, text: str, state: str | None, **kwargs: Any) -> tuple[float, Any]:
    path = root / "bench.prose"
    path.write_text(text, encoding="utf-8")
    backend = kwargs.pop("backend", None) or Instant()
    start = time.perf_counter()
    result = asyncio.run(
        run_file(
            path,
            {},
            backend=backend,
            runs_root=root / ".prose" / "runs" if state else None,
            state=state or "filesystem",
            checked=(text, parse(text)),
            **kwargs,
        )
    )
    return time.perf_counter() - start, result


def journal_cost(states: list[str], n: int, repeats: int, tmp: str | None) -> None:
    print(f"1. journal cost per step ({n} sessions each bound by let; median of {repeats}; "
          "goal < 1 ms on filesystem and sqlite)")  # fmt: skip
    text = program(n)
    baseline = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(dir=tmp) as directory:
            baseline.append(run_once(Path(directory), text, None)[0])
    base = statistics.median(baseline)
    print(f"   {'no state':12} {base / n * 1000:7.3f} ms/step (the interpreter alone)")
    for state in states:
        times = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(dir=tmp) as directory:
                elapsed, result = run_once(Path(directory), text, state)
                assert result.status == "success", result.error
                times.append(elapsed)
        cost = (statistics.median(times) - base) / n * 1000
        print(f"   {state:12} {statistics.median(times) / n * 1000:7.3f} ms/step in all, "
              f"{cost:7.3f} ms/step of it durability")  # fmt: skip


def journal_alone(n: int, tmp: str | None) -> None:
    """The journal's own part of a step: the answer (synced) and the commit entry."""
    from openprose.vm.state.base import StepRecord
    from openprose.vm.state.journal import Journal

    with tempfile.TemporaryDirectory(dir=tmp) as directory:
        journal = Journal.sqlite(Path(directory) / "journal.db", "bench")
        journal.start_run("filesystem", "bench.prose", "", "", {}, "bench")
        start = time.perf_counter()
        for i in range(n):
            journal.record_step(StepRecord("session", f"{i}#attempt1", "h", {"text": "ok"}))
            journal.record_commit(str(i), f"r{i}", None, "h")
        elapsed = time.perf_counter() - start
        journal.close()
    print(f"   {'journal only':12} {elapsed / n * 1000:7.3f} ms/step (journal.db: the answer "
          "synced, then the commit entry; no binding file)")  # fmt: skip


def resume_time(states: list[str], steps: int, repeats: int, tmp: str | None) -> None:
    print(f"2. resume of a run with {steps} journaled steps to its first new backend call "
          f"(median of {repeats}; goal < 1 s)")  # fmt: skip
    text = program(steps + 1)
    for state in states:
        if state == "in-context":
            print(f"   {state:12} (keeps nothing to resume, by design)")
            continue
        times = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(dir=tmp) as directory:
                root = Path(directory)
                _, stopped = run_once(root, text, state, options=Options(max_sessions=steps))
                assert stopped.status == "error", "the first run should stop at the limit"
                backend = Instant()
                start = time.perf_counter()
                catalog = open_catalog(state, root / ".prose" / "runs")
                store = catalog.open(stopped.run_id)
                path = root / "bench.prose"
                result = asyncio.run(run_file(path, backend=backend, resume=store))
                assert result.status == "success", result.error
                assert backend.first_call is not None
                times.append(backend.first_call - start)
        print(f"   {state:12} {statistics.median(times) * 1000:8.1f} ms")


def fresh_store(state: str, directory: Path) -> Any:
    """A new run's store of ``state`` under ``directory``; None (said) where that state
    cannot be opened here."""
    try:
        catalog = open_catalog(state, directory / ".prose" / "runs")
        return catalog.create('session "x"\n', "bench.prose", {})
    except StateError as error:
        print(f"   {state:12} unavailable: {error}")
        return None


def bindings_per_second(states: list[str], n: int, tmp: str | None) -> None:
    print(f"3. bindings committed per second ({n} bindings of 200 characters, one store)")
    value = "x" * 200
    for state in states:
        with tempfile.TemporaryDirectory(dir=tmp) as directory:
            store = fresh_store(state, Path(directory))
            if store is None:
                continue
            start = time.perf_counter()
            for i in range(n):
                store.commit_binding(str(i), f"b{i}", "let", "let b = ...", value, None)
            elapsed = time.perf_counter() - start
            store.close()
        print(f"   {state:12} {n / elapsed:9.0f} bindings/s ({elapsed / n * 1000:.3f} ms each)")


def numbers_per_second(states: list[str], n: int, tmp: str | None) -> None:
    print(
        f"4. a block call's execution id ({n} of them, one store): "
        "Journal.number (the run's counter, shared by the processes that run its items) "
        "beside the one journal entry a run wrote for each before the counter"
    )
    for state in states:
        with tempfile.TemporaryDirectory(dir=tmp) as directory:
            store = fresh_store(state, Path(directory))
            if store is None:
                continue
            journal = store.journal
            start = time.perf_counter()
            for i in range(n):
                journal.number(f"{i}/study", "@execution:", durable=True)
            counted = time.perf_counter() - start
            start = time.perf_counter()
            for i in range(n):
                journal.record_commit(f"{i}/study", "@before:", None, str(i + 1), durable=True)
            entries = time.perf_counter() - start
            store.close()
        print(
            f"   {state:12} {counted / n * 1000:.3f} ms each with the counter, "
            f"{entries / n * 1000:.3f} ms with an entry alone"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500, help="sessions in test 1")
    parser.add_argument("--resume-steps", type=int, default=1000)
    parser.add_argument("--bindings", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--postgres-url", default=os.environ.get("OPENPROSE_POSTGRES_URL"))
    parser.add_argument("--postgres-cluster", action="store_true")
    parser.add_argument("--tmp", help="where run directories go (default: the system's)")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 20 steps, 50 bindings, 1 repeat"
    )
    args = parser.parse_args()
    if args.quick:
        args.steps, args.resume_steps, args.bindings, args.repeats = 20, 20, 50, 1
    with postgres_server(args.postgres_url, args.postgres_cluster) as url:
        states = available(url)
        journal_cost(states, args.steps, args.repeats, args.tmp)
        journal_alone(args.steps, args.tmp)
        resume_time(states, args.resume_steps, args.repeats, args.tmp)
        bindings_per_second(states, args.bindings, args.tmp)
        numbers_per_second(states, args.bindings, args.tmp)


if __name__ == "__main__":
    main()
