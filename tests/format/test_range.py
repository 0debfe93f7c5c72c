"""Range formatting and whole-document edits (what an editor's formatting requests get)."""

from __future__ import annotations

import pytest

from openprose.format import TextEdit, format_edits, format_range, format_text
from tests.support.edits import apply_edits

# Three top-level statements, each badly laid out.
FIRST = 'agent  writer :\n    model:sonnet\n    prompt :"Write"\n'
SECOND = 'let  draft=session  "Draft"\n      context :[ a,b ]\n'
THIRD = 'parallel ( "any" ) :\n      session   "x"\n      session "y"\n'
TEXT = FIRST + SECOND + THIRD
SECOND_FORMATTED = 'let draft = session "Draft"\n  context: [a, b]\n'


def test_helper_applies_edits() -> None:
    text = "ab\ncd\nef"
    edits = [TextEdit((0, 1), (1, 1), "X"), TextEdit((2, 2), (2, 2), "!")]
    assert apply_edits(text, edits) == "aXd\nef!"
    assert apply_edits("a\r\nb\n", [TextEdit((1, 0), (2, 0), "c\n")]) == "a\r\nc\n"


def test_range_on_the_second_statement_edits_only_its_lines() -> None:
    second_lines = range(3, 5)  # 0-based lines of SECOND
    edits = format_range(TEXT, 3, 3)
    assert edits
    for edit in edits:
        assert edit.start[0] in second_lines
        assert edit.end[0] in second_lines or edit.end == (5, 0)
        assert edit.start <= edit.end
    assert apply_edits(TEXT, edits) == FIRST + SECOND_FORMATTED + THIRD


def test_range_on_the_last_line_of_the_second_statement() -> None:
    assert apply_edits(TEXT, format_range(TEXT, 4, 4)) == FIRST + SECOND_FORMATTED + THIRD


def test_range_spanning_two_statements() -> None:
    expected = format_text(FIRST).text + SECOND_FORMATTED + THIRD
    assert apply_edits(TEXT, format_range(TEXT, 1, 3)) == expected


def test_range_over_the_whole_file_gives_the_formatted_text() -> None:
    edits = format_range(TEXT, 0, TEXT.count("\n"))
    assert apply_edits(TEXT, edits) == format_text(TEXT).text


def test_range_on_formatted_text_gives_no_edits() -> None:
    text = format_text(TEXT).text
    assert format_range(text, 0, 10) == []


def test_range_on_an_already_formatted_statement_gives_no_edits() -> None:
    text = FIRST + SECOND_FORMATTED + THIRD
    assert format_range(text, 3, 4) == []


def test_range_keeps_a_comment_before_the_statement() -> None:
    text = FIRST + "# about the draft\n" + SECOND + THIRD
    edits = format_range(text, 4, 4)
    assert apply_edits(text, edits) == FIRST + "# about the draft\n" + SECOND_FORMATTED + THIRD


def test_range_in_a_crlf_file() -> None:
    crlf = TEXT.replace("\n", "\r\n")
    edits = format_range(crlf, 3, 3)
    expected = (FIRST + SECOND_FORMATTED + THIRD).replace("\n", "\r\n")
    assert apply_edits(crlf, edits) == expected


def test_range_leaves_a_broken_statement_alone() -> None:
    broken = "let   x = = 3\n"
    text = SECOND + broken + THIRD
    assert format_range(text, 2, 2) == []
    edits = format_range(text, 0, 3)
    assert apply_edits(text, edits) == SECOND_FORMATTED + broken + format_text(THIRD).text


@pytest.mark.parametrize(
    "text",
    [
        TEXT,
        TEXT.replace("\n", "\r\n"),
        'session   "x"',  # no final newline
        '\n\n\nsession "a"\n\n\n\n\nsession  "b"\n\n\n',
        '# lead\nparallel:\n        session "a"\n\n\n        session "b"\n# tail\n',
        'agent a:\n  prompt: """\n   keep\n"""\nsession  "x"\n',
        'session  "a"\nlet x = = 3\nsession   "b"\n',
        "",
        "\n\n",
    ],
)
def test_format_edits_turn_the_text_into_the_result(text: str) -> None:
    result = format_text(text)
    edits = format_edits(text, result)
    assert apply_edits(text, edits) == result.text
    if not result.changed:
        assert edits == []


def test_format_edits_are_minimal_lines() -> None:
    text = 'session "a"\nsession  "b"\nsession "c"\n'
    edits = format_edits(text, format_text(text))
    assert edits == [TextEdit((1, 0), (2, 0), 'session "b"\n')]
