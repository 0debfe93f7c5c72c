"""Syntax errors: each code with its exact range, and recovery at the next statement."""

from __future__ import annotations

from typing import Any

import pytest

from openprose.checking import check_text
from openprose.diagnostics import Diagnostic
from openprose.syntax import (
    AgentDefinition,
    ArrayLiteral,
    CatchClause,
    ChoiceStatement,
    Discretion,
    DoBlock,
    ElifClause,
    ElseClause,
    ErrorBlock,
    ErrorStatement,
    FinallyClause,
    ForEach,
    IfStatement,
    InputDeclaration,
    LetBinding,
    Loop,
    Module,
    Name,
    OptionClause,
    OutputBinding,
    Pipeline,
    Repeat,
    Session,
    String,
    TryStatement,
    UnsupportedStatement,
    parse,
    syntax_diagnostics,
)
from tests.support.nodes import narrow, prompt


def check(text: str) -> tuple[Module, list[Diagnostic]]:
    """Parse ``text`` (and, to show the parser never raises, every prefix of it)."""
    assert_robust(text)
    module = parse(text)
    assert module.get_code() == text
    return module, syntax_diagnostics(module)


def assert_robust(text: str) -> None:
    """Every prefix of ``text`` parses without raising and round-trips."""
    for end in range(len(text) + 1):
        piece = text[:end]
        module = parse(piece)
        assert module.get_code() == piece, piece
        syntax_diagnostics(module)


def only(diagnostics: list[Diagnostic], code: str) -> Diagnostic:
    """The single diagnostic of a program, checked to have ``code``."""
    assert [d.code for d in diagnostics] == [code], diagnostics
    return diagnostics[0]


def span(diagnostic: Diagnostic) -> tuple[tuple[int, int], tuple[int, int]]:
    return diagnostic.start, diagnostic.end


def kinds(module: Module) -> list[type[Any]]:
    return [type(s) for s in module.statements()]


def assert_next_session(statement: Any, prompt: str, line: int) -> None:
    """``statement`` is a clean ``session "prompt"`` starting on ``line``."""
    assert type(statement) is Session, statement
    assert statement.prompt is not None and statement.prompt.text == prompt
    assert statement.start_pos == (line, 0)
    assert not statement.issues


# --------------------------------------------------------------------------- E001


def test_e001_unterminated_string_ends_at_end_of_line() -> None:
    module, diagnostics = check('session "Hello\nsession "next"\n')
    d = only(diagnostics, "E001")
    assert span(d) == ((1, 8), (1, 14))
    assert "closing" in d.message
    first, second = module.statements()
    assert isinstance(first, Session) and prompt(first).value == '"Hello'
    assert not prompt(first).is_terminated
    assert_next_session(second, "next", 2)


def test_e001_unterminated_string_at_end_of_file() -> None:
    module, diagnostics = check('session "Hello')
    d = only(diagnostics, "E001")
    assert span(d) == ((1, 8), (1, 14))
    assert kinds(module) == [Session]


def test_e001_unterminated_string_in_a_property() -> None:
    module, diagnostics = check('session "a"\n  prompt: "oops\n  model: opus\nsession "b"\n')
    d = only(diagnostics, "E001")
    assert span(d) == ((2, 10), (2, 15))
    first, second = module.statements()
    assert [p.name for p in narrow(first, Session).properties()] == ["prompt", "model"]
    assert_next_session(second, "b", 4)


def test_e001_unterminated_triple_string_runs_to_end_of_file() -> None:
    text = 'session """Start\nsession "b"\n  more\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E001")
    assert span(d) == ((1, 8), (4, 0))
    assert '"""' in d.message
    (session,) = module.statements()
    assert prompt(session).value == '"""Start\nsession "b"\n  more\n'


def test_e001_escaped_closing_quote_does_not_close() -> None:
    module, diagnostics = check('session "a\\"\nsession "b"\n')
    d = only(diagnostics, "E001")
    assert span(d) == ((1, 8), (1, 12))
    assert_next_session(module.statements()[1], "b", 2)


# --------------------------------------------------------------------------- E002


def test_e002_unknown_escape_covers_two_characters() -> None:
    module, diagnostics = check('session "a\\qb"\nsession "next"\n')
    d = only(diagnostics, "E002")
    assert span(d) == ((1, 10), (1, 12))
    assert "\\q" in d.message
    assert_next_session(module.statements()[1], "next", 2)


def test_e002_each_unknown_escape_is_reported() -> None:
    _, diagnostics = check('session "\\a ok \\n \\z"\n')
    assert [(d.code, span(d)) for d in diagnostics] == [
        ("E002", ((1, 9), (1, 11))),
        ("E002", ((1, 18), (1, 20))),
    ]


