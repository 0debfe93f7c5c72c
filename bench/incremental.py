"""Latency of incremental reparsing (``Document.apply_edit``) against a full parse.

Run from the repository root: ``python bench/incremental.py`` (see bench/README.md).
"""

from __future__ import annotations

import argparse
import gc
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from common import compare_with_full_parse, format_table, load_syntax, median, percentile, time_once
from generate import block_program, flat_program

TARGET_MS = 5.0  # a one-character edit should take at most this long (median)
TARGET_SPEEDUP = 30.0  # ... and be at least this many times faster than a full parse
Position = tuple[int, int]


@dataclass(frozen=True)
class Edit:
    start: Position
    end: Position
    text: str
    timed: bool = True


@dataclass
class Scenario:
    """Cycles of edits; each cycle leaves the text as it found it."""

    name: str
    line: int
    cycles: list[list[Edit]]
    one_char: bool = False
    samples: list[float] = field(default_factory=list)
    cpu_samples: list[float] = field(default_factory=list)  # thread CPU time of each sample
    # Timed edits that reparsed the whole text: a full parse, or an "incremental" one that read
    # every character (Enter at column 0 inside one big block moves the rest of it out).
    fallbacks: int | None = None
    most_read: float | None = None  # the largest share of the text one timed edit read
    check: str = "not run"


# -- choosing where to edit ------------------------------------------------------------------


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def nearest_line(lines: list[str], accept: Callable[[list[str], int], bool]) -> int:
    """Index of the line closest to the middle of the file that ``accept`` approves."""
    middle = len(lines) // 2
    for distance in range(len(lines)):
        for index in (middle + distance, middle - distance):
            if 0 <= index < len(lines) and accept(lines, index):
                return index
    raise ValueError("no suitable line to edit")


def is_let_binding(lines: list[str], index: int) -> bool:
    return re.match(r"\s*let [a-z]+_\d+ = ", lines[index]) is not None


def is_session_string(lines: list[str], index: int) -> bool:
    line = lines[index]
    return 'session "' in line and '"""' not in line and line.endswith('"')


def is_let_session(lines: list[str], index: int) -> bool:
    return is_let_binding(lines, index) and "= session" in lines[index]


def is_standalone_statement(lines: list[str], index: int) -> bool:
    """A one-line ``session "..."`` whose next non-blank line is not indented deeper."""
    if not is_session_string(lines, index):
        return False
    following = next((line for line in lines[index + 1 :] if line.strip()), "")
    return len(indent_of(following)) <= len(indent_of(lines[index]))


# -- scenarios -------------------------------------------------------------------------------


def insert_delete(line: int, column: int, char: str) -> list[Edit]:
    return [
        Edit((line, column), (line, column), char),
        Edit((line, column), (line, column + 1), ""),
    ]


def char_in_identifier(lines: list[str], cycles: int) -> Scenario:
    line = nearest_line(lines, is_let_binding)
    column = lines[line].index("let ") + len("let ") + 2
    edits = [insert_delete(line, column, "x") for _ in range(cycles)]
    return Scenario("1 char in identifier", line, edits, one_char=True)


def char_in_string(lines: list[str], cycles: int) -> Scenario:
    line = nearest_line(lines, is_session_string)
    column = lines[line].index('session "') + len('session "') + 3
    edits = [insert_delete(line, column, "q") for _ in range(cycles)]
    return Scenario("1 char in prompt string", line, edits, one_char=True)


def enter_at_end(lines: list[str], cycles: int) -> Scenario:
    line = nearest_line(lines, is_standalone_statement)
    end, indent = len(lines[line]), indent_of(lines[line])
    pair = [
        Edit((line, end), (line, end), "\n" + indent),
        Edit((line, end), (line + 1, len(indent)), ""),
    ]
    return Scenario("Enter at end of line (+indent)", line, [pair] * cycles)


def enter_at_start(lines: list[str], cycles: int) -> Scenario:
    """A line break at column 0 of a statement: a blank line above it, so only the line
    numbers of the rest of the file change."""
    line = nearest_line(lines, is_standalone_statement)
    pair = [Edit((line, 0), (line, 0), "\n"), Edit((line, 0), (line + 1, 0), "")]
    return Scenario("Enter at start of line", line, [pair] * cycles)


