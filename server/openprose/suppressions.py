"""Suppression comments: ``# prose: ignore[W005]`` silences a diagnostic on one line.

- ``# prose: ignore[W005]`` or ``# prose: ignore[W005, E044]`` at the end of a line drops the
  diagnostics with those codes that start on that line; ``# prose: ignore`` drops all of them.
- ``# prose: ignore-file[W015]`` (or ``# prose: ignore-file``) among the comments before the
  first statement does the same for the whole file.
- A diagnostic that starts inside a string or discretion condition spanning several lines
  is suppressed by a comment at the end of the line where that string ends (nothing can
  follow the other lines).

Only same-line comments count: a comment alone on its line applies to that line, which has
no statement. Syntax errors (``config.SYNTAX_CODES``) are never suppressed.

A directive that cannot do what it says is reported as W036: a code that does not exist, a
syntax error's code, an empty ``[]`` list, an ``ignore-file`` after the first statement.

Comments are read from the prefixes of the tree's leaves, so a ``#`` inside a string is
never taken for one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from openprose.codes import CODES, SYNTAX_CODES, severity_of
from openprose.diagnostics import Diagnostic
from openprose.syntax.tree import Newline, iter_leaves

# `#`, then `prose: ignore` or `prose: ignore-file`, then optionally `[CODE, ...]`. Searched
# anywhere in a comment, so `# why it is fine  # prose: ignore[W015]` works too.
DIRECTIVE = re.compile(
    r"#[ \t]*prose:[ \t]*(?P<kind>ignore-file|ignore)(?![\w-])(?:\[(?P<codes>[^\]]*)\])?"
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class Suppressions:
    """The suppression comments of one module."""

    by_line: dict[int, set[str] | None] = field(default_factory=dict)  # None: all codes
    file: set[str] | None = field(default_factory=set)  # None: all codes
    # A line inside a multi-line string -> the line where the string ends.
    continued: dict[int, int] = field(default_factory=dict)
    # W036: directives, or codes in them, that have no effect.
    problems: list[Diagnostic] = field(default_factory=list)

    def suppresses(self, diagnostic: Diagnostic) -> bool:
        code = diagnostic.code
        if code in SYNTAX_CODES:
            return False
        if self.file is None or code in self.file:
            return True
        line = diagnostic.start[0]
        while line in self.continued:
            line = self.continued[line]
        if line not in self.by_line:
            return False
        codes = self.by_line[line]
        return codes is None or code in codes

    def add(self, line: int | None, codes: set[str] | None) -> None:
        """Record a directive (``line`` None: file level)."""
        current = self.file if line is None else self.by_line.get(line, set())
        merged = None if current is None or codes is None else current | codes
        if line is None:
            self.file = merged
        else:
            self.by_line[line] = merged


def find_suppressions(module: Any) -> Suppressions:
    """Every suppression comment in a parsed module, and those that have no effect."""
    found = Suppressions()
    first = True
    for leaf in iter_leaves(module):
        prefix = leaf.prefix
        if "#" in prefix:
            lines = _LINE_BREAK.split(prefix)
            first_line = leaf.line - (len(lines) - 1)
            first_column = leaf.get_start_pos_of_prefix()[1]
            for offset, text in enumerate(lines):
                line = first_line + offset
                column = first_column if offset == 0 else 0
                for match in DIRECTIVE.finditer(text):
                    kind, codes = _directive(match)
                    if kind == "ignore":
                        found.add(line, codes)
                    elif first:
                        found.add(None, codes)
                    else:
                        found.problems.append(
                            _problem(
                                "`prose: ignore-file` counts only among the comments before the "
                                "first statement; here it has no effect",
                                line,
                                column + match.start(),
                                column + match.end(),
                            )
                        )
                    found.problems.extend(_code_problems(match, line, column))
        first = False
        end_line = leaf.end_pos[0]
        if end_line > leaf.line and not isinstance(leaf, Newline):
            for line in range(leaf.line, end_line):
                found.continued[line] = end_line
    return found


def apply_suppressions(
    diagnostics: list[Diagnostic], suppressions: Suppressions
) -> list[Diagnostic]:
    """``diagnostics`` without those a suppression comment silences."""
    return [d for d in diagnostics if not suppressions.suppresses(d)]


def _directive(match: re.Match[str]) -> tuple[str, set[str] | None]:
    if match.group("codes") is None:
        return match.group("kind"), None
    return match.group("kind"), {code for code, _, _ in listed_codes(match)}


_CODE_TEXT = re.compile(r"[^,\s]+")


def listed_codes(match: re.Match[str]) -> list[tuple[str, int, int]]:
    """The codes in a ``DIRECTIVE`` match's ``[...]`` list, each with its start and end in
    the text that was matched (none without a list)."""
    listed = match.group("codes")
    if listed is None:
        return []
    base = match.start("codes")
    return [(m.group(), base + m.start(), base + m.end()) for m in _CODE_TEXT.finditer(listed)]


def _code_problems(match: re.Match[str], line: int, column: int) -> Iterator[Diagnostic]:
    listed = match.group("codes")
    if listed is None:
        return
    if not listed.strip():
        yield _problem(
            "an empty code list suppresses nothing: name codes, or leave out the brackets "
            "to suppress every code",
            line,
            column + match.start(),
            column + match.end(),
        )
        return
    for name, start, end in listed_codes(match):
        if name in SYNTAX_CODES:
            message = f"`{name}` is a syntax error, and syntax errors cannot be suppressed"
        elif name not in CODES:
            message = f"unknown code `{name}` in a suppression comment"
        else:
            continue
        yield _problem(message, line, column + start, column + end)


def _problem(message: str, line: int, start: int, end: int) -> Diagnostic:
    return Diagnostic("W036", message, severity_of("W036"), (line, start), (line, end))
