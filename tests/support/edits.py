"""The one edit-application oracle: apply edits to a text the way a client does.

Edits refer to the original text, come in any order and must not overlap; positions are 0-based
(line, character) in code points, a line ending at \\n, \\r\\n or \\r. An edit may end at
``(line_count, 0)``, just past the last line. Every test that checks the edits of the
formatter, a quick fix, a rename or the server applies them here, so they all hold the edits
to the same contract."""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise

from lsprotocol import types

from openprose.format import TextEdit

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$")


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    lines = [match.group() for match in _LINE.finditer(text) if match.group()]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: tuple[int, int]) -> int:
        line, character = position
        if line == len(lines):
            assert character == 0, (position, "past the last line")
            return len(text)
        assert 0 <= line < len(lines), (position, "no such line")
        content = lines[line].rstrip("\r\n")
        assert 0 <= character <= len(content), (position, content)
        return starts[line] + character

    spans = sorted((offset(e.start), offset(e.end), e.text) for e in edits)
    for (_, end, _), (next_start, _, _) in pairwise(spans):
        assert end <= next_start, "edits overlap"
    for start, end, new in reversed(spans):
        assert start <= end, "an edit ends before it starts"
        text = text[:start] + new + text[end:]
    return text


def from_lsp(text: str, edits: Iterable[types.TextEdit], encoding: str) -> list[TextEdit]:
    """Protocol edits, positions counted in ``encoding``'s units ("utf-8", "utf-16" or
    "utf-32"), as code-point edits of ``text``."""
    lines = text.splitlines()

    def position(at: types.Position) -> tuple[int, int]:
        line = lines[at.line] if at.line < len(lines) else ""
        column = count = 0
        while column < len(line) and count < at.character:
            count += units(line[column], encoding)
            column += 1
        assert count == at.character or column == len(line), (at, line)
        return at.line, column

    return [TextEdit(position(e.range.start), position(e.range.end), e.new_text) for e in edits]


def units(text: str, encoding: str) -> int:
    """The length of ``text`` in an encoding's code units."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)
