"""Formatting speed: a generated 1,000-line program, and the whole corpus.

Target from the formatter issue: formatting a 1,000-line program takes at most 20 ms.
Prints, for the same program: parse alone, format of an already parsed tree (what the
language server does on save), and format from text including the self-check that parses
the result again (what `prose fmt` does).  Asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from common import CORPUS_DIR, load_syntax
from generate import flat_program


def best_and_median(func: Callable[[], object], runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append((time.perf_counter() - start) * 1000)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 200 lines, 2 runs")
    args = parser.parse_args()
    if args.quick:
        args.lines, args.runs = 200, 2
    syntax = load_syntax()
    from openprose.format import format_module, format_text

    # A messy version of the generated program: 4-space indentation, so every line changes.
    text = flat_program(args.lines).replace("\n  ", "\n    ")
    module = syntax.parse(text)
    cases = {
        "parse only": lambda: syntax.parse(text),
        "format parsed tree, no self-check": lambda: format_module(module, text, verify=False),
        "format parsed tree + self-check": lambda: format_module(module, text),
        "format text + self-check (prose fmt)": lambda: format_text(text),
    }
    for func in cases.values():
        func()  # warm up
    print(f"{args.lines}-line generated program (4-space indented), best/median of {args.runs}")
    print(f"{'case':<40} {'best ms':>8} {'median ms':>10}")
    for name, func in cases.items():
        best, median = best_and_median(func, args.runs)
        print(f"{name:<40} {best:>8.2f} {median:>10.2f}")
    if CORPUS_DIR.is_dir():
        sources = [p.read_bytes().decode("utf-8-sig") for p in sorted(CORPUS_DIR.rglob("*.prose"))]
        lines = sum(s.count("\n") + 1 for s in sources)
        best, median = best_and_median(lambda: [format_text(s) for s in sources], 3)
        print(
            f"corpus: {len(sources)} files, {lines} lines: format text + self-check "
            f"{median:.1f} ms median ({lines / median * 1000:,.0f} lines/s)"
        )
    print("target: formatting a 1,000-line program <= 20 ms")


if __name__ == "__main__":
    main()
