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
   number of workers (the worker executing the call, a workflow of the calls' queue, spreads
   its items).

The DBOS system database is SQLite in a temporary directory (one machine), and the runs'
state the filesystem; with ``--postgres-cluster`` (a throwaway cluster with PostgreSQL's
default durability, started as the tests start theirs) or ``--postgres-url``, both are
PostgreSQL, as on many machines, each case in a database of its own.  Prints figures;
asserts nothing.  The machine has two cores: past two busy workers, more add little (and on
PostgreSQL the server shares them).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
try:
    import openprose  # noqa: F401
except ImportError:  # pragma: no cover - running from a bare checkout
    sys.path.insert(0, str(REPO_ROOT / "server"))

from common import postgres_server  # noqa: E402

from openprose.vm.engines.base import Attachment, RunSpec  # noqa: E402
from openprose.vm.engines.local import LocalExecutor  # noqa: E402
from openprose.vm.interpreter import Options  # noqa: E402
from openprose.vm.rundir import new_run_id  # noqa: E402


def state_of(postgres_url: str | None) -> str:
    """The runs' state backend beside a system database: PostgreSQL's, else the files'."""
    return "postgres" if postgres_url else "filesystem"


@dataclass(frozen=True)
class Database:
    """Where a case keeps its runs and DBOS its workflows: SQLite and the filesystem in the
    case's directory, or a fresh PostgreSQL database (``admin_url``: the cluster's)."""

    admin_url: str | None = None

    @property
    def state(self) -> str:
        return state_of(self.admin_url)

    @property
    def label(self) -> str:
        return "PostgreSQL" if self.admin_url else "SQLite"

    def fresh(self, name: str) -> str | None:
        """A new, empty database for one case (None on SQLite)."""
        if not self.admin_url:
            return None
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
            admin.execute(f'CREATE DATABASE "{name}"')
        return self.admin_url.rsplit("/", 1)[0] + "/" + name


@dataclass(frozen=True)
class Case:
    """One measured case: its directory and, on PostgreSQL, its database."""

    directory: Path
    postgres_url: str | None

    @property
    def state(self) -> str:
        return state_of(self.postgres_url)

    def environment(self) -> dict[str, str]:
        environment = dict(os.environ)
        environment.pop("OPENPROSE_DBOS_URL", None)
        environment.pop("OPENPROSE_POSTGRES_URL", None)
        if self.postgres_url:
            environment["OPENPROSE_POSTGRES_URL"] = self.postgres_url
        environment["PYTHONPATH"] = os.pathsep.join(
            [str(REPO_ROOT / "server"), environment.get("PYTHONPATH", "")]
        )
        return environment

    def system_url(self, spec: RunSpec) -> str:
        from openprose.vm.engines.dbos_engine import system_database_url

        return system_database_url(spec.state, Path(spec.runs_root), environ=self.environment())

    def completed(self, spec: RunSpec) -> int:
        """The case's runs that have ended, as their state says."""
        from openprose.vm.state import open_catalog

        catalog = open_catalog(self.state, Path(spec.runs_root), environ=self.environment())
        return sum(1 for run in catalog.runs() if run.status != "running")

    def size(self, url: str) -> int:
        """Bytes the DBOS system database holds (its ``dbos`` schema on PostgreSQL)."""
        from openprose.vm.engines.dbos_engine import sqlite_file

        file = sqlite_file(url)
        if file is not None:
            return file.stat().st_size
        import psycopg

        with psycopg.connect(url) as connection:
            row = connection.execute(
                "select coalesce(sum(pg_total_relation_size(c.oid)), 0) from pg_class c "
                "join pg_namespace n on n.oid = c.relnamespace "
                "where n.nspname = 'dbos' and c.relkind in ('r', 'm')"
            ).fetchone()
        return int(row[0]) if row else 0

    def engine(self) -> object:
        """A SQLAlchemy engine on the case's system database, for the micro-figures."""
        import sqlalchemy as sa

        if self.postgres_url:
            url = self.postgres_url.replace("postgresql://", "postgresql+psycopg://", 1)
            return sa.create_engine(url)
        return sa.create_engine(f"sqlite:///{self.directory / 'system.sqlite'}")


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
    case: Case,
    steps: int,
    delay: float,
    concurrency: int,
    text: str | None = None,
    max_sessions: int | None = None,
) -> RunSpec:
    main = case.directory / "main.prose"
    text = text or program(steps)
    main.write_text(text, encoding="utf-8")
    return RunSpec(
        str(main),
        text,
        state=case.state,
        runs_root=str(case.directory / ".prose" / "runs"),
        offline_delay=delay,
        options=RunSpec.options_of(Options(concurrency=concurrency, max_sessions=max_sessions)),
    )


