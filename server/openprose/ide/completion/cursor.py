"""Where the cursor is in the text being typed: the word it is in, the leaves of its logical
line before it (the parser keeps every token, even in error nodes), the brackets it is inside,
and whether it is in a comment or a condition."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openprose.ide.analysis import Analysis
from openprose.ide.types import Pos, Range
from openprose.syntax import tree as t

# The most leaves of one logical line looked at (a longer line only loses context).
_MAX_TOKENS = 512


@dataclass
class Cursor:
    """Where a request stands: the word at the position and the tokens before it."""

    analysis: Analysis
    line: int
    character: int
    text: str  # the cursor's line, without its line break
    word_start: int
    word_end: int
    leaf: Any  # the leaf under the position (its prefix included), or None
    previous: Any  # the last leaf ending at or before the word, or None
    tokens: list[Any]  # the leaves of the logical line before the word, in order

    @property
    def word(self) -> str:
        return self.text[self.word_start : self.character]

    @property
    def target(self) -> tuple[int, int]:
        """The word's start as a parso (1-based line) position."""
        return self.line + 1, self.word_start

    @property
    def replace(self) -> Range:
        return Range((self.line, self.word_start), (self.line, self.word_end))

    @property
    def position(self) -> tuple[int, int]:
        """The cursor as a parso position."""
        return self.line + 1, self.character

    @property
    def indent(self) -> int:
        """The indentation of the logical line holding the cursor."""
        if self.tokens:
            return line_indent(self.analysis, self.tokens[0].start_pos[0] - 1)
        return line_indent(self.analysis, self.line)

    @property
    def anchor(self) -> Any:
        """A leaf whose ancestors enclose the cursor's line."""
        return self.tokens[-1] if self.tokens else self.previous

    def in_string(self) -> t.String | None:
        """The string literal the cursor is inside (after its opening quote), if any."""
        leaf = self.leaf
        if not isinstance(leaf, t.String):
            return None
        here = self.position
        if leaf.start_pos >= here:
            return None
        if here < leaf.end_pos or (here == leaf.end_pos and not leaf.is_terminated):
            return leaf
        return None

    def in_comment_or_condition(self) -> bool:
        leaf = self.leaf
        if leaf is None:
            return False
        here = self.position
        if isinstance(leaf, t.Discretion) and leaf.start_pos < here:
            return here < leaf.end_pos or not leaf.is_terminated
        if here > leaf.start_pos:
            return False
        # In the leaf's prefix: a comment if a `#` stands before the cursor on this line.
        start_line, start_column = leaf.get_start_pos_of_prefix()
        column = start_column if start_line == here[0] else 0
        return "#" in self.text[column : self.character]


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_" or char == "-"


def line_indent(analysis: Analysis, line: int) -> int:
    lines = analysis.lines
    if not 0 <= line < len(lines):
        return 0
    text = lines[line]
    return len(text) - len(text.lstrip(" \t\f"))


def leaf_at(module: Any, position: tuple[int, int]) -> Any:
    """The leaf whose prefix or value holds a parso position (the left one at a boundary)."""
    try:
        return module.get_leaf_for_position(position, include_prefixes=True)
    except ValueError:
        return None


def leaf_before(module: Any, position: tuple[int, int]) -> Any:
    """The last non-empty leaf ending at or before a parso position."""
    leaf = leaf_at(module, position)
    while leaf is not None and (leaf.end_pos > position or not leaf.value):
        leaf = leaf.get_previous_leaf()
    return leaf


def locate(analysis: Analysis, position: Pos) -> Cursor | None:
    """The cursor at a 0-based position, or None when the position is outside the text."""
    line, character = position
    lines = analysis.lines
    if line < 0 or character < 0 or line >= len(lines):
        return None
    text = lines[line]
    if character > len(text):
        return None
    start = character
    while start > 0 and _is_word_char(text[start - 1]):
        start -= 1
    while start < character and text[start] == "-":
        start += 1  # a name never starts with a hyphen (`->`, `-1`)
    end = character
    while end < len(text) and _is_word_char(text[end]):
        end += 1
    module = analysis.module
    previous = leaf_before(module, (line + 1, start))
    tokens = _logical_line(previous)
    if not tokens and isinstance(previous, t.Newline):
        # A blank line inside brackets left open on the line above (`[a,` then Enter):
        # the tokenizer ended that line, but the cursor continues it when indented deeper.
        above = _logical_line(previous.get_previous_leaf())
        if (
            above
            and open_bracket(above) is not None
            and line_indent(analysis, line) > line_indent(analysis, above[0].start_pos[0] - 1)
        ):
            tokens = above
    return Cursor(
        analysis,
        line,
        character,
        text,
        start,
        end,
        leaf_at(module, (line + 1, character)),
        previous,
        tokens,
    )


def _logical_line(last: Any) -> list[Any]:
    """The leaves of a logical line up to ``last``, in order."""
    tokens: list[Any] = []
    leaf = last
    while leaf is not None and not isinstance(leaf, t.Newline) and len(tokens) < _MAX_TOKENS:
        tokens.append(leaf)
        leaf = leaf.get_previous_leaf()
    tokens.reverse()
    return tokens


def open_bracket(tokens: list[Any], openers: str = "([{") -> int | None:
    """The index of the innermost bracket among ``openers`` still open at the end."""
    stack: list[int] = []
    for i, tok in enumerate(tokens):
        if not isinstance(tok, t.Operator):
            continue
        value = tok.value
        if value in "([{":
            stack.append(i)
        elif value in ")]}" and stack:
            stack.pop()
    for i in reversed(stack):
        if tokens[i].value in openers:
            return i
    return None


def segments(tokens: list[Any]) -> list[list[Any]]:
    """The tokens inside a bracket split at its top-level commas."""
    parts: list[list[Any]] = [[]]
    depth = 0
    for tok in tokens:
        if isinstance(tok, t.Operator):
            if tok.value in "([{":
                depth += 1
            elif tok.value in ")]}":
                depth -= 1
            elif tok.value == "," and depth == 0:
                parts.append([])
                continue
        parts[-1].append(tok)
    return parts
