"""Property tests: the parser's invariants hold on arbitrary input and edit sequences."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprose.syntax import Document, parse, syntax_diagnostics
from openprose.syntax.debug import check_parents, signature
from tests.support.fragments import FRAGMENTS, TOKENS

SAMPLE = """\
agent writer:
  model: sonnet
  prompt: \"\"\"
    You write.
  \"\"\"

block review(topic):
  let notes = session: writer
    prompt: "Review {topic}"
  parallel:
    a = session "A"
    b = session "B"
  if **the notes are thin**:
    session "Expand"
      context: { a, b }
  else:
    session "Keep"

let items = ["x", "y"]
let out = items
  | filter:
      session "Keep {item}?"
  | map:
      session "Summarise {item}"
try:
  do review("x")
catch as err:
  throw "failed"
"""

source_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=60).map(
    "".join
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source_text)
def test_parse_round_trips_and_never_raises(text: str) -> None:
    module = parse(text)
    assert module.get_code() == text
    check_parents(module)
    for diagnostic in syntax_diagnostics(module):
        assert diagnostic.start <= diagnostic.end


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_parse_round_trips_on_arbitrary_unicode(text: str) -> None:
    assert parse(text).get_code() == text


Edit = tuple[tuple[int, int], tuple[int, int], str]


def _edit(draw: st.DrawFn, text: str) -> Edit:
    lines = text.split("\n")
    line = draw(st.integers(0, len(lines)))
    column = draw(st.integers(0, 40))
    span_lines = draw(st.integers(0, 3))
    end_column = draw(st.integers(0, 40))
    end = (line + span_lines, end_column) if span_lines else (line, column + end_column % 6)
    pieces = draw(st.lists(st.sampled_from(FRAGMENTS), max_size=3))
    return (line, column), end, "".join(pieces)


@st.composite
def edited_documents(
    draw: st.DrawFn,
) -> tuple[str, list[tuple[tuple[int, int], tuple[int, int], str]]]:
    text = draw(st.one_of(st.just(SAMPLE), source_text))
    edits = []
    current = text
    for _ in range(draw(st.integers(1, 8))):
        edit = _edit(draw, current)
        edits.append(edit)
        doc = Document(current)
        doc.apply_edit(*edit)
        current = doc.text
    return text, edits


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edited_documents())
def test_incremental_equals_full_parse(case: tuple[str, list[Edit]]) -> None:
    text, edits = case
    doc = Document(text)
    for start, end, new_text in edits:
        doc.apply_edit(start, end, new_text)
        assert doc.module.get_code() == doc.text
        check_parents(doc.module)
        full = parse(doc.text)
        assert signature(doc.module) == signature(full)
        # The diagnostics as reported, with their exact ranges and related places.
        assert syntax_diagnostics(doc.module) == syntax_diagnostics(full)


# Headers whose expression takes the block below it, or may: a loop inside brackets (the
# header's own errors are then reported at the end of that block), a session that a `->`
# line continues or a `name:` line gives properties, a `do:` under `not`.
HEADERS = [
    "parallel(loop)",
    "parallel(loop):",
    "let x = f(do:",
    "for x in session",
    "for x in session:",
    "repeat session",
    "if not do:",
    "if **c**:",
]
BODY_LINES = ['session "a"', "else", "else:", "->a", "| map:", "a: x", "x", ""]


@st.composite
def documents_under_a_header(draw: st.DrawFn) -> tuple[str, list[Edit]]:
    indent = draw(st.sampled_from(["  ", "        ", "\t"]))
    body = draw(st.lists(st.sampled_from(BODY_LINES), min_size=1, max_size=4))
    text = draw(st.sampled_from(HEADERS)) + "".join("\n" + indent + line for line in body)
    if draw(st.booleans()):
        text += "\n"
    edits = []
    for _ in range(draw(st.integers(1, 3))):
        line = draw(st.integers(1, len(body) + 1))
        column = draw(st.integers(0, len(indent) + 4))
        end = (line, column + draw(st.integers(0, 2)))
        pieces = draw(st.lists(st.sampled_from([*TOKENS, *BODY_LINES]), max_size=2))
        edits.append(((line, column), end, "".join(pieces)))
    return text, edits


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents_under_a_header())
def test_incremental_equals_full_parse_under_headers_that_take_a_block(
    case: tuple[str, list[Edit]],
) -> None:
    text, edits = case
    doc = Document(text)
    for start, end, new_text in edits:
        doc.apply_edit(start, end, new_text)
        full = parse(doc.text)
        assert signature(doc.module) == signature(full)
        assert syntax_diagnostics(doc.module) == syntax_diagnostics(full)