def test_e002_in_triple_string_on_a_later_line() -> None:
    _, diagnostics = check('session """\n  first\n  bad \\w here\n"""\n')
    d = only(diagnostics, "E002")
    assert span(d) == ((3, 6), (3, 8))


@pytest.mark.parametrize("escape", ["\\\\", '\\"', "\\n", "\\t", "\\{", "\\}"])
def test_valid_escapes_are_not_e002(escape: str) -> None:
    _, diagnostics = check(f'session "a{escape}b"\n')
    assert diagnostics == []


# --------------------------------------------------------------------------- E003


def test_e003_bare_session() -> None:
    module, diagnostics = check('session\nsession "next"\n')
    d = only(diagnostics, "E003")
    assert span(d) == ((1, 0), (1, 7))
    assert_next_session(module.statements()[1], "next", 2)


def test_e003_session_colon_without_agent() -> None:
    module, diagnostics = check('session:\nsession "next"\n')
    d = only(diagnostics, "E003")
    assert span(d) == ((1, 0), (1, 7))
    assert "agent" in d.message
    assert_next_session(module.statements()[1], "next", 2)


def test_e003_session_with_properties_but_no_prompt() -> None:
    module, diagnostics = check('session\n  model: opus\nsession "next"\n')
    d = only(diagnostics, "E003")
    assert span(d) == ((1, 0), (1, 7))
    assert narrow(module.statements()[0], Session).get_property("model") is not None
    assert_next_session(module.statements()[1], "next", 3)


# --------------------------------------------------------------------------- E004


def test_e004_agent_missing_colon_keeps_block() -> None:
    module, diagnostics = check('agent writer\n  model: opus\n  prompt: "p"\nsession "next"\n')
    d = only(diagnostics, "E004")
    assert span(d) == ((1, 12), (1, 12))
    assert "`:`" in d.message
    agent, after = module.statements()
    assert isinstance(agent, AgentDefinition)
    assert agent.name == "writer"
    assert [p.name for p in agent.properties()] == ["model", "prompt"]
    assert_next_session(after, "next", 4)


def test_e004_if_missing_colon_keeps_body() -> None:
    module, diagnostics = check('if **ready**\n  session "go"\nsession "next"\n')
    d = only(diagnostics, "E004")
    assert span(d) == ((1, 12), (1, 12))
    statement, after = module.statements()
    assert isinstance(statement, IfStatement)
    assert narrow(statement.condition, Discretion).condition == "ready"
    assert [prompt(s).text for s in statement.body_statements()] == ["go"]
    assert_next_session(after, "next", 3)


def test_e004_loop_until_missing_colon_keeps_body() -> None:
    module, diagnostics = check('loop until **done**\n  session "work"\nsession "next"\n')
    d = only(diagnostics, "E004")
    assert span(d) == ((1, 19), (1, 19))
    loop, after = module.statements()
    assert isinstance(loop, Loop)
    assert loop.kind == "until"
    assert [prompt(s).text for s in loop.body_statements()] == ["work"]
    assert_next_session(after, "next", 3)


def test_e004_for_missing_colon_keeps_body() -> None:
    module, diagnostics = check('for x in xs\n  session "work"\nsession "next"\n')
    d = only(diagnostics, "E004")
    assert span(d) == ((1, 11), (1, 11))
    loop, after = module.statements()
    assert isinstance(loop, ForEach)
    assert len(loop.body_statements()) == 1
    assert_next_session(after, "next", 3)


def test_e004_let_missing_equals() -> None:
    module, diagnostics = check('let x session "a"\nsession "next"\n')
    assert diagnostics, "a missing `=` must be reported"
    assert all(d.code == "E004" for d in diagnostics)
    assert span(diagnostics[0]) == ((1, 5), (1, 5))
    assert "=" in diagnostics[0].message
    let, after = module.statements()
    assert isinstance(let, LetBinding)
    assert narrow(let.target, Name).value == "x"
    assert_next_session(after, "next", 2)


def test_e004_let_missing_value() -> None:
    module, diagnostics = check('let x =\nsession "next"\n')
    d = only(diagnostics, "E004")
    assert span(d) == ((1, 7), (1, 7))
    assert "value" in d.message
    let, after = module.statements()
    assert isinstance(let, LetBinding) and let.value is None
    assert_next_session(after, "next", 2)


def test_e004_junk_at_end_of_line() -> None:
    module, diagnostics = check('session "a" more junk here\nsession "next"\n')
    d = only(diagnostics, "E004")
    assert span(d) == ((1, 12), (1, 26))
    first, after = module.statements()
    assert type(first) is Session and prompt(first).text == "a"
    assert_next_session(after, "next", 2)


