"""Text edits for fixes: made from parso positions, and applied to a text."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from openprose.format import TextEdit
from openprose.ide.analysis import to_pos
from openprose.ide.types import Pos

__all__ = ["apply_edits", "replace_node", "text_edit"]


def text_edit(start: Any, end: Any, text: str) -> TextEdit:
    """An edit from parso positions."""
    return TextEdit(to_pos(start), to_pos(end), text)


def replace_node(node: Any, text: str) -> TextEdit:
    return text_edit(node.start_pos, node.end_pos, text)


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with non-overlapping ``edits`` applied (in any order)."""
    from parso.utils import split_lines

    starts = [0]
    for line in split_lines(text, keepends=True):
        starts.append(starts[-1] + len(line))
    lines = split_lines(text)

    def offset(position: Pos) -> int:
        line, character = position
        if line >= len(lines):
            return len(text)
        return starts[line] + min(character, len(lines[line]))

    result = text
    spans = sorted(((offset(e.start), offset(e.end), e.text) for e in edits), reverse=True)
    for start, end, new in spans:
        result = result[:start] + new + result[end:]
    return result
