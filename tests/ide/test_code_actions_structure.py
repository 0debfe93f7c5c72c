"""Quick fixes for a bare `session` with properties (E074) and an agent defined inside
another statement (W037, and E007 on the sessions that name it)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_code_actions import actions_for, apply, fixed, preferred, titles

from openprose.checking import check_text
from openprose.ide import analyze_document
from openprose.ide.fixes.fix_all import fix_all

# --------------------------------------------------------------------------- E074


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('session\n  prompt: "Summarize"\n', 'session:\n  prompt: "Summarize"\n'),
        (
            'let s = session  # notes\n  prompt: "Summarize"\n  model: haiku\n',
            'let s = session:  # notes\n  prompt: "Summarize"\n  model: haiku\n',
        ),
        (
            'if **long**:\n  session\n    prompt: "Summarize"',
            'if **long**:\n  session:\n    prompt: "Summarize"',
        ),
    ],
)
def test_add_the_colon(text: str, expected: str) -> None:
    assert preferred(text, "E074") == ["Add `:` after `session`"]
    result = fixed(text, "E074", "Add `:` after `session`")
    assert result == expected
    assert [d.code for d in check_text(result) if d.is_error] == []


def test_fix_all_adds_the_colon() -> None:
    text = 'session\n  prompt: "A"\nlet b = session\n  prompt: "B"\n'
    (action,) = fix_all(analyze_document(text))
    assert apply(text, action.edits) == 'session:\n  prompt: "A"\nlet b = session:\n  prompt: "B"\n'


# --------------------------------------------------------------------------- W037

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


# --------------------------------------------------------------------------- E003, E004

MEMORY = "agent c:\n  persist: true\n  model: opus\nsession: c\n"


@pytest.mark.parametrize(
    ("text", "code", "expected"),
    [
        (MEMORY + 'resume c\n  prompt: "Go on"\n', "E004", "resume: c\n"),
        ('agent c:\n  model: opus\nsession c\n  prompt: "Go"\n', "E003", "session: c\n"),
    ],
)
def test_agent_name_without_colon_gets_it(text: str, code: str, expected: str) -> None:
    assert [d.code for d in check_text(text)].count("E031") == 1  # the block, before
    title = f"Change to `{expected.rstrip()}`"
    assert preferred(text, code) == [title]
    result = apply(text, actions_for(text, code)[0].edits)
    assert expected in result
    assert check_text(result) == []
    (action,) = fix_all(analyze_document(text))  # safe: the agent exists
    assert apply(text, action.edits) == result


def test_colon_for_an_unknown_agent_is_offered_but_not_automatic() -> None:
    assert preferred("session c\n", "E003") == ["Change to `session: c`"]
    assert fix_all(analyze_document("session c\n")) == []


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (MEMORY + 'resume\n  prompt: "x"\n', "E004"),  # no agent to name
        ("session\n  model: opus\n", "E003"),
    ],
)
def test_no_colon_fix_without_a_name(text: str, code: str) -> None:
    assert [a for a in actions_for(text, code) if a.title.startswith("Change to")] == []


def test_move_goes_after_a_byte_order_mark() -> None:
    text = "\ufeffblock b:\n  agent a:\n    model: opus\n  session: a\n"
    result = fixed(text, "W037", "Move agent `a` to the top level")
    assert result == "\ufeffagent a:\n  model: opus\n\nblock b:\n  session: a\n"


def test_create_agent_goes_after_a_byte_order_mark() -> None:
    result = fixed("\ufeffsession: writer\n", "E007", "Create agent `writer`")
    assert result.startswith("\ufeffagent writer:\n")


_BARE = ["session", "let x = session", 'session "a" -> session', "parallel:\n  y = session"]
_PROPS = ['prompt: "p"', "model: haiku", "context: [a]", "retry: 2", "# a comment"]


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(_BARE),
    st.lists(st.sampled_from(_PROPS), min_size=1, max_size=4),
    st.sampled_from(["\n", "\r\n"]),
)
def test_the_colon_fix_removes_e074_and_brings_no_error(
    header: str, props: list[str], newline: str
) -> None:
    indent = "    " if header.startswith("parallel") else "  "
    body = "".join(f"{indent}{p}\n" for p in ['prompt: "p"', *props])
    text = ('let a = session "A"\n' + header + "\n" + body).replace("\n", newline)
    assert len([d for d in check_text(text) if d.code == "E074"]) == 1
    fixed(text, "E074", "Add `:` after `session`")