def local_engine(case: Case, runs: int, steps: int, delay: float, concurrency: int) -> float:
    spec = spec_in(case, steps, delay, concurrency)
    limit = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with limit:
            result = await LocalExecutor().run(spec, None, Attachment())
            assert result.status == "success", result.error

    async def everything() -> None:
        await asyncio.gather(*(one() for _ in range(runs)))

    start = time.perf_counter()
    with environment_of(case):
        asyncio.run(everything())
    return time.perf_counter() - start


@contextlib.contextmanager
def environment_of(case: Case) -> Iterator[None]:
    """This process's environment as a worker's (the PostgreSQL URL of the case)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(case.environment())
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def start_worker(case: Case, concurrency: int, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "openprose",
                "worker",
                "--state",
                case.state,
                "--concurrency",
                str(concurrency),
                *extra,
            ],
            cwd=case.directory,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=case.environment(),
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


def until_completed(case: Case, spec: RunSpec, runs: int, start: float, what: str) -> float:
    """Seconds from ``start`` until ``runs`` runs of the case have ended."""
    deadline = start + 600
    while (done := case.completed(spec)) < runs:
        if time.perf_counter() > deadline:
            raise SystemExit(f"{what}: {done}/{runs} runs in 600 s")
        time.sleep(0.05)
    return time.perf_counter() - start


def submit(case: Case, spec: RunSpec, runs: int = 1) -> str:
    """Queue ``runs`` runs of ``spec``; the system database's URL."""
    from openprose.vm.engines.dbos_engine import DbosExecutor

    url = case.system_url(spec)
    executor = DbosExecutor(url)
    for _ in range(runs):
        executor.submit(spec, new_run_id())
    return url


def dbos_engine(
    case: Case, runs: int, steps: int, delay: float, concurrency: int, count: int
) -> float:
    spec = spec_in(case, steps, delay, concurrency)
    submit(case, spec, runs)
    start = time.perf_counter()
    workers = [start_worker(case, concurrency, case.directory / f"w{i}.log") for i in range(count)]
    try:
        return until_completed(case, spec, runs, start, f"{count} workers")
    finally:
        stop(workers)


def fan_out_local(case: Case, items: int, delay: float, concurrency: int) -> float:
    spec = spec_in(case, 0, delay, concurrency, fan_out_program(items))
    start = time.perf_counter()
    with environment_of(case):
        result = asyncio.run(LocalExecutor().run(spec, None, Attachment()))
    assert result.status == "success", result.error
    return time.perf_counter() - start


CALLING = 'use "./study" as study\nlet r = study()\noutput report = r.report\n'


