"""Checking (parse + every rule) against parsing alone, on the shared corpus.

Target from the analyzer issue: ``prose check`` on the whole corpus stays within 2x of the
time the parser alone takes.  Prints both times and the ratio; asserts nothing.

Then one string holding many ``{x}`` interpolations on a single line (issue 12, finding 7:
positions were found by slicing the string once per interpolation, quadratic in their number).
Checking should grow linearly: the ``us/interp`` column should stay flat as the count grows.
"""

from __future__ import annotations

import argparse
import statistics
from functools import partial

from common import CORPUS_DIR, load_syntax, time_once


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
        "--quick", action="store_true", help="a smoke run: 1 run, the smallest interpolation case"
    )
    args = parser.parse_args()
    if args.quick:
        args.runs, args.interpolations = 1, [5_000]
    if CORPUS_DIR.is_dir():
        corpus(args.runs)
    else:
        print(f"corpus not found at {CORPUS_DIR}; skipping the corpus case")
    if args.interpolations:
        interpolations(args.interpolations)


def corpus(runs: int) -> None:
    syntax = load_syntax()
    from openprose.checking import check_text

    files = sorted(CORPUS_DIR.rglob("*.prose"))
    sources = [(str(p), p.read_bytes().decode("utf-8-sig")) for p in files]
    lines = sum(text.count("\n") + 1 for _, text in sources)

    def parse_all() -> None:
        for _, text in sources:
            syntax.parse(text)

    def check_all() -> None:
        for path, text in sources:
            check_text(text, path)

    parse_all()
    check_all()  # warm up: imports, contract caches
    parse_times = [time_once(parse_all) for _ in range(runs)]
    check_times = [time_once(check_all) for _ in range(runs)]
    parse_ms = statistics.median(parse_times) * 1000
    check_ms = statistics.median(check_times) * 1000
    print(f"corpus: {len(files)} files, {lines} lines, median of {runs} runs")
    print(f"{'what':<26} {'ms':>8} {'lines/s':>10}")
    print(f"{'parse only':<26} {parse_ms:>8.1f} {lines / parse_ms * 1000:>10,.0f}")
    print(f"{'check (parse + rules)':<26} {check_ms:>8.1f} {lines / check_ms * 1000:>10,.0f}")
    ratio = check_ms / parse_ms
    verdict = "met" if ratio <= 2.0 else "NOT met"
    print(f"check / parse = {ratio:.2f}x (target <= 2.0x: {verdict})")


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
