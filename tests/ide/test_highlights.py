"""Document highlights: writes and reads of the name at the cursor."""

from __future__ import annotations

from openprose.ide import analyze_document
from openprose.ide.highlights import highlights
from openprose.ide.types import Highlight, Range
from tests.ide.names_support import (
    PROGRAM,
    at_word,
    spot,
)


def test_highlights_mark_writes_and_reads() -> None:
    analysis = analyze_document(PROGRAM)
    found = highlights(analysis, at_word(PROGRAM, "notes", 3))
    assert found == [
        Highlight(spot(PROGRAM, "notes", 0), "write"),
        Highlight(spot(PROGRAM, "notes", 1), "write"),
        Highlight(spot(PROGRAM, "notes", 2), "read"),
        Highlight(spot(PROGRAM, "notes", 3), "read"),
    ]
    found = highlights(analysis, at_word(PROGRAM, "researcher", 1))
    assert [h.kind for h in found] == ["write", "read", "read"]
    assert highlights(analysis, at_word(PROGRAM, "parallel")) == []


def test_highlights_of_a_program_without_alias() -> None:
    source = 'use "@acme/research"\nlet r = research(t: 1)\n'
    analysis = analyze_document(source)
    assert highlights(analysis, (1, 10)) == [
        Highlight(Range((0, 11), (0, 19)), "write"),
        Highlight(Range((1, 8), (1, 16)), "read"),
    ]
