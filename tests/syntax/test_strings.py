"""String literals: parts (text, escapes, interpolations), their ranges, and decoding."""

from __future__ import annotations

from typing import Any

import pytest

from openprose.syntax import Session, String, parse, syntax_diagnostics
from tests.support.nodes import prompt


def prompt_of(text: str) -> String:
    """The prompt string of the first statement, a session."""
    module = parse(text)
    assert module.get_code() == text
    session = module.statements()[0]
    assert isinstance(session, Session)
    assert session.prompt is not None
    return session.prompt


def clean_prompt(text: str) -> String:
    module = parse(text)
    assert syntax_diagnostics(module) == []
    return prompt_of(text)


def summary(leaf: String) -> list[tuple[str, str, Any, Any]]:
    return [(p.kind, p.raw, p.start, p.end) for p in leaf.parts()]


def interpolations(leaf: String) -> list[str]:
    return [p.raw for p in leaf.parts() if p.kind == "interpolation"]


def assert_parts_cover_body(leaf: String) -> None:
    """Parts are contiguous and together make up exactly the body."""
    parts = leaf.parts()
    offset = leaf.quote_length
    for part in parts:
        assert part.start_offset == offset
        assert leaf.value[part.start_offset : part.end_offset] == part.raw
        offset = part.end_offset
    assert "".join(p.raw for p in parts) == leaf.body


# --------------------------------------------------------------------------- parts


def test_plain_string_is_one_text_part() -> None:
    leaf = clean_prompt('session "Hello world"\n')
    assert summary(leaf) == [("text", "Hello world", (1, 9), (1, 20))]
    assert leaf.text == "Hello world"
    assert leaf.body == "Hello world"
    assert leaf.is_terminated
    assert not leaf.is_triple
    assert leaf.quote_length == 1


def test_empty_string_has_no_parts() -> None:
    leaf = prompt_of('session ""\n')
    assert leaf.parts() == []
    assert leaf.text == ""
    assert leaf.is_terminated


def test_interpolation_parts() -> None:
    leaf = clean_prompt('session "Hi {name}, bye"\n')
    assert summary(leaf) == [
        ("text", "Hi ", (1, 9), (1, 12)),
        ("interpolation", "{name}", (1, 12), (1, 18)),
        ("text", ", bye", (1, 18), (1, 23)),
    ]
    part = leaf.parts()[1]
    assert part.name == "name"
    assert part.path == ["name"]
    assert part.start_offset == 4 and part.end_offset == 10


def test_interpolation_with_property_path() -> None:
    leaf = clean_prompt('session "{result.findings.top}"\n')
    (part,) = leaf.parts()
    assert part.kind == "interpolation"
    assert part.name == "result"
    assert part.path == ["result", "findings", "top"]
    assert (part.start, part.end) == ((1, 9), (1, 30))


def test_interpolation_of_hyphenated_and_underscored_names() -> None:
    leaf = clean_prompt('session "{code-review} {_private} {x1}"\n')
    assert interpolations(leaf) == ["{code-review}", "{_private}", "{x1}"]
    assert [p.name for p in leaf.parts() if p.kind == "interpolation"] == [
        "code-review",
        "_private",
        "x1",
    ]


def test_non_ascii_interpolation_columns_in_code_points() -> None:
    leaf = clean_prompt('session "é {thème} 😀 {x}"\n')
    assert [(p.raw, p.start, p.end) for p in leaf.parts() if p.kind == "interpolation"] == [
        ("{thème}", (1, 11), (1, 18)),
        ("{x}", (1, 21), (1, 24)),
    ]


