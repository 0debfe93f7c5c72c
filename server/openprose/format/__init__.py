"""The canonical form of OpenProse programs: `prose fmt`, `prose compile`, editor formatting.

``format_text`` prints the canonical form and then checks, by parsing its own output, that
the program's structure and tokens are unchanged; if that check ever failed, the original
text is returned untouched with a message (it never has in the corpus or the property tests,
but formatting runs on every save, so it must never be the thing that loses work).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

from openprose.format.diff import line_diff, split_lines
from openprose.format.printer import Printer, line_ending
from openprose.syntax import parse
from openprose.syntax import tree as t


@dataclass(frozen=True, slots=True)
class FormatResult:
    text: str
    changed: bool
    # Top-level statements left as written because they have syntax errors.
    unformatted: int = 0
    # Why the text was left untouched (None when it was formatted).
    refused: str | None = None


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace 0-based (line, character) ``start``..``end`` (code points) with ``text``."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str


@dataclass
class Options:
    keep_comments: bool = True
    blank_lines: bool = True
    verify: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def format_text(text: str, verify: bool = True) -> FormatResult:
    """The canonical form of ``text`` (a byte-order mark, if any, is kept)."""
    return format_module(parse(text), text, verify=verify)


def format_module(module: t.Module, text: str, verify: bool = True) -> FormatResult:
    """The canonical form of an already parsed module (its source is ``text``)."""
    return _print(module, text, Options(verify=verify))


def compile_text(text: str) -> FormatResult:
    """The compiled form: the canonical form without comments or blank lines between
    statements (the language reference strips comments when compiling, and its canonical
    form example keeps statements together).  Call on a program without errors."""
    return _print(parse(text), text, Options(keep_comments=False, blank_lines=False))


def _print(module: t.Module, text: str, options: Options) -> FormatResult:
    return _print_and_parse(module, text, options)[0]


def _print_and_parse(
    module: t.Module, text: str, options: Options
) -> tuple[FormatResult, t.Module | None]:
    """The result, and the tree of its text when the self-check parsed it."""
    printer = Printer(line_ending(text, module), options.keep_comments, options.blank_lines)
    printer.module(module)
    out = printer.text()
    unformatted = len(printer.broken)
    reparsed = None
    if options.verify and out != text:
        reparsed = parse(out)
        problem = _compare(module, reparsed, options.keep_comments)
        if problem is None and options.keep_comments and _comments(module) != _comments(reparsed):
            problem = "a comment would have been lost or changed"
        if problem is not None:
            refused = FormatResult(
                text,
                False,
                unformatted,
                f"not formatted: the result would have changed the program ({problem}); "
                "please report this",
            )
            return refused, None
    return FormatResult(out, out != text, unformatted), reparsed


def skeleton(module: Any) -> list[tuple[str, str]]:
    """The program without layout: node types and token texts in order (line breaks and
    the end marker left out, since layout is what formatting changes)."""
    return list(_skeleton(module))


def _skeleton(module: Any) -> Iterator[tuple[str, str]]:
    # A generator, so that comparing two large trees keeps no list of parts alive: millions
    # of live tuples made the garbage collector walk both trees again and again.
    stack = [module]
    while stack:
        node = stack.pop()
        children = getattr(node, "children", None)
        if children is None:
            if not isinstance(node, t.Newline | t.EndMarker):
                yield type(node).__name__, node.value
        else:
            yield type(node).__name__, ""
            stack.extend(reversed(children))


def _comments(module: Any) -> list[str]:
    """The text of every comment, in order: each leaf's prefix holds the comments before
    it (so a ``#`` inside a string is never taken for one)."""
    found: list[str] = []
    for leaf in t.iter_leaves(module):
        prefix = leaf.prefix
        if "#" in prefix:
            found.extend(c.strip() for c in _COMMENT.findall(prefix))
    return found


_COMMENT = re.compile(r"#[^\r\n]*")


def _compare(before: Any, after: Any, comments_kept: bool) -> str | None:
    a, b = _skeleton(before), _skeleton(after)
    for count, (x, y) in enumerate(zip_longest(a, b)):
        if x is None or y is None:  # one ended first
            length_a = count + (x is not None) + sum(1 for _ in a)
            length_b = count + (y is not None) + sum(1 for _ in b)
            return f"{length_a} parts became {length_b}"
        if x != y:
            return f"first difference at token {count}: {x} became {y}"
    return None


def format_range(text: str, start_line: int, end_line: int) -> list[TextEdit]:
    """Edits that format the top-level statements touching 0-based lines
    ``start_line``..``end_line`` (inclusive), minimal at line granularity."""
    module = parse(text)
    result, formatted = _print_and_parse(module, text, Options())
    if not result.changed or formatted is None:
        return []
    old_spans = _statement_lines(module)
    new_spans = _statement_lines(formatted)
    if len(old_spans) != len(new_spans):
        return []  # cannot pair statements up: leave the range alone
    old_lines = split_lines(text)
    new_lines = split_lines(result.text)
    edits: list[TextEdit] = []
    for (o0, o1), (n0, n1) in zip(old_spans, new_spans, strict=True):
        if o1 < start_line or o0 > end_line:
            continue
        edits.extend(_line_edits(old_lines, o0, o1, new_lines, n0, n1))
    return edits


def format_edits(text: str, result: FormatResult) -> list[TextEdit]:
    """Minimal line-level edits turning ``text`` into ``result.text``."""
    if not result.changed:
        return []
    old_lines = split_lines(text)
    new_lines = split_lines(result.text)
    return _line_edits(old_lines, 0, len(old_lines) - 1, new_lines, 0, len(new_lines) - 1)


def _statement_lines(module: t.Module) -> list[tuple[int, int]]:
    """0-based first and last line of each top-level statement, comments before it
    included (the last statement also takes the comments at the end of the file)."""
    spans = []
    statements = module.statements()
    for i, statement in enumerate(statements):
        first = statement.get_first_leaf()
        start = first.line - 1 - first.prefix.count("\n")
        nxt = statements[i + 1] if i + 1 < len(statements) else module.end_marker
        leaf = nxt.get_first_leaf() if hasattr(nxt, "children") else nxt
        end = leaf.line - 1 - leaf.prefix.count("\n") - 1
        if i + 1 == len(statements):
            end = module.end_marker.line - 1
        spans.append((start, max(start, end)))
    return spans


def _line_edits(
    old: list[str], o0: int, o1: int, new: list[str], n0: int, n1: int
) -> list[TextEdit]:
    b = new[n0 : n1 + 1]
    return [
        TextEdit((o0 + i1, 0), (o0 + i2, 0), "".join(b[j1:j2]))
        for i1, i2, j1, j2 in line_diff(old[o0 : o1 + 1], b)
    ]


__all__ = [
    "FormatResult",
    "TextEdit",
    "compile_text",
    "format_edits",
    "format_module",
    "format_range",
    "format_text",
    "skeleton",
]
