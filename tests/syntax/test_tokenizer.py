"""The tokenizer: tokens, positions, line endings, prefixes and bracket joining."""

from __future__ import annotations

from typing import Any

import pytest
from parso.utils import split_lines

from openprose.syntax import (
    Discretion,
    EndMarker,
    ErrorToken,
    LetBinding,
    Name,
    Newline,
    Number,
    Operator,
    Session,
    String,
    iter_leaves,
    parse,
    syntax_diagnostics,
)
from openprose.syntax import tree as t
from openprose.syntax.tokenizer import LogicalLine, Tokenizer


def logical_lines(text: str) -> list[LogicalLine]:
    """Every logical line of ``text``, the final ``eof`` line included."""
    tokenizer = Tokenizer(text)
    lines = [tokenizer.next_line()]
    while not lines[-1].eof:
        lines.append(tokenizer.next_line())
        assert len(lines) <= len(text) + 2, "the tokenizer does not advance"
    return lines


def tokens(text: str) -> list[tuple[str, str]]:
    """(class name, value) of every token of the first logical line."""
    return [(type(tok).__name__, tok.value) for tok in logical_lines(text)[0].tokens]


def values(line: LogicalLine) -> list[str]:
    return [tok.value for tok in line.tokens]


def offset_of(text: str, position: tuple[int, int]) -> int:
    """The character offset of a parso position, using parso's own line splitting."""
    line, column = position
    lines = split_lines(text, keepends=True)
    return sum(len(x) for x in lines[: line - 1]) + column


def assert_positions_match_text(text: str) -> None:
    """Every leaf's value (and prefix) sits at its position in ``text``, as parso counts."""
    module = parse(text)
    assert module.get_code() == text
    for leaf in iter_leaves(module):
        start = offset_of(text, leaf.start_pos)
        assert text[start : start + len(leaf.value)] == leaf.value, leaf
        assert offset_of(text, leaf.end_pos) == start + len(leaf.value), leaf
        prefix_start = start - len(leaf.prefix)
        assert text[prefix_start:start] == leaf.prefix, leaf


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["review-pipeline", "on-fail", "x-1", "a_b", "_x", "été", "A2"])
def test_names(name: str) -> None:
    assert tokens(f"{name}\n") == [("Name", name)]


def test_arrow_between_names_is_three_tokens() -> None:
    assert tokens("a->b\n") == [("Name", "a"), ("Operator", "->"), ("Name", "b")]


def test_hyphenated_name_then_arrow() -> None:
    assert tokens("review-step->next-step\n") == [
        ("Name", "review-step"),
        ("Operator", "->"),
        ("Name", "next-step"),
    ]


def test_spaced_minus_is_an_operator() -> None:
    assert tokens("a - b\n") == [("Name", "a"), ("Operator", "-"), ("Name", "b")]


def test_trailing_hyphen_is_not_part_of_a_name() -> None:
    assert tokens("a- b\n") == [("Name", "a"), ("Operator", "-"), ("Name", "b")]


def test_hyphenated_keyword_argument() -> None:
    assert tokens('(on-fail: "continue")\n') == [
        ("Operator", "("),
        ("Name", "on-fail"),
        ("Operator", ":"),
        ("String", '"continue"'),
        ("Operator", ")"),
    ]


def test_arrow_in_a_parsed_sequence() -> None:
    module = parse('session "A"->session "B"\n')
    assert syntax_diagnostics(module) == []
    arrow = [leaf for leaf in iter_leaves(module) if leaf.value == "->"]
    assert len(arrow) == 1 and arrow[0].start_pos == (1, 11)


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize("number", ["0", "3", "42", "1.5", "-3", "-0.25"])
def test_numbers(number: str) -> None:
    assert tokens(f"{number}\n") == [("Number", number)]


def test_number_value() -> None:
    (tok,) = logical_lines("42\n")[0].tokens
    assert isinstance(tok, Number)
    assert tok.as_int() == 42
    (tok,) = logical_lines("1.5\n")[0].tokens
    assert tok.as_int() is None


def test_number_then_colon() -> None:
    assert tokens("repeat 3:\n") == [("Name", "repeat"), ("Number", "3"), ("Operator", ":")]


def test_operators() -> None:
    text = "-> == != <= >= : = , ( ) [ ] { } | . < > + - * /\n"
    assert [kind for kind, _ in tokens(text)] == ["Operator"] * 22
    assert [v for _, v in tokens(text)] == text.split()