def test_parts_on_several_lines_of_a_triple_string() -> None:
    text = 'session """\n  Dear {who},\n  about {topic.title}\n  bye"""\n'
    leaf = clean_prompt(text)
    assert summary(leaf) == [
        ("text", "\n  Dear ", (1, 11), (2, 7)),
        ("interpolation", "{who}", (2, 7), (2, 12)),
        ("text", ",\n  about ", (2, 12), (3, 8)),
        ("interpolation", "{topic.title}", (3, 8), (3, 21)),
        ("text", "\n  bye", (3, 21), (4, 5)),
    ]
    assert leaf.parts()[3].path == ["topic", "title"]
    assert leaf.is_triple and leaf.quote_length == 3


def test_triple_string_parts_after_an_earlier_multiline_string() -> None:
    text = 'session """\none\ntwo"""\nsession """\n  x {a}\n"""\n'
    module = parse(text)
    assert syntax_diagnostics(module) == []
    second = prompt(module.statements()[1])
    (part,) = [p for p in second.parts() if p.kind == "interpolation"]
    assert (part.start, part.end) == ((5, 4), (5, 7))


def test_escape_parts() -> None:
    leaf = clean_prompt('session "a\\nb\\t\\"c\\\\"\n')
    assert [(p.kind, p.raw) for p in leaf.parts()] == [
        ("text", "a"),
        ("escape", "\\n"),
        ("text", "b"),
        ("escape", "\\t"),
        ("escape", '\\"'),
        ("text", "c"),
        ("escape", "\\\\"),
    ]
    assert all(p.is_valid_escape for p in leaf.parts() if p.kind == "escape")
    escape = leaf.parts()[1]
    assert (escape.start, escape.end) == ((1, 10), (1, 12))
    assert escape.name is None and escape.path == []
    assert leaf.text == 'a\nb\t"c\\'


def test_unknown_escape_part_is_invalid() -> None:
    leaf = prompt_of('session "a\\qb"\n')
    escape = leaf.parts()[1]
    assert escape.kind == "escape"
    assert escape.raw == "\\q"
    assert not escape.is_valid_escape
    assert (escape.start, escape.end) == ((1, 10), (1, 12))
    # Unknown escapes are kept as written when decoding.
    assert leaf.text == "a\\qb"


# --------------------------------------------------------------------------- braces


def test_escaped_braces_are_literal() -> None:
    leaf = clean_prompt('session "\\{name\\}"\n')
    assert interpolations(leaf) == []
    assert [(p.kind, p.raw) for p in leaf.parts()] == [
        ("escape", "\\{"),
        ("text", "name"),
        ("escape", "\\}"),
    ]
    assert leaf.text == "{name}"


def test_escaped_open_brace_then_interpolation() -> None:
    leaf = clean_prompt('session "\\{{x}"\n')
    assert [(p.kind, p.raw) for p in leaf.parts()] == [
        ("escape", "\\{"),
        ("interpolation", "{x}"),
    ]
    assert leaf.text == "{{x}"


def test_empty_braces_are_text() -> None:
    leaf = clean_prompt('session "Use {} here"\n')
    assert interpolations(leaf) == []
    assert {p.kind for p in leaf.parts()} == {"text"}
    assert_parts_cover_body(leaf)
    assert leaf.text == "Use {} here"


@pytest.mark.parametrize("inner", ["{a b}", "{1x}", "{a.}", "{.a}", "{a..b}", "{ a }", "{a"])
def test_brace_text_that_is_not_an_identifier_is_text(inner: str) -> None:
    leaf = clean_prompt(f'session "x {inner} y"\n')
    assert interpolations(leaf) == []
    assert_parts_cover_body(leaf)
    assert leaf.text == f"x {inner} y"


def test_json_in_a_triple_string_is_text() -> None:
    text = 'session """\nReturn {"score": 3, "tags": ["a"]} and {}\n"""\n'
    leaf = clean_prompt(text)
    assert interpolations(leaf) == []
    assert_parts_cover_body(leaf)
    assert leaf.text == '\nReturn {"score": 3, "tags": ["a"]} and {}\n'


def test_json_next_to_an_interpolation() -> None:
    leaf = clean_prompt('session """{"topic": "{topic}"}"""\n')
    assert interpolations(leaf) == ["{topic}"]
    assert_parts_cover_body(leaf)


