"""Random edits: after every one, the incremental analysis must equal a full analysis of the
new text (diagnostics and semantic model); and what an edit costs on a large program.

Run from the repository root: ``python bench/incremental_analysis.py`` (see bench/README.md).

1. Equivalence: ``--edits`` (default 20,000) random edits from tests/support/analysis_edits.py
   over windows of the corpus and of generated programs, and short programs of definitions and
   uses; prints edits/s and the number of mismatches (which must be 0), with the first ones.
2. Cost: keystrokes in the middle of ``flat_program(--lines)``: reparse, model, diagnostics and
   the whole, wall and CPU time (p50/p95), and what was redone; beside a full analysis.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any

from common import CORPUS_DIR, REPO_ROOT, load_syntax, percentile
from generate import block_program, flat_program

load_syntax()
sys.path.insert(0, str(REPO_ROOT))  # tests.support: the edits the tests make too

from openprose.analysis import diagnostics_of, prepare  # noqa: E402
from openprose.analysis.incremental import IncrementalAnalysis  # noqa: E402
from openprose.syntax import Document, parse  # noqa: E402
from tests.support.analysis_edits import LINES, analysed, compared, edit_at  # noqa: E402


def starting_texts(rng: random.Random, count: int) -> list[str]:
    sources = [flat_program(600), block_program(600)]
    corpus = sorted(CORPUS_DIR.rglob("*.prose")) if CORPUS_DIR.is_dir() else []
    sources += [path.read_text(encoding="utf-8", errors="replace") for path in corpus]
    texts: list[str] = []
    while len(texts) < count:
        if len(texts) % 3 == 2:
            texts.append("".join(rng.choice(LINES) for _ in range(rng.randint(1, 30))))
            continue
        lines = rng.choice(sources).splitlines(keepends=True)
        size = rng.randint(5, 120)
        start = rng.randrange(max(1, len(lines) - size + 1))
        texts.append("".join(lines[start : start + size]))
    return texts


def equivalence(edits: int, per_text: int, seed: int) -> None:
    rng = random.Random(seed)
    texts = starting_texts(rng, max(1, edits // per_text))
    mismatches: list[str] = []
    done = 0
    started = time.perf_counter()
    for text in texts:
        document, incremental = analysed(text)
        for _ in range(per_text):
            start, end, new = edit_at(rng, document.text)
            before = document.text
            document.apply_edit(start, end, new)
            incremental.changed(document.touched)
            differs, _ = compared(document, incremental)
            done += 1
            if differs is not None:
                mismatches.append(f"{differs}: {(start, end, new)!r} on {before!r}")
                # Start again from the full analysis of this text.
                document, incremental = analysed(document.text)
    seconds = time.perf_counter() - started
    print(f"equivalence: {done:,} edits over {len(texts)} texts in {seconds:.1f} s")
    print(f"  mismatches: {len(mismatches)} (must be 0)")
    for mismatch in mismatches[:3]:
        print("  -", mismatch[:600])


def cost(lines: int, repetitions: int) -> None:
    text = flat_program(lines)
    document = Document(text)
    incremental = IncrementalAnalysis()
    clock = (time.perf_counter, time.thread_time)
    first = [c() for c in clock]
    incremental.diagnostics(incremental.prepare(document.module))
    first = [(c() - s) * 1000 for c, s in zip(clock, first, strict=True)]
    full = [c() for c in clock]
    diagnostics_of(prepare(parse(text)))
    full = [(c() - s) * 1000 for c, s in zip(clock, full, strict=True)]
    rng = random.Random(1)
    steps: dict[str, list[list[float]]] = {"reparse": [[], []], "model": [[], []]}
    steps |= {"diagnostics": [[], []], "keystroke": [[], []]}
    redone: list[Any] = []
    for k in range(repetitions):
        line = document.line_count // 2 + rng.randrange(-100, 100)
        column = len(document.line_text(line))
        marks = [[c() for c in clock]]
        document.apply_edit((line, column), (line, column), "x" if k % 2 == 0 else "")
        incremental.changed(document.touched)
        marks.append([c() for c in clock])
        ctx = incremental.prepare(document.module)
        marks.append([c() for c in clock])
        incremental.diagnostics(ctx)
        marks.append([c() for c in clock])
        for step, (a, b) in zip(
            ("reparse", "model", "diagnostics", "keystroke"),
            ((0, 1), (1, 2), (2, 3), (0, 3)),
            strict=True,
        ):
            for kind in (0, 1):
                steps[step][kind].append((marks[b][kind] - marks[a][kind]) * 1000)
        redone.append(incremental.statistics)
    print(f"\ncost of a keystroke in the middle of {lines:,} lines ({repetitions} keystrokes)")
    print(f"  first analysis: {first[0]:.1f} ms wall, {first[1]:.1f} ms CPU")
    print(f"  full analysis (analysis.check, for comparison): {full[0]:.1f} ms wall")
    print(f"  {'step':<12} {'p50 wall':>9} {'p95 wall':>9} {'p50 CPU':>9} {'p95 CPU':>9}")
    for step, (wall, cpu) in steps.items():
        print(
            f"  {step:<12} {percentile(wall, 0.5):9.2f} {percentile(wall, 0.95):9.2f}"
            f" {percentile(cpu, 0.5):9.2f} {percentile(cpu, 0.95):9.2f}"
        )
    last = redone[-1]
    mean = sum(r.rechecked for r in redone) / len(redone)
    print(
        f"  runs of items: {last.items}; rechecked per keystroke: {mean:.1f} on average;"
        f" binder traces replayed/remade: {last.replayed}/{last.rebound}"
    )


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--edits", type=int, default=20_000)
    options.add_argument("--per-text", type=int, default=40)
    options.add_argument("--seed", type=int, default=1)
    options.add_argument("--lines", type=int, default=10_000)
    options.add_argument("--repetitions", type=int, default=200)
    options.add_argument("--quick", action="store_true", help="a smoke run: 300 edits, 1,000 lines")
    args = options.parse_args()
    if args.quick:
        args.edits, args.lines, args.repetitions = 300, 1_000, 20
    equivalence(args.edits, args.per_text, args.seed)
    cost(args.lines, args.repetitions)


if __name__ == "__main__":
    main()
