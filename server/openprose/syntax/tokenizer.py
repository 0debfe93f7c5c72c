"""Tokenizer: turns source text into logical lines of leaves.

A logical line is one physical line, or several when brackets are open or a
multi-line token (``\"\"\"`` string, ``***`` condition) spans lines.  Each carries the
indentation string of its first line; blank and comment-only lines are folded into
the prefix of the next leaf, which keeps the tree lossless.

The tokenizer can start at any line start (``pos``/``line``), which is what the
incremental parser uses to reparse a few statements in the middle of a file.
"""

from __future__ import annotations

import re
from sys import intern
from typing import Any

from openprose.syntax.tree import (
    Discretion,
    EndMarker,
    ErrorToken,
    LineAnchor,
    Name,
    Newline,
    Number,
    Operator,
    String,
)

# One alternative per token kind; order matters (``**`` before ``*``, numbers before ``-``).
# Possessive quantifiers keep long strings linear.  `****` is an empty `**` condition.
# A run of three or more quotes closes a ``"""`` string with its last three (the others
# are text), so a prompt may end in a quotation: ``"""Ask: "Proceed?""""``.
# The whitespace and comment before a token are part of the match (the token's group
# starts after them): one match per token instead of two, the tokenizer's largest cost.
# The prefix is possessive, so only a prefix running to the end of the text fails to match.
# Group 1 is the whitespace of the prefix (see ``_LINE_FIRST_TOKEN``).
_TOKEN_KINDS = r"""
    (?:
      (?P<name>[^\W\d]\w*(?:-\w+)*)
    | (?P<str>"(?:""(?:[^"\\]++|\\.?|"{1,2}+(?!"))*+(?:"{3,}|\Z)|(?:[^"\\\r\n]++|\\[^\r\n]?)*+"?))
    | (?P<nl>\r\n|\n|\r)
    | (?P<disc>\*\*\*\*(?!\*)
              |\*\*\*(?:[^*]++|\*(?!\*\*))*+(?:\*\*\*|\Z)
              |\*\*(?:[^*\r\n]++|\*(?!\*))*+(?:\*\*)?)
    | (?P<num>-?\d+(?:\.\d+)?(?:[^\W\d]\w*)?)
    | (?P<op>->|==|!=|<=|>=|[:=,()\[\]{}|.<>+\-*/!])
    | (?P<err>.)
    )
    """
_TOKEN = re.compile(r"([ \t\f]*+) (?:\#[^\r\n]*+)?+" + _TOKEN_KINDS, re.VERBOSE | re.DOTALL)
# The first token of a logical line, with the blank lines before it and its indentation
# (group 1): one match per line less.  No match: only blank lines are left.
_LINE_FIRST_TOKEN = re.compile(
    r"(?:[ \t\f]*+(?:\#[^\r\n]*+)?(?:\r\n|\n|\r))*+ ([ \t\f]*+) (?:\#[^\r\n]*+)?+" + _TOKEN_KINDS,
    re.VERBOSE | re.DOTALL,
)
assert _LINE_FIRST_TOKEN.groupindex == _TOKEN.groupindex
# The group numbers of ``_TOKEN``'s kinds (``lastindex``: an int compares faster than a name).
_NAME, _STR, _NL, _DISC, _NUM, _OP = (
    _TOKEN.groupindex[k] for k in ("name", "str", "nl", "disc", "num", "op")
)

# Any run of blank or comment-only lines, each ending in a line break.
_BLANK_LINES = re.compile(r"(?:[ \t\f]*+(?:\#[^\r\n]*+)?(?:\r\n|\n|\r))++")
_INDENT = re.compile(r"[ \t\f]*+")

# Names, keywords, operators and indentation repeat all over a program: one shared string
# each instead of one per leaf took a tenth off a big tree's memory.
_SHARED_PREFIX = 16

_OPENERS = frozenset("([{")
_CLOSERS = frozenset(")]}")


def count_newlines(text: str, start: int = 0, end: int | None = None) -> tuple[int, int]:
    """Line breaks in ``text[start:end]`` (``\\r\\n``, ``\\n`` or ``\\r``, as parso counts
    them) and the offset just after the last one (-1 if none)."""
    if end is None:
        end = len(text)
    n = text.count("\n", start, end)
    last = text.rfind("\n", start, end)
    if "\r" in text[start:end]:
        crs = text.count("\r", start, end)
        n += crs - text.count("\r\n", start, end)
        last = max(last, text.rfind("\r", start, end))
    return n, (last + 1 if last >= 0 else -1)


class LogicalLine:
    """The leaves of one logical line.

    ``newline`` is the line's ``Newline`` leaf (None at end of file without a final
    line break).  ``prefix_line`` is the physical line where the first leaf's prefix
    starts; ``offset`` is that prefix's character offset.  At end of file, ``eof``
    is set, ``tokens`` is empty and ``endmarker`` holds the trailing prefix.
    """

    __slots__ = ("endmarker", "eof", "indent", "newline", "offset", "prefix_line", "tokens")

    def __init__(
        self,
        indent: str,
        tokens: list[Any],
        newline: Newline | None,
        prefix_line: int,
        offset: int,
        endmarker: EndMarker | None = None,
    ) -> None:
        self.indent = indent
        self.tokens = tokens
        self.newline = newline
        self.prefix_line = prefix_line
        self.offset = offset
        self.endmarker = endmarker
        self.eof = endmarker is not None

    def __repr__(self) -> str:
        words = " ".join(t.value for t in self.tokens)
        return f"<LogicalLine {self.prefix_line} {self.indent!r} {words!r}>"


class ScanLimitReached(Exception):
    """A tokenizer given a ``limit`` was asked for a line starting past it."""