def test_parts_cover_the_body() -> None:
    leaf = clean_prompt('session "a {b} \\n {c.d} {} \\{ e"\n')
    assert_parts_cover_body(leaf)


# --------------------------------------------------------------------------- decoding


def test_text_decodes_escapes_and_keeps_interpolations() -> None:
    leaf = clean_prompt('session "Line\\nTab\\t{who} \\"q\\""\n')
    assert leaf.text == 'Line\nTab\t{who} "q"'


def test_text_of_triple_string_keeps_newlines_and_inner_quotes() -> None:
    leaf = clean_prompt('session """\n  Say "hi"\n"""\n')
    assert leaf.text == '\n  Say "hi"\n'
    assert leaf.body == '\n  Say "hi"\n'


def test_text_of_unterminated_string() -> None:
    leaf = prompt_of('session "open end\n')
    assert not leaf.is_terminated
    assert leaf.body == "open end"
    assert leaf.text == "open end"


def test_backslash_newline_in_triple_string_is_not_e002() -> None:
    text = 'session """\n  first line \\\n  second line\n"""\nsession "next"\n'
    module = parse(text)
    assert module.get_code() == text
    assert syntax_diagnostics(module) == []
    leaf = prompt(module.statements()[0])
    assert leaf.text == "\n  first line \\\n  second line\n"
    assert prompt(module.statements()[1]).text == "next"


def test_backslash_crlf_in_triple_string_is_not_e002() -> None:
    text = 'session """\r\n  first \\\r\n  second\r\n"""\r\n'
    module = parse(text)
    assert module.get_code() == text
    assert syntax_diagnostics(module) == []


def test_escaped_quote_in_single_string() -> None:
    module = parse('session "say \\"hi\\""\nsession "next"\n')
    assert syntax_diagnostics(module) == []
    first, second = module.statements()
    assert prompt(first).text == 'say "hi"'
    assert prompt(second).text == "next"


def test_escaped_backslash_before_closing_quote() -> None:
    leaf = clean_prompt('session "path\\\\"\n')
    assert leaf.is_terminated
    assert leaf.text == "path\\"


# --------------------------------------------------------------------------- quote runs


def test_four_quotes_close_with_the_last_three() -> None:
    text = 'session """Ask: "Proceed?""""\nsession "next"\n'
    module = parse(text)
    assert syntax_diagnostics(module) == []
    first, second = module.statements()
    leaf = prompt(first)
    assert leaf.value == '"""Ask: "Proceed?""""'
    assert leaf.is_terminated
    assert leaf.text == 'Ask: "Proceed?"'
    assert leaf.end_pos == (1, 29)
    assert prompt(second).text == "next"


def test_five_quotes_close_with_the_last_three() -> None:
    leaf = clean_prompt('session """She said "hi"""""\n')
    assert leaf.text == 'She said "hi""'
    assert leaf.is_terminated


def test_quote_runs_inside_triple_string() -> None:
    leaf = clean_prompt('session """a "b" ""c"" d"""\n')
    assert leaf.text == 'a "b" ""c"" d'


def test_escaped_triple_quote_inside_triple_string() -> None:
    text = 'session """Write \\""" here"""\nsession "next"\n'
    module = parse(text)
    assert syntax_diagnostics(module) == []
    first, second = module.statements()
    assert prompt(first).text == 'Write """ here'
    assert prompt(second).text == "next"


def test_empty_triple_string() -> None:
    leaf = prompt_of('session """"""\n')
    assert leaf.is_triple
    assert leaf.is_terminated
    assert leaf.text == ""
    assert leaf.parts() == []


def test_two_quotes_is_an_empty_single_string() -> None:
    module = parse('session ""\nsession "next"\n')
    first, second = module.statements()
    assert prompt(first).value == '""'
    assert not prompt(first).is_triple
    assert prompt(second).text == "next"
