"""W037: an agent defined inside another statement is never collected."""

from __future__ import annotations

import pytest

from openprose.checking import check_text
from tests.analysis.rule_checks import found, only

AGENT = '  agent critic:\n    model: opus\n    prompt: "You find weaknesses"\n'


@pytest.mark.parametrize(
    ("header", "keyword"),
    [
        ("block review(draft):\n", "block"),
        ("loop until **the draft is good** (max: 3):\n", "loop"),
        ('for item in ["a", "b"]:\n', "for"),
        ("parallel:\n", "parallel"),
        ("if **the draft is long**:\n", "if"),
        ("try:\n", "try"),
        ("repeat 2:\n", "repeat"),
        ("do:\n", "do"),
    ],
)
def test_agent_in_a_body_is_a_warning_on_its_name(header: str, keyword: str) -> None:
    text = header + AGENT + '  session "Review"\n'
    diagnostic = only(text, "W037")
    assert (diagnostic.start, diagnostic.end) == ((2, 8), (2, 14))
    assert f"inside `{keyword}`" in diagnostic.message
    assert "top level" in diagnostic.message


def test_agent_in_else_and_catch_bodies() -> None:
    text = 'if **a**:\n  session "x"\nelse:\n' + AGENT + 'try:\n  session "y"\ncatch:\n' + AGENT
    found = [d for d in check_text(text) if d.code == "W037"]
    assert [d.start for d in found] == [(4, 8), (10, 8)]
    assert ["inside `else`" in found[0].message, "inside `catch`" in found[1].message] == [
        True,
        True,
    ]


def test_top_level_agent_is_fine() -> None:
    assert found(AGENT.replace("\n  ", "\n").lstrip() + "session: critic\n", "W037") == []


def test_use_of_a_nested_agent_points_at_the_definition() -> None:
    text = "block review:\n" + AGENT + "  session: critic\ndo review\n"
    undefined = only(text, "E007")
    assert "never collected" in undefined.message
    assert [(r.start, r.end) for r in undefined.related] == [((2, 8), (2, 14))]


def test_nameless_nested_agent_is_left_to_the_parser() -> None:
    text = 'block b:\n  agent:\n    model: opus\n  session "x"\n'
    assert found(text, "W037") == []
