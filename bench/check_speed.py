"""Checking (parse + every rule) against parsing alone, on the shared corpus.

Target from the analyzer issue: ``prose check`` on the whole corpus stays within 2x of the
time the parser alone takes.  Prints both times and the ratio; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from common import CORPUS_DIR, load_syntax, time_once


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not CORPUS_DIR.is_dir():
        print(f"corpus not found at {CORPUS_DIR}; nothing to measure")
        return
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
    parse_times = [time_once(parse_all) for _ in range(args.runs)]
    check_times = [time_once(check_all) for _ in range(args.runs)]
    parse_ms = statistics.median(parse_times) * 1000
    check_ms = statistics.median(check_times) * 1000
    print(f"corpus: {len(files)} files, {lines} lines, median of {args.runs} runs")
    print(f"{'what':<26} {'ms':>8} {'lines/s':>10}")
    print(f"{'parse only':<26} {parse_ms:>8.1f} {lines / parse_ms * 1000:>10,.0f}")
    print(f"{'check (parse + rules)':<26} {check_ms:>8.1f} {lines / check_ms * 1000:>10,.0f}")
    ratio = check_ms / parse_ms
    verdict = "met" if ratio <= 2.0 else "NOT met"
    print(f"check / parse = {ratio:.2f}x (target <= 2.0x: {verdict})")


if __name__ == "__main__":
    sys.exit(main())
