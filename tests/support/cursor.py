"""The one cursor marker of the test programs: `‸` (U+2038 CARET) marks where the cursor is.

It is a character no OpenProse program in the tests uses, so it never clashes with the text
around it (unlike `|`, the pipe operator, or `$0`, a snippet tab stop)."""

from __future__ import annotations

CURSOR = "‸"


def cursor(source: str) -> tuple[str, tuple[int, int]]:
    """``source`` without its one cursor marker, and the marker's (line, character): 0-based,
    in code points, lines split at \\n."""
    text, positions = cursors(source)
    assert len(positions) == 1, f"expected one {CURSOR} in {source!r}, found {len(positions)}"
    return text, positions[0]


def cursors(source: str) -> tuple[str, list[tuple[int, int]]]:
    """``source`` without its cursor markers, and where each one was (in the text without
    the markers), in order."""
    positions: list[tuple[int, int]] = []
    lines = source.split("\n")
    for number, line in enumerate(lines):
        while CURSOR in line:
            column = line.index(CURSOR)
            positions.append((number, column))
            line = line[:column] + line[column + len(CURSOR) :]
        lines[number] = line
    return "\n".join(lines), positions
