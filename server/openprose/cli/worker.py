"""``prose worker``: a process that executes the runs queued for the dbos engine
(docs/scale.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from openprose.config import MODEL_BACKENDS, STATE_BACKENDS, RateLimit, parse_rate_limit

EXIT_OK = 0
EXIT_USAGE = 2
# As engines/dbos_branches.py's (not imported: the parser is built without the engine).
DEFAULT_CONCURRENCY = 4
DEFAULT_BRANCH_CONCURRENCY = 16


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--concurrency",
        type=int,
        default=DEFAULT_CONCURRENCY,
        metavar="N",
        help=f"runs this worker executes at once, and as many program calls of runs "
        f"(default {DEFAULT_CONCURRENCY})",
    )
    parser.add_argument(
        "--branch-concurrency",
        type=int,
        default=DEFAULT_BRANCH_CONCURRENCY,
        metavar="N",
        help="items of fan-outs (parallel for, pmap, parallel blocks), of any run, this "
        f"worker executes at once (default {DEFAULT_BRANCH_CONCURRENCY})",
    )
    parser.add_argument(
        "--global-concurrency",
        type=int,
        metavar="N",
        help="queued runs executed at once by all workers together (default: run."
        "global-concurrency.runs in the configuration, else no cap)",
    )
    parser.add_argument(
        "--global-branch-concurrency",
        type=int,
        metavar="N",
        help="fan-out items executed at once by all workers together, on each items queue "
        "(default: run.global-concurrency.branches in the configuration, else no cap)",
    )
    parser.add_argument(
        "--rate-limit",
        action="append",
        default=[],
        metavar="BACKEND=LIMIT",
        help="at most LIMIT model requests of BACKEND's runs are made, and LIMIT of their "
        "fan-out items start, across all workers: anthropic=50/min, openai=10/30s, "
        "anthropic=off (repeatable; over run.rate-limits)",
    )
    parser.add_argument(
        "--queues",
        metavar="NAME[,NAME...]",
        help="the queues to take work from (default: openprose-runs, openprose-calls, "
        "openprose-branches and each backend's openprose-branches-BACKEND: runs, their "
        "program calls and the items of their fan-outs)",
    )
    parser.add_argument(
        "--state",
        choices=[s for s in STATE_BACKENDS if s != "in-context"],
        help="the state backend of the runs: with postgres, the DBOS system database is the "
        "same PostgreSQL (default: run.state in the configuration, else filesystem, whose "
        "system database is .prose/dbos.sqlite)",
    )
    parser.add_argument(
        "--run-dir",
        metavar="DIR",
        help="the runs root whose system database to serve (default: .prose/runs here)",
    )
    parser.add_argument(
        "--otel",
        action="store_true",
        help="send OpenTelemetry traces and metrics of the runs and items this worker "
        "executes where the OTEL_* variables say (needs the otel extra; docs/scale.md)",
    )
    parser.add_argument(
        "--id",
        dest="executor_id",
        metavar="ID",
        help="this worker's executor id (default HOST:PID: other workers take over its runs "
        "when that process is gone)",
    )


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    import asyncio
    import signal

    from openprose.cli.runs import runs_root
    from openprose.config import ConfigError, ConfigFinder
    from openprose.vm.engines.dbos_branches import BRANCH_QUEUES, CALLS_QUEUE
    from openprose.vm.engines.dbos_engine import (
        RUNS_QUEUE,
        EngineError,
        described,
        require_dbos,
        shown,
        system_database_url,
        this_executor,
        work,
    )
    from openprose.vm.state import StateError
    from openprose.vm.telemetry import TelemetryError, from_environment

    for flag, value in (
        ("--concurrency", args.concurrency),
        ("--branch-concurrency", args.branch_concurrency),
        ("--global-concurrency", args.global_concurrency),
        ("--global-branch-concurrency", args.global_branch_concurrency),
    ):
        if value is not None and value < 1:
            print(f"prose: error: {flag} must be at least 1", file=stderr)
            return EXIT_USAGE
    try:
        require_dbos()
        config = ConfigFinder().for_directory(str(Path.cwd()))
        state = args.state or (config.state if config is not None else None) or "filesystem"
        url = system_database_url(state, runs_root(args))
        limits = {**(config.rate_limits if config is not None else {}), **_rate_limits(args)}
        caps = {**(config.global_concurrency if config is not None else {}), **_caps(args)}
        # As prose run: OTEL_* variables that ask for traces turn them on without --otel.
        telemetry = from_environment(force=args.otel)
    except (EngineError, ConfigError, StateError, TelemetryError) as error:
        print(f"prose: error: {error}", file=stderr)
        return EXIT_USAGE
    queues = (
        [q.strip() for q in args.queues.split(",") if q.strip()]
        if args.queues
        else [RUNS_QUEUE, CALLS_QUEUE, *BRANCH_QUEUES]
    )
    executor_id = args.executor_id or this_executor()

    def recovered(workflow_ids: list[str]) -> None:
        for workflow_id in workflow_ids:
            what = described(workflow_id)
            print(f"prose: {what} lost its worker: back on the queue", file=stderr, flush=True)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        print(
            f"prose: worker {executor_id} takes runs from {', '.join(queues)} in {shown(url)} "
            f"({args.concurrency} runs and {args.branch_concurrency} items at once)",
            file=stderr,
            flush=True,
        )
        for backend, limit in sorted(limits.items()):
            pace = (
                "no limit"
                if limit is None
                else f"{limit[0]} requests and {limit[0]} item starts per {limit[1]:g} s"
            )
            print(
                f"prose: {backend} runs: {pace}, across all workers",
                file=stderr,
                flush=True,
            )
        for name, cap in sorted(caps.items()):
            what = f"run{'' if cap == 1 else 's'}" if name == "runs" else "items a queue"
            print(
                f"prose: at most {cap} {what} at once, across all workers",
                file=stderr,
                flush=True,
            )
        await work(
            url,
            concurrency=args.concurrency,
            branch_concurrency=args.branch_concurrency,
            rate_limits=limits,
            global_concurrency=caps,
            queues=queues,
            stop=stop,
            executor_id=executor_id,
            on_recovered=recovered,
            telemetry=telemetry,
        )

    try:
        asyncio.run(main())
    except EngineError as error:
        print(f"prose: error: {error}", file=stderr)
        return EXIT_USAGE
    finally:
        if telemetry is not None:
            telemetry.shutdown()  # exports what is left before the process ends
    print(f"prose: worker {executor_id} stopped", file=stderr)
    return EXIT_OK


def _caps(args: argparse.Namespace) -> dict[str, int]:
    """The global caps the command line gives, over the configuration's."""
    given = {"runs": args.global_concurrency, "branches": args.global_branch_concurrency}
    return {name: cap for name, cap in given.items() if cap is not None}


def _rate_limits(args: argparse.Namespace) -> dict[str, RateLimit | None]:
    """``--rate-limit BACKEND=LIMIT`` options; a ConfigError names the one at fault."""
    from openprose.config import ConfigError

    limits: dict[str, RateLimit | None] = {}
    for option in args.rate_limit:
        backend, equals, text = option.partition("=")
        backend = backend.strip()
        if not equals or backend not in MODEL_BACKENDS:
            raise ConfigError(
                "--rate-limit",
                f"{option!r} is not BACKEND=LIMIT with BACKEND one of {', '.join(MODEL_BACKENDS)}",
            )
        try:
            limits[backend] = parse_rate_limit(text)
        except ValueError as error:
            raise ConfigError("--rate-limit", str(error)) from None
    return limits
