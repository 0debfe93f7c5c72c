"""The dbos engine's figures (issue 16): steps per second with 1, 2 and 3 workers beside the
local engine on the same runs, and the recovery time from a worker's death to its run going on
in another worker.

1. Throughput: ``--runs`` runs of a program of ``--steps`` sessions on the offline backend
   (each session answering after ``--delay`` seconds, standing for a model's latency).  The
   local engine executes them in one process, at most ``--concurrency`` at once (what one
   worker does, without DBOS); then, for each worker count, the runs are queued and that many
   ``prose worker`` processes (``--concurrency`` runs each) execute them.  Steps per second:
   the runs' sessions over the wall time from the first worker's start to the last run's end
   (worker start-up included).
2. Fan-out: one run of a ``parallel for`` over ``--items`` items (one session each, paced
   by ``--delay``), at most ``--fan-out-concurrency`` items in flight: the local engine in one
   process, then the dbos engine whose items are workflows of the branches queue, executed by
   1, 2 and 3 workers (16 items at once each).  Items per second over the same wall time,
   and the system database's size afterwards (each item's task and outcome are stored).
3. Recovery: one run paced by ``--delay`` is executed by a worker that is sent SIGKILL after
   its third exchange, with a second worker already running; the time from the kill to the
   first exchange the second worker answers (its detection, once a second, plus a queue poll
   and the replay of the journal).

4. Pacing: what a model request of a rate-limited backend spends taking its place in the
   window (engines/dbos_pacing.py, one transaction in the system database), in a window too
   large to ever make it wait.

5. Spending limits: the fan-out of 2. again on the largest number of workers, its run with
   a session limit it never reaches (every session start and every call a row of the system
   database: engines/dbos_budget.py), and what one start and one charge take alone.

6. A called program's fan-out: the fan-out of 2. as the program a run calls, on the largest
   number of workers (the run's process runs the call and spreads its items).

The DBOS system database is SQLite in a temporary directory (one machine).  Prints figures;
asserts nothing.  The machine has two cores: past two busy workers, more add little.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
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

from openprose.vm.engines.base import Attachment, RunSpec  # noqa: E402
from openprose.vm.engines.local import LocalExecutor  # noqa: E402
from openprose.vm.interpreter import Options  # noqa: E402
from openprose.vm.rundir import new_run_id  # noqa: E402


def program(steps: int) -> str:
    lines = [f'let s{i} = session "Step {i} of the study"' for i in range(1, steps)]
    return "\n".join([*lines, f'output report = session "Report on {{s{steps - 1}}}"']) + "\n"


def fan_out_program(items: int) -> str:
    listed = ", ".join(f'"{n}"' for n in range(items))
    return (
        f"let items = [{listed}]\n"
        "let out = parallel for x in items:\n"
        '  session "Study item {x}"\n'
        'output report = session "Report on the study"\n'
    )


def spec_in(
    directory: Path,
    steps: int,
    delay: float,
    concurrency: int,
    text: str | None = None,
    max_sessions: int | None = None,
) -> RunSpec:
    main = directory / "main.prose"
    text = text or program(steps)
    main.write_text(text, encoding="utf-8")
    return RunSpec(
        str(main),
        text,
        runs_root=str(directory / ".prose" / "runs"),
        offline_delay=delay,
        options=RunSpec.options_of(Options(concurrency=concurrency, max_sessions=max_sessions)),
    )


def local_engine(directory: Path, runs: int, steps: int, delay: float, concurrency: int) -> float:
    spec = spec_in(directory, steps, delay, concurrency)
    limit = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with limit:
            result = await LocalExecutor().run(spec, None, Attachment())
            assert result.status == "success", result.error

    async def everything() -> None:
        await asyncio.gather(*(one() for _ in range(runs)))

    start = time.perf_counter()
    asyncio.run(everything())
    return time.perf_counter() - start


def _environment() -> dict[str, str]:
    environment = dict(os.environ)
    environment.pop("OPENPROSE_DBOS_URL", None)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT / "server"), environment.get("PYTHONPATH", "")]
    )
    return environment


def start_worker(
    directory: Path, concurrency: int, log: Path, *extra: str
) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "openprose",
                "worker",
                "--concurrency",
                str(concurrency),
                *extra,
            ],
            cwd=directory,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=_environment(),
        )


def stop(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def completed(runs_root: Path) -> int:
    done = 0
    if runs_root.is_dir():
        for run in runs_root.iterdir():
            state = run / "state.md"
            if state.is_file() and "---end" in state.read_text(encoding="utf-8"):
                done += 1
    return done


def until_completed(runs_root: Path, runs: int, start: float, what: str) -> float:
    """Seconds from ``start`` until ``runs`` runs under ``runs_root`` have ended."""
    deadline = start + 600
    while completed(runs_root) < runs:
        if time.perf_counter() > deadline:
            raise SystemExit(f"{what}: {completed(runs_root)}/{runs} runs in 600 s")
        time.sleep(0.05)
    return time.perf_counter() - start


def dbos_engine(
    directory: Path, runs: int, steps: int, delay: float, concurrency: int, count: int
) -> float:
    from openprose.vm.engines.dbos_engine import DbosExecutor, system_database_url

    spec = spec_in(directory, steps, delay, concurrency)
    runs_root = Path(spec.runs_root)
    executor = DbosExecutor(system_database_url(spec.state, runs_root, environ={}))
    for _ in range(runs):
        executor.submit(spec, new_run_id())
    start = time.perf_counter()
    workers = [start_worker(directory, concurrency, directory / f"w{i}.log") for i in range(count)]
    try:
        return until_completed(runs_root, runs, start, f"{count} workers")
    finally:
        stop(workers)


def fan_out_local(directory: Path, items: int, delay: float, concurrency: int) -> float:
    spec = spec_in(directory, 0, delay, concurrency, fan_out_program(items))
    start = time.perf_counter()
    result = asyncio.run(LocalExecutor().run(spec, None, Attachment()))
    assert result.status == "success", result.error
    return time.perf_counter() - start


CALLING = 'use "./study" as study\nlet r = study()\noutput report = r.report\n'


def fan_out_dbos(
    directory: Path,
    items: int,
    delay: float,
    concurrency: int,
    count: int,
    limited: bool = False,
    called: bool = False,
) -> tuple[float, int]:
    """The wall time, and the size of the system database afterwards (what the items'
    workflows stored: their tasks and their outcomes).  ``limited``: the run has a session
    limit it never reaches, counted in the system database (engines/dbos_budget.py).
    ``called``: the fan-out is a called program's, spread from the run's process."""
    from openprose.vm.engines.dbos_engine import DbosExecutor, sqlite_file, system_database_url

    limit = items + 1 if limited else None
    text = fan_out_program(items)
    if called:
        (directory / "study.prose").write_text(text, encoding="utf-8")
        text = CALLING
    spec = spec_in(directory, 0, delay, concurrency, text, limit)
    runs_root = Path(spec.runs_root)
    url = system_database_url(spec.state, runs_root, environ={})
    DbosExecutor(url).submit(spec, new_run_id())
    start = time.perf_counter()
    workers = [
        start_worker(directory, 1, directory / f"w{i}.log", "--branch-concurrency", "16")
        for i in range(count)
    ]
    try:
        wall = until_completed(runs_root, 1, start, f"{count} workers, the fan-out")
    finally:
        stop(workers)
    database = sqlite_file(url)
    return wall, database.stat().st_size if database is not None else 0


def recovery(directory: Path, steps: int, delay: float) -> float:
    from openprose.vm.engines.dbos_engine import DbosExecutor, system_database_url

    spec = spec_in(directory, steps, max(delay, 0.05), 1)
    record = directory / "exchanges.jsonl"
    spec = RunSpec(**{**spec.__dict__, "record": str(record)})
    executor = DbosExecutor(system_database_url(spec.state, Path(spec.runs_root), environ={}))
    executor.submit(spec, new_run_id())

    def exchanges() -> int:
        if not record.is_file():
            return 0
        return max(0, len(record.read_text(encoding="utf-8").splitlines()) - 1)

    first = start_worker(directory, 1, directory / "first.log")
    second = None
    try:
        while exchanges() < 3:
            time.sleep(0.01)
        # The second worker is up before the first dies: what is timed is the takeover.
        second = start_worker(directory, 1, directory / "second.log")
        while "takes runs" not in (directory / "second.log").read_text(encoding="utf-8"):
            time.sleep(0.01)
        time.sleep(0.2)
        first.send_signal(signal.SIGKILL)
        killed = time.perf_counter()
        first.wait()
        seen = exchanges()
        deadline = killed + 120
        while exchanges() <= seen:
            if time.perf_counter() > deadline:
                raise SystemExit("no worker took the run over in 120 s")
            time.sleep(0.01)
        return time.perf_counter() - killed
    finally:
        stop([w for w in (first, second) if w is not None])


def pacing(directory: Path, places: int) -> float:
    """Milliseconds a place takes, the median of ``places``."""
    import sqlalchemy as sa

    from openprose.vm.engines.dbos_pacing import Pacer, make_table

    engine = sa.create_engine(f"sqlite:///{directory / 'system.sqlite'}")
    make_table(engine)
    pacer = Pacer(engine, "anthropic", (places + 1, 3600.0))
    times = []
    for _ in range(places):
        start = time.perf_counter()
        assert pacer.take() == 0.0
        times.append(time.perf_counter() - start)
    engine.dispose()
    return statistics.median(times) * 1000


def spending(directory: Path, sessions: int) -> tuple[float, float]:
    """Milliseconds a limited run's session start and its call's charge take (engines/
    dbos_budget.py, one transaction each in the system database), the medians of
    ``sessions``."""
    import sqlalchemy as sa

    from openprose.vm.engines.dbos_budget import SharedBudget, make_table

    engine = sa.create_engine(f"sqlite:///{directory / 'system.sqlite'}")
    make_table(engine)
    budget = SharedBudget(engine=engine, budget="bench/attempt-1")
    starts, charges = [], []
    for n in range(sessions):
        key = f"session:1@{n}#attempt1"
        start = time.perf_counter()
        assert budget._start(key, sessions)
        starts.append(time.perf_counter() - start)
        start = time.perf_counter()
        budget._charge(key, 0.001, 100)
        charges.append(time.perf_counter() - start)
    engine.dispose()
    return statistics.median(starts) * 1000, statistics.median(charges) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60, help="runs in each throughput case")
    parser.add_argument("--steps", type=int, default=20, help="sessions in each run")
    parser.add_argument("--delay", type=float, default=0.05, help="seconds per offline session")
    parser.add_argument("--concurrency", type=int, default=8, help="runs at once per worker")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2, 3])
    parser.add_argument("--recoveries", type=int, default=3, help="kills timed")
    parser.add_argument("--items", type=int, default=1000, help="items of the fan-out case")
    parser.add_argument("--fan-out-concurrency", type=int, default=48, help="its items in flight")
    parser.add_argument("--quick", action="store_true", help="a smoke run: tiny and one worker")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.steps, args.workers, args.recoveries = 3, 3, [1], 1
        args.items = 20
    try:
        import dbos  # noqa: F401
    except ImportError:
        print("dbos is not installed (pip install 'openprose[dbos]'): nothing to measure")
        return
    total = args.runs * args.steps
    print(
        f"{args.runs} runs x {args.steps} sessions on the offline backend, {args.delay} s a "
        f"session, {args.concurrency} runs at once per process; SQLite system database"
    )
    print(f"{'engine':<18} {'wall s':>7} {'steps/s':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        here = Path(tmp) / "local"
        here.mkdir()
        wall = local_engine(here, args.runs, args.steps, args.delay, args.concurrency)
        print(f"{'local (1 process)':<18} {wall:>7.2f} {total / wall:>8.1f}")
        for count in args.workers:
            here = Path(tmp) / f"dbos-{count}"
            here.mkdir()
            wall = dbos_engine(here, args.runs, args.steps, args.delay, args.concurrency, count)
            label = f"dbos, {count} worker{'s' if count > 1 else ''}"
            print(f"{label:<18} {wall:>7.2f} {total / wall:>8.1f}")
        print(
            f"\none run, parallel for over {args.items} items, {args.delay} s a session, "
            f"{args.fan_out_concurrency} items in flight"
        )
        print(f"{'engine':<18} {'wall s':>7} {'items/s':>8} {'system db MB':>13}")
        here = Path(tmp) / "fan-out-local"
        here.mkdir()
        wall = fan_out_local(here, args.items, args.delay, args.fan_out_concurrency)
        print(f"{'local (1 process)':<18} {wall:>7.2f} {args.items / wall:>8.1f}")
        for count in args.workers:
            here = Path(tmp) / f"fan-out-{count}"
            here.mkdir()
            wall, size = fan_out_dbos(here, args.items, args.delay, args.fan_out_concurrency, count)
            label = f"dbos, {count} worker{'s' if count > 1 else ''}"
            print(f"{label:<18} {wall:>7.2f} {args.items / wall:>8.1f} {size / 1e6:>13.1f}")
        count = args.workers[-1]
        for variant in ("limited", "called"):  # sections 5 and 6
            here = Path(tmp) / f"fan-out-{variant}"
            here.mkdir()
            wall, size = fan_out_dbos(
                here, args.items, args.delay, args.fan_out_concurrency, count, **{variant: True}
            )
            label = f"dbos, {count}, {variant}"
            print(f"{label:<18} {wall:>7.2f} {args.items / wall:>8.1f} {size / 1e6:>13.1f}")
        here = Path(tmp) / "spending"
        here.mkdir()
        sessions = 50 if args.quick else 1000
        start_ms, charge_ms = spending(here, sessions)
        print(
            f"\nspending: a limited run's session start {start_ms:.2f} ms, its charge "
            f"{charge_ms:.2f} ms (medians of {sessions}, SQLite)"
        )
        here = Path(tmp) / "pacing"
        here.mkdir()
        places = 50 if args.quick else 1000
        print(
            f"\npacing: a place in a rate limit's window, {pacing(here, places):.2f} ms "
            f"(median of {places}, SQLite)"
        )
        print()
        times = []
        for index in range(args.recoveries):
            here = Path(tmp) / f"recovery-{index}"
            here.mkdir()
            # Long enough to be still running when the second worker is up.
            times.append(recovery(here, 100, args.delay))
        if not times:
            return
        shown = ", ".join(f"{t:.2f}" for t in times)
        print(
            f"recovery from a worker's SIGKILL to its run's next exchange in another worker: "
            f"median {statistics.median(times):.2f} s ({shown})"
        )


if __name__ == "__main__":
    main()
