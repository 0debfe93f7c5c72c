"""The quick fix for an agent defined inside another statement (W037, and E007 on the
sessions that name it)."""

from __future__ import annotations

import pytest

from openprose.checking import check_text
from openprose.ide import analyze_document
from openprose.ide.fixes.fix_all import fix_all
from tests.ide.fixes.fixes_support import actions_for, fixed, preferred, titles

REVIEW = """\
input topic: "What to review"

agent writer:
  model: sonnet

block review(draft):
  # Looks for weaknesses.
  agent critic:
    model: opus  # the strongest
    # and a clear brief
    prompt: "You find weaknesses"
  session: critic
    context: draft

let essay = session: writer
  prompt: "Write about {topic}"
do review(essay)
"""


MOVED = """\
input topic: "What to review"

agent writer:
  model: sonnet

# Looks for weaknesses.
agent critic:
  model: opus  # the strongest
  # and a clear brief
  prompt: "You find weaknesses"

block review(draft):
  session: critic
    context: draft

let essay = session: writer
  prompt: "Write about {topic}"
do review(essay)
"""


MOVE = "Move agent `critic` to the top level"


def test_move_a_nested_agent_next_to_the_other_agents() -> None:
    assert preferred(REVIEW, "W037") == [MOVE]
    assert fixed(REVIEW, "W037", MOVE) == MOVED
    assert check_text(MOVED) == []


def test_a_session_naming_the_nested_agent_offers_the_move_not_a_new_agent() -> None:
    assert titles(REVIEW, "E007") == [MOVE]
    assert fixed(REVIEW, "E007", MOVE) == MOVED


def test_move_before_the_statement_without_other_agents_and_at_the_end_of_the_file() -> None:
    text = "# A header.\n\nloop (max: 2):\n  session: a\n  agent a:\n    model: opus"
    result = fixed(text, "W037", "Move agent `a` to the top level")
    assert result == "# A header.\n\nagent a:\n  model: opus\n\nloop (max: 2):\n  session: a"
    assert check_text(result) == []


def test_moving_is_never_automatic() -> None:
    assert fix_all(analyze_document(REVIEW)) == []


@pytest.mark.parametrize(
    "text",
    [
        # A multi-line prompt would change if dedented.
        'block b:\n  agent a:\n    prompt: """\n    Be brief.\n    """\n  session: a\n',
        # The body would be left empty.
        "block b:\n  agent a:\n    model: opus\n",
        # The name is taken at the top level.
        "agent a:\n  model: haiku\nblock b:\n  agent a:\n    model: opus\n  session: a\n",
        'let a = session "x"\nblock b:\n  agent a:\n    model: opus\n  session "y"\n',
        # A comment inside it less indented than the definition.
        "block b:\n  agent a:\n# note\n    model: opus\n  session: a\n",
    ],
)
def test_no_move_when_it_is_not_a_plain_cut_and_paste(text: str) -> None:
    assert [a for a in actions_for(text, "W037") if a.title.startswith("Move")] == []


def test_move_goes_after_a_byte_order_mark() -> None:
    text = "\ufeffblock b:\n  agent a:\n    model: opus\n  session: a\n"
    result = fixed(text, "W037", "Move agent `a` to the top level")
    assert result == "\ufeffagent a:\n  model: opus\n\nblock b:\n  session: a\n"
