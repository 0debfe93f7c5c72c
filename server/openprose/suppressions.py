"""Suppression comments: ``# prose: ignore[W005]`` silences a diagnostic on one line.

- ``# prose: ignore[W005]`` or ``# prose: ignore[W005, E044]`` at the end of a line drops the
  diagnostics with those codes that start on that line; ``# prose: ignore`` drops all of them.
- ``# prose: ignore-file[W015]`` (or ``# prose: ignore-file``) among the comments before the
  first statement does the same for the whole file.
- A diagnostic that starts inside a string or discretion condition spanning several lines
  is suppressed by a comment at the end of the line where that string ends (nothing can
  follow the other lines).

Only same-line comments count: a comment alone on its line applies to that line, which has
no statement. Syntax errors (``config.SYNTAX_CODES``) are never suppressed. Codes that do not
exist are ignored (a suppression cannot hide a diagnostic that cannot be reported).

Comments are read from the prefixes of the tree's leaves, so a ``#`` inside a string is
never taken for one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from openprose.config import SYNTAX_CODES
from openprose.diagnostics import Diagnostic
from openprose.syntax.tree import Newline, iter_leaves

# `#`, then `prose: ignore` or `prose: ignore-file`, then optionally `[CODE, ...]`. Searched
# anywhere in a comment, so `# why it is fine  # prose: ignore[W015]` works too.
_DIRECTIVE = re.compile(
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
    """Every suppression comment in a parsed module."""
    found = Suppressions()
    first = True
    for leaf in iter_leaves(module):
        prefix = leaf.prefix
        if "#" in prefix:
            lines = _LINE_BREAK.split(prefix)
            first_line = leaf.line - (len(lines) - 1)
            for offset, text in enumerate(lines):
                for kind, codes in _directives(text):
                    if kind == "ignore":
                        found.add(first_line + offset, codes)
                    elif first:
                        found.add(None, codes)
        first = False
        end_line = leaf.end_pos[0]
        if end_line > leaf.line and not isinstance(leaf, Newline):
            for line in range(leaf.line, end_line):
                found.continued[line] = end_line
    return found


def apply_suppressions(diagnostics: list[Diagnostic], module: Any) -> list[Diagnostic]:
    """``diagnostics`` without those a suppression comment in ``module`` silences."""
    if all(d.code in SYNTAX_CODES for d in diagnostics):
        return diagnostics  # nothing a comment could suppress: skip reading the tree
    suppressions = find_suppressions(module)
    return [d for d in diagnostics if not suppressions.suppresses(d)]


def _directives(text: str) -> Iterator[tuple[str, set[str] | None]]:
    for match in _DIRECTIVE.finditer(text):
        listed = match.group("codes")
        codes = None if listed is None else {c.strip() for c in listed.split(",") if c.strip()}
        yield match.group("kind"), codes
