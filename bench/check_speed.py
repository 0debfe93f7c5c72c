"""Checking (parse + every rule) against parsing alone, on the shared corpus.

Target from issue 15: ``prose check`` on the whole corpus stays within 1.5x of the time the
parser alone takes (2x in the analyzer issue).  The files are checked as ``prose check`` checks
them (each directory's project root found once, ``analysis.project_roots_remembered``).  Prints
both times and the ratio, in wall and CPU time; asserts nothing.

Then big files (issue 15, item 6): ``prose check`` as a whole process (a fresh interpreter, as a
shell runs it) on generated 10,000- and 100,000-line programs, with its wall time, CPU time and
peak resident memory (the child's own ``wait4`` resource usage; goal for 100,000 lines: <= 2 s,
<= 150 MB), and the in-process check and format times at 1,000 / 10,000 / 100,000 lines, which
should grow linearly (the ``us/line`` columns stay flat).

Then one string holding many ``{x}`` interpolations on a single line (issue 12, finding 7:
positions were found by slicing the string once per interpolation, quadratic in their number).
Checking should grow linearly: the ``us/interp`` column should stay flat as the count grows.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from common import CORPUS_DIR, REPO_ROOT, load_syntax, time_once
from generate import flat_program


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--interpolations",
        type=int,
        nargs="*",
        default=[5_000, 20_000, 80_000, 333_333],
        help="sizes of the one-line interpolation case (333,333 `{x}` make a 1 MB line)",
    )
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="*",
        default=[1_000, 10_000, 100_000],
        help="line counts of the generated programs (the whole-process table uses those >= 10,000)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 1 run, the smallest interpolation case, 1,000 and 10,000 lines",
    )
    args = parser.parse_args()
    if args.quick:
        args.runs, args.interpolations, args.sizes = 1, [5_000], [1_000, 10_000]
    if CORPUS_DIR.is_dir():
        corpus(args.runs)
    else:
        print(f"corpus not found at {CORPUS_DIR}; skipping the corpus case")
    if args.sizes:
        programs = {size: flat_program(size) for size in args.sizes}
        whole_process(programs, args.runs)
        scaling(programs, args.runs)
    if args.interpolations:
        interpolations(args.interpolations)


def corpus(runs: int) -> None:
    syntax = load_syntax()
    from openprose.analysis import project_roots_remembered
    from openprose.checking import check_text

    files = sorted(CORPUS_DIR.rglob("*.prose"))
    sources = [(str(p), p.read_bytes().decode("utf-8-sig")) for p in files]
    lines = sum(text.count("\n") + 1 for _, text in sources)

    def parse_all() -> None:
        for _, text in sources:
            syntax.parse(text)

    def check_all() -> None:
        # As `prose check` checks many files: each directory's project root found once.
        with project_roots_remembered():
            for path, text in sources:
                check_text(text, path)

    parse_all()
    check_all()  # warm up: imports, contract caches
    # Parse and check are timed in turns, so a slower moment of the machine falls on both
    # (timed one block after the other, the ratio moved by 0.1x between runs of the bench).
    parses, checks = [], []
    for _ in range(runs):
        parses.append(_timed(parse_all))
        checks.append(_timed(check_all))
    parse_wall, parse_cpu = _medians(parses)
    check_wall, check_cpu = _medians(checks)
    ratios = sorted(c[1] / p[1] for p, c in zip(parses, checks, strict=True))
    print(f"corpus: {len(files)} files, {lines} lines, median of {runs} runs in turns")
    print(f"{'what':<26} {'wall ms':>8} {'cpu ms':>8} {'lines/s':>10}")
    for what, wall, cpu in (
        ("parse only", parse_wall, parse_cpu),
        ("check (parse + rules)", check_wall, check_cpu),
    ):
        print(f"{what:<26} {wall * 1000:>8.1f} {cpu * 1000:>8.1f} {lines / cpu:>10,.0f}")
    ratio = check_cpu / parse_cpu
    verdict = "met" if ratio <= 1.5 else "NOT met"
    print(
        f"check / parse = {ratio:.2f}x CPU, {check_wall / parse_wall:.2f}x wall "
        f"(goal <= 1.5x: {verdict}); run by run {ratios[0]:.2f}-{ratios[-1]:.2f}x CPU"
    )


def _timed(func: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of one call of ``func``, after a collection and including the
    collection of what it left behind.

    A tree holds cycles (a node's children point back to it), so a tree is freed by the
    cyclic collector.  Checking pays for that between files (the collector runs when
    ``check_text`` lets it run again); parsing alone pauses the collector, so its trees
    piled up and were collected before the next run, outside the timing.  Collecting inside
    the timing makes both pay for their own garbage."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    func()
    gc.collect()
    return time.perf_counter() - wall, time.process_time() - cpu


def _medians(times: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in times), statistics.median(c for _, c in times)


def _median_times(func: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``func`` over ``runs`` calls (see ``_timed``)."""
    return _medians([_timed(func) for _ in range(runs)])


