"""The line diff behind formatting edits: always exact, minimal on small changes, and
bounded in work on any input (one replacement instead of a search through a huge middle)."""

from __future__ import annotations

import itertools
import random

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from openprose.format import format_edits, format_text
from openprose.format.diff import line_diff, split_lines
from tests.support.edits import apply_edits
from tests.support.strategies import programs, texts

# Lines drawn from a small set, so that texts share and repeat lines as formatted ones do,
# with every line ending, the last line sometimes without one, and astral characters.
LINE_BODIES = ["", "a", "  a", "b", "\U0001d11e x", "# c", '"""', "é"]
line = st.tuples(st.sampled_from(LINE_BODIES), st.sampled_from(["\n", "\r\n", "\r"]))
line_lists = st.lists(line.map("".join), max_size=30)


def document(lines: list[str], last: str) -> str:
    """``lines`` and a last line without a line break (``last``, maybe empty)."""
    return "".join(lines) + last


documents = st.builds(document, line_lists, st.sampled_from(["", "a", "\U0001d11e"]))


def apply_blocks(
    old: list[str], new: list[str], blocks: list[tuple[int, int, int, int]]
) -> list[str]:
    out: list[str] = []
    at = 0
    for i1, i2, j1, j2 in blocks:
        assert at <= i1 <= i2 <= len(old) and 0 <= j1 <= j2 <= len(new)
        out += old[at:i1] + new[j1:j2]
        at = i2
    return out + old[at:]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, documents)
@example("a\r\nb", "a\nb")
@example("a\n\U0001d11e", "a\n\U0001d11e\n")
@example("", "a")
def test_edits_turn_any_text_into_any_other(old: str, new: str) -> None:
    a, b = split_lines(old), split_lines(new)
    assert "".join(a) == old and "".join(b) == new
    blocks = line_diff(a, b)
    assert apply_blocks(a, b, blocks) == b
    # Blocks are in order, separated by at least one equal line, and never empty.
    for (_, i2, _, j2), (i1, _, j1, _) in itertools.pairwise(blocks):
        assert i2 < i1 and j2 < j1 and i1 - i2 == j1 - j2
    assert all(i1 < i2 or j1 < j2 for i1, i2, j1, j2 in blocks)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(texts, programs(), documents))
def test_format_edits_give_exactly_the_formatted_text(text: str) -> None:
    result = format_text(text)
    assert apply_edits(text, format_edits(text, result)) == result.text


def test_one_changed_line_is_one_edit_of_that_line() -> None:
    old = [f"line {i}\n" for i in range(100)]
    new = list(old)
    new[40] = "changed\n"
    assert line_diff(old, new) == [(40, 41, 40, 41)]


def test_repeated_lines_around_changes_are_kept() -> None:
    # Every line appears many times: nothing unique to anchor on, the bounded search finds
    # the three one-line changes.
    old = ["x\n", "y\n", "\n"] * 40
    new = list(old)
    for i in (10, 50, 100):
        new[i] = "z\n"
    assert line_diff(old, new) == [(i, i + 1, i, i + 1) for i in (10, 50, 100)]


def test_insertions_and_deletions() -> None:
    old = ["a\n", "b\n", "c\n", "d\n"]
    assert line_diff(old, ["a\n", "b\n", "new\n", "c\n", "d\n"]) == [(2, 2, 2, 3)]
    assert line_diff(old, ["a\n", "d\n"]) == [(1, 3, 1, 1)]
    assert line_diff(old, old) == []
    assert line_diff([], ["a\n"]) == [(0, 0, 0, 1)]


def test_a_middle_too_different_to_search_is_one_replacement() -> None:
    # Thousands of lines, all changed, with repeated lines on both sides: instead of a
    # search whose cost grows with the square of the size, one edit replaces the middle.
    old = [f"    item {i % 7}\n" for i in range(5000)]
    new = [f"  item {i % 7}\n" for i in range(5000)]
    assert line_diff(["top\n", *old, "end\n"], ["top\n", *new, "end\n"]) == [(1, 5001, 1, 5001)]


def test_unique_lines_anchor_the_diff_of_a_reindented_program() -> None:
    # Headers are unique and unchanged; only the bodies (re-indented) are replaced.
    old, new = [], []
    for i in range(300):
        old += [f"agent a{i}:\n", "    model: sonnet\n", "\n"]
        new += [f"agent a{i}:\n", "  model: sonnet\n", "\n"]
    assert line_diff(old, new) == [(3 * i + 1, 3 * i + 2, 3 * i + 1, 3 * i + 2) for i in range(300)]


def test_a_search_over_its_budget_gives_one_replacement() -> None:
    # Two unrelated orders of the same few lines: they share many lines but differ in
    # thousands of places, beyond what the search may spend; one edit replaces the middle.
    rng = random.Random(12)
    old = ["p\n"] + [rng.choice("abc") + "\n" for _ in range(3000)] + ["p\n"]
    new = ["q\n"] + [rng.choice("abc") + "\n" for _ in range(3000)] + ["q\n"]
    assert line_diff(["top\n", *old, "end\n"], ["top\n", *new, "end\n"]) == [(1, 3003, 1, 3003)]