def fan_out_dbos(
    case: Case,
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
    ``called``: the fan-out is a called program's, spread by the worker executing the call."""
    limit = items + 1 if limited else None
    text = fan_out_program(items)
    if called:
        (case.directory / "study.prose").write_text(text, encoding="utf-8")
        text = CALLING
    spec = spec_in(case, 0, delay, concurrency, text, limit)
    url = submit(case, spec)
    start = time.perf_counter()
    workers = [
        start_worker(case, 1, case.directory / f"w{i}.log", "--branch-concurrency", "16")
        for i in range(count)
    ]
    try:
        wall = until_completed(case, spec, 1, start, f"{count} workers, the fan-out")
    finally:
        stop(workers)
    return wall, case.size(url)


def recovery(case: Case, steps: int, delay: float) -> float:
    spec = spec_in(case, steps, max(delay, 0.05), 1)
    record = case.directory / "exchanges.jsonl"
    spec = RunSpec(**{**spec.__dict__, "record": str(record)})
    submit(case, spec)

    def exchanges() -> int:
        if not record.is_file():
            return 0
        return max(0, len(record.read_text(encoding="utf-8").splitlines()) - 1)

    first = start_worker(case, 1, case.directory / "first.log")
    second = None
    try:
        while exchanges() < 3:
            time.sleep(0.01)
        # The second worker is up before the first dies: what is timed is the takeover.
        second = start_worker(case, 1, case.directory / "second.log")
        while "takes runs" not in (case.directory / "second.log").read_text(encoding="utf-8"):
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


def pacing(case: Case, places: int) -> float:
    """Milliseconds a place takes, the median of ``places``."""
    from openprose.vm.engines.dbos_pacing import Pacer, make_table

    engine = case.engine()
    make_table(engine)
    pacer = Pacer(engine, "anthropic", (places + 1, 3600.0))
    times = []
    for _ in range(places):
        start = time.perf_counter()
        assert pacer.take() == 0.0
        times.append(time.perf_counter() - start)
    engine.dispose()  # type: ignore[attr-defined]
    return statistics.median(times) * 1000


def spending(case: Case, sessions: int) -> tuple[float, float]:
    """Milliseconds a limited run's session start and its call's charge take (engines/
    dbos_budget.py, one transaction each in the system database), the medians of
    ``sessions``."""
    from openprose.vm.engines.dbos_budget import SharedBudget, make_table

    engine = case.engine()
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
    engine.dispose()  # type: ignore[attr-defined]
    return statistics.median(starts) * 1000, statistics.median(charges) * 1000


def measure(args: argparse.Namespace, database: Database, tmp: Path) -> None:
    cases = iter(range(1, 1000))

    def case(name: str) -> Case:
        directory = tmp / name
        directory.mkdir()
        return Case(directory, database.fresh(f"scale_out_{next(cases)}"))

    total = args.runs * args.steps
    print(
        f"{args.runs} runs x {args.steps} sessions on the offline backend, {args.delay} s a "
        f"session, {args.concurrency} runs at once per process; {database.label} system "
        f"database, {database.state} state"
    )
    print(f"{'engine':<18} {'wall s':>7} {'steps/s':>8}")
    wall = local_engine(case("local"), args.runs, args.steps, args.delay, args.concurrency)
    print(f"{'local (1 process)':<18} {wall:>7.2f} {total / wall:>8.1f}")
    for count in args.workers:
        wall = dbos_engine(
            case(f"dbos-{count}"), args.runs, args.steps, args.delay, args.concurrency, count
        )
        label = f"dbos, {count} worker{'s' if count > 1 else ''}"
        print(f"{label:<18} {wall:>7.2f} {total / wall:>8.1f}")
    print(
        f"\none run, parallel for over {args.items} items, {args.delay} s a session, "
        f"{args.fan_out_concurrency} items in flight"
    )
    print(f"{'engine':<18} {'wall s':>7} {'items/s':>8} {'system db MB':>13}")
    wall = fan_out_local(case("fan-out-local"), args.items, args.delay, args.fan_out_concurrency)
    print(f"{'local (1 process)':<18} {wall:>7.2f} {args.items / wall:>8.1f}")
    for count in args.workers:
        wall, size = fan_out_dbos(
            case(f"fan-out-{count}"), args.items, args.delay, args.fan_out_concurrency, count
        )
        label = f"dbos, {count} worker{'s' if count > 1 else ''}"
        print(f"{label:<18} {wall:>7.2f} {args.items / wall:>8.1f} {size / 1e6:>13.1f}")
    count = args.workers[-1]
    for variant in ("limited", "called"):  # sections 5 and 6
        wall, size = fan_out_dbos(
            case(f"fan-out-{variant}"),
            args.items,
            args.delay,
            args.fan_out_concurrency,
            count,
            **{variant: True},
        )
        label = f"dbos, {count}, {variant}"
        print(f"{label:<18} {wall:>7.2f} {args.items / wall:>8.1f} {size / 1e6:>13.1f}")
    sessions = 50 if args.quick else 1000
    start_ms, charge_ms = spending(case("spending"), sessions)
    print(
        f"\nspending: a limited run's session start {start_ms:.2f} ms, its charge "
        f"{charge_ms:.2f} ms (medians of {sessions}, {database.label})"
    )
    places = 50 if args.quick else 1000
    print(
        f"\npacing: a place in a rate limit's window, {pacing(case('pacing'), places):.2f} ms "
        f"(median of {places}, {database.label})"
    )
    print()
    # Long enough to be still running when the second worker is up.
    times = [recovery(case(f"recovery-{i}"), 100, args.delay) for i in range(args.recoveries)]
    if not times:
        return
    shown = ", ".join(f"{t:.2f}" for t in times)
    print(
        f"recovery from a worker's SIGKILL to its run's next exchange in another worker: "
        f"median {statistics.median(times):.2f} s ({shown})"
    )


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
    parser.add_argument(
        "--postgres-url",
        help="a PostgreSQL server's administrative URL: each case gets a database of its own "
        "there, for the runs and DBOS",
    )
    parser.add_argument(
        "--postgres-cluster",
        action="store_true",
        help="the same on a throwaway cluster (needs Debian's postgresql)",
    )
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
    with (
        postgres_server(args.postgres_url, args.postgres_cluster) as url,
        tempfile.TemporaryDirectory() as tmp,
    ):
        measure(args, Database(url), Path(tmp))


if __name__ == "__main__":
    main()