def whole_process(programs: dict[int, str], runs: int) -> None:
    """``prose check`` of one big file in a fresh interpreter, in two report formats."""
    print()
    print(f"prose check, whole process, one generated file (median of {runs} runs)")
    print(f"{'lines':>8} {'format':<7} {'wall s':>7} {'cpu s':>7} {'peak MB':>8} {'status':>6}")
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "server"), NO_COLOR="1")
    with tempfile.TemporaryDirectory() as tmp:
        for size, text in programs.items():
            if size < 10_000:
                continue
            path = Path(tmp) / f"p{size}.prose"
            path.write_text(text, encoding="utf-8")
            for form in ("json", "human"):
                command = [sys.executable, "-m", "openprose", "check", "--format", form, str(path)]
                results = [_child(command, env) for _ in range(runs)]
                wall = statistics.median(r[0] for r in results)
                cpu = statistics.median(r[1] for r in results)
                peak = max(r[2] for r in results)
                status = results[-1][3]
                print(f"{size:>8,} {form:<7} {wall:>7.2f} {cpu:>7.2f} {peak:>8.1f} {status:>6}")


def _child(command: list[str], env: dict[str, str]) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds (user + system), peak RSS in MB and exit status of one run."""
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # wait4 gives this child's own usage (RUSAGE_CHILDREN would mix in the earlier runs).
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    peak_mb = usage.ru_maxrss / 1024  # kilobytes on Linux
    return wall, usage.ru_utime + usage.ru_stime, peak_mb, child.returncode


def scaling(programs: dict[int, str], runs: int) -> None:
    """In-process check and format at each size: linear when us/line stays flat."""
    load_syntax()
    from openprose.checking import check_text
    from openprose.format import format_text

    print()
    print(f"in-process check and format of one generated file (CPU, median of {runs} runs)")
    print(f"{'lines':>8} {'check ms':>9} {'us/line':>8} {'format ms':>10} {'us/line':>8}")
    for size, text in programs.items():
        check_cpu = _median_times(partial(check_text, text, None), runs)[1]
        format_cpu = _median_times(partial(format_text, text), runs)[1]
        print(
            f"{size:>8,} {check_cpu * 1000:>9.0f} {check_cpu / size * 1e6:>8.1f} "
            f"{format_cpu * 1000:>10.0f} {format_cpu / size * 1e6:>8.1f}"
        )


def interpolations(counts: list[int]) -> None:
    load_syntax()
    from openprose.checking import check_text

    print()
    print("one string of N `{x}` on one line, checked once")
    print(f"{'N':>9} {'line bytes':>11} {'s':>8} {'us/interp':>10}")
    for count in counts:
        text = 'let x = "a"\nsession "' + "{x}" * count + '"\n'
        seconds = time_once(partial(check_text, text, None))
        line = len(text.splitlines()[1].encode())
        print(f"{count:>9,} {line:>11,} {seconds:>8.3f} {seconds / count * 1e6:>10.2f}")


if __name__ == "__main__":
    main()
