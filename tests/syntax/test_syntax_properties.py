"""Property tests: the parser's invariants hold on arbitrary input and edit sequences."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprose.syntax import Document, parse, syntax_diagnostics
from openprose.syntax.debug import check_parents, signature

# Fragments that stress the tokenizer and the block structure: quotes, triple quotes,
# discretion markers, brackets, colons, line breaks of every kind, indentation, tabs,
# clause keywords and non-ASCII (including a character outside the BMP).
FRAGMENTS = [
    '"',
    '"""',
    "**",
    "***",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    "->",
    "|",
    "=",
    "\n",
    "\r\n",
    "\r",
    "  ",
    "    ",
    "\t",
    "#",
    "\\",
    "{name}",
    "else:",
    "elif **c**:",
    "catch:",
    "finally:",
    'option "x":',
    "é",
    "\U0001d11e",
    "\u00a0",
    "session",
    ' "p"',
    "agent a:",
    "\n  model: sonnet",
    "let x = ",
    "parallel:",
    "\n  ",
    "| map:",
    "do:",
    "loop until **done** (max: 3):",
    "try:",
    "if **c**:",
    "block b(p):",
    "x",
    "1",
]

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
        assert signature(doc.module) == signature(parse(doc.text))
