"""Selection ranges ("expand selection"): from the word under the cursor outwards.

For each position: the word (inside a string: the interpolated name, the ``{...}``
interpolation or the word of text, then the text run, then the string's inside), the
token, then every enclosing node (expression, property, statement, block, construct)
and finally the whole document.  Each range strictly contains the one before it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from openprose.ide.folding import LINE_BREAK, content_end, prefix_comments
from openprose.ide.types import Pos, Range, Selection
from openprose.syntax import tree as t
from openprose.syntax.tree import offset_position

if TYPE_CHECKING:
    from openprose.ide.analysis import Analysis

_WORD = re.compile(r"\w+")
_WORDLIKE = (t.Name, t.Keyword, t.Number, t.String, t.Discretion)


def selection_ranges(analysis: Analysis, positions: list[Pos]) -> list[Selection]:
    lines = analysis.lines
    document = Range((0, 0), (len(lines) - 1, len(lines[-1])))
    return [Selection(_chain(analysis, position, document)) for position in positions]


def _pos(parso_position: tuple[int, int]) -> Pos:
    return parso_position[0] - 1, parso_position[1]


def _chain(analysis: Analysis, position: Pos, document: Range) -> tuple[Range, ...]:
    lines = analysis.lines
    line = min(max(position[0], 0), len(lines) - 1)
    character = min(max(position[1], 0), len(lines[line]))
    position = (line, character)
    target = (line + 1, character)

    ranges: list[Range] = []
    leaf = analysis.leaf_at(position)
    if leaf is not None:
        in_prefix = target < leaf.start_pos or isinstance(leaf, t.Newline | t.EndMarker)
        if in_prefix or not isinstance(leaf, _WORDLIKE):
            # The cursor just after a word selects that word.
            previous = leaf.get_previous_leaf()
            if (
                isinstance(previous, _WORDLIKE)
                and previous.end_pos == target
                and not (in_prefix and _in_comment(leaf, position))
            ):
                leaf, in_prefix = previous, False
        if in_prefix:
            ranges.extend(_comment_ranges(leaf, position))
            node = leaf.parent
        else:
            ranges.extend(_inner_ranges(leaf, target))
            ranges.append(Range(_pos(leaf.start_pos), _pos(leaf.end_pos)))
            node = leaf.parent
        while node is not None and not isinstance(node, t.Module):
            ranges.append(_node_range(node))
            node = node.parent
    ranges.append(document)

    result: list[Range] = []
    for r in ranges:
        if not (r.start <= position <= r.end):
            continue
        if result:
            last = result[-1]
            if r == last or not (r.start <= last.start and last.end <= r.end):
                continue
        result.append(r)
    return tuple(result)


def _node_range(node: Any) -> Range:
    start = node.start_pos
    if isinstance(node, t.Suite | t.PropertyBlock) and len(node.children) > 1:
        start = node.children[1].start_pos  # the body, not the header's line break
    return Range(_pos(start), _pos(content_end(node)))


# --------------------------------------------------------------------------- comments


def _in_comment(leaf: Any, position: Pos) -> bool:
    return any(
        line == position[0] and column <= position[1] <= column + len(text)
        for line, column, text, _own in prefix_comments(leaf, leaf.get_previous_leaf())
    )


def _comment_ranges(leaf: Any, position: Pos) -> list[Range]:
    for line, column, text, _own in prefix_comments(leaf, leaf.get_previous_leaf()):
        if line == position[0] and column <= position[1] <= column + len(text):
            ranges = _words(text, position[1] - column, line, column)
            ranges.append(Range((line, column), (line, column + len(text))))
            return ranges
    return []


def _words(text: str, offset: int, line: int, column: int) -> list[Range]:
    """The word of a single-line ``text`` at ``offset`` (touching it), as a range."""
    for match in _WORD.finditer(text):
        if match.start() <= offset <= match.end():
            return [Range((line, column + match.start()), (line, column + match.end()))]
        if match.start() > offset:
            break
    return []


# --------------------------------------------------------------------------- tokens


def _offset_in(leaf: Any, target: tuple[int, int]) -> int:
    """The offset in ``leaf.value`` of a parso position inside the leaf."""
    start: tuple[int, int] = leaf.start_pos
    line, column = start
    if target[0] == line:
        return target[1] - column
    value = leaf.value
    for breaks, match in enumerate(LINE_BREAK.finditer(value), 1):
        if line + breaks == target[0]:
            return match.end() + target[1]
    return len(value)


def _span(leaf: Any, start: int, end: int) -> Range:
    return Range(_pos(offset_position(leaf, start)), _pos(offset_position(leaf, end)))


def _word_in(leaf: Any, start: int, end: int, offset: int) -> list[Range]:
    """The word at ``offset`` within ``leaf.value[start:end]``."""
    segment = leaf.value[start:end]
    for match in _WORD.finditer(segment):
        if start + match.start() <= offset <= start + match.end():
            return [_span(leaf, start + match.start(), start + match.end())]
        if start + match.start() > offset:
            break
    return []


def _inner_ranges(leaf: Any, target: tuple[int, int]) -> list[Range]:
    """Ranges inside a string or condition, innermost first."""
    if isinstance(leaf, t.String):
        offset = _offset_in(leaf, target)
        q = leaf.quote_length
        body_end = len(leaf.value) - q if leaf.is_terminated else len(leaf.value)
        ranges: list[Range] = []
        touching = [p for p in leaf.parts() if p.start_offset <= offset <= p.end_offset]
        interpolations = [p for p in touching if p.kind == "interpolation"]
        for part in interpolations or touching:
            if part.kind == "interpolation":
                # `{a.b}`: the segment, the dotted path, the braces.
                inner_start = part.start_offset + 1
                ranges.extend(_word_in(leaf, inner_start, part.end_offset - 1, offset))
                ranges.append(_span(leaf, inner_start, part.end_offset - 1))
            elif part.kind == "text":
                ranges.extend(_word_in(leaf, part.start_offset, part.end_offset, offset))
            ranges.append(_span(leaf, part.start_offset, part.end_offset))
            break
        if q <= offset <= body_end:
            ranges.append(_span(leaf, q, body_end))
        return ranges
    if isinstance(leaf, t.Discretion):
        offset = _offset_in(leaf, target)
        d = 3 if leaf.is_multiline else 2
        end = len(leaf.value) - d if leaf.is_terminated else len(leaf.value)
        ranges = _word_in(leaf, d, end, offset)
        inner = leaf.value[d:end]
        stripped_start = d + len(inner) - len(inner.lstrip())
        stripped_end = d + len(inner.rstrip())
        if stripped_start <= offset <= stripped_end and stripped_start < stripped_end:
            ranges.append(_span(leaf, stripped_start, stripped_end))
        return ranges
    return []