def test_strings_and_discretions() -> None:
    assert tokens('"a" """b""" **c** ***d***\n') == [
        ("String", '"a"'),
        ("String", '"""b"""'),
        ("Discretion", "**c**"),
        ("Discretion", "***d***"),
    ]


def test_error_token() -> None:
    line = logical_lines("a $ b\n")[0]
    assert [type(t) for t in line.tokens] == [Name, ErrorToken, Name]
    assert line.tokens[1].start_pos == (1, 2)


# --------------------------------------------------------------------------- line endings


def test_lf_positions() -> None:
    lines = logical_lines("a\nb\n")
    assert [values(x) for x in lines] == [["a"], ["b"], []]
    assert lines[1].tokens[0].start_pos == (2, 0)
    assert lines[0].newline is not None and lines[0].newline.value == "\n"


def test_crlf_line_endings() -> None:
    text = 'session "a"\r\nsession "b"\r\n'
    lines = logical_lines(text)
    assert lines[0].newline is not None and lines[0].newline.value == "\r\n"
    assert lines[0].newline.start_pos == (1, 11)
    assert lines[1].tokens[0].start_pos == (2, 0)
    assert lines[2].eof and lines[2].endmarker is not None
    assert lines[2].endmarker.start_pos == (3, 0)
    module = parse(text)
    assert syntax_diagnostics(module) == []
    assert [type(s) for s in module.statements()] == [Session, Session]
    assert_positions_match_text(text)


def test_lone_cr_line_endings() -> None:
    text = 'session "a"\rsession "b"\r'
    lines = logical_lines(text)
    assert lines[0].newline is not None and lines[0].newline.value == "\r"
    assert lines[1].tokens[0].start_pos == (2, 0)
    assert lines[2].endmarker is not None and lines[2].endmarker.start_pos == (3, 0)
    module = parse(text)
    assert syntax_diagnostics(module) == []
    assert len(module.statements()) == 2
    assert_positions_match_text(text)


def test_mixed_line_endings() -> None:
    text = 'agent a:\r\n  model: opus\r  prompt: "p"\nsession: a\r\n'
    module = parse(text)
    assert syntax_diagnostics(module) == []
    agent, session = module.statements()
    assert isinstance(agent, t.AgentDefinition)
    prompt = agent.get_property("prompt")
    assert prompt is not None and prompt.name_leaf.start_pos == (3, 2)
    assert session.start_pos == (4, 0)
    assert_positions_match_text(text)


def test_line_endings_inside_triple_string() -> None:
    text = 'session """a\rb\r\nc"""\rsession "x"\n'
    module = parse(text)
    assert syntax_diagnostics(module) == []
    first, second = module.statements()
    assert isinstance(first, t.Session) and first.prompt is not None
    assert first.prompt.end_pos == (3, 4)
    assert second.start_pos == (4, 0)
    assert_positions_match_text(text)


def test_crlf_in_blank_and_comment_lines() -> None:
    text = 'session "a"\r\n\r\n# note\r\n\rsession "b"\r\n'
    module = parse(text)
    assert syntax_diagnostics(module) == []
    second = module.statements()[1]
    assert second.start_pos == (5, 0)
    assert second.get_first_leaf().prefix == "\r\n# note\r\n\r"
    assert_positions_match_text(text)


@pytest.mark.parametrize("char", ["\x0c", "\x85", "\u2028", "\u2029", "\x0b"])
def test_only_cr_and_lf_break_lines(char: str) -> None:
    # parso's split_lines only breaks at \n, \r\n and \r; so must we.
    text = f'session "a{char}b"\nsession "c"\n'
    module = parse(text)
    assert module.statements()[1].start_pos == (2, 0)
    assert_positions_match_text(text)


# --------------------------------------------------------------------------- BOM


def test_bom_stays_in_first_prefix() -> None:
    text = '\ufeffsession "a"\n'
    lines = logical_lines(text)
    assert lines[0].indent == ""
    first = lines[0].tokens[0]
    assert first.prefix == "\ufeff"
    assert first.start_pos == (1, 0)
    module = parse(text)
    assert module.get_code() == text
    assert syntax_diagnostics(module) == []


def test_bom_is_not_indentation() -> None:
    text = '\ufeffsession "a"\nsession "b"\n'
    module = parse(text)
    assert syntax_diagnostics(module) == []
    assert len(module.statements()) == 2


