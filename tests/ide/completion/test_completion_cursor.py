"""Completion finds its cursor anywhere: empty, garbage, out-of-range and CRLF text, comments,
conditions and characters outside the BMP; the replaced range is always on the cursor's line."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprose.ide.analysis import analyze_document
from openprose.ide.completion import completion
from openprose.ide.types import Pos, Range
from tests.ide.completion.completion_support import (
    complete,
    item,
    labels,
)


def test_empty_text() -> None:
    analysis = analyze_document("")
    assert {i.label for i in completion(analysis, (0, 0)) if i.kind == "keyword"} >= {"session"}


@pytest.mark.parametrize("position", [(1, 0), (5, 0), (0, 20), (-1, 0), (0, -1)])
def test_positions_past_the_end(position: Pos) -> None:
    assert completion(analyze_document("session"), position) == []


def test_in_a_comment_or_condition() -> None:
    assert labels('session "a"  # context: ‸') == []
    assert labels("# session: ‸\n") == []
    assert labels("if **the user ‸") == []
    assert labels("loop until **done ‸**:\n  session 'x'") == []


GARBAGE = [
    "‸)))(((",
    '"""‸',
    "*** ‸",
    "agent: ‸\n  : : :",
    "session: [‸",
    "let = = ‸",
    "{ } ] [ ‸",
    "\t\tsession\n‸\t",
    "parallel (((‸",
    "do (‸",
    "for in in in ‸",
    "| | | ‸",
    "$ ; ‸ !",
    'session "a" -> -> ‸',
    "\ufeffsession: ‸",
    "block (:\n  do ‸",
    "choice:\n  ‸",
]


@pytest.mark.parametrize("source", GARBAGE)
def test_garbage_does_not_crash(source: str) -> None:
    complete(source)


def test_crlf_line_endings() -> None:
    source = 'let research = session "a"\r\nsession "b"\r\n  context: res‸\r\n'
    found = item(source, "research")
    assert found.replace == Range((2, 11), (2, 14))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from([*'abx-_ :\n\t"{}()[],|.=*#é🙂', "session", "agent ", "  "]),
        max_size=40,
    ).map("".join),
    st.integers(0, 8),
    st.integers(0, 70),
)
def test_arbitrary_text_and_positions(text: str, line: int, character: int) -> None:
    analysis = analyze_document(text)
    items = completion(analysis, (line, character))
    for found in items:
        assert found.replace is not None
        assert found.replace.start[0] == line == found.replace.end[0]
        assert found.replace.start[1] <= character <= found.replace.end[1]


def test_unicode_before_the_cursor() -> None:
    source = 'let café = session "x"\nsession "Résumé 🙂 {ca‸"'
    found = item(source, "café")
    # Code points: the emoji counts as one character.
    assert found.replace == Range((1, 19), (1, 21))
    assert found.insert_text == "café}"