@pytest.mark.parametrize("rest", ["and more", "or more", "+ more", "== more", "in more"])
def test_e004_operator_junk_after_a_session_statement(rest: str) -> None:
    # Conditions and arithmetic are values, not statements: `a and b` on its own
    # line is E005, so a session followed by `and b` must not become a clean
    # boolean-expression statement.
    module, diagnostics = check(f'session "a" {rest}\nsession "next"\n')
    d = only(diagnostics, "E004")
    assert span(d) == ((1, 12), (1, 12 + len(rest)))
    first, after = module.statements()
    assert type(first) is Session and prompt(first).text == "a"
    assert_next_session(after, "next", 2)


def test_e004_junk_after_header_colon() -> None:
    module, diagnostics = check('do: extra\n  session "a"\nsession "next"\n')
    d = only(diagnostics, "E004")
    assert span(d) == ((1, 4), (1, 9))
    assert len(narrow(module.statements()[0], DoBlock).body_statements()) == 1
    assert_next_session(module.statements()[1], "next", 3)


def test_e004_missing_property_value() -> None:
    module, diagnostics = check('session "a"\n  model:\n  prompt: "p"\nsession "next"\n')
    d = only(diagnostics, "E004")
    assert span(d) == ((2, 8), (2, 8))
    session = narrow(module.statements()[0], Session)
    assert [p.name for p in session.properties()] == ["model", "prompt"]
    assert_next_session(module.statements()[1], "next", 4)


def test_e004_for_without_loop_variable() -> None:
    # `in` is read as the keyword, not as the loop variable: one error, not two.
    module, diagnostics = check('for in xs:\n  session "a"\nsession "next"\n')
    d = only(diagnostics, "E004")
    assert span(d) == ((1, 3), (1, 3))
    assert "loop variable" in d.message
    loop, after = module.statements()
    assert isinstance(loop, ForEach)
    assert loop.item is None
    assert narrow(loop.collection, Name).value == "xs"
    assert_next_session(after, "next", 3)


@pytest.mark.parametrize("junk", ["$", ";"])
def test_junk_where_a_repeat_count_is_missing_is_not_the_count(junk: str) -> None:
    # The parser reports the count missing and the junk once; the junk read as the count
    # also drew "repeat count must be an integer" (E060) on it.
    text = f'repeat {junk}:\n  session "a"\n'
    module, _ = check(text)
    loop = module.statements()[0]
    assert isinstance(loop, Repeat)
    assert loop.count is None
    assert [d.code for d in check_text(text)] == ["E004", "E042"]


# --------------------------------------------------------------------------- E005


def test_e005_line_that_is_not_a_statement() -> None:
    module, diagnostics = check('hello world\nsession "next"\n')
    d = only(diagnostics, "E005")
    assert span(d) == ((1, 0), (1, 11))
    assert "`hello`" in d.message
    error, after = module.statements()
    assert isinstance(error, ErrorStatement)
    assert_next_session(after, "next", 2)


def test_e005_bare_string() -> None:
    module, diagnostics = check('"just text"\nsession "next"\n')
    d = only(diagnostics, "E005")
    assert span(d) == ((1, 0), (1, 11))
    assert "session" in d.message
    assert_next_session(module.statements()[1], "next", 2)


def test_e005_swallows_its_indented_lines_once() -> None:
    text = 'nonsense here:\n  session "a"\n  more nonsense\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E005")
    assert span(d) == ((1, 0), (1, 14))
    error, after = module.statements()
    assert isinstance(error, ErrorStatement)
    assert_next_session(after, "next", 4)


def test_e005_not_a_property() -> None:
    module, diagnostics = check('agent a:\n  model: opus\n  oops\nsession "next"\n')
    d = only(diagnostics, "E005")
    assert span(d) == ((3, 2), (3, 6))
    assert narrow(module.statements()[0], AgentDefinition).get_property("model") is not None
    assert_next_session(module.statements()[1], "next", 4)


# Nesting past the limit (64 levels of blocks, brackets and `not`, counted together): one
# E005 at the first construct past it, and what it encloses read flatly, without cascade.