def test_bom_before_indented_line() -> None:
    lines = logical_lines('\ufeff  session "a"\n')
    assert lines[0].indent == "  "
    assert lines[0].tokens[0].prefix == "\ufeff  "
    assert lines[0].tokens[0].start_pos == (1, 2)


def test_bom_before_comment_and_blank_lines() -> None:
    text = '\ufeff# title\n\nsession "a"\n'
    module = parse(text)
    assert syntax_diagnostics(module) == []
    (session,) = module.statements()
    assert session.get_first_leaf().prefix == "\ufeff# title\n\n"
    assert session.start_pos == (3, 0)


def test_bom_only_file() -> None:
    module = parse("\ufeff")
    assert module.get_code() == "\ufeff"
    assert module.statements() == []
    assert module.end_marker.prefix == "\ufeff"


def test_bom_elsewhere_is_an_error_character() -> None:
    module = parse('session "a"\n\ufeffsession "b"\n')
    assert [d.code for d in syntax_diagnostics(module)] == ["E042"]


# --------------------------------------------------------------------------- non-ASCII


def test_non_ascii_columns_are_code_points() -> None:
    text = 'let é = "à 😀 b" -> x\n'
    line = logical_lines(text)[0]
    assert [(t.value, t.start_pos) for t in line.tokens] == [
        ("let", (1, 0)),
        ("é", (1, 4)),
        ("=", (1, 6)),
        ('"à 😀 b"', (1, 8)),
        ("->", (1, 16)),
        ("x", (1, 19)),
    ]
    assert line.tokens[3].end_pos == (1, 15)


def test_astral_characters_in_triple_string() -> None:
    text = 'session """\n😀😀 {x}\n"""\nsession "b"\n'
    module = parse(text)
    assert syntax_diagnostics(module) == []
    session = module.statements()[0]
    assert isinstance(session, t.Session) and session.prompt is not None
    (part,) = [p for p in session.prompt.parts() if p.kind == "interpolation"]
    assert part.start == (2, 3)
    assert_positions_match_text(text)


def test_astral_character_in_comment_before_statement() -> None:
    text = '# 🚀 launch\nsession "a"  # ✅\n'
    module = parse(text)
    assert syntax_diagnostics(module) == []
    assert module.statements()[0].start_pos == (2, 0)
    assert_positions_match_text(text)


def test_error_range_after_astral_character() -> None:
    module = parse('session "😀" $\n')
    (d,) = syntax_diagnostics(module)
    assert (d.code, d.start, d.end) == ("E042", (1, 12), (1, 13))


# --------------------------------------------------------------------------- prefixes


def test_blank_and_comment_lines_go_to_next_leaf_prefix() -> None:
    text = 'session "a"\n\n  # indented comment\n# another\n\nsession "b"\n'
    lines = logical_lines(text)
    assert [values(x) for x in lines] == [["session", '"a"'], ["session", '"b"'], []]
    second = lines[1]
    assert second.tokens[0].prefix == "\n  # indented comment\n# another\n\n"
    assert second.tokens[0].start_pos == (6, 0)
    assert second.prefix_line == 2
    assert second.indent == ""


def test_comment_lines_do_not_open_blocks() -> None:
    text = 'do:\n      # deep comment\n  session "a"\n# shallow\n  session "b"\n'
    module = parse(text)
    assert syntax_diagnostics(module) == []
    (do,) = module.statements()
    assert isinstance(do, t.DoBlock) and len(do.body_statements()) == 2


def test_trailing_comment_goes_to_newline_prefix() -> None:
    line = logical_lines('session "a"   # why\n')[0]
    assert isinstance(line.newline, Newline)
    assert line.newline.prefix == "   # why"
    assert line.newline.start_pos == (1, 19)


def test_trailing_whitespace_goes_to_newline_prefix() -> None:
    line = logical_lines('session "a"  \n')[0]
    assert line.newline is not None and line.newline.prefix == "  "


def test_trailing_comment_at_eof_goes_to_end_marker() -> None:
    text = 'session "a"\n\n# the end\n   '
    lines = logical_lines(text)
    marker = lines[-1].endmarker
    assert isinstance(marker, EndMarker)
    assert marker.prefix == "\n# the end\n   "
    assert marker.start_pos == (4, 3)
    module = parse(text)
    assert module.end_marker.prefix == "\n# the end\n   "
    assert module.get_code() == text


