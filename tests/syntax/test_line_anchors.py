"""Line anchors: an edit that adds or removes lines moves the rest of the file by updating
one anchor per line, and every position read afterwards equals a full parse's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprose.syntax import Document, parse, syntax_diagnostics
from openprose.syntax import tree as t
from openprose.syntax.debug import check_parents, signature

PROGRAM = """\
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

let items = ["x",
  "y"]
let out = items
  | map:
      session "Summarise {item}"
if ***
  several lines
  ***:
  session "c"
try:
  do review("x")
catch as err:
  throw "failed"
session "last\""""


def leaves(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        children = getattr(current, "children", None)
        if children is None:
            yield current
        else:
            stack.extend(reversed(children))


def assert_anchors_in_step(module: t.Module) -> None:
    """The module's list holds exactly its leaves' anchors, in text order."""
    used: list[t.LineAnchor] = []
    for leaf in leaves(module):
        if not used or used[-1] is not leaf.anchor:
            used.append(leaf.anchor)
    assert [id(anchor) for anchor in module.line_anchors] == [id(anchor) for anchor in used]
    lines = [anchor.line for anchor in used]
    assert lines == sorted(lines)


def assert_matches_full_parse(doc: Document) -> None:
    assert doc.module.get_code() == doc.text
    check_parents(doc.module)
    full = parse(doc.text)
    # Every leaf's class, value, prefix and start position, and every issue's range.
    assert signature(doc.module) == signature(full)
    assert syntax_diagnostics(doc.module) == syntax_diagnostics(full)
    assert [leaf.end_pos for leaf in leaves(doc.module)] == [leaf.end_pos for leaf in leaves(full)]
    assert_anchors_in_step(doc.module)


def test_a_full_parse_lists_one_anchor_per_line_that_starts_a_token() -> None:
    module = parse('let a = ["x",\n\n  "y"]\nsession """\n1\n2""" -> b\n')
    assert [anchor.line for anchor in module.line_anchors] == [1, 3, 4, 6, 7]
    assert_anchors_in_step(module)


@pytest.mark.parametrize(
    "text",
    ["", "\f", "  \f", "(\n", "a(\n\n\n", 'a("""x\ny"""', 'a("""x\ny"""\n\n  b)\n', "***a\nb***"],
)
def test_a_line_with_no_token_has_no_anchor(text: str) -> None:
    module = parse(text)
    assert module.get_code() == text
    assert_anchors_in_step(module)


def test_enter_moves_the_leaves_after_it_without_writing_to_them() -> None:
    doc = Document("".join(f'session "s{i}"\n' for i in range(200)))
    after = list(leaves(doc.module.statements()[150]))
    anchors = [leaf.anchor for leaf in after]
    doc.apply_edit((100, 3), (100, 3), "\n")  # a line break inside `session` 100
    assert doc.stats.mode == "incremental"
    assert [leaf.anchor for leaf in after] == anchors  # the same objects, moved
    assert [leaf.line for leaf in after] == [152] * len(after)
    assert_matches_full_parse(doc)


def test_a_leaf_held_across_edits_reports_its_new_position() -> None:
    doc = Document(PROGRAM)
    marker = doc.module.end_marker
    throw = next(leaf for leaf in leaves(doc.module) if leaf.value == "throw")
    line, column = throw.start_pos
    doc.apply_edit((0, 0), (0, 0), "\n\n\n")
    doc.apply_edit((8, 0), (10, 0), "")  # two lines of the block go again
    assert throw.start_pos == (line + 1, column)
    assert doc.module.end_marker is marker
    assert marker.start_pos == parse(doc.text).end_marker.start_pos
    assert_matches_full_parse(doc)


def test_setting_a_line_moves_that_leaf_only() -> None:
    module = parse("a b\n")
    first, second = module.children[0].get_first_leaf(), module.children[0].children[1]
    first.line = 5
    assert (first.start_pos, second.start_pos) == ((5, 0), (1, 2))
    second.start_pos = (7, 1)
    assert second.end_pos == (7, 2)


# -- random edits, Enter and multi-line deletions first ---------------------------------------

Position = tuple[int, int]
Edit = tuple[Position, Position, str]

INSERTED = ["\n", "\n  ", "\n    ", "\n\n", "\r\n", '\n  session "n"\n', "x\ny", '"""\n', "("]


def _line_length(lines: list[str], line: int) -> int:
    return len(lines[line]) if line < len(lines) else 0


@st.composite
def line_edit(draw: st.DrawFn, text: str) -> Edit:
    lines = text.split("\n")
    line = draw(st.integers(0, len(lines) - 1))
    column = draw(st.integers(0, _line_length(lines, line)))
    kind = draw(st.sampled_from(["enter", "enter", "delete lines", "join", "replace lines"]))
    if kind == "enter":
        return (line, column), (line, column), draw(st.sampled_from(INSERTED))
    if kind == "join" and line > 0:  # Backspace at the start of a line
        return (line - 1, _line_length(lines, line - 1)), (line, 0), ""
    end_line = min(len(lines) - 1, line + draw(st.integers(1, 6)))
    end = (end_line, draw(st.integers(0, _line_length(lines, end_line))))
    new_text = "" if kind == "delete lines" else draw(st.sampled_from(INSERTED))
    return (line, column), end, new_text


@st.composite
def documents_with_line_edits(draw: st.DrawFn) -> tuple[str, list[Edit]]:
    text = draw(st.sampled_from([PROGRAM, PROGRAM.replace("\n", "\r\n"), PROGRAM * 3]))
    edits = []
    doc = Document(text)
    for _ in range(draw(st.integers(1, 12))):
        edit = draw(line_edit(doc.text))
        edits.append(edit)
        doc.apply_edit(*edit)
    return text, edits


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents_with_line_edits())
def test_positions_equal_a_full_parse_after_enter_and_line_deletions(
    case: tuple[str, list[Edit]],
) -> None:
    text, edits = case
    doc = Document(text)
    held = list(leaves(doc.module))  # as an analysis holding on to unchanged statements
    for edit in edits:
        doc.apply_edit(*edit)
        assert_matches_full_parse(doc)
    # A leaf still in the tree reads the same position as its twin in a full parse.
    current = {id(leaf) for leaf in leaves(doc.module)}
    full = dict(zip(map(id, leaves(doc.module)), leaves(parse(doc.text)), strict=True))
    for leaf in held:
        if id(leaf) in current:
            assert leaf.start_pos == full[id(leaf)].start_pos