DEEP = 3000
NESTED_IFS = "".join("  " * k + "if **c**:\n" for k in range(100)) + "  " * 100 + 'session "a"'


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("let x = " + "[" * DEEP + "]" * DEEP, (1, 8 + 64), (1, 8 + 65)),
        ("let x = f" + "(f" * DEEP + ")" * DEEP, (1, 9 + 2 * 64), (1, 10 + 2 * 64)),
        ("let x = " + "{a: " * DEEP + "1" + "}" * DEEP, (1, 8 + 4 * 64), (1, 9 + 4 * 64)),
        ("if " + "not " * DEEP + '**c**:\n  session "a"', (1, 3 + 4 * 64), (1, 6 + 4 * 64)),
        (NESTED_IFS, (66, 2 * 65), (66, 2 * 65 + 2)),
    ],
    ids=["brackets", "parentheses", "braces", "nots", "blocks"],
)
def test_nesting_past_the_limit_is_one_error(
    text: str, start: tuple[int, int], end: tuple[int, int]
) -> None:
    text += '\nsession "next"\n'
    module = parse(text)
    assert module.get_code() == text
    d = only(syntax_diagnostics(module), "E005")
    assert span(d) == (start, end)
    assert d.message.startswith("nested too deeply: more than 64 levels")
    assert_next_session(module.statements()[-1], "next", text.count("\n"))


@pytest.mark.parametrize("opener", ["[", "f(", "{a: ", "not "])
def test_nesting_up_to_the_limit_is_clean(opener: str) -> None:
    closer = {"[": "]", "f(": ")", "{a: ": "}", "not ": ""}[opener]
    text = "let x = " + opener * 64 + "1" + closer * 64 + "\n"
    assert syntax_diagnostics(parse(text)) == []


def test_brackets_after_a_too_deep_one_are_still_checked() -> None:
    text = "let x = [" + "[" * 70 + "]" * 70 + ", 1\n"
    d1, d2 = syntax_diagnostics(parse(text))
    assert (d1.code, d1.start) == ("E030", (1, 8))  # the outer `[` really is unclosed
    assert (d2.code, d2.start) == ("E005", (1, 8 + 64))


# --------------------------------------------------------------------------- E020 / E023


def test_e020_empty_input_name() -> None:
    module, diagnostics = check('input : "d"\nsession "next"\n')
    d = only(diagnostics, "E020")
    assert span(d) == ((1, 5), (1, 5))
    decl, after = module.statements()
    assert isinstance(decl, InputDeclaration)
    assert decl.name is None
    assert narrow(decl.description, String).text == "d"
    assert_next_session(after, "next", 2)


def test_e023_empty_output_name() -> None:
    module, diagnostics = check('output = x\nsession "next"\n')
    d = only(diagnostics, "E023")
    assert span(d) == ((1, 6), (1, 6))
    out, after = module.statements()
    assert isinstance(out, OutputBinding)
    assert out.name is None
    assert narrow(out.value, Name).value == "x"
    assert_next_session(after, "next", 2)


# --------------------------------------------------------------------------- E029


def test_e029_unterminated_condition_ends_at_end_of_line() -> None:
    module, diagnostics = check('if **ready\n  session "go"\nsession "next"\n')
    assert "E029" in [d.code for d in diagnostics]
    d = next(d for d in diagnostics if d.code == "E029")
    assert span(d) == ((1, 3), (1, 10))
    statement, after = module.statements()
    assert isinstance(statement, IfStatement)
    assert_next_session(after, "next", 3)


def test_e029_unterminated_condition_before_header_colon() -> None:
    module, diagnostics = check('loop until **done:\n  session "go"\nsession "next"\n')
    d = only(diagnostics, "E029")
    assert span(d) == ((1, 11), (1, 17))
    loop, after = module.statements()
    assert isinstance(loop, Loop)
    assert len(loop.body_statements()) == 1
    assert_next_session(after, "next", 3)


def test_e029_unterminated_multiline_condition() -> None:
    module, diagnostics = check('if ***never closed\n  session "a"\n')
    d = only(diagnostics, "E029")
    assert span(d) == ((1, 3), (3, 0))
    assert kinds(module) == [IfStatement]


# --------------------------------------------------------------------------- E030


def test_e030_unclosed_bracket_does_not_swallow_following_statements() -> None:
    module, diagnostics = check('let xs = [a, b\n\nsession "next"\n')
    d = only(diagnostics, "E030")
    assert span(d) == ((1, 9), (1, 10))
    let, after = module.statements()
    assert isinstance(let, LetBinding)
    assert not narrow(let.value, ArrayLiteral).is_closed
    assert_next_session(after, "next", 3)


def test_e030_unclosed_bracket_with_continuation_line() -> None:
    module, diagnostics = check('let xs = [a,\n  b\nsession "next"\n')
    d = only(diagnostics, "E030")
    assert span(d) == ((1, 9), (1, 10))
    let, after = module.statements()
    array = narrow(narrow(let, LetBinding).value, ArrayLiteral)
    assert [narrow(e, Name).value for e in array.elements()] == ["a", "b"]
    assert_next_session(after, "next", 3)