def test_comment_at_eof_without_newline() -> None:
    text = 'session "a"  # end'
    lines = logical_lines(text)
    assert lines[0].newline is None
    assert values(lines[0]) == ["session", '"a"']
    assert lines[1].endmarker is not None
    assert lines[1].endmarker.prefix == "  # end"
    assert lines[1].endmarker.start_pos == (1, 18)
    module = parse(text)
    assert syntax_diagnostics(module) == []
    assert module.get_code() == text


@pytest.mark.parametrize(
    "text", ['session "a"', 'session "a"  ', 'session "a"  # end', "x = [a,\n  b", "é😀"]
)
def test_end_marker_position_without_final_newline(text: str) -> None:
    # The end marker sits at the very end of the text, as in parso.
    module = parse(text)
    last_line = split_lines(text)[-1]
    end = (text.count("\n") + 1, len(last_line))
    assert module.end_marker.end_pos == end
    assert module.end_pos == end
    assert_positions_match_text(text)


def test_whitespace_only_file() -> None:
    lines = logical_lines("   \n\n  ")
    assert len(lines) == 1
    assert lines[0].eof
    assert lines[0].endmarker is not None
    assert lines[0].endmarker.prefix == "   \n\n  "
    assert lines[0].endmarker.start_pos == (3, 2)


def test_last_line_without_newline() -> None:
    lines = logical_lines('session "a"')
    assert lines[0].newline is None
    assert lines[1].eof
    assert lines[1].endmarker is not None and lines[1].endmarker.start_pos == (1, 11)


# --------------------------------------------------------------------------- indentation


def test_indent_strings() -> None:
    lines = logical_lines("a:\n  b\n\tc\n \t d\n")
    assert [x.indent for x in lines[:-1]] == ["", "  ", "\t", " \t "]


def test_prefix_line_and_offset() -> None:
    text = "a\n\n# c\n  b\n"
    lines = logical_lines(text)
    assert lines[1].prefix_line == 2
    assert lines[1].offset == 2
    assert text[lines[1].offset :].startswith("\n# c\n  b")


# --------------------------------------------------------------------------- brackets


def test_brackets_spanning_lines_join_lines() -> None:
    text = 'let xs = [\n  "a",\n  "b"\n]\nsession "next"\n'
    lines = logical_lines(text)
    assert values(lines[0]) == ["let", "xs", "=", "[", '"a"', ",", '"b"', "]"]
    assert lines[0].newline is not None and lines[0].newline.start_pos == (4, 1)
    assert lines[0].tokens[4].start_pos == (2, 2)
    assert lines[0].tokens[4].prefix == "\n  "
    assert lines[0].tokens[7].prefix == "\n"
    assert values(lines[1]) == ["session", '"next"']
    module = parse(text)
    assert syntax_diagnostics(module) == []
    assert [type(s) for s in module.statements()] == [LetBinding, Session]


def test_blank_and_comment_lines_inside_brackets() -> None:
    text = "let xs = [a,\n\n  # second\n  b]\n"
    lines = logical_lines(text)
    assert values(lines[0]) == ["let", "xs", "=", "[", "a", ",", "b", "]"]
    assert lines[0].tokens[6].prefix == "\n\n  # second\n  "
    assert lines[0].tokens[6].start_pos == (4, 2)


def test_multiline_call_arguments() -> None:
    text = 'let r = research(\n  topic: "x",\n  depth: 2,\n)\n'
    module = parse(text)
    assert syntax_diagnostics(module) == []
    (let,) = module.statements()
    assert isinstance(let, t.LetBinding) and isinstance(let.value, t.ProgramCall)
    assert let.value.arguments is not None
    assert [k.name.value for k in let.value.arguments.keyword_arguments()] == ["topic", "depth"]


def test_closing_bracket_at_column_zero_continues() -> None:
    lines = logical_lines("x = [a,\n  b,\n]\ny\n")
    assert values(lines[0]) == ["x", "=", "[", "a", ",", "b", ",", "]"]
    assert values(lines[1]) == ["y"]


def test_unclosed_bracket_stops_at_line_at_opening_indentation() -> None:
    lines = logical_lines("  x = [a,\n    b\n  y\n")
    assert values(lines[0]) == ["x", "=", "[", "a", ",", "b"]
    assert values(lines[1]) == ["y"]
    assert lines[1].indent == "  "


