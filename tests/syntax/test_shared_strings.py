"""Leaves share one string for each name, keyword, operator and short indentation: a big
program repeats a few thousand of them hundreds of thousands of times, and a string per
leaf was a sixth of its tree's memory."""

from __future__ import annotations

from typing import Any

from openprose.syntax import parse
from openprose.syntax import tree as t

PROGRAM = (
    'let answer = session "one"\n'
    "block work(answer):\n"
    '    session "two"\n'
    "        context: answer\n"
    '    session "three"\n'
    "        context: answer\n"
)


def _leaves(node: Any) -> list[Any]:
    out: list[Any] = []
    stack = [node]
    while stack:
        current = stack.pop()
        children = getattr(current, "children", None)
        if children is None:
            out.append(current)
        else:
            stack.extend(reversed(children))
    return out


def test_equal_names_keywords_and_operators_share_one_string() -> None:
    leaves = _leaves(parse(PROGRAM))
    for kind, value in ((t.Name, "answer"), (t.Keyword, "session"), (t.Name, "context")):
        same = [leaf for leaf in leaves if isinstance(leaf, kind) and leaf.value == value]
        assert len(same) >= 2
        assert all(leaf.value is same[0].value for leaf in same)
    colons = [leaf for leaf in leaves if leaf.value == ":"]
    assert len(colons) >= 3
    assert all(leaf.value is colons[0].value for leaf in colons)


def test_equal_indentation_prefixes_share_one_string() -> None:
    leaves = _leaves(parse(PROGRAM))
    indented = [leaf for leaf in leaves if leaf.prefix == "        "]
    assert len(indented) == 2
    assert indented[0].prefix is indented[1].prefix


def test_the_tree_still_reads_back_as_the_text() -> None:
    assert parse(PROGRAM).get_code() == PROGRAM