def test_e030_unclosed_bracket_in_a_block() -> None:
    text = 'for x in xs:\n  let y = [a,\n    b\n  session "inner"\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E030")
    assert span(d) == ((2, 10), (2, 11))
    loop, after = module.statements()
    let, inner = narrow(loop, ForEach).body_statements()
    assert isinstance(let, LetBinding)
    assert type(inner) is Session and inner.start_pos == (4, 2)
    assert_next_session(after, "next", 5)


def test_e030_unclosed_context_array_keeps_next_property() -> None:
    module, diagnostics = check('session "a"\n  context: [a,\n  model: opus\nsession "next"\n')
    d = only(diagnostics, "E030")
    assert span(d) == ((2, 11), (2, 12))
    session = narrow(module.statements()[0], Session)
    assert [p.name for p in session.properties()] == ["context", "model"]
    assert_next_session(module.statements()[1], "next", 4)


def test_e030_unclosed_call() -> None:
    module, diagnostics = check('let r = research(topic: "x"\nsession "next"\n')
    d = only(diagnostics, "E030")
    assert span(d) == ((1, 16), (1, 17))
    assert_next_session(module.statements()[1], "next", 2)


# --------------------------------------------------------------------------- E031


def test_e031_reported_once_for_an_over_indented_region() -> None:
    text = 'let x = "a"\n    session "b"\n    session "c"\n      session "d"\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E031")
    assert span(d) == ((2, 4), (2, 11))
    let, block, after = module.statements()
    assert isinstance(let, LetBinding)
    assert isinstance(block, ErrorBlock)
    # `session "d"` is not a property of `session "c"`: it is a deeper region nested in
    # this one, and reported with it (once).
    *_, nested = block.statements()
    assert isinstance(nested, ErrorBlock)
    assert_next_session(after, "next", 5)


def test_e031_over_indented_statements_after_a_session() -> None:
    # Deeper lines under a session may be its properties; lines that are statements
    # rather than `name: value` are an over-indented region, reported once.
    text = 'session "a"\n    session "b"\n    session "c"\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E031")
    assert span(d) == ((2, 4), (2, 11))
    assert_next_session(module.statements()[-1], "next", 4)


def test_e031_hides_problems_inside_the_region() -> None:
    text = 'input a: "x"\n  let b =\n  hello world\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E031")
    assert span(d) == ((2, 2), (2, 5))
    assert_next_session(module.statements()[2], "next", 4)


def test_e031_after_a_plain_statement_inside_a_block() -> None:
    text = 'do:\n  throw "a"\n      session "b"\n  session "c"\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E031")
    assert span(d) == ((3, 6), (3, 13))
    do, after = module.statements()
    _, block, third = narrow(do, DoBlock).body_statements()
    assert isinstance(block, ErrorBlock)
    assert type(third) is Session and third.start_pos == (4, 2)
    assert_next_session(after, "next", 5)


# --------------------------------------------------------------------------- E032


def test_e032_reported_once_for_consecutive_lines() -> None:
    text = 'if **c**:\n    session "a"\n  session "b"\n  session "c"\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E032")
    assert span(d) == ((3, 2), (3, 9))
    assert "unindent" in d.message
    statement, after = module.statements()
    assert isinstance(statement, IfStatement)
    assert_next_session(after, "next", 5)


# --------------------------------------------------------------------------- E033


def test_e033_block_header_at_end_of_file() -> None:
    _, diagnostics = check("block x:\n")
    d = only(diagnostics, "E033")
    assert span(d) == ((1, 8), (1, 8))
    assert "block" in d.message


def test_e033_block_header_at_end_of_file_without_newline() -> None:
    _, diagnostics = check("block x:")
    d = only(diagnostics, "E033")
    assert span(d) == ((1, 8), (1, 8))


def test_empty_if_body_is_a_warning_not_a_syntax_error() -> None:
    # The language reference makes an empty if/elif/else/option body a warning (W025,
    # W026, reported by the analyzer), so the parser records no E033 for these clauses.
    text = 'if **ready**:\nsession "next"\n'
    module, diagnostics = check(text)
    assert diagnostics == []
    statement, after = module.statements()
    assert isinstance(statement, IfStatement)
    assert statement.body is None
    assert_next_session(after, "next", 2)
    assert [(d.code, d.start, d.end) for d in check_text(text)] == [("W026", (1, 0), (1, 13))]


@pytest.mark.parametrize(
    "text",
    [
        'if **a**:\n  session "x"\nelif **b**:\nelse:\n  session "y"\n',
        'if **a**:\n  session "x"\nelse:\n',
        'choice **c**:\n  option "a":\n  option "b":\n    session "x"\n',
    ],
)
def test_empty_clause_bodies_are_not_syntax_errors(text: str) -> None:
    _, diagnostics = check(text)
    assert diagnostics == []


