"""Turning diagnostics into text: the human form with carets, the concise form and JSON.

Diagnostics count columns from 0 in characters; everything printed here counts from 1
(as editors and compilers do), still in characters.  Only the caret line counts terminal
cells, to stand under the right text.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

from parso.utils import split_lines

from openprose.diagnostics import Diagnostic, Severity

# Colours per severity (ANSI SGR parameters): what compilers have taught people to expect.
_SEVERITY_COLOUR = {
    Severity.ERROR: "1;31",
    Severity.WARNING: "1;33",
    Severity.INFORMATION: "1;34",
    Severity.HINT: "1;36",
}
_BOLD = "1"
_NOTE_COLOUR = "1;36"

# Words for the summary line, singular and plural.
_SEVERITY_NOUNS = {
    Severity.ERROR: ("error", "errors"),
    Severity.WARNING: ("warning", "warnings"),
    Severity.INFORMATION: ("info", "info"),
    Severity.HINT: ("hint", "hints"),
}


@dataclass(frozen=True, slots=True)
class Style:
    """Wraps text in ANSI colour codes, or leaves it alone when colour is off."""

    colour: bool = False

    def paint(self, text: str, sgr: str) -> str:
        return f"\x1b[{sgr}m{text}\x1b[0m" if self.colour and text else text


def wants_colour(choice: str, stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    """Decide on colour for ``--color auto|always|never``.

    ``auto`` colours only a terminal, and never when NO_COLOR is set to a non-empty value
    (https://no-color.org) or the terminal says it is dumb.
    """
    if choice == "always":
        return True
    if choice == "never":
        return False
    if environ.get("NO_COLOR") or environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except ValueError:  # a closed stream
        return False


def display_line(line: str) -> str:
    """The source line as printed: control characters (a stray ESC could drive the terminal)
    become U+FFFD, one character for one, so carets stay aligned.  Tabs are kept."""
    return _CONTROL.sub("\ufffd", line)


# The characters ``_is_control`` is true of, for a pass at C speed (a report of thousands of
# diagnostics went through their lines a character at a time).
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_NOT_TAB = re.compile("[^\t]")


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return ch != "\t" and (code < 0x20 or 0x7F <= code < 0xA0)


def caret_line(line: str, start: int, end: int | None) -> str:
    """The marker printed under ``line`` for the columns ``start`` to ``end`` (exclusive).

    ``end`` None means the range goes on past this line: underline to its end.  The run is
    ``^`` under the first cell of the range and ``~`` under its other cells; an empty range
    is a lone ``^``.  Padding and run count terminal cells (``cell_width``), so the marker
    stays under its text after CJK, emoji and combining accents.  Tabs, before the range or
    in it, are copied: only the terminal knows its tab stops, so a range that starts with a
    tab gets its caret under the first character after the tab.
    """
    end = len(line) if end is None else min(end, len(line))
    before = line[:start]
    inside = line[start:end]
    if line.isascii():  # every character but a tab takes one cell
        indent = _NOT_TAB.sub(" ", before)
        run = _NOT_TAB.sub("~", inside).rstrip("\t")
    else:
        indent = "".join("\t" if ch == "\t" else " " * cell_width(ch) for ch in before)
        run = "".join("\t" if ch == "\t" else "~" * cell_width(ch) for ch in inside)
        run = run.rstrip("\t")
    indent += " " * (start - len(before))  # a column past the end of the line
    if inside and cell_width(inside[0]) == 0 and indent.endswith(" "):
        # A combining mark is drawn in the cell of the character it sits on.
        return indent[:-1] + "^" + run
    if "~" not in run:
        return indent + "^"
    return indent + run.replace("~", "^", 1)


def cell_width(ch: str) -> int:
    """The terminal cells ``ch`` takes as ``display_line`` prints it (tabs aside).

    East Asian wide and fullwidth characters take two, combining and other zero-width
    marks none (a soft hyphen is shown).  Emoji sequences joined by U+200D may be drawn
    narrower by the terminal than the sum of their parts; nothing here can know.
    """
    if _is_control(ch):
        return 1  # shown as U+FFFD
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 2
    if unicodedata.category(ch) in ("Mn", "Me", "Cf") and ch != "\u00ad":
        return 0
    return 1


def source_lines(text: str) -> list[str]:
    # parso's split, not str.splitlines: the parser counts lines with it, and splitlines
    # would also break at form feeds and other characters that are not line ends here.
    return split_lines(text)


def format_human(
    path: str,
    diagnostic: Diagnostic,
    lines: Sequence[str],
    style: Style = Style(),
    near_names: Sequence[str] = (),
) -> str:
    """Header, source line and caret line, then one line per related location, then a
    "did you mean" for the ``near_names`` (closest first) unless the message has one."""
    (line_no, column), (end_line_no, end_column) = diagnostic.start, diagnostic.end
    colour = _SEVERITY_COLOUR[diagnostic.severity]
    header = (
        style.paint(f"{path}:{line_no}:{column + 1}:", _BOLD)
        + " "
        + style.paint(f"{diagnostic.severity.label}[{diagnostic.code}]:", colour)
        + " "
        + style.paint(diagnostic.message, _BOLD)
    )
    out = [header]
    if 1 <= line_no <= len(lines):
        line = lines[line_no - 1]
        end = end_column if end_line_no == line_no else None
        out.append("  " + display_line(line))
        out.append("  " + style.paint(caret_line(line, column, end), colour))
    for related in diagnostic.related:
        where = related.path if related.path is not None else path
        line_no, column = related.start
        note = style.paint("note:", _NOTE_COLOUR)
        out.append(f"  {note} {where}:{line_no}:{column + 1}: {related.message}")
    if near_names and "did you mean" not in diagnostic.message:
        names = _join([f"`{name}`" for name in near_names], "or")
        out.append(f"  {style.paint('help:', _NOTE_COLOUR)} did you mean {names}?")
    return "\n".join(out)


def format_concise(path: str, diagnostic: Diagnostic) -> str:
    """``path:line:col: severity[CODE] message``: the form editors' problem matchers read."""
    line_no, column = diagnostic.start
    label = diagnostic.severity.label
    return f"{path}:{line_no}:{column + 1}: {label}[{diagnostic.code}] {diagnostic.message}"


def to_json(path: str, diagnostic: Diagnostic) -> dict[str, str | int]:
    """One element of ``--format json`` output (a public interface: see README)."""
    return {
        "path": path,
        "line": diagnostic.start[0],
        "column": diagnostic.start[1] + 1,
        "end_line": diagnostic.end[0],
        "end_column": diagnostic.end[1] + 1,
        "severity": diagnostic.severity.label,
        "code": diagnostic.code,
        "message": diagnostic.message,
    }


def format_summary(
    counts: Mapping[Severity, int],
    files_checked: int,
    files_with_diagnostics: int,
    unreadable: int = 0,
) -> str:
    """The closing line, e.g. ``Found 2 errors and 1 warning in 2 files (3 checked).``"""
    found = [
        _plural(counts[severity], *_SEVERITY_NOUNS[severity])
        for severity in sorted(_SEVERITY_NOUNS)
        if counts.get(severity, 0)
    ]
    unreadable_note = (
        f"{_plural(unreadable, 'path', 'paths')} could not be read" if unreadable else ""
    )
    if not found:
        checked = _plural(files_checked, "file", "files")
        if unreadable:
            return f"No problems found in {checked}, but {unreadable_note}."
        return f"All checks passed ({checked})."
    where = f"in {_plural(files_with_diagnostics, 'file', 'files')} ({files_checked} checked)"
    summary = f"Found {_join(found)} {where}"
    return f"{summary}; {unreadable_note}." if unreadable else f"{summary}."


def _plural(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _join(parts: Sequence[str], conjunction: str = "and") -> str:
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + f" {conjunction} " + parts[-1]
