"""The edges of the parser's and tokenizer's shortcuts for common lines.

The tokenizer reads a line's blank lines, indentation and first token in one match, and a
token with the whitespace and comment before it; the parser reads a one-token property value
and a lone operand without the expression levels. Each shortcut hands over to the general
path where a line stops being the simple case; these programs stand right at those edges.
"""

from __future__ import annotations

import pytest

from openprose.syntax import parse, syntax_diagnostics
from openprose.syntax import tree as t


def properties(text: str) -> dict[str, tuple[str, str]]:
    """name -> (class of the value, its code) of every property in ``text``'s tree."""
    module = parse(text)
    assert module.get_code() == text
    found = {}
    for node in t.iter_nodes(module):
        if isinstance(node, t.Property):
            value = node.value
            found[node.name] = (
                type(value).__name__,
                value.get_code(include_prefix=False) if value is not None else "",
            )
    return found


def codes(text: str) -> list[tuple[str, tuple[int, int], tuple[int, int]]]:
    return [(d.code, d.start, d.end) for d in syntax_diagnostics(parse(text))]


def test_one_token_values() -> None:
    text = 'agent a:\n  model: sonnet\n  prompt: "p"\n  retries: 3\n  when: **ready**\n'
    assert properties(text) == {
        "model": ("Name", "sonnet"),
        "prompt": ("String", '"p"'),
        "retries": ("Number", "3"),
        "when": ("Discretion", "**ready**"),
    }
    assert codes(text) == []


def test_a_value_continued_by_an_arrow_on_the_next_line() -> None:
    text = 'agent a:\n  model: sonnet\n  prompt: "p"\n    -> x\n'
    assert properties(text)["prompt"] == ("ArrowSequence", '"p"\n    -> x')


def test_a_value_continued_by_a_pipe_on_the_next_line() -> None:
    text = 'session "s"\n  context: items\n    | map:\n      session "x"\n'
    kind, code = properties(text)["context"]
    assert kind == "Pipeline" and code.startswith("items\n    | map:")


def test_not_alone_is_a_condition_missing_its_operand() -> None:
    text = 'session "s"\n  context: not\n'
    assert properties(text)["context"] == ("NotExpression", "not")
    assert codes(text) == [("E004", (2, 14), (2, 14))]


def test_a_keyword_value_is_a_construct() -> None:
    assert properties('agent a:\n  model: session "x"\n')["model"] == ("Session", 'session "x"')


def test_unclosed_condition_value() -> None:
    text = 'session "s"\n  context: **ready\n'
    assert properties(text)["context"] == ("Discretion", "**ready")
    assert codes(text) == [("E029", (2, 11), (2, 18))]


def test_unterminated_string_value_is_reported() -> None:
    text = 'agent a:\n  prompt: "open\n'
    assert properties(text)["prompt"] == ("String", '"open')
    assert [code for code, _, _ in codes(text)] == ["E001"]


@pytest.mark.parametrize(
    ("text", "end", "prefix"),
    [
        # A comment after an open bracket at the very end: the end marker's prefix.
        ("let x = [a,\n  # c", (3, 5), "\n  # c"),
        # A byte-order mark, blank lines and a comment before the first statement, trailing
        # whitespace and a final comment without a line break.
        ('\ufeff\n\n  # c\nsession "a"  \n\n# end  ', (6, 7), "\n# end  "),
        ('session "a"\r\rsession "b"\r\n  model: x\r\n', (5, 0), ""),
        ("   ", (1, 3), "   "),
        ("# only a comment", (1, 16), "# only a comment"),
    ],
)
def test_end_of_text(text: str, end: tuple[int, int], prefix: str) -> None:
    module = parse(text)
    assert module.get_code() == text
    assert module.end_marker.start_pos == end
    assert module.end_marker.prefix == prefix


def test_first_token_after_blank_lines_keeps_them_in_its_prefix() -> None:
    text = '\n  \n# note\n\nsession "a"\n'
    session = parse(text).children[0]
    assert isinstance(session, t.Session)
    keyword = session.children[0]
    assert keyword.prefix == "\n  \n# note\n\n"
    assert keyword.start_pos == (5, 0)


def test_body_of_an_if_is_its_own_block_not_a_clause() -> None:
    module = parse('if **a**:\n  session "x"\nelse:\n  session "y"\n')
    statement = module.children[0]
    assert isinstance(statement, t.IfStatement)
    body = statement.body
    assert body is not None and body.get_code().strip() == 'session "x"'
    else_clause = statement.else_clause
    assert else_clause is not None and else_clause.body is not None
    assert else_clause.body.get_code().strip() == 'session "y"'


def test_property_block_lookup() -> None:
    module = parse('agent a:\n  model: sonnet\n  prompt: "p"\n')
    agent = module.children[0]
    assert isinstance(agent, t.AgentDefinition)
    prompt = agent.get_property("prompt")
    assert prompt is not None and prompt.name == "prompt"
    assert agent.get_property("skills") is None


def test_string_parts_and_their_positions() -> None:
    module = parse('session "a {b.c} \\n {} d"\n')
    string = next(leaf for leaf in t.iter_leaves(module) if isinstance(leaf, t.String))
    parts = [(p.kind, p.raw, p.start, p.end) for p in string.parts()]
    assert parts == [
        ("text", "a ", (1, 9), (1, 11)),
        ("interpolation", "{b.c}", (1, 11), (1, 16)),
        ("text", " ", (1, 16), (1, 17)),
        ("escape", "\\n", (1, 17), (1, 19)),
        ("text", " ", (1, 19), (1, 20)),
        ("text", "{", (1, 20), (1, 21)),
        ("text", "} d", (1, 21), (1, 24)),
    ]
    assert string.parts()[1].path == ["b", "c"]


def test_offsets_clamp_and_cross_lines() -> None:
    module = parse('session """\nab\ncd"""\n')
    string = next(leaf for leaf in t.iter_leaves(module) if isinstance(leaf, t.String))
    assert t.offset_position(string, -5) == (1, 8)
    assert t.offset_position(string, 4) == (2, 0)
    assert t.offset_position(string, 7) == (3, 0)
    assert t.offset_position(string, 999) == (3, 5)
    one_line = parse('session "ab"\n').children[0].children[1]
    assert t.offset_position(one_line, 999) == (1, 12)