def test_unclosed_bracket_stops_at_line_left_of_opening_indentation() -> None:
    lines = logical_lines("  x = [a,\ny\n")
    assert values(lines[0]) == ["x", "=", "[", "a", ","]
    assert values(lines[1]) == ["y"]
    assert lines[1].indent == ""


def test_unclosed_bracket_stops_after_blank_and_comment_lines() -> None:
    lines = logical_lines("x = [a,\n\n# note\ny\n")
    assert values(lines[0]) == ["x", "=", "[", "a", ","]
    assert values(lines[1]) == ["y"]
    assert lines[1].tokens[0].start_pos == (4, 0)


def test_unclosed_bracket_does_not_continue_a_block_header() -> None:
    lines = logical_lines("parallel (a:\n  b\n")
    assert values(lines[0]) == ["parallel", "(", "a", ":"]
    assert values(lines[1]) == ["b"]


def test_unclosed_bracket_at_end_of_file() -> None:
    lines = logical_lines("x = [a,\n  b")
    assert values(lines[0]) == ["x", "=", "[", "a", ",", "b"]
    assert lines[0].newline is None
    assert lines[1].eof


def test_nested_brackets_spanning_lines() -> None:
    text = "x = [(a,\n  b), {c,\n  d}]\ny\n"
    lines = logical_lines(text)
    assert values(lines[0])[-1] == "]"
    assert values(lines[1]) == ["y"]


def test_stray_closing_bracket_does_not_go_negative() -> None:
    lines = logical_lines("x ] [\n  y\nz\n")
    assert values(lines[0]) == ["x", "]", "[", "y"]
    assert values(lines[1]) == ["z"]


# --------------------------------------------------------------------------- multi-line tokens


def test_triple_string_spans_lines_in_one_logical_line() -> None:
    text = 'session """\n  one\n  two\n"""\nsession "b"\n'
    lines = logical_lines(text)
    assert values(lines[0]) == ["session", '"""\n  one\n  two\n"""']
    assert lines[0].newline is not None and lines[0].newline.start_pos == (4, 3)
    assert lines[1].tokens[0].start_pos == (5, 0)


def test_multiline_discretion_spans_lines() -> None:
    text = "if ***\n  a\n  b\n***:\n  x\n"
    lines = logical_lines(text)
    assert [type(t) for t in lines[0].tokens] == [Name, Discretion, Operator]
    assert lines[0].tokens[2].start_pos == (4, 3)
    assert lines[1].indent == "  "
    assert lines[1].tokens[0].start_pos == (5, 2)


def test_unterminated_single_string_stops_at_end_of_line() -> None:
    lines = logical_lines('"abc\nx\n')
    assert [type(t) for t in lines[0].tokens] == [String]
    assert lines[0].tokens[0].value == '"abc'
    assert values(lines[1]) == ["x"]


def test_unterminated_double_star_stops_at_end_of_line() -> None:
    lines = logical_lines("if **abc\nx\n")
    assert lines[0].tokens[1].value == "**abc"
    assert values(lines[1]) == ["x"]


# --------------------------------------------------------------------------- tokens to text


SAMPLES = [
    "agent a:\n  model: opus\n\nsession: a\n  context: [x, y.z]\n",
    'let r = items\n  | map:\n      session "{item}"\n',
    'if **a** and not b:\n  x = session "y" -> session "z"\n',
    "\ufeff# c\r\nloop while ***\r\n  more\r\n*** (max: 3):\r\n  throw\r\n",
    'session """\n  é😀 {a.b} \\{\n"""  # done\n',
    "x = [1,\n  -2.5, {a}]  \n   # end",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_tokens_and_prefixes_rebuild_the_text(text: str) -> None:
    rebuilt = []
    for line in logical_lines(text):
        for tok in line.tokens:
            rebuilt.append(tok.prefix + tok.value)
        if line.newline is not None:
            rebuilt.append(line.newline.prefix + line.newline.value)
        if line.endmarker is not None:
            rebuilt.append(line.endmarker.prefix)
    assert "".join(rebuilt) == text


@pytest.mark.parametrize("text", SAMPLES)
def test_positions_follow_parso_line_splitting(text: str) -> None:
    assert_positions_match_text(text)


def test_every_leaf_kind_appears() -> None:
    module = parse(SAMPLES[0] + SAMPLES[2])
    found: set[Any] = {type(leaf) for leaf in iter_leaves(module)}
    assert {Name, Operator, Newline, EndMarker, Discretion, String} <= found
