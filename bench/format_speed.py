"""Formatting speed: generated 1,000-line programs, and the whole corpus.

The figure of issue 15: "format 1,000 lines from text with the self-check" (what `prose fmt`
and formatting on save do: parse, print, then check the result: by comparing the lines when
only spaces at their ends changed, format/margins.py, else the token streams of the top-level
statements that changed, format/tokens.py, else by parsing what changed),
p50 and p95, wall (perf_counter) and CPU (thread_time) time, for ``flat_program`` and
``block_program`` in three states:

* ``canonical``: already formatted (the printed text equals the input: no check);
* ``touched``: the canonical form with stray spaces ending one line in 50 (a save after a
  few edits: the check reads only the top-level statements that changed; in
  ``block_program``, whose one ``block main`` holds everything, the statements of that
  block that changed);
* ``messy``: indented with four spaces, so nearly every line changes (only in its margin:
  the margin proof settles it).

Then, for the messy flat program, the parts: parse alone, printing an already parsed tree,
and printing it with the self-check.  Asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import gc
import time
from collections.abc import Callable

from common import CORPUS_DIR, load_syntax, median, percentile
from generate import block_program, flat_program


def sample(func: Callable[[], object], runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of ``runs`` calls (the machine is shared: CPU time is the
    steadier figure)."""
    walls, cpus = [], []
    gc.collect()
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.thread_time()
        func()
        cpus.append((time.thread_time() - cpu) * 1000)
        walls.append((time.perf_counter() - wall) * 1000)
    return walls, cpus


def touched(text: str) -> str:
    """``text`` with stray spaces at the end of every 50th line."""
    lines = text.split("\n")
    for i in range(25, len(lines) - 1, 50):
        lines[i] += "   "
    return "\n".join(lines)


def messy(text: str) -> str:
    return text.replace("\n  ", "\n    ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 200 lines, 3 runs")
    args = parser.parse_args()
    if args.quick:
        args.lines, args.runs = 200, 3
    syntax = load_syntax()
    from openprose.format import format_module, format_text

    print(
        f"format {args.lines:,} lines from text with the self-check, {args.runs} runs, ms "
        "(wall p50/p95 | CPU p50/p95)"
    )
    for name, generate in (("flat_program", flat_program), ("block_program", block_program)):
        canonical = format_text(generate(args.lines)).text
        for state, text in (
            ("canonical", canonical),
            ("touched", touched(canonical)),
            ("messy", messy(canonical)),
        ):
            result = format_text(text)  # warm up, and show the input is what it claims
            assert not result.refused, result.refused
            walls, cpus = sample(functools.partial(format_text, text), args.runs)
            print(
                f"  {name:<14} {state:<10} {median(walls):7.2f} {percentile(walls, 0.95):7.2f} |"
                f" {median(cpus):7.2f} {percentile(cpus, 0.95):7.2f}"
                f"  (changed: {result.changed})"
            )

    text = messy(flat_program(args.lines))
    module = syntax.parse(text)
    parts = {
        "parse only": lambda: syntax.parse(text),
        "print parsed tree, no self-check": lambda: format_module(module, text, verify=False),
        "print parsed tree + self-check": lambda: format_module(module, text),
    }
    print(f"parts, messy flat_program, ms (wall p50 | CPU p50), {args.runs} runs")
    for name, func in parts.items():
        func()
        walls, cpus = sample(func, args.runs)
        print(f"  {name:<36} {median(walls):7.2f} | {median(cpus):7.2f}")
    if CORPUS_DIR.is_dir() and not args.quick:
        sources = [p.read_bytes().decode("utf-8-sig") for p in sorted(CORPUS_DIR.rglob("*.prose"))]
        lines = sum(s.count("\n") + 1 for s in sources)
        walls, cpus = sample(lambda: [format_text(s) for s in sources], 3)
        print(
            f"corpus: {len(sources)} files, {lines} lines: format text + self-check "
            f"{median(walls):.1f} ms wall, {median(cpus):.1f} ms CPU (median of 3)"
        )
    print("goal (issue 15): format 1,000 lines from text with the self-check <= 15 ms")


if __name__ == "__main__":
    main()
