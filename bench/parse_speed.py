"""Full-parse throughput of the OpenProse parser next to parso parsing Python of similar size.

Run from the repository root: ``python bench/parse_speed.py`` (see bench/README.md).
"""

from __future__ import annotations

import argparse
import platform
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import parso
from common import (
    CORPUS_DIR,
    error_count,
    format_table,
    load_syntax,
    median,
    time_once,
)
from generate import block_program, flat_program, line_count, python_file, python_module_names

TARGET_RATIO = 2.0  # our full parse should reach at least this multiple of parso's lines/s


@dataclass
class Case:
    name: str
    lines: int
    run: Callable[[], object]
    errors: int = 0
    times: list[float] = field(default_factory=list)

    def best_speed(self) -> float:
        return self.lines / min(self.times)

    def median_speed(self) -> float:
        return self.lines / median(self.times)


def read_corpus() -> list[str]:
    paths = sorted(CORPUS_DIR.rglob("*.prose"))
    return [path.read_bytes().decode("utf-8", errors="replace") for path in paths]


def text_case(name: str, text: str, parse: Callable[[str], Any]) -> Case:
    return Case(name, line_count(text), lambda: parse(text), error_count(parse(text)))


def corpus_case(texts: list[str], parse: Callable[[str], Any]) -> Case:
    def run() -> None:
        for text in texts:
            parse(text)

    lines = sum(line_count(text) for text in texts)
    errors = sum(error_count(parse(text)) for text in texts)
    return Case(f"openprose corpus ({len(texts)} files)", lines, run, errors)


def build_cases(parse: Callable[[str], Any], lines: int) -> list[Case]:
    cases = [
        text_case("openprose flat", flat_program(lines), parse),
        text_case("openprose block", block_program(lines), parse),
    ]
    if CORPUS_DIR.is_dir():
        cases.append(corpus_case(read_corpus(), parse))
    else:
        print(f"corpus not found at {CORPUS_DIR}: skipping the corpus measurement")
    cases.append(text_case("parso python", python_file(lines), parso.parse))
    return cases


def measure(cases: list[Case], runs: int) -> None:
    """Warm up every case, then time the cases round-robin so noise affects them alike."""
    for case in cases:
        case.run()
    for _ in range(runs):
        for case in cases:
            case.times.append(time_once(case.run))


def speed_table(cases: list[Case]) -> str:
    header = ["case", "lines", "best ms", "median ms", "best lines/s", "median lines/s", "errors"]
    rows = [
        [
            case.name,
            str(case.lines),
            f"{min(case.times) * 1000:.1f}",
            f"{median(case.times) * 1000:.1f}",
            f"{case.best_speed():,.0f}",
            f"{case.median_speed():,.0f}",
            str(case.errors),
        ]
        for case in cases
    ]
    return format_table(header, rows)


def ratio_table(ours: list[Case], reference: Case) -> str:
    header = ["ours / parso (lines/s)", "best", "median", f"target >= {TARGET_RATIO:.1f}x"]
    rows = []
    for case in ours:
        best = case.best_speed() / reference.best_speed()
        middle = case.median_speed() / reference.median_speed()
        verdict = "met" if middle >= TARGET_RATIO else "NOT met"
        rows.append([case.name, f"{best:.2f}x", f"{middle:.2f}x", verdict])
    return format_table(header, rows)


def traced_memory(func: Callable[[], object]) -> tuple[float, float]:
    """(peak MB during ``func``, MB still allocated while its result is alive)."""
    tracemalloc.start()
    try:
        result = func()
        current, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        tracemalloc.stop()
    return peak / 2**20, current / 2**20


def memory_table(parse: Callable[[str], Any], lines: int) -> str:
    subjects = [
        ("openprose flat", flat_program(lines), parse),
        ("openprose block", block_program(lines), parse),
        ("parso python", python_file(lines), parso.parse),
    ]
    rows = []
    for name, text, func in subjects:
        peak, kept = traced_memory(partial(func, text))
        per_line = kept * 2**20 / line_count(text)
        rows.append([name, str(line_count(text)), f"{peak:.1f}", f"{kept:.1f}", f"{per_line:,.0f}"])
    header = ["tree (tracemalloc)", "lines", "peak MB", "retained MB", "bytes/line"]
    return format_table(header, rows)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--lines", type=int, default=10_000, help="size of generated inputs")
    options.add_argument("--runs", type=int, default=5, help="timed runs per case")
    options.add_argument("--quick", action="store_true", help="a smoke run: 1,000 lines, 1 run")
    args = options.parse_args()
    if args.quick:
        args.lines, args.runs = 1_000, 1

    parse = load_syntax().parse
    print(f"Python {platform.python_version()}, parso {parso.__version__}, runs={args.runs}")
    print(f"parso input: stdlib modules {', '.join(python_module_names(args.lines))}")
    print(f"corpus: {CORPUS_DIR if CORPUS_DIR.is_dir() else Path('(absent)')}")
    cases = build_cases(parse, args.lines)
    measure(cases, args.runs)
    print()
    print(f"Full parse (best and median of {args.runs} runs, gc.collect() before each run)")
    print(speed_table(cases))
    print()
    print(ratio_table(cases[:-1], cases[-1]))
    print()
    print(memory_table(parse, args.lines))


if __name__ == "__main__":
    main()