class Tokenizer:
    def __init__(self, text: str, pos: int = 0, line: int = 1, limit: int | None = None) -> None:
        self.text = text
        self.pos = pos
        self.line = line
        self.done = False
        # The incremental parser bounds how far a partial reparse may read: past this
        # offset a full parse is cheaper.  A full parse has no limit and never raises.
        self.limit = len(text) if limit is None else limit
        # One per physical line that starts a token, in text order (see ``LineAnchor``).
        self.anchors: list[LineAnchor] = []

    def next_line(self) -> LogicalLine:
        """Read the next logical line (an ``eof`` line once the text is exhausted)."""
        text = self.text
        length = len(text)
        pos = self.pos
        if pos > self.limit:
            raise ScanLimitReached
        line = self.line
        prefix_start = pos
        prefix_line = line

        if pos == 0 and text.startswith("\ufeff"):
            pos = 1  # a byte-order mark stays in the first prefix
        m = _LINE_FIRST_TOKEN.match(text, pos)
        if m is None:  # only blank lines, whitespace and comments left
            line += count_newlines(text, prefix_start, length)[0]
            self.pos = length
            self.line = line
            self.done = True
            last_break = max(text.rfind("\n"), text.rfind("\r")) + 1
            end_anchor = LineAnchor(line)
            self.anchors.append(end_anchor)
            marker = EndMarker("", end_anchor, length - last_break, text[prefix_start:])
            return LogicalLine("", [], None, prefix_line, prefix_start, marker)
        line_start, pos = m.span(1)
        if line_start != prefix_start:
            line += count_newlines(text, prefix_start, line_start)[0]
        indent = text[line_start:pos]

        tokens: list[Any] = []
        append = tokens.append
        depth = 0
        token_prefix_start = prefix_start
        match = _TOKEN.match
        newline: Newline | None = None
        # The anchor of the physical line the next token starts on.  The first line has a
        # token; a later one (after a line break inside brackets or a multi-line token) may
        # not, so an anchor no token took is reused or dropped: every anchor listed is used.
        anchors = self.anchors
        anchor = LineAnchor(line)
        anchors.append(anchor)

        while True:
            kind: int = m.lastindex  # type: ignore[assignment]  # a token group always matched
            start, end = m.span(kind)
            value = text[start:end]
            prefix = text[token_prefix_start:start]
            if len(prefix) > 1 and len(prefix) <= _SHARED_PREFIX:  # most are "" or " "
                prefix = intern(prefix)
            column = start - line_start
            if kind == _NAME:
                append(Name(intern(value), anchor, column, prefix))
            elif kind == _OP:
                append(Operator(intern(value), anchor, column, prefix))
                if value in _OPENERS:
                    depth += 1
                elif value in _CLOSERS and depth:
                    depth -= 1
            elif kind == _STR:
                append(String(value, anchor, column, prefix))
                if value.startswith('"""'):
                    n, last = count_newlines(text, start, end)
                    if n:
                        line += n
                        line_start = last
                        anchor = LineAnchor(line)
                        anchors.append(anchor)
            elif kind == _NL:
                if depth and self._continues(tokens, end, indent):
                    line += 1
                    line_start = end
                    pos = end
                    if tokens[-1].anchor is anchor:
                        anchor = LineAnchor(line)
                        anchors.append(anchor)
                    else:
                        anchor.line = line
                    m = match(text, pos)
                    if m is None:
                        break  # only whitespace or a comment is left before the end
                    continue
                newline = Newline(value, anchor, column, prefix)
                pos = end
                line += 1
                break
            elif kind == _DISC:
                if not value.startswith("***") and not value.endswith("**", 2):
                    # An unclosed `**` before a header's final `:` leaves the colon out,
                    # so `if **ready:` reports one error instead of two.
                    body = value.rstrip()
                    if body.endswith(":") and len(body) > 3:
                        end = start + len(body) - 1
                        value = text[start:end]
                append(Discretion(value, anchor, column, prefix))
                if value.startswith("***"):
                    n, last = count_newlines(text, start, end)
                    if n:
                        line += n
                        line_start = last
                        anchor = LineAnchor(line)
                        anchors.append(anchor)
            elif kind == _NUM:
                append(Number(value, anchor, column, prefix))
            else:
                append(ErrorToken(value, anchor, column, prefix))
            token_prefix_start = pos = end
            m = match(text, pos)
            if m is None:
                break  # only whitespace or a comment is left before the end of the text

        if newline is None:
            if not tokens or tokens[-1].anchor is not anchor:
                anchors.pop()  # the file ended with no token on the anchor's line
            # End of file right after trailing whitespace or a comment (or line breaks
            # inside open brackets): it becomes the end marker's prefix on the next call.
            pos = token_prefix_start
        self.pos = pos
        self.line = line
        return LogicalLine(indent, tokens, newline, prefix_line, prefix_start)

    def _continues(self, tokens: list[Any], after: int, indent: str) -> bool:
        """Whether a line break inside open brackets continues the logical line.

        An unclosed bracket must not swallow the rest of the file: stop at a line
        that is at or left of the opening line's indentation (unless it starts with
        a closing bracket), and at a line that ends with ``:`` (a block header).
        """
        if tokens and tokens[-1].value == ":" and isinstance(tokens[-1], Operator):
            return False
        text = self.text
        pos = after
        m = _BLANK_LINES.match(text, pos)
        if m is not None:
            pos = m.end()
        start = pos
        pos = _INDENT.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= len(text):
            return False
        if text[pos] in _CLOSERS:
            return True
        next_indent = text[start:pos]
        return len(next_indent) > len(indent) and next_indent.startswith(indent)
