"""Positions of the parts of a string (``offset_position``), checked against the source text.

Positions are (line from 1, column from 0 in code points); a lone CR ends a line as LF and
CRLF do.  The hand-written cases pin the awkward spots (escapes, multi-line strings, CRLF,
astral characters); the property compares every offset with a count made on the whole source.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.syntax import Session, String, parse
from openprose.syntax.tree import offset_position

_LINE_END = re.compile(r"\r\n|\r|\n")


def prompt_of(text: str) -> String:
    module = parse(text)
    assert module.get_code() == text
    session = module.statements()[-1]
    assert isinstance(session, Session) and session.prompt is not None
    return session.prompt


def interpolation_ranges(leaf: String) -> list[tuple[str, tuple[int, int], tuple[int, int]]]:
    return [(p.raw, p.start, p.end) for p in leaf.parts() if p.kind == "interpolation"]


def source_position(text: str, index: int) -> tuple[int, int]:
    """Where ``text[index]`` is, counted on the text itself, independently of the tree."""
    before = text[:index]
    breaks = list(_LINE_END.finditer(before))
    if not breaks:
        return 1, index
    return 1 + len(breaks), index - breaks[-1].end()


def leaf_index(text: str, leaf: String) -> int:
    """The index in ``text`` of the leaf's first character."""
    line, column = leaf.start_pos
    starts = [0] + [m.end() for m in _LINE_END.finditer(text)]
    return starts[line - 1] + column


def test_interpolations_after_escapes() -> None:
    leaf = prompt_of('session "a\\"b\\\\ {x} \\{y} \\n{z}"\n')
    assert interpolation_ranges(leaf) == [("{x}", (1, 16), (1, 19)), ("{z}", (1, 27), (1, 30))]


def test_interpolations_in_a_multiline_string() -> None:
    leaf = prompt_of('let a = 1\nsession """\n  {a} one\n\n  two {b.c}\n"""\n')
    assert interpolation_ranges(leaf) == [
        ("{a}", (3, 2), (3, 5)),
        ("{b.c}", (5, 6), (5, 11)),
    ]


def test_interpolations_in_a_crlf_multiline_string() -> None:
    leaf = prompt_of('session """\r\n  {a} one\r\n\r\n  two {b}\r\n"""\r\n')
    assert interpolation_ranges(leaf) == [("{a}", (2, 2), (2, 5)), ("{b}", (4, 6), (4, 9))]


def test_interpolations_after_a_lone_carriage_return() -> None:
    leaf = prompt_of('session """x\r {a}\r\n{b}"""\n')
    assert interpolation_ranges(leaf) == [("{a}", (2, 1), (2, 4)), ("{b}", (3, 0), (3, 3))]


def test_interpolations_after_astral_characters_count_code_points() -> None:
    leaf = prompt_of('session "𝄞😀 {a} 🎉\\n{b}"\n')
    assert interpolation_ranges(leaf) == [("{a}", (1, 12), (1, 15)), ("{b}", (1, 19), (1, 22))]


def test_offset_between_cr_and_lf_is_at_the_start_of_a_line() -> None:
    # An offset inside a CRLF pair is not a real place; it is put where the CR ends a line.
    leaf = prompt_of('session """a\r\nb"""\n')
    assert offset_position(leaf, 5) == (2, 0)
    assert offset_position(leaf, 6) == (2, 0)
    assert offset_position(leaf, 7) == (2, 1)


def test_many_interpolations_on_one_line() -> None:
    leaf = prompt_of('session "' + "{x}" * 1000 + '"\n')
    ranges = interpolation_ranges(leaf)
    assert len(ranges) == 1000
    assert ranges[-1] == ("{x}", (1, 9 + 3 * 999), (1, 9 + 3 * 1000))


_BODY_PIECES = st.sampled_from(
    ["a", " ", "{x}", "{y.z}", "\\n", '\\"', "\\{", "\\\\", "é", "😀", "\n", "\r\n", "\r", "\t"]
)


@settings(max_examples=300, deadline=None)
@given(
    before=st.lists(
        st.sampled_from(["let a = 1", "# note", "", 'session """p\r\nq"""']), max_size=3
    ),
    body=st.lists(_BODY_PIECES, max_size=30),
    newline=st.sampled_from(["\n", "\r\n"]),
    order=st.randoms(use_true_random=False),
)
def test_every_offset_matches_the_source(
    before: list[str], body: list[str], newline: str, order: object
) -> None:
    text = newline.join([*before, 'session """' + "".join(body) + '"""']) + newline
    leaf = prompt_of(text)
    start = leaf_index(text, leaf)
    offsets = list(range(len(leaf.value) + 1))
    order.shuffle(offsets)  # type: ignore[attr-defined]
    for offset in offsets:
        assert offset_position(leaf, offset) == source_position(text, start + offset), offset