@pytest.mark.parametrize(
    "header",
    ["agent a:", "do:", "parallel:", "repeat 2:", "for x in xs:", "loop:", "try:", "choice **c**:"],
)
def test_e033_other_headers(header: str) -> None:
    module, diagnostics = check(f'{header}\nsession "next"\n')
    assert "E033" in [d.code for d in diagnostics]
    d = next(d for d in diagnostics if d.code == "E033")
    assert span(d) == ((1, len(header)), (1, len(header)))
    assert_next_session(module.statements()[1], "next", 2)


# --------------------------------------------------------------------------- E034


def test_e034_tabs_mixed_with_spaces() -> None:
    text = 'if **c**:\n\tsession "a"\n        session "b"\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E034")
    assert span(d) == ((3, 8), (3, 15))
    statement, after = module.statements()
    assert len(narrow(statement, IfStatement).body_statements()) == 2
    assert_next_session(after, "next", 4)


def test_consistent_tabs_are_fine() -> None:
    _, diagnostics = check('if **c**:\n\tsession "a"\n\tsession "b"\n')
    assert diagnostics == []


# --------------------------------------------------------------------------- E035


@pytest.mark.parametrize(
    ("header", "cls", "width"),
    [
        ("else:", ElseClause, 4),
        ("elif **c**:", ElifClause, 4),
        ("catch:", CatchClause, 5),
        ("catch as e:", CatchClause, 5),
        ("finally:", FinallyClause, 7),
        ('option "A":', OptionClause, 6),
    ],
)
def test_e035_orphan_clauses(header: str, cls: type[Any], width: int) -> None:
    module, diagnostics = check(f'{header}\n  session "a"\nsession "next"\n')
    d = only(diagnostics, "E035")
    assert span(d) == ((1, 0), (1, width))
    clause, after = module.statements()
    assert type(clause) is cls
    assert isinstance(clause, ElifClause | ElseClause | CatchClause | FinallyClause | OptionClause)
    assert len(clause.body_statements()) == 1
    assert_next_session(after, "next", 3)


def test_e035_else_after_unrelated_statement() -> None:
    text = 'if **c**:\n  session "a"\nsession "b"\nelse:\n  session "c"\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E035")
    assert span(d) == ((4, 0), (4, 4))
    assert_next_session(module.statements()[3], "next", 6)


def test_e035_option_in_a_plain_block() -> None:
    module, diagnostics = check('do:\n  option "A":\n    session "a"\nsession "next"\n')
    d = only(diagnostics, "E035")
    assert span(d) == ((2, 2), (2, 8))
    assert_next_session(module.statements()[1], "next", 4)


# --------------------------------------------------------------------------- E036


def test_e036_second_else() -> None:
    text = 'if **a**:\n  session "1"\nelse:\n  session "2"\nelse:\n  session "3"\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E036")
    assert span(d) == ((5, 0), (5, 4))
    statement, after = module.statements()
    assert isinstance(statement, IfStatement)
    assert_next_session(after, "next", 7)


def test_e036_elif_after_else() -> None:
    text = (
        'if **a**:\n  session "1"\nelse:\n  session "2"\nelif **b**:\n  session "3"\n'
        'session "next"\n'
    )
    module, diagnostics = check(text)
    d = only(diagnostics, "E036")
    assert span(d) == ((5, 0), (5, 4))
    assert_next_session(module.statements()[1], "next", 7)


def test_e036_second_catch() -> None:
    text = 'try:\n  session "1"\ncatch:\n  session "2"\ncatch:\n  session "3"\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E036")
    assert span(d) == ((5, 0), (5, 5))
    statement, after = module.statements()
    assert isinstance(statement, TryStatement)
    assert len(statement.catch_clauses()) == 2
    assert_next_session(after, "next", 7)


def test_e036_catch_after_finally() -> None:
    text = 'try:\n  session "1"\nfinally:\n  session "2"\ncatch:\n  session "3"\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E036")
    assert span(d) == ((5, 0), (5, 5))
    assert "finally" in d.message
    assert_next_session(module.statements()[1], "next", 7)


def test_e036_second_finally() -> None:
    text = 'try:\n  session "1"\nfinally:\n  session "2"\nfinally:\n  session "3"\n'
    _, diagnostics = check(text)
    d = only(diagnostics, "E036")
    assert span(d) == ((5, 0), (5, 7))


# --------------------------------------------------------------------------- E037 / E038