def enter_splitting(lines: list[str], cycles: int) -> Scenario:
    """Enter before `session` with no indentation: inside `block main:` this moves the rest of
    the block out of it, a structural change that reparses everything after the line."""
    line = nearest_line(lines, is_let_session)
    column = lines[line].index("session")
    pair = [Edit((line, column), (line, column), "\n"), Edit((line, column), (line + 1, 0), "")]
    return Scenario("Enter splitting a line", line, [pair] * cycles)


def enter_splitting_indented(lines: list[str], cycles: int) -> Scenario:
    """The same split as an editor makes it: the new line keeps the statement's indentation
    plus one level, so the block structure around it does not change."""
    line = nearest_line(lines, is_let_session)
    column = lines[line].index("session")
    indent = indent_of(lines[line]) + "  "
    pair = [
        Edit((line, column), (line, column), "\n" + indent),
        Edit((line, column), (line + 1, len(indent)), ""),
    ]
    return Scenario("Enter splitting a line (+indent)", line, [pair] * cycles)


def typing_cycle(line: int, end: int, indent: str, statement: str) -> list[Edit]:
    edits = [Edit((line, end), (line, end), "\n" + indent)]
    for offset, char in enumerate(statement):
        column = len(indent) + offset
        edits.append(Edit((line + 1, column), (line + 1, column), char))
    edits.append(Edit((line, end), (line + 1, len(indent) + len(statement)), "", timed=False))
    return edits


def typing_statement(lines: list[str], cycles: int) -> Scenario:
    line = nearest_line(lines, is_standalone_statement)
    end, indent = len(lines[line]), indent_of(lines[line])
    edits = [
        typing_cycle(line, end, indent, f'let typed_{n} = session "Check the typed line"')
        for n in range(cycles)
    ]
    return Scenario("typing a new statement", line, edits)


