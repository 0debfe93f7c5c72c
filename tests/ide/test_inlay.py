"""Inlay hints: parameter names before the positional arguments of `do name(...)`."""

from __future__ import annotations

from openprose.ide.analysis import analyze_document
from openprose.ide.inlay import inlay_hints
from openprose.ide.types import InlayHint, Range

BLOCK = """\
block review(topic, depth):
  session "Review {topic} at {depth}"

"""

EVERYTHING = Range((0, 0), (10_000, 0))


def hints(text: str, range: Range = EVERYTHING) -> list[tuple[tuple[int, int], str]]:
    return [(hint.position, hint.label) for hint in inlay_hints(analyze_document(text), range)]


def test_a_hint_before_each_argument() -> None:
    found = inlay_hints(analyze_document(BLOCK + 'do review("quantum", "deep")\n'), EVERYTHING)
    assert found == [
        InlayHint((3, 10), "topic:", "parameter"),
        InlayHint((3, 21), "depth:", "parameter"),
    ]


def test_no_hint_when_the_argument_is_the_parameter_name() -> None:
    text = BLOCK + 'let topic = session "t"\nlet level = session "l"\ndo review(topic, level)\n'
    assert hints(text) == [((5, 17), "depth:")]


def test_any_expression_gets_a_hint() -> None:
    text = BLOCK + 'let t = session "t"\ndo review(t.summary, [t])\n'
    assert hints(text) == [((4, 10), "topic:"), ((4, 21), "depth:")]


def test_extra_arguments_get_no_hint() -> None:
    assert hints(BLOCK + 'do review("a", "b", "c")\n') == [((3, 10), "topic:"), ((3, 15), "depth:")]


def test_unknown_blocks_and_calls_without_arguments() -> None:
    assert hints(BLOCK + 'do missing("a")\ndo review\n') == []


def test_only_inside_the_range() -> None:
    text = BLOCK + "".join(f'do review("a{i}", "b")\n' for i in range(10))
    found = hints(text, Range((5, 0), (7, 0)))
    assert [position[0] for position, _ in found] == [5, 5, 6, 6]
    # A range ending in the middle of a line keeps the arguments before its end.
    assert hints(text, Range((3, 0), (3, 12))) == [((3, 10), "topic:")]


def test_arguments_over_several_lines() -> None:
    text = BLOCK + 'do review(\n  "a",\n  "b",\n)\n'
    assert hints(text) == [((4, 2), "topic:"), ((5, 2), "depth:")]
    # The call starts before the range but its second argument is inside.
    assert hints(text, Range((5, 0), (6, 0))) == [((5, 2), "depth:")]


def test_unicode_before_an_argument() -> None:
    text = BLOCK + 'do review("café 🙂", "b")\n'
    assert hints(text) == [((3, 10), "topic:"), ((3, 20), "depth:")]


def test_hoisted_block_and_nested_calls() -> None:
    text = 'if **x**:\n  do review("a")\n' + BLOCK
    assert hints(text) == [((1, 12), "topic:")]


def test_incomplete_and_empty_text() -> None:
    assert hints("") == []
    assert hints(BLOCK + 'do review("a", ') == [((3, 10), "topic:")]
    assert hints("do (((,,,") == []