def test_e037_try_without_catch_or_finally() -> None:
    module, diagnostics = check('try:\n  session "1"\nsession "next"\n')
    d = only(diagnostics, "E037")
    assert span(d) == ((1, 0), (1, 3))
    statement, after = module.statements()
    assert isinstance(statement, TryStatement)
    assert_next_session(after, "next", 3)


def test_e038_choice_without_options() -> None:
    module, diagnostics = check('choice **c**:\n  session "1"\nsession "next"\n')
    assert "E038" in [d.code for d in diagnostics]
    d = next(d for d in diagnostics if d.code == "E038")
    assert span(d) == ((1, 0), (1, 6))
    statement, after = module.statements()
    assert isinstance(statement, ChoiceStatement)
    assert statement.options() == []
    assert_next_session(after, "next", 3)


def test_else_inside_choice_is_reported_once() -> None:
    text = 'choice **c**:\n  option "A":\n    session "a"\n  else:\n    session "b"\nsession "n"\n'
    module, diagnostics = check(text)
    assert len(diagnostics) == 1, diagnostics
    assert diagnostics[0].code in ("E005", "E035")
    assert span(diagnostics[0]) == ((4, 2), (4, 6))
    assert_next_session(module.statements()[1], "n", 6)


def test_statement_beside_options_in_choice() -> None:
    text = 'choice **c**:\n  option "A":\n    session "a"\n  session "stray"\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E005")
    assert span(d) == ((4, 2), (4, 9))
    assert len(narrow(module.statements()[0], ChoiceStatement).options()) == 1
    assert_next_session(module.statements()[1], "next", 5)


# --------------------------------------------------------------------------- E039 / E040


def test_e039_unknown_pipe_operation() -> None:
    module, diagnostics = check('let r = xs | sort:\n  session "1"\nsession "next"\n')
    d = only(diagnostics, "E039")
    assert span(d) == ((1, 13), (1, 17))
    let, after = module.statements()
    (stage,) = narrow(narrow(let, LetBinding).value, Pipeline).stages()
    assert stage.operation is not None
    assert stage.operation.value == "sort"
    assert len(stage.body_statements()) == 1
    assert_next_session(after, "next", 3)


def test_e039_pipe_without_operation() -> None:
    module, diagnostics = check('let r = xs |\nsession "next"\n')
    assert "E039" in [d.code for d in diagnostics]
    d = next(d for d in diagnostics if d.code == "E039")
    assert span(d) == ((1, 12), (1, 12))
    assert_next_session(module.statements()[1], "next", 2)


def test_e040_reduce_with_one_parameter() -> None:
    module, diagnostics = check('let r = xs | reduce(x):\n  session "1"\nsession "next"\n')
    d = only(diagnostics, "E040")
    assert span(d) == ((1, 19), (1, 22))
    assert_next_session(module.statements()[1], "next", 3)


def test_e040_reduce_without_parameters() -> None:
    module, diagnostics = check('let r = xs | reduce:\n  session "1"\nsession "next"\n')
    d = only(diagnostics, "E040")
    assert span(d) == ((1, 13), (1, 19))
    assert_next_session(module.statements()[1], "next", 3)


def test_e040_map_with_parameter() -> None:
    module, diagnostics = check('let r = xs | map(x):\n  session "1"\nsession "next"\n')
    d = only(diagnostics, "E040")
    assert span(d) == ((1, 16), (1, 19))
    assert "item" in d.message
    assert_next_session(module.statements()[1], "next", 3)


# --------------------------------------------------------------------------- E041


@pytest.mark.parametrize(
    ("statement", "hint"),
    [
        ("return", "output"),
        ("break", "loop until"),
        ("continue", "if **"),
        ("assert **ok**", "throw"),
        ("pass", "statement"),
    ],
)
def test_e041_unsupported_statements(statement: str, hint: str) -> None:
    text = f'for x in xs:\n  {statement}\n  session "inner"\nsession "next"\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E041")
    word = statement.split()[0]
    assert span(d) == ((2, 2), (2, 2 + len(word)))
    assert f"`{word}`" in d.message
    assert hint in d.message
    loop, after = module.statements()
    unsupported, inner = narrow(loop, ForEach).body_statements()
    assert isinstance(unsupported, UnsupportedStatement)
    assert unsupported.keyword == word
    assert type(inner) is Session and inner.start_pos == (3, 2)
    assert_next_session(after, "next", 4)


def test_e041_return_at_top_level() -> None:
    module, diagnostics = check('return\nsession "next"\n')
    d = only(diagnostics, "E041")
    assert span(d) == ((1, 0), (1, 6))
    assert_next_session(module.statements()[1], "next", 2)