def scenarios(text: str, repetitions: int) -> list[Scenario]:
    lines = text.split("\n")
    pairs = repetitions // 2
    return [
        char_in_identifier(lines, pairs),
        char_in_string(lines, pairs),
        enter_at_end(lines, pairs),
        enter_at_start(lines, pairs),
        enter_splitting(lines, pairs),
        enter_splitting_indented(lines, pairs),
        typing_statement(lines, max(2, repetitions // 45)),
    ]


# -- measuring -------------------------------------------------------------------------------


def apply(doc: Any, edit: Edit) -> float:
    """Seconds from the ``apply_edit`` call until the updated tree is available."""
    return apply_timed(doc, edit)[0]


def apply_timed(doc: Any, edit: Edit) -> tuple[float, float]:
    """Wall and thread CPU seconds of one edit: the machine is shared, so wall time alone
    mixes in other processes' work."""
    cpu = time.thread_time()
    start = time.perf_counter()
    doc.apply_edit(edit.start, edit.end, edit.text)
    _ = doc.module  # a lazy implementation reparses here
    return time.perf_counter() - start, time.thread_time() - cpu


def count_fallback(doc: Any, scenario: Scenario) -> None:
    """Optional: count edits that reparsed the whole text (``doc.stats``, when available)."""
    stats = getattr(doc, "stats", None)
    mode = getattr(stats, "mode", None)
    if mode is None:
        return
    share = 1.0 if mode == "full" else getattr(stats, "read", 0) / max(1, len(doc.text))
    scenario.most_read = max(scenario.most_read or 0.0, share)
    scenario.fallbacks = (scenario.fallbacks or 0) + (share >= 1.0)


def run_scenario(doc: Any, scenario: Scenario, warmup: int, budget: float) -> None:
    """Warm up with the first cycles, then time whole cycles until they or the budget run out."""
    for cycle in scenario.cycles[:warmup]:
        for edit in cycle:
            apply(doc, edit)
    gc.collect()
    spent = 0.0
    for cycle in scenario.cycles[warmup:]:
        for edit in cycle:
            elapsed, cpu = apply_timed(doc, edit)
            spent += elapsed
            if edit.timed:
                scenario.samples.append(elapsed)
                scenario.cpu_samples.append(cpu)
                count_fallback(doc, scenario)
        if spent > budget:
            break


def verify(doc: Any, text: str, scenario: Scenario, parse: Callable[[str], Any]) -> str:
    """Untimed: check the tree now, then in the middle and at the end of one more cycle."""
    if doc.text != text:
        return "MISMATCH (text differs after edit cycles that should restore it)"
    result = compare_with_full_parse(doc.module, doc.text, parse)
    cycle = scenario.cycles[-1]
    half = max(1, len(cycle) // 2)
    for part in (cycle[:half], cycle[half:]):
        if result != "OK":
            break
        for edit in part:
            doc.apply_edit(edit.start, edit.end, edit.text)
        result = compare_with_full_parse(doc.module, doc.text, parse)
    return result


def locate_mismatch(text: str, scenario: Scenario, syntax: Any, limit: int = 60) -> str:
    """Replay the edits on a fresh document, checking after each, to find the first bad one."""
    doc = syntax.Document(text)
    edits = [edit for cycle in scenario.cycles for edit in cycle][:limit]
    for index, edit in enumerate(edits):
        doc.apply_edit(edit.start, edit.end, edit.text)
        result = compare_with_full_parse(doc.module, doc.text, syntax.parse)
        if result != "OK":
            return f"first bad edit #{index}: {edit} -> {result}"
    return f"not reproduced within the first {len(edits)} edits"


def text_line(text: str, index: int, width: int = 48) -> str:
    line = text.split("\n")[index].strip()
    return line if len(line) <= width else line[: width - 3] + "..."


def full_parse_ms(text: str, parse: Callable[[str], Any], runs: int = 5) -> float:
    parse(text)
    return median([time_once(lambda: parse(text)) for _ in range(runs)]) * 1000


# -- reporting -------------------------------------------------------------------------------


def verdict(scenario: Scenario, speedup: float) -> str:
    if not scenario.one_char:
        return "-"
    met = median(scenario.samples) * 1000 <= TARGET_MS and speedup >= TARGET_SPEEDUP
    return "met" if met else "NOT met"


def table_row(program: str, scenario: Scenario, full_ms: float) -> list[str]:
    status = scenario.check.split(" ")[0]
    fallbacks = "-" if scenario.fallbacks is None else str(scenario.fallbacks)
    most_read = "-" if scenario.most_read is None else f"{min(scenario.most_read, 1.0):.0%}"
    if not scenario.samples:
        return [
            program, scenario.name, "0", *["-"] * 5, f"{full_ms:.1f}", "-", "-", "-", "-", status
        ]  # fmt: skip
    samples_ms = [sample * 1000 for sample in scenario.samples]
    cpu_ms = [sample * 1000 for sample in scenario.cpu_samples]
    speedup = full_ms / median(samples_ms)
    return [
        program,
        scenario.name,
        str(len(samples_ms)),
        f"{median(samples_ms):.2f}",
        f"{percentile(samples_ms, 0.95):.2f}",
        f"{max(samples_ms):.2f}",
        f"{median(cpu_ms):.2f}",
        f"{percentile(cpu_ms, 0.95):.2f}",
        f"{full_ms:.1f}",
        f"{speedup:.1f}x",
        fallbacks,
        most_read,
        verdict(scenario, speedup),
        status,
    ]


def bench_program(name: str, text: str, syntax: Any, args: argparse.Namespace) -> list[list[str]]:
    full_ms = full_parse_ms(text, syntax.parse)
    rows = []
    for scenario in scenarios(text, args.repetitions):
        doc = syntax.Document(text)
        run_scenario(doc, scenario, warmup=2 if scenario.one_char else 1, budget=args.budget)
        scenario.check = verify(doc, text, scenario, syntax.parse)
        where = f"line {scenario.line + 1} {text_line(text, scenario.line)!r}"
        print(f"  {name:<5} {scenario.name:<30} {scenario.check:<8} at {where}")
        if scenario.check != "OK":
            print(f"        {locate_mismatch(text, scenario, syntax)}")
        rows.append(table_row(name, scenario, full_ms))
    return rows


# -- pathological inputs ----------------------------------------------------------------------

# A block under a very long header line: the header's indentation was found by walking its
# leaves back one `get_previous_leaf` at a time, each a search of the parent's children.
BLOCK = '\n  session "a"\n  session "b"\n'
PATHOLOGICAL = [
    ("70 KB header of 10,000 `| map:`", "let x = items" + " | map:" * 10_000 + BLOCK),
    ("40 KB header of nested `not`", "if " + "not " * 10_000 + "**c**:" + BLOCK),
]


def pathological_edits(text: str) -> list[tuple[str, Edit]]:
    middle = len(text.split("\n")[0]) // 2
    return [
        ("char in the block", Edit((2, 3), (2, 3), "x")),
        ("char in the header", Edit((0, middle), (0, middle), "x")),
    ]


def bench_pathological(syntax: Any, runs: int) -> list[list[str]]:
    """Single edits on inputs where one edit once cost far more than a full parse."""
    rows = []
    for name, text in PATHOLOGICAL:
        for where, edit in pathological_edits(text):
            samples, modes, checks = [], set(), set()
            for _ in range(runs):
                doc = syntax.Document(text)
                gc.collect()
                samples.append(apply(doc, edit))
                modes.add(doc.stats.mode)
                checks.add(compare_with_full_parse(doc.module, doc.text, syntax.parse))
            edited = syntax.Document(text)
            edited.apply_edit(edit.start, edit.end, edit.text)
            full_ms = full_parse_ms(edited.text, syntax.parse, runs)
            edit_ms = median(samples) * 1000
            rows.append(
                [
                    name,
                    where,
                    f"{edit_ms:.1f}",
                    f"{full_ms:.1f}",
                    f"{edit_ms / full_ms:.2f}",
                    "/".join(sorted(modes)),
                    "/".join(sorted(c.split(" ")[0] for c in checks)),
                ]
            )
    return rows


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--lines", type=int, default=10_000, help="size of generated programs")
    options.add_argument("--repetitions", type=int, default=200, help="edits per scenario")
    options.add_argument("--budget", type=float, default=4.0, help="max seconds per scenario")
    options.add_argument("--runs", type=int, default=3, help="runs of each pathological edit")
    options.add_argument(
        "--pathological-only", action="store_true", help="only the pathological inputs"
    )
    options.add_argument(
        "--quick", action="store_true", help="a smoke run: 1,000 lines, 20 edits, 1 run"
    )
    args = options.parse_args()
    if args.quick:
        args.lines, args.repetitions, args.budget, args.runs = 1_000, 20, 0.5, 1

    syntax = load_syntax()
    print("Pathological inputs: one edit (median of --runs) against a full parse of the result")
    header = ["input", "edit", "edit ms", "full ms", "edit/full", "mode", "tree"]
    print(format_table(header, bench_pathological(syntax, args.runs), text_columns=2))
    print()
    if args.pathological_only:
        return
    print(f"Incremental reparse, {args.lines}-line programs, {args.repetitions} edits/scenario")
    print("Checks (untimed, after each timed loop) against a fresh full parse:")
    rows = bench_program("flat", flat_program(args.lines), syntax, args)
    rows += bench_program("block", block_program(args.lines), syntax, args)
    header = ["program", "edit", "n", "median ms", "p95 ms", "max ms", "cpu median", "cpu p95"]
    header += ["full ms", "speedup"]
    header += ["whole-text reparses", "most read"]
    header += [f"target <={TARGET_MS:.0f}ms & >={TARGET_SPEEDUP:.0f}x", "tree"]
    print()
    print(format_table(header, rows, text_columns=2))
    print()
    print(
        f"Targets: one-character edit median <= {TARGET_MS:.0f} ms and >= {TARGET_SPEEDUP:.0f}x "
        "faster than a full parse; full parse >= 2x parso's lines/s (see parse_speed.py)."
    )


if __name__ == "__main__":
    main()
