"""Folding ranges: indented blocks, multi-line strings and conditions, comment runs.

One walk over the tree.  A construct that owns an indented block (a ``Suite`` or a
``PropertyBlock``) folds from its first line to the last line of its block that has
content, so the blank lines after it stay visible.  Comments live in leaf prefixes; a
run of two or more consecutive comment-only lines folds as a ``comment`` range.

The two helpers ``content_end`` and ``prefix_comments`` are shared with the other
editor features (symbols, selection, semantic tokens).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from openprose.ide.types import Folding
from openprose.syntax import tree as t

if TYPE_CHECKING:
    from openprose.ide.analysis import Analysis

LINE_BREAK = re.compile(r"\r\n|\r|\n")

_BLOCKS = (t.Suite, t.PropertyBlock)
_SPANS = (t.Pipeline, t.ArrayLiteral, t.ObjectLiteral, t.Arguments, t.Parameters)


def leaf_end(leaf: Any) -> tuple[int, int]:
    """A leaf's end (parso position), without parso's line splitting for one-line leaves."""
    value = leaf.value
    if "\n" not in value and "\r" not in value:
        line: int = leaf.line
        return line, leaf.column + len(value)
    end: tuple[int, int] = leaf.end_pos
    return end


def last_content_leaf(node: Any) -> Any:
    """The last leaf of a node that is not a line break (None if there is none)."""
    for child in reversed(node.children):
        if hasattr(child, "children"):
            found = last_content_leaf(child)
            if found is not None:
                return found
        elif not isinstance(child, t.Newline | t.EndMarker):
            return child
    return None


def content_end(node: Any) -> tuple[int, int]:
    """Where the content of a node or leaf ends (parso position): the end of its last
    token, so the line break that ends a statement (and anything after it) is left out."""
    if not hasattr(node, "children"):
        return leaf_end(node)
    leaf = last_content_leaf(node)
    if leaf is None:
        start: tuple[int, int] = node.start_pos
        return start
    return leaf_end(leaf)


def prefix_comments(leaf: Any, previous: Any) -> Iterator[tuple[int, int, str, bool]]:
    """The comments in ``leaf``'s prefix as (0-based line, column, text, own line).

    ``previous`` is the leaf before ``leaf`` (None for the first one): the prefix starts
    where it ends.  A comment is on its own line unless code precedes it on that line.
    A prefix holds only whitespace, line breaks and comments, so every ``#`` in it starts
    a comment that runs to the end of its line.
    """
    prefix = leaf.prefix
    if "#" not in prefix:
        return
    segments = LINE_BREAK.split(prefix)
    first_line = leaf.line - len(segments)  # 0-based line of the first segment
    for k, segment in enumerate(segments):
        i = segment.find("#")
        if i < 0:
            continue
        if k == 0 and previous is not None and not isinstance(previous, t.Newline):
            yield first_line, leaf_end(previous)[1] + i, segment[i:], False
        else:
            yield first_line + k, i, segment[i:], True


def folding_ranges(analysis: Analysis) -> list[Folding]:
    found: list[Folding] = []
    add = found.append
    comment_lines: list[int] = []
    previous: Any = None
    stack: list[Any] = [analysis.module]
    pop = stack.pop
    push = stack.extend
    string, discretion = t.String, t.Discretion
    while stack:
        node = pop()
        children = getattr(node, "children", None)
        if children is not None:
            if isinstance(node, _BLOCKS):
                owner = node.parent
                if owner is not None:
                    start = owner.start_pos[0] - 1
                    end = content_end(node)[0] - 1
                    if end > start:
                        add(Folding(start, end))
            elif isinstance(node, _SPANS):
                start = node.start_pos[0] - 1
                end = content_end(node)[0] - 1
                if end > start:
                    add(Folding(start, end))
            push(reversed(children))
            continue
        leaf = node
        if "#" in leaf.prefix:
            for line, _column, _text, own in prefix_comments(leaf, previous):
                if own:
                    comment_lines.append(line)
        kind = type(leaf)
        if (kind is string and leaf.is_triple) or (kind is discretion and leaf.is_multiline):
            start = leaf.line - 1
            end = leaf_end(leaf)[0] - 1
            if end > start:
                add(Folding(start, end))
        previous = leaf

    # Runs of consecutive comment-only lines.
    run_start = run_end = -2
    for line in comment_lines:
        if line == run_end + 1:
            run_end = line
            continue
        if run_end > run_start:
            add(Folding(run_start, run_end, "comment"))
        run_start = run_end = line
    if run_end > run_start:
        add(Folding(run_start, run_end, "comment"))

    # Editors keep one range per start line: keep the outermost.
    found.sort(key=lambda f: (f.start_line, -f.end_line))
    result: list[Folding] = []
    last_start = -1
    for folding in found:
        if folding.start_line != last_start:
            result.append(folding)
            last_start = folding.start_line
    return result
