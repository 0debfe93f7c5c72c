"""Kill at random points, at scale (issue 10): the harness of tests/vm/kill_harness.py.

Runs ``--runs`` killed-and-resumed runs per state backend, spread over the harness's
programs (parallel with each join strategy, recursive blocks, loops, retry, try/catch,
pipelines, program calls, persistent agents): each a real child process on the replay
backend, SIGKILLed at random instants and resumed until it completes, then compared with an
uninterrupted run.  Prints the counts (runs, kills, resumes, steps re-executed, the runs a
known bug explains, any new problem with its seed and kill delays) and the wall time.

Asserts nothing.  The machine is shared, so the timings are noisy; the counts depend on
where the kills land, which depends on the machine's speed (the seed fixes the draws).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
for entry in (REPO_ROOT, REPO_ROOT / "server"):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

from tests.vm.kill_harness import KNOWN, PROGRAMS, Settings, campaign  # noqa: E402


def available(state: str) -> bool:
    from openprose.vm.state import StateError, open_catalog

    try:
        open_catalog(state, Path("/nonexistent/.prose/runs"))
    except (StateError, ImportError):
        return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300, help="runs per state backend")
    parser.add_argument(
        "--states",
        default="filesystem,sqlite,postgres",
        help="comma-separated; postgres runs in a throwaway cluster (tests/postgres_cluster.py)",
    )
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--workers", type=int, default=2, help="children at once")
    parser.add_argument("--delay", type=float, default=Settings.delay, help="s per answer")
    parser.add_argument("--programs", help="comma-separated (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the runs' directories")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 2 runs per backend, no postgres, seed 1"
    )
    args = parser.parse_args()
    if args.quick:
        # A fixed seed: CI's smoke run must not pass or fail by the draw.
        args.runs, args.states, args.seed = 2, "filesystem,sqlite", 1
    settings = Settings(delay=args.delay)
    programs = args.programs.split(",") if args.programs else list(PROGRAMS)
    print(f"seed {args.seed}, {args.runs} runs per backend over {len(programs)} programs, ")
    print(f"{args.workers} children at once, {settings.delay * 1000:.0f} ms per answer")
    failed = 0
    for state in args.states.split(","):
        with contextlib.ExitStack() as stack:
            if state == "postgres":
                from tests.postgres_cluster import Cluster, Unavailable

                try:
                    cluster = stack.enter_context(Cluster())
                except Unavailable as error:
                    print(f"postgres: skipped ({error})")
                    continue
                settings.postgres_admin = cluster.url()
            elif not available(state):
                print(f"{state}: not available here, skipped")
                continue
            failed += one_backend(state, args, settings, programs)
    return 1 if failed else 0


def one_backend(
    state: str, args: argparse.Namespace, settings: Settings, programs: list[str]
) -> int:
    """Runs the campaign on one backend, prints its figures; returns the new problems."""
    root = Path(tempfile.mkdtemp(prefix=f"kill-{state}-"))
    started = time.perf_counter()
    totals, references = campaign(
        state,
        root,
        args.runs,
        seed=args.seed,
        programs=programs,
        settings=settings,
        workers=args.workers,
    )
    elapsed = time.perf_counter() - started
    print(totals.summary(state))
    print(
        f"  {elapsed:.1f} s wall, {elapsed / max(1, totals.runs) * 1000:.0f} ms a run, "
        f"{totals.attempts / elapsed:.1f} child processes a second"
    )
    for name, ref in references.items():
        print(
            f"  {name:17} {totals.per_program[name]:4} runs; uninterrupted "
            f"{ref.duration * 1000:4.0f} ms, {len(ref.calls):3} backend calls"
        )
    for bug, count in sorted(totals.known.items()):
        print(f"  known bug {bug}: {count} runs ({KNOWN[bug]})")
    for outcome in totals.failures:
        print(f"  NEW PROBLEM: {outcome.describe()[:3000]}")
    if args.keep:
        print(f"  runs kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return len(totals.failures)


if __name__ == "__main__":
    sys.exit(main())
