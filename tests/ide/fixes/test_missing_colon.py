"""Quick fixes that add a missing `:`: a bare `session` with properties (E074), and
`session name` or `resume name` (E003, E004)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.checking import check_text
from openprose.ide import analyze_document
from openprose.ide.fixes.fix_all import fix_all
from tests.ide.fixes.fixes_support import actions_for, fixed, preferred
from tests.support.edits import apply_edits


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
    assert (
        apply_edits(text, action.edits)
        == 'session:\n  prompt: "A"\nlet b = session:\n  prompt: "B"\n'
    )


MEMORY = "agent c:\n  persist: true\n  model: opus\nsession: c\n"


@pytest.mark.parametrize(
    ("text", "code", "expected"),
    [
        (MEMORY + 'resume c\n  prompt: "Go on"\n', "E004", "resume: c\n"),
        ('agent c:\n  model: opus\nsession c\n  prompt: "Go"\n', "E004", "session: c\n"),
        (
            'agent c:\n  model: opus\nlet x = session c\n  model: haiku\nsession "{x}"\n',
            "E004",
            "session: c\n",
        ),
    ],
)
def test_agent_name_without_colon_gets_it(text: str, code: str, expected: str) -> None:
    assert [d.code for d in check_text(text)] == [code]  # one error, at the name, before
    title = f"Change to `{expected.rstrip()}`"
    assert preferred(text, code) == [title]
    result = apply_edits(text, actions_for(text, code)[0].edits)
    assert expected in result
    assert check_text(result) == []
    (action,) = fix_all(analyze_document(text))  # safe: the agent exists
    assert apply_edits(text, action.edits) == result


def test_colon_for_an_unknown_agent_is_offered_but_not_automatic() -> None:
    assert preferred("session c\n", "E004") == ["Change to `session: c`"]
    assert preferred("session c d\n", "E003") == ["Change to `session: c`"]
    assert fix_all(analyze_document("session c\n")) == []


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (MEMORY + 'resume\n  prompt: "x"\n', "E004"),  # no agent to name
        ("session\n  model: opus\n", "E003"),
        ('session "x" c\n', "E004"),  # junk after a prompt, not an agent name
    ],
)
def test_no_colon_fix_without_a_name(text: str, code: str) -> None:
    assert [a for a in actions_for(text, code) if a.title.startswith("Change to")] == []


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
