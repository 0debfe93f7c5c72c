"""A header missing only its `:` is one mistake, so it gets one diagnostic with an exact range,
and the indented block under it still belongs to it (no E031 for the block, no E003 for a
session whose agent is right there)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.checking import check_text
from openprose.ide import analyze_document
from openprose.ide.fixes.fix_all import fix_all
from openprose.syntax import parse
from openprose.syntax.tree import DoBlock, PropertyBlock, Resume, Session, iter_nodes
from tests.support.edits import apply_edits

AGENT = "agent c:\n  model: sonnet\n  persist: true\n"


def diagnostics(text: str) -> list[tuple[str, tuple[int, int], tuple[int, int], str]]:
    return [(d.code, d.start, d.end, d.message) for d in check_text(text)]


def _only(node_type: type, text: str) -> object:
    (node,) = [n for n in iter_nodes(parse(text)) if isinstance(n, node_type)]
    return node


@pytest.mark.parametrize(
    ("line", "keyword", "column"),
    [
        ("session c", "session", 8),
        ("let x = session c", "session", 16),
        ("const x = session c", "session", 18),
        ("output x = session c", "session", 19),
        ('session "a" -> session c', "session", 23),
        ("resume c", "resume", 7),
        ("let x = resume c", "resume", 15),
    ],
)
@pytest.mark.parametrize("block", ['  prompt: "x"\n', "  model: opus\n", ""])
def test_session_or_resume_name_without_colon(
    line: str, keyword: str, column: int, block: str
) -> None:
    text = f"{AGENT}session: c\n{line}\n{block}"
    row = 5  # the line under test, 1-based after the agent and the first session
    message = f"expected `:` before the agent name: write `{keyword}: c`"
    assert diagnostics(text) == [("E004", (row, column), (row, column + 1), message)]
    cls = Session if keyword == "session" else Resume
    nodes = [n for n in iter_nodes(parse(text)) if isinstance(n, cls)]
    node = nodes[-1]
    assert node.children[1].value == "c"
    assert isinstance(node.children[-1], PropertyBlock) == bool(block)
    assert parse(text).get_code() == text


def test_the_reported_program_of_the_issue() -> None:
    text = 'agent a:\n  model: sonnet\n\nsession c\n  prompt: "x"\n'
    message = "expected `:` before the agent name: write `session: c`"
    assert diagnostics(text) == [("E004", (4, 8), (4, 9), message)]
    session = _only(Session, text)
    assert isinstance(session, Session)
    assert session.get_property("prompt") is not None


def test_a_session_inside_a_block_keeps_its_properties() -> None:
    text = f'{AGENT}parallel:\n  y = session c\n    prompt: "x"\nsession "{{y}}"\n'
    message = "expected `:` before the agent name: write `session: c`"
    assert diagnostics(text) == [("E004", (5, 14), (5, 15), message)]


@pytest.mark.parametrize(
    "line",
    ['session "a" c', "session c d", "session c -> session d"],
)
def test_a_name_followed_by_more_is_not_taken_for_an_agent(line: str) -> None:
    messages = [m for _, _, _, m in diagnostics(line + "\n")]
    assert not any("before the agent name" in m for m in messages)


def test_do_without_colon_takes_its_block() -> None:
    text = 'let x = do\n  session "a"\nsession "{x}"\n'
    assert diagnostics(text) == [("E004", (1, 10), (1, 10), "expected `:` after `do`")]
    block = _only(DoBlock, text)
    assert isinstance(block, DoBlock)
    assert block.get_code().count("session") == 1


def test_do_alone_still_asks_for_a_colon_or_a_name() -> None:
    assert diagnostics("do\n") == [
        ("E004", (1, 2), (1, 2), "expected `:` or a block name after `do`")
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "agent\n  model: sonnet\n",
            [("E004", (1, 5), (1, 5), "expected an agent name after `agent`")],
        ),
        (
            'block\n  session "x"\n',
            [("E054", (1, 5), (1, 5), "block definition must have a name: write `block name:`")],
        ),
    ],
)
def test_a_definition_without_name_or_colon_is_one_error(text: str, expected: list) -> None:
    assert diagnostics(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("agent a\n  model: sonnet\n", "expected `:` after `agent a`"),
        ('block b\n  session "x"\ndo b\n', "expected `:` after `block b`"),
        ('parallel\n  session "x"\n', "expected `:` after `parallel`"),
        ('loop (max: 3)\n  session "x"\n', "expected `:` after `loop (max: 3)`"),
        ('try\n  session "x"\ncatch:\n  session "y"\n', "expected `:` after `try`"),
    ],
)
def test_other_headers_without_colon_were_already_one_error(text: str, expected: str) -> None:
    assert [(d.code, d.message) for d in check_text(text)] == [("E004", expected)]


_HEADERS = ["session {name}", "let x = session {name}", "y = resume {name}", "resume {name}"]
_PROPERTIES = ['prompt: "p"', "model: haiku", "context: [a]", "# a note", "retry: 2"]
_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda n: n not in {"session", "resume", "let", "agent", "a", "x", "y"}
)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(_HEADERS),
    _NAMES,
    st.lists(st.sampled_from(_PROPERTIES), max_size=3, unique=True),
    st.sampled_from(["\n", "\r\n"]),
)
def test_one_error_at_the_name_and_the_fix_clears_it(
    header: str, name: str, properties: list[str], newline: str
) -> None:
    line = header.format(name=name)
    prelude = f'let a = "a"\nagent {name}:\n  model: sonnet\n'
    if "resume" in line:  # resuming needs the memory of an earlier session
        prelude += f"  persist: true\nsession: {name}\n"
    if line.startswith("y ="):
        prelude += 'let y = "y"\n'
    body = "".join(f"  {p}\n" for p in properties)
    text = (prelude + line + "\n" + body).replace("\n", newline)
    assert parse(text).get_code() == text
    found = check_text(text)
    row = prelude.count("\n") + 1
    column = len(line) - len(name)
    assert [(d.code, d.start, d.end) for d in found if d.is_error] == [
        ("E004", (row, column), (row, column + len(name)))
    ]
    (action,) = fix_all(analyze_document(text))  # safe: the agent is defined
    assert [d for d in check_text(apply_edits(text, action.edits)) if d.is_error] == []
