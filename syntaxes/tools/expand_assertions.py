"""Expand shorthand assertions in grammar test files, in place.

A line ``#@ TEXT :: SCOPES`` (``#@ TEXT@N :: SCOPES`` for the N-th occurrence, 1-based) under a
source line becomes a vscode-tmgrammar-test assertion on the first (or N-th) occurrence of
TEXT in that source line: ``#   ^^^^ SCOPES``, or ``# <---- SCOPES`` when TEXT starts in
column 0. SCOPES is what vscode-tmgrammar-test takes: required scopes, then optionally
``- `` and scopes that must not be there.

    python3 tools/expand_assertions.py tests/strings.test.prose ...
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SHORTHAND = re.compile(r"^#@ (?P<text>.+?)(?:@(?P<nth>\d+))? :: (?P<scopes>.+)$")
ASSERTION = re.compile(r"^#\s*(?:\^|<~*-)")


def expand(source: str) -> str:
    out: list[str] = []
    last: str | None = None
    for number, line in enumerate(source.split("\n"), 1):
        m = SHORTHAND.match(line)
        if m is None:
            if not ASSERTION.match(line):
                last = line
            out.append(line)
            continue
        text, nth = m["text"], int(m["nth"] or 1)
        column = -1
        for _ in range(nth):
            column = -1 if last is None else last.find(text, column + 1)
            if column < 0:
                raise SystemExit(f"line {number}: {text!r} (#{nth}) is not in {last!r}")
        if column == 0:
            out.append(f"# <{'-' * len(text)} {m['scopes']}")
        else:
            out.append(f"#{' ' * (column - 1)}{'^' * len(text)} {m['scopes']}")
    return "\n".join(out)


def main(paths: list[str]) -> None:
    for name in paths:
        path = Path(name)
        path.write_text(expand(path.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
