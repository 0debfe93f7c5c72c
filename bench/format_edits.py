"""Where the time goes on one large document (5 MB by default): formatting, its edits, and the
other whole-document editor features.

Two inputs, both a generated flat program of about ``--mb`` megabytes:

* ``messy``: indented with four spaces, so formatting changes almost every line;
* ``touched``: the canonical form with one line in 50 given stray spaces, so formatting
  changes a few scattered lines (the case a line diff must be quick on: long equal runs
  and many repeated lines).

Each case runs once (the inputs are large), after a full garbage collection, and prints
seconds; a case may still trigger a full collection of its own (seconds with a 5 MB tree
alive), so figures vary between runs.  The language server answers formatting and code
actions with nothing above its ``large-file-size`` setting (docs/format.md); these figures are
what the computations cost without that limit.  Asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from common import load_syntax
from generate import flat_program

CASES = (
    "parse",
    "print",
    "print+check",
    "edits",
    "range",
    "diagnostics",
    "quickfix",
    "fixall",
    "folding",
    "tokens",
    "symbols",
)


def timed(func: Callable[[], Any]) -> tuple[float, Any]:
    # A full collection first, so that a case does not pay for the previous one's garbage:
    # with a 5 MB tree alive, one full collection takes seconds.
    gc.collect()
    start = time.perf_counter()
    result = func()
    return time.perf_counter() - start, result


def program(megabytes: float) -> str:
    """A generated program of about ``megabytes`` (UTF-8), in its canonical form."""
    from openprose.format import format_text

    sample = flat_program(2000)
    lines = int(2000 * megabytes * 1e6 / len(sample.encode()))
    return format_text(flat_program(lines)).text


def touched(text: str) -> str:
    """``text`` with stray spaces at the end of every 50th line."""
    lines = text.split("\n")
    for i in range(25, len(lines), 50):
        lines[i] += "   "
    return "\n".join(lines)


def run(name: str, text: str, only: set[str]) -> None:
    from openprose.format import format_edits, format_module, format_range
    from openprose.ide.analysis import analyze_document
    from openprose.ide.fixes.fix_all import fix_all
    from openprose.ide.fixes.registry import code_actions
    from openprose.ide.folding import folding_ranges
    from openprose.ide.semantic_tokens import semantic_tokens
    from openprose.ide.symbols import document_symbols
    from openprose.ide.types import Range

    syntax = load_syntax()
    size = len(text.encode()) / 1e6
    lines = text.count("\n")
    print(f"{name}: {size:.2f} MB, {lines:,} lines", flush=True)

    def show(case: str, seconds: float, note: str = "") -> None:
        print(f"  {case:<12} {seconds:8.2f} s  {note}", flush=True)

    seconds, module = timed(lambda: syntax.parse(text))
    show("parse", seconds)
    if "print" in only:
        show("print", timed(lambda: format_module(module, text, verify=False))[0])
    result = None
    if only & {"print+check", "edits"}:
        seconds, result = timed(lambda: format_module(module, text))
        show("print+check", seconds, f"refused: {result.refused}" if result.refused else "")
    if "edits" in only and result is not None:
        seconds, edits = timed(lambda: format_edits(text, result))
        show("edits", seconds, f"{len(edits):,} edits")
    middle = lines // 2
    if "range" in only:
        seconds, edits = timed(lambda: format_range(text, middle, middle + 10))
        show("range", seconds, f"{len(edits):,} edits (10 lines in the middle)")
    analysis = analyze_document(text, module)
    if only & {"diagnostics", "quickfix", "fixall"}:
        seconds, found = timed(lambda: analysis.diagnostics)
        show("diagnostics", seconds, f"{len(found):,} diagnostics")
    if "quickfix" in only:
        # A cursor on the first diagnostic of each code, as the editor asks on every move.
        firsts: dict[str, Any] = {}
        for diagnostic in analysis.diagnostics:
            firsts.setdefault(diagnostic.code, diagnostic)
        for code, diagnostic in sorted(firsts.items()):
            line = diagnostic.start[0] - 1
            wanted = Range((line, 0), (line, 0))
            seconds, found = timed(partial(code_actions, analysis, wanted))
            show("quickfix", seconds, f"{len(found)} actions on line {line + 1} ({code})")
    if "fixall" in only:
        seconds, found = timed(lambda: fix_all(analysis))
        show("fixall", seconds, "; ".join(a.title for a in found))
    if "folding" in only:
        show("folding", timed(lambda: folding_ranges(analysis))[0])
    if "tokens" in only:
        show("tokens", timed(lambda: semantic_tokens(analysis))[0])
    if "symbols" in only:
        show("symbols", timed(lambda: document_symbols(analysis))[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=5.0, help="size of the inputs (default 5)")
    parser.add_argument(
        "--only", default=",".join(CASES), help=f"comma-separated cases among {', '.join(CASES)}"
    )
    parser.add_argument("--input", choices=("messy", "touched", "both"), default="both")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 0.05 MB inputs")
    args = parser.parse_args()
    if args.quick:
        args.mb = 0.05
    only = set(args.only.split(","))
    canonical = program(args.mb)
    if args.input in ("messy", "both"):
        run("messy (4-space indentation)", canonical.replace("\n  ", "\n    "), only)
    if args.input in ("touched", "both"):
        run("touched (1 line in 50 changed)", touched(canonical), only)


if __name__ == "__main__":
    main()
