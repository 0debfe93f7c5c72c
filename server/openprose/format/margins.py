"""The formatter's cheapest proof of meaning: the output changed only the spaces at the
margins of the input's lines, and kept how every line's indentation compares with others.

A text re-indented as a whole (four spaces a level instead of two, stray spaces ending
lines) is the common messy input, and nearly all of its lines change, so the statement by
statement reading of tokens.py reads it all.  Here the two texts are compared line by line
with str methods instead, and the tokenizer's reading is followed only where it matters:

* both texts have the same number of lines (``\\n``; no ``\\r``, tab, form feed or
  byte-order mark anywhere, so a line's indentation is its leading spaces), and each line
  stripped of spaces on both ends is the same in both;
* spaces at a line's ends are outside any token, so the two texts have the same tokens,
  comments and line breaks, in the same order, except where a multi-line token (a
  ``\"\"\"`` string, a ``***`` discretion) holds a line end: the lines it runs through must
  keep their spaces there (found by ``_long_tokens``, with the tokenizer's own patterns);
* the tokenizer and the parser read indentation only by comparing two lines' (equal, one a
  prefix of the other, one longer: ``relation``, ``deeper`` and ``Tokenizer._continues``),
  and only those of lines that start a token outside a multi-line one; with spaces alone
  each comparison is one of widths.  If one strictly increasing map takes every such
  line's width in the input to its width in the output (and 0, the top level, to 0), every
  comparison comes out the same.

So the tokenizer reads the same logical lines, tokens and comments, the parser compares
indentations the same way, and the two texts parse to the same tree.  Anything else
answers False, and the caller goes on to the token streams (tokens.py) and the parse.
"""

from __future__ import annotations

import re
from itertools import compress, pairwise
from operator import sub

from openprose.syntax.tokenizer import _TOKEN


def token_group(pattern: str, name: str) -> str:
    """The text of the named group ``name`` of the regular expression ``pattern``."""
    start = pattern.index(f"(?P<{name}>")
    depth = 0
    i = start
    in_class = False
    while True:
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            i += 1
            if pattern[i] == "^":
                i += 1
            if pattern[i] == "]":  # a literal ``]`` first in the class
                i += 1
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if not depth:
                return pattern[start : i + 1]
        i += 1


# The tokenizer's string and discretion tokens, the only ones a line break can be inside.
_STRING = token_group(_TOKEN.pattern, "str")
_DISCRETION = token_group(_TOKEN.pattern, "disc")
_FLAGS = _TOKEN.flags
_LONG = re.compile(f"{_STRING}|{_DISCRETION}", _FLAGS)
# From a token's start, the tokens up to the end of the line or the next token that may
# hold a line break (one starting with three quotes or ``***``): ``"``, ``#`` and ``*`` start a
# string, a comment, a discretion or the ``*`` operator wherever they stand outside those
# three, so every run of other characters is whole tokens (and blanks) too.
_SKIP = re.compile(
    r"(?: [^\"\#*\n]++ | \#[^\r\n]*+ | \*(?!\*) "
    f'| (?!"""){_STRING} | (?!\\*\\*\\*){_DISCRETION} )*+',
    _FLAGS,
)


def _long_tokens(text: str) -> list[tuple[int, int]] | None:
    """Where the tokens holding a line break start and end in ``text`` (None: one runs to
    the end of the text, maybe unclosed).

    Only lines holding three quotes or ``***`` are read: a line before the first of them starts
    outside any token (no token but those two holds a line break), and so does each line
    after a long token's end up to the next one."""
    spans: list[tuple[int, int]] = []
    pos = 0
    end_of_text = len(text)
    find, skip, long_token = text.find, _SKIP.match, _LONG.match
    quotes, stars = find('"""'), find("***")
    while True:
        # Each search reads on from its last find only (a search that failed stays so).
        if 0 <= quotes < pos:
            quotes = find('"""', pos)
        if 0 <= stars < pos:
            stars = find("***", pos)
        at = quotes if stars < 0 or 0 <= quotes < stars else stars
        if at < 0:
            return spans
        pos = max(pos, text.rfind("\n", 0, at) + 1)
        pos = skip(text, pos).end()  # type: ignore[union-attr]  # it matches the empty text
        if pos >= end_of_text:
            return spans
        if text[pos] == "\n":
            pos += 1  # what was found is inside a comment or a one-line token
            continue
        m = long_token(text, pos)
        if m is None or m.end() == pos:
            return None  # cannot happen: see _SKIP
        end = m.end()
        if end == end_of_text:
            return None
        if find("\n", pos, end) >= 0:
            spans.append((pos, end))
        pos = end


def _margins(text: str) -> tuple[list[str], list[int], list[str]]:
    """The lines of ``text``, their leading spaces' widths, and the lines without them."""
    lines = text.split("\n")
    left = [line.lstrip(" ") for line in lines]
    return lines, list(map(sub, map(len, lines), map(len, left))), left


def same_but_margins(text: str, out: str) -> bool:
    """True if ``out`` provably parses as ``text`` does (its comments too), having changed
    only spaces at the ends of lines; False if that could not be shown this way."""
    if (
        "\r" in text
        or "\r" in out
        or "\t" in text
        or "\t" in out
        or "\f" in text
        or "\f" in out
        or text.startswith("\ufeff")
        or out.startswith("\ufeff")
        or text.count("\n") != out.count("\n")
    ):
        return False
    old, old_widths, bodies = _margins(text)
    new, new_widths, new_bodies = _margins(out)
    if bodies != new_bodies and [x.rstrip(" ") for x in bodies] != [
        x.rstrip(" ") for x in new_bodies
    ]:
        return False
    code = list(map(bool, bodies))  # the lines whose indentation counts (see below)
    if '"""' in text or "***" in text:
        spans = _long_tokens(text)
        if spans is None:
            return False
        line = pos = 0
        for start, end in spans:
            line += text.count("\n", pos, start)
            last = line + text.count("\n", start, end)
            # Its first line ends inside it: the spaces ending it are the token's.
            if len(old[line]) - old_widths[line] != len(new[line]) - new_widths[line]:
                return False
            for inside in range(line + 1, last + 1):
                # These start inside it: their leading spaces are the token's, and they
                # are no line's indentation.
                if old_widths[inside] != new_widths[inside]:
                    return False
                if inside < last and old[inside] != new[inside]:
                    return False
                code[inside] = False
            line, pos = last, end
    # Blank lines and comment lines: the tokenizer skips their indentation.  A pair more
    # only asks more of the map, so comment lines are first kept, and left out only if
    # the map fails with them (the printer may move a comment to another level).
    widths = set(compress(zip(old_widths, new_widths, strict=True), code))
    if _increasing(widths):
        return True
    return _increasing(
        {
            pair
            for pair, body in compress(
                zip(zip(old_widths, new_widths, strict=True), bodies, strict=True), code
            )
            if body[0] != "#"
        }
    )


def _increasing(widths: set[tuple[int, int]]) -> bool:
    """Whether the pairs, and (0, 0), are the graph of a strictly increasing map."""
    widths.add((0, 0))
    return all(a < c and b < d for (a, b), (c, d) in pairwise(sorted(widths)))
