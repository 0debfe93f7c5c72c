"""Selection ranges: from the word under the cursor out to the whole document."""

from __future__ import annotations

from itertools import pairwise

from openprose.ide import analyze_document
from openprose.ide.analysis import Analysis
from openprose.ide.selection import selection_ranges
from openprose.ide.types import Pos, Range

PROGRAM = """\
# Reviews things
agent critic:
  model: opus
  prompt: "Be strict"

block review(draft):
  let notes = session "Check {draft.body} now"
  output verdict = notes
"""


def texts(analysis: Analysis, position: Pos) -> list[str]:
    """The text of each range of the chain at ``position``."""
    [selection] = selection_ranges(analysis, [position])
    return [slice_of(analysis, r) for r in selection.ranges]


def slice_of(analysis: Analysis, r: Range) -> str:
    lines = analysis.lines
    (l1, c1), (l2, c2) = r.start, r.end
    if l1 == l2:
        return lines[l1][c1:c2]
    return "\n".join([lines[l1][c1:], *lines[l1 + 1 : l2], lines[l2][:c2]])


def assert_chain(analysis: Analysis, position: Pos) -> None:
    [selection] = selection_ranges(analysis, [position])
    ranges = selection.ranges
    assert ranges
    assert ranges[0].start <= position <= ranges[0].end
    for inner, outer in pairwise(ranges):
        assert outer.start <= inner.start and inner.end <= outer.end
        assert inner != outer


def test_interpolation_inside_string() -> None:
    analysis = analyze_document(PROGRAM)
    assert texts(analysis, (6, 37)) == [  # on `body`
        "body",
        "draft.body",
        "{draft.body}",
        "Check {draft.body} now",
        '"Check {draft.body} now"',
        'session "Check {draft.body} now"',
        'let notes = session "Check {draft.body} now"',
        'let notes = session "Check {draft.body} now"\n  output verdict = notes',
        'block review(draft):\n  let notes = session "Check {draft.body} now"\n'
        "  output verdict = notes",
        PROGRAM,
    ]


def test_word_in_string_text() -> None:
    analysis = analyze_document(PROGRAM)
    chain = texts(analysis, (6, 24))  # in `Check`
    assert chain[:4] == ["Check", "Check ", "Check {draft.body} now", '"Check {draft.body} now"']


def test_property_value_and_name() -> None:
    analysis = analyze_document(PROGRAM)
    assert texts(analysis, (2, 10)) == [
        "opus",
        "model: opus",
        'model: opus\n  prompt: "Be strict"',
        'agent critic:\n  model: opus\n  prompt: "Be strict"',
        PROGRAM,
    ]
    assert texts(analysis, (2, 3))[0:2] == ["model", "model: opus"]


def test_cursor_just_after_a_word_selects_it() -> None:
    analysis = analyze_document(PROGRAM)
    assert texts(analysis, (7, 24))[0] == "notes"  # end of line, after `notes`
    assert texts(analysis, (5, 12))[0] == "review"  # before `(`


def test_keyword_and_statement() -> None:
    analysis = analyze_document(PROGRAM)
    assert texts(analysis, (7, 4))[:2] == ["output", "output verdict = notes"]


def test_comment_words() -> None:
    analysis = analyze_document(PROGRAM)
    assert texts(analysis, (0, 4)) == ["Reviews", "# Reviews things", PROGRAM]


def test_trailing_comment_and_whitespace() -> None:
    text = "let x = 1  # keep it small\n"
    analysis = analyze_document(text)
    assert texts(analysis, (0, 14)) == ["keep", "# keep it small", text]
    assert texts(analysis, (0, 9))[0] == "1"
    # Between tokens, not touching a word: only the enclosing statement and document.
    spaced = analyze_document("let  x = 1\n")
    assert texts(spaced, (0, 4)) == ["let  x = 1", "let  x = 1\n"]
    assert texts(spaced, (0, 3))[0] == "let"


def test_discretion_condition() -> None:
    text = 'if **the draft is ready**:\n  session "ship"\n'
    analysis = analyze_document(text)
    assert texts(analysis, (0, 10)) == [
        "draft",
        "the draft is ready",
        "**the draft is ready**",
        'if **the draft is ready**:\n  session "ship"',
        text,
    ]


def test_multiline_string_word_and_body() -> None:
    text = 'session "x"\n  prompt: """\n    Think deeply\n  """\n'
    analysis = analyze_document(text)
    chain = texts(analysis, (2, 6))
    assert chain[0] == "Think"
    assert chain[1] == "\n    Think deeply\n  "
    assert chain[2] == '"""\n    Think deeply\n  """'
    assert chain[3] == 'prompt: """\n    Think deeply\n  """'


def test_nested_blocks_and_clauses() -> None:
    text = """\
try:
  session "a"
catch as err:
  if **bad**:
    session "b"
"""
    analysis = analyze_document(text)
    assert texts(analysis, (4, 6)) == [
        "session",
        'session "b"',
        'if **bad**:\n    session "b"',
        'catch as err:\n  if **bad**:\n    session "b"',
        'try:\n  session "a"\ncatch as err:\n  if **bad**:\n    session "b"',
        text,
    ]


def test_unicode_and_crlf() -> None:
    text = 'let naïve = "héllo {naïve}"\r\nlet b = 1\r\n'
    analysis = analyze_document(text)
    [selection] = selection_ranges(analysis, [(0, 21)])
    assert selection.ranges[0] == Range((0, 20), (0, 25))  # `naïve` in code points
    assert texts(analysis, (0, 21))[:3] == ["naïve", "{naïve}", "héllo {naïve}"]
    assert texts(analysis, (1, 4))[:2] == ["b", "let b = 1"]


def test_several_positions_and_out_of_range() -> None:
    analysis = analyze_document(PROGRAM)
    result = selection_ranges(analysis, [(1, 7), (99, 99), (-1, -5)])
    assert len(result) == 3
    assert slice_of(analysis, result[0].ranges[0]) == "critic"
    assert result[1].ranges[-1] == Range((0, 0), (8, 0))


def test_every_position_gives_a_proper_chain() -> None:
    samples = (PROGRAM, "", "\n", "agent", "   $$ {[(\n  x", '"""\nunterminated {a}', "# a\r\n# b")
    for text in samples:
        analysis = analyze_document(text)
        for line, content in enumerate(analysis.lines):
            for character in range(len(content) + 1):
                assert_chain(analysis, (line, character))


def test_empty_document() -> None:
    analysis = analyze_document("")
    [selection] = selection_ranges(analysis, [(0, 0)])
    assert selection.ranges == (Range((0, 0), (0, 0)),)
