"""Diagnostics shared by every layer: a code, a severity, a message and an exact range.

Positions follow parso's convention: lines are 1-based, columns are 0-based and
counted in characters (code points).  Ranges are half-open: ``end`` is exclusive.
Front ends convert: the CLI prints 1-based columns, the language server UTF-16.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

Position = tuple[int, int]


class Severity(enum.IntEnum):
    """Ordered so that ``max()`` gives the worst; values match LSP's DiagnosticSeverity."""

    HINT = 4
    INFORMATION = 3
    WARNING = 2
    ERROR = 1

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Related:
    """Another place involved in a diagnostic ("first defined here")."""

    message: str
    start: Position
    end: Position
    path: str | None = None  # None: the same file as the diagnostic


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    severity: Severity
    start: Position
    end: Position
    related: tuple[Related, ...] = field(default=())

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[Position, Position, str, str]:
        # The message last: two diagnostics of one code over one range come in the same
        # order however they were found (an incremental analysis finds them item by item).
        return (self.start, self.end, self.code, self.message)