def test_e041_with_a_block_is_reported_once() -> None:
    module, diagnostics = check('pass:\n  hello world\nsession "next"\n')
    d = only(diagnostics, "E041")
    assert span(d) == ((1, 0), (1, 4))
    assert_next_session(module.statements()[1], "next", 3)


# --------------------------------------------------------------------------- E042


def test_e042_dollar_in_a_line() -> None:
    module, diagnostics = check('session "a" $\nsession "next"\n')
    d = only(diagnostics, "E042")
    assert span(d) == ((1, 12), (1, 13))
    assert "'$'" in d.message
    assert_next_session(module.statements()[1], "next", 2)


def test_e042_dollar_at_start_of_line() -> None:
    module, diagnostics = check('$x\nsession "next"\n')
    d = only(diagnostics, "E042")
    assert d.start == (1, 0)
    assert isinstance(module.statements()[0], ErrorStatement)
    assert_next_session(module.statements()[1], "next", 2)


@pytest.mark.parametrize(("char", "hint"), [(";", "end of the line"), ("\u00a0", "invisible")])
def test_e042_other_characters(char: str, hint: str) -> None:
    module, diagnostics = check(f'session "a"{char}\nsession "next"\n')
    d = only(diagnostics, "E042")
    assert span(d) == ((1, 11), (1, 12))
    assert hint in d.message
    assert_next_session(module.statements()[1], "next", 2)


# --------------------------------------------------------------------------- stray """


def test_stray_triple_quote_in_let_prompt() -> None:
    text = 'let p = """\n  Explain the word """\n  in one sentence.\n  """\n'
    _, diagnostics = check(text)
    d = only(diagnostics, "E031")
    assert span(d) == ((2, 19), (2, 22))
    assert '\\"""' in d.message
    (related,) = d.related
    assert (related.start, related.end) == ((1, 8), (1, 11))


def test_stray_triple_quote_in_session_prompt() -> None:
    text = 'session """\n  Explain the word """\n  in one sentence.\n  """\n'
    module, diagnostics = check(text)
    d = only(diagnostics, "E031")
    assert span(d) == ((2, 19), (2, 22))
    (related,) = d.related
    assert (related.start, related.end) == ((1, 8), (1, 11))
    assert isinstance(narrow(module.statements()[0], Session).prompt, String)


def test_closing_triple_quote_on_its_own_line_is_not_blamed() -> None:
    text = 'let p = """\n  text\n"""\n    session "b"\n'
    _, diagnostics = check(text)
    d = only(diagnostics, "E031")
    assert span(d) == ((4, 4), (4, 11))
    assert d.related == ()


# --------------------------------------------------------------------------- robustness


@pytest.mark.parametrize(
    "text",
    [
        'if do:\nsession "a"\n  model: opus\n',
        'for x in do:\nsession "a"\n  model: opus\n',
        'loop until try:\nsession "a"\n  x\n',
        'repeat do:\nsession "a"\n  x\n',
        'choice do:\nsession "a"\n  x\n',
        'if parallel\nsession "a"\n  x\n',
        "if try\n:\n ,",
    ],
)
def test_block_expression_in_a_header_keeps_the_next_line(text: str) -> None:
    # A `do:`/`try`/`parallel` in a header's condition ends its own line; the
    # header must not then drop the following line's tokens.
    module = parse(text)
    assert module.get_code() == text
    assert_robust(text)


def test_one_error_does_not_affect_the_rest() -> None:
    text = (
        'session "ok 1"\n'
        "hello world\n"
        'session "ok 2"\n'
        "let x =\n"
        'session "ok 3"\n'
        "else:\n"
        '  session "x"\n'
        'session "ok 4"\n'
    )
    module, diagnostics = check(text)
    assert [d.code for d in diagnostics] == ["E005", "E004", "E035"]
    sessions = [s for s in module.statements() if type(s) is Session]
    assert [prompt(s).text for s in sessions] == ["ok 1", "ok 2", "ok 3", "ok 4"]
    assert [s.start_pos[0] for s in sessions] == [1, 3, 5, 8]


EXTRA_INPUTS = [
    "",
    "\n",
    ":",
    "(((",
    ")]}",
    '"""',
    "***",
    "**",
    "\t\n  \t x",
    "agent:\n  :\n",
    "let { = }",
    "session: :",
    "parallel (",
    "loop until",
    "for , in :",
    "| map:",
    "-> session",
    "if:\nelse:\nelif:\n",
    "try:\ncatch as:\nfinally",
    'x = session "a" -> -> |',
    "\r\n\r\r\n",
    "\ufeff\ufeff",
]


@pytest.mark.parametrize("text", EXTRA_INPUTS)
def test_parser_never_raises_on_odd_inputs(text: str) -> None:
    assert_robust(text)
