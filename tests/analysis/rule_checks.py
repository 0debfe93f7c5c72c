"""What the rule tests ask of the checker: the ranges of one code, or its single report."""

from __future__ import annotations

from openprose.checking import check_text
from openprose.diagnostics import Diagnostic

Range = tuple[tuple[int, int], tuple[int, int]]


def found(text: str, code: str) -> list[Range]:
    """The (start, end) of every diagnostic with ``code``."""
    return [(d.start, d.end) for d in check_text(text) if d.code == code]


def only(text: str, code: str) -> Diagnostic:
    """The one diagnostic with ``code`` (the test fails unless there is exactly one)."""
    hits = [d for d in check_text(text) if d.code == code]
    assert len(hits) == 1, check_text(text)
    return hits[0]
