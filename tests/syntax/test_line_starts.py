"""LineStarts: the line offsets of an edited text, with the shift after an edit pending."""

from __future__ import annotations

from bisect import bisect_right

from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.syntax import Document
from openprose.syntax.line_starts import LineStarts, line_starts

texts = st.text(alphabet="ab \r\n", max_size=40)
Replacement = tuple[int, int, str]


@st.composite
def edit_sequences(draw: st.DrawFn) -> tuple[str, list[Replacement]]:
    text = draw(texts)
    edits = []
    current = text
    for _ in range(draw(st.integers(1, 10))):
        a = draw(st.integers(0, len(current)))
        b = draw(st.integers(a, min(len(current), a + 12)))
        new = draw(texts)
        edits.append((a, b, new))
        current = current[:a] + new + current[b:]
    return text, edits


def assert_equals_fresh(starts: LineStarts, text: str) -> None:
    fresh = line_starts(text)
    assert [starts[x] for x in range(len(starts))] == fresh
    for offset in range(len(text) + 2):
        assert starts.bisect_right(offset) == bisect_right(fresh, offset)


@settings(max_examples=400, deadline=None)
@given(edit_sequences())
def test_line_starts_after_edits_equal_those_of_the_new_text(
    case: tuple[str, list[Replacement]],
) -> None:
    text, edits = case
    starts = LineStarts(text)
    for a, b, new in edits:
        text = text[:a] + new + text[b:]
        starts.replace(a, b, len(new), text)
        assert_equals_fresh(starts, text)


def test_edits_far_apart_move_the_pending_shift_both_ways() -> None:
    text = "".join(f"line {i}\n" for i in range(50))
    starts = LineStarts(text)
    for a in (200, 10, 300, 299, 0, len(text)):
        text = text[:a] + "x\ny\r\n" + text[a:]
        starts.replace(a, a, 5, text)
        assert_equals_fresh(starts, text)
        text = text[: a + 1] + text[a + 3 :]  # and a line break goes again
        starts.replace(a + 1, a + 3, 0, text)
        assert_equals_fresh(starts, text)


def test_document_positions_after_a_line_break_far_from_the_last_edit() -> None:
    doc = Document("".join(f'session "s{i}"\n' for i in range(100)))
    doc.apply_edit((80, 3), (80, 3), "\n")
    doc.apply_edit((5, 0), (5, 0), "\r\n\n")
    assert doc.position_at(doc.offset_at(83, 4)) == (83, 4)
    assert doc.line_text(82) == "ses"
    assert doc.line_text(83) == 'sion "s80"'
    assert doc.line_count == 104
