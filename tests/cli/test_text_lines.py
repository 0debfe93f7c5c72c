"""The report's lines, found when asked for: the same as the parser's split of the text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from parso.utils import split_lines

from openprose.cli.lines import text_lines

# Texts of many short lines (several of the stretches counted ahead), some with "\r", form
# feeds and other characters str.splitlines would break at.
TEXTS = st.lists(st.text(alphabet="ab \t\x0c\x1c\u2028é", max_size=12), max_size=300).map(
    "\n".join
) | st.text(alphabet="a\n\r\x0b", max_size=60)


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.data())
def test_lines_are_the_parsers(text: str, data: st.DataObject) -> None:
    expected = split_lines(text)
    lines = text_lines(text)
    assert len(lines) == len(expected)
    rows = data.draw(st.lists(st.integers(-len(expected), len(expected) - 1), max_size=20))
    for row in rows:
        assert lines[row] == expected[row]
    assert lines[1:4] == expected[1:4]
    assert list(lines) == expected


@pytest.mark.parametrize("row", [-4, 3])
def test_a_row_beyond_the_lines_is_an_index_error(row: int) -> None:
    with pytest.raises(IndexError):
        text_lines("a\nb\n")[row]
