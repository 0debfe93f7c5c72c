"""The canonical form of OpenProse programs: `prose fmt`, `prose compile`, editor formatting.

``format_text`` prints the canonical form and then checks that the program's structure,
tokens and comments are unchanged: by showing its output has the input's stream of logical
lines and tokens (tokens.py), or else by parsing again the parts of its output that differ
from the input (check.py); if that check ever failed, the original text is returned untouched
with a message (it never has in the corpus or the property tests, but formatting runs on
every save, so it must never be the thing that loses work).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openprose.format.check import comments, verify
from openprose.format.check import skeleton as _skeleton
from openprose.format.diff import line_diff, split_lines
from openprose.format.printer import Printer, line_ending
from openprose.format.tokens import same_changed_tokens
from openprose.syntax import parse
from openprose.syntax import tree as t
from openprose.syntax.reparse import release
from openprose.syntax.tokenizer import count_newlines

# The name ide/fixes/fix_all.py checks a fix's comments with.
_comments = comments


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
    module = parse(text)
    try:
        return format_module(module, text, verify=verify)
    finally:
        # Freed at once rather than by a collection of the whole heap (parent links make
        # the tree a cycle): that collection made one format in twenty take 5x as long.
        release(module.children)


def format_module(module: t.Module, text: str, verify: bool = True) -> FormatResult:
    """The canonical form of an already parsed module (its source is ``text``)."""
    return _print(module, text, Options(verify=verify))


def compile_text(text: str) -> FormatResult:
    """The compiled form: the canonical form without comments or blank lines between
    statements (the language reference strips comments when compiling, and its canonical
    form example keeps statements together).  Call on a program without errors."""
    module = parse(text)
    try:
        return _print(module, text, Options(keep_comments=False, blank_lines=False))
    finally:
        release(module.children)


def _print(module: t.Module, text: str, options: Options) -> FormatResult:
    return _print_and_spans(module, text, options)[0]


def _print_and_spans(
    module: t.Module, text: str, options: Options
) -> tuple[FormatResult, list[int] | None]:
    """The result, and where each top-level statement (then the end) starts in its text
    when it was formatted."""
    printer = Printer(line_ending(text, module), options.keep_comments, options.blank_lines)
    printer.module(module)
    out, starts = printer.text_and_starts()
    unformatted = len(printer.broken)
    if options.verify and out != text and not _proven(printer, module, text, out, starts, options):
        problem = verify(module, text, out, starts, options.keep_comments)
        if problem is not None:
            refused = FormatResult(
                text,
                False,
                unformatted,
                f"not formatted: the result would have changed the program ({problem}); "
                "please report this",
            )
            return refused, None
    return FormatResult(out, out != text, unformatted), starts


def _proven(
    printer: Printer, module: t.Module, text: str, out: str, starts: list[int], options: Options
) -> bool:
    """Whether the token streams show ``out`` holds the program (see tokens.py); a program
    with syntax issues is left to the parse."""
    if printer.broken or printer.issues_seen:
        return False
    return same_changed_tokens(
        module,
        text,
        out,
        starts,
        options.keep_comments,
        lambda k: printer.block_starts(k, starts[k]),
    )


def skeleton(module: Any) -> list[tuple[str, str]]:
    """The program without layout: node types and token texts in order (line breaks and
    the end marker left out, since layout is what formatting changes)."""
    return list(_skeleton(module))


def format_range(text: str, start_line: int, end_line: int) -> list[TextEdit]:
    """Edits that format the top-level statements touching 0-based lines
    ``start_line``..``end_line`` (inclusive), minimal at line granularity."""
    module = parse(text)
    try:
        result, starts = _print_and_spans(module, text, Options())
        old_spans = _statement_lines(module)
    finally:
        release(module.children)
    if not result.changed or starts is None:
        return []
    new_spans = _printed_lines(result.text, starts)
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
        start = first.line - 1 - count_newlines(first.prefix)[0]
        nxt = statements[i + 1] if i + 1 < len(statements) else module.end_marker
        leaf = nxt.get_first_leaf() if hasattr(nxt, "children") else nxt
        end = leaf.line - 1 - count_newlines(leaf.prefix)[0] - 1
        if i + 1 == len(statements):
            end = module.end_marker.line - 1
        spans.append((start, max(start, end)))
    return spans


def _printed_lines(out: str, starts: list[int]) -> list[tuple[int, int]]:
    """What ``_statement_lines`` gives for the tree of ``out``, from where the printer
    started each top-level statement (``starts`` ends with where the end's text starts)."""
    lines = []
    line = previous = 0
    for start in starts:
        line += count_newlines(out, previous, start)[0]
        lines.append(line)
        previous = start
    last = line + count_newlines(out, previous)[0]  # the end marker's line
    spans = []
    for i, start in enumerate(lines[:-1]):
        end = last if i + 2 == len(lines) else lines[i + 1] - 1
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
