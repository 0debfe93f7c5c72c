"""The canonical layout, rule by rule: a small badly laid out program in, the exact text out.

Every expectation is also checked to be a fixed point (formatting the canonical form changes
nothing), and the formatter must never refuse these programs.
"""

from __future__ import annotations

import pytest

from openprose.format import FormatResult, format_text, skeleton
from openprose.syntax import parse


def formatted(source: str) -> FormatResult:
    result = format_text(source)
    assert result.refused is None, result.refused
    return result


def check(source: str, expected: str) -> None:
    """``source`` formats to exactly ``expected``, and ``expected`` is left alone."""
    result = formatted(source)
    assert result.text == expected
    assert result.changed == (source != expected)
    again = formatted(expected)
    assert again.text == expected, "the canonical form is not a fixed point"
    assert not again.changed


# ---------------------------------------------------------------- indentation


def test_two_spaces_per_level_from_four() -> None:
    check(
        'agent writer:\n    model: sonnet\n    prompt: "Write"\n',
        'agent writer:\n  model: sonnet\n  prompt: "Write"\n',
    )


def test_three_space_indentation_is_normalised() -> None:
    check(
        'parallel:\n   session "a"\n   session "b"\n',
        'parallel:\n  session "a"\n  session "b"\n',
    )


def test_tabs_are_normalised_to_two_spaces() -> None:
    check(
        'parallel:\n\tdo:\n\t\tsession "a"\n\tsession "b"\n',
        'parallel:\n  do:\n    session "a"\n  session "b"\n',
    )


def test_nested_blocks_each_get_one_level() -> None:
    source = (
        "repeat 2 as i:\n"
        "    parallel:\n"
        "        for x in xs:\n"
        '            session "deep {x}"\n'
        '        session "b"\n'
        '    session "c"\n'
    )
    expected = (
        "repeat 2 as i:\n"
        "  parallel:\n"
        "    for x in xs:\n"
        '      session "deep {x}"\n'
        '    session "b"\n'
        '  session "c"\n'
    )
    check(source, expected)


def test_mixed_widths_per_block_are_all_normalised() -> None:
    # Each block chooses its own width; the printer derives levels from the tree.
    source = 'if **the draft is ready**:\n    do:\n      session "a"\n    session "b"\n'
    expected = 'if **the draft is ready**:\n  do:\n    session "a"\n  session "b"\n'
    check(source, expected)


def test_property_block_of_a_session() -> None:
    check(
        'let d = session "Draft"\nsession "Review"\n      model:opus\n      context :d\n',
        'let d = session "Draft"\nsession "Review"\n  model: opus\n  context: d\n',
    )


def test_session_with_agent_and_property_overrides() -> None:
    check(
        'agent w:\n  model: sonnet\nsession  :  w\n    prompt:"Go"\n    retry:3\n',
        'agent w:\n  model: sonnet\nsession: w\n  prompt: "Go"\n  retry: 3\n',
    )


def test_permissions_nested_property_block() -> None:
    source = (
        "agent guard:\n"
        "    model: sonnet\n"
        "    permissions:\n"
        '        read:  [ "*.md" , "docs/**" ]\n'
        "        bash:deny\n"
    )
    expected = (
        "agent guard:\n"
        "  model: sonnet\n"
        "  permissions:\n"
        '    read: ["*.md", "docs/**"]\n'
        "    bash: deny\n"
    )
    check(source, expected)


# ---------------------------------------------------------------- spacing


def test_one_space_around_equals() -> None:
    check(
        'let a=session "x"\nconst  b   =  session "y"\na  =session "z"\n',
        'let a = session "x"\nconst b = session "y"\na = session "z"\n',
    )


def test_one_space_around_arrow() -> None:
    check(
        'session "a"->session "b"   ->  session "c"\n',
        'session "a" -> session "b" -> session "c"\n',
    )


def test_arrow_continued_on_its_own_line_keeps_the_statement_level() -> None:
    check(
        'parallel:\n    session "a"\n    ->session "b"\n',
        'parallel:\n  session "a"\n  -> session "b"\n',
    )
    check(
        'session "a"\n\n->  session "b"\n    model: opus\n',
        'session "a"\n\n-> session "b"\n  model: opus\n',
    )


def test_one_space_around_pipe() -> None:
    check(
        'let xs = ["a"]\nlet r = xs|map:\n  session "z"\n',
        'let xs = ["a"]\nlet r = xs | map:\n  session "z"\n',
    )


def test_key_colon_value() -> None:
    check(
        'agent a :\n  model :sonnet\n  prompt  :   "p"\n',
        'agent a:\n  model: sonnet\n  prompt: "p"\n',
    )


def test_no_padding_inside_brackets_and_space_after_commas() -> None:
    check(
        'let xs = [ "a" ,"b",  "c" ]\nlet n = [1,2]\nlet e = [ ]\n',
        'let xs = ["a", "b", "c"]\nlet n = [1, 2]\nlet e = []\n',
    )


def test_object_context_shorthand_has_spaces_inside_braces() -> None:
    check(
        'let a = session "a"\nlet b = session "b"\nsession "c"\n  context: {a,b}\n',
        'let a = session "a"\nlet b = session "b"\nsession "c"\n  context: { a, b }\n',
    )


def test_object_literal_with_entries() -> None:
    check('let o = {a:1,  b : "x"}\n', 'let o = { a: 1, b: "x" }\n')


def test_array_context() -> None:
    check(
        'let a = session "a"\nlet b = session "b"\nsession "c"\n  context:[ a ,b ]\n',
        'let a = session "a"\nlet b = session "b"\nsession "c"\n  context: [a, b]\n',
    )


# ---------------------------------------------------------------- constructs


def test_parallel_modifiers() -> None:
    check(
        'parallel ( "any" , count : 2 ) :\n    a = session "x"\n    b = session "y"\n',
        'parallel ("any", count: 2):\n  a = session "x"\n  b = session "y"\n',
    )


def test_parallel_failure_policy() -> None:
    check(
        'parallel(on-fail:"continue"):\n  session "x"\n  session "y"\n',
        'parallel (on-fail: "continue"):\n  session "x"\n  session "y"\n',
    )


def test_loop_until_with_modifiers_and_index() -> None:
    check(
        'loop  until  **done**  ( max:3 )  as  i :\n    session "step {i}"\n',
        'loop until **done** (max: 3) as i:\n  session "step {i}"\n',
    )


def test_repeat_and_for_each() -> None:
    check(
        'let xs = ["a"]\nrepeat  3  as  i :\n    session "r"\n'
        'parallel  for  x , i  in  xs :\n    session "f {x}"\n',
        'let xs = ["a"]\nrepeat 3 as i:\n  session "r"\n'
        'parallel for x, i in xs:\n  session "f {x}"\n',
    )


def test_block_definition_with_parameters() -> None:
    check(
        'block  review ( a ,b ) :\n    session "Review {a} and {b}"\n',
        'block review(a, b):\n  session "Review {a} and {b}"\n',
    )


def test_do_invocation_with_arguments() -> None:
    check(
        'block review(a, b):\n  session "r"\ndo  review( "x","y" )\n',
        'block review(a, b):\n  session "r"\ndo review("x", "y")\n',
    )


def test_program_call_with_keyword_arguments() -> None:
    check(
        'use "@acme/research" as research\nlet r = research( topic : "x" )\n',
        'use "@acme/research" as research\nlet r = research(topic: "x")\n',
    )


def test_attribute_access() -> None:
    check(
        'use "@acme/research" as research\nlet r = research(topic: "x")\n'
        'session "s"\n  context:r.findings\n',
        'use "@acme/research" as research\nlet r = research(topic: "x")\n'
        'session "s"\n  context: r.findings\n',
    )


def test_reduce_parameters() -> None:
    check(
        'let xs = ["a"]\nlet s = xs | reduce ( acc , x ) :\n    session "merge"\n'
        "        context: [acc, x]\n",
        'let xs = ["a"]\nlet s = xs | reduce(acc, x):\n  session "merge"\n    context: [acc, x]\n',
    )


def test_if_elif_else() -> None:
    check(
        'if  **tests fail** :\n    session "fix"\nelif **flaky**:\n      session "rerun"\n'
        'else :\n   session "ship"\n',
        'if **tests fail**:\n  session "fix"\nelif **flaky**:\n  session "rerun"\n'
        'else:\n  session "ship"\n',
    )


def test_try_catch_finally() -> None:
    check(
        'try:\n    session "t"\ncatch  as  err :\n    throw  "bad"\nfinally:\n    session "f"\n',
        'try:\n  session "t"\ncatch as err:\n  throw "bad"\nfinally:\n  session "f"\n',
    )


def test_choice_with_options() -> None:
    check(
        'choice **the best path**:\n    option  "fast" :\n        session "a"\n'
        '    option "safe":\n        session "b"\n',
        'choice **the best path**:\n  option "fast":\n    session "a"\n'
        '  option "safe":\n    session "b"\n',
    )


# ---------------------------------------------------------------- pipelines


def test_pipeline_chain_laid_out_as_the_reference() -> None:
    source = (
        'let xs = ["a", "b"]\n'
        "let r = xs\n"
        "    |   filter:\n"
        '        session "keep?"\n'
        "          context: item\n"
        "    | map:\n"
        '        session "pitch"\n'
        "          context: item\n"
    )
    expected = (
        'let xs = ["a", "b"]\n'
        "let r = xs\n"
        "  | filter:\n"
        '      session "keep?"\n'
        "        context: item\n"
        "  | map:\n"
        '      session "pitch"\n'
        "        context: item\n"
    )
    check(source, expected)


def test_pipeline_chain_in_a_block_is_relative_to_the_statement() -> None:
    source = (
        'let xs = ["a", "b"]\n'
        "do:\n"
        "    let r = xs\n"
        "      | filter:\n"
        '          session "keep?"\n'
        "      | reduce(acc, x):\n"
        '          session "merge"\n'
    )
    expected = (
        'let xs = ["a", "b"]\n'
        "do:\n"
        "  let r = xs\n"
        "    | filter:\n"
        '        session "keep?"\n'
        "    | reduce(acc, x):\n"
        '        session "merge"\n'
    )
    check(source, expected)


def test_pipeline_canonical_chain_is_unchanged() -> None:
    text = (
        'let topics = ["a", "b"]\n'
        "\n"
        "let result = topics\n"
        "  | filter:\n"
        '      session "Is this trending?"\n'
        "        context: item\n"
        "  | map:\n"
        '      session "Pitch it"\n'
        "        context: item\n"
    )
    check(text, text)


# ---------------------------------------------------------------- comments


def test_own_line_comment_before_a_statement() -> None:
    check(
        '   # about the draft\nlet d = session "Draft"\nparallel:\n        # first branch\n'
        '    session "a"\n',
        '# about the draft\nlet d = session "Draft"\nparallel:\n  # first branch\n  session "a"\n',
    )


def test_trailing_comment_has_two_spaces_before_hash() -> None:
    check(
        'session "a"# tight\nsession "b"        # far\nagent w:   # header\n  model: opus # p\n',
        'session "a"  # tight\nsession "b"  # far\nagent w:  # header\n  model: opus  # p\n',
    )


def test_trailing_comment_text_is_kept_but_not_its_trailing_spaces() -> None:
    check('session "a"  #   spaced   text   \n', 'session "a"  #   spaced   text\n')


def test_comment_at_end_of_block_stays_at_the_block_level() -> None:
    source = (
        "agent w:\n"
        "    model: sonnet\n"
        "    # end of the agent\n"
        "parallel:\n"
        "    do:\n"
        '        session "a"\n'
        "        # end of do\n"
        "    # end of parallel\n"
        "# top level again\n"
        'session "b"\n'
    )
    expected = (
        "agent w:\n"
        "  model: sonnet\n"
        "  # end of the agent\n"
        "parallel:\n"
        "  do:\n"
        '    session "a"\n'
        "    # end of do\n"
        "  # end of parallel\n"
        "# top level again\n"
        'session "b"\n'
    )
    check(source, expected)


def test_comment_at_end_of_file() -> None:
    check('session "a"\n# the end\n', 'session "a"\n# the end\n')
    check('session "a"\n\n\n\n# the end\n\n\n', 'session "a"\n\n\n# the end\n')


def test_comment_at_end_of_file_without_final_newline() -> None:
    # The last line is a comment with no line break after it: it must not be dropped.
    check('session "a"\n# the end', 'session "a"\n# the end\n')


def test_trailing_comment_on_the_last_line_without_final_newline() -> None:
    check('session   "a"  # last', 'session "a"  # last\n')


def test_comment_only_file_without_final_newline() -> None:
    check("# only a note", "# only a note\n")


def test_comment_at_end_of_file_inside_last_block() -> None:
    check(
        'parallel:\n    session "a"\n    # still in the block\n',
        'parallel:\n  session "a"\n  # still in the block\n',
    )


def test_comment_only_file() -> None:
    check("# just a note\n\n\n\n", "# just a note\n")


def test_hash_inside_a_string_is_not_a_comment() -> None:
    check('session   "issue #12 # not a comment"\n', 'session "issue #12 # not a comment"\n')


# ---------------------------------------------------------------- blank lines


def test_three_blank_lines_at_top_level_become_two() -> None:
    check('session "a"\n\n\n\nsession "b"\n', 'session "a"\n\n\nsession "b"\n')


def test_two_blank_lines_at_top_level_are_kept() -> None:
    check('session "a"\n\n\nsession "b"\n', 'session "a"\n\n\nsession "b"\n')


def test_two_blank_lines_inside_a_block_become_one() -> None:
    check(
        'parallel:\n  session "a"\n\n\n  session "b"\n',
        'parallel:\n  session "a"\n\n  session "b"\n',
    )


def test_blank_lines_inside_a_property_block_become_one() -> None:
    check(
        'agent a:\n  model: sonnet\n\n\n\n  prompt: "x"\n',
        'agent a:\n  model: sonnet\n\n  prompt: "x"\n',
    )


def test_blank_lines_after_a_block_header_are_removed() -> None:
    check(
        'agent a:\n\n\n  model: sonnet\nparallel:\n\n  session "a"\n',
        'agent a:\n  model: sonnet\nparallel:\n  session "a"\n',
    )


def test_blank_lines_before_a_comment_after_a_header_are_removed() -> None:
    check(
        'parallel:\n\n  # first\n  session "a"\n',
        'parallel:\n  # first\n  session "a"\n',
    )


def test_leading_blank_lines_of_the_file_are_removed() -> None:
    check('\n\n\n   \nsession "a"\n', 'session "a"\n')


def test_trailing_blank_lines_are_removed() -> None:
    check('session "a"\n\n\n\n', 'session "a"\n')
    check('parallel:\n  session "a"\n\n   \n', 'parallel:\n  session "a"\n')


def test_blank_line_between_comment_and_statement_is_kept() -> None:
    check(
        '# header\n\n\n\n\nsession "a"\n',
        '# header\n\n\nsession "a"\n',
    )


def test_no_trailing_whitespace() -> None:
    result = formatted('session "a"   \nparallel:   \n  session "b"\t\n\n  \n  session "c" \n')
    assert result.text == 'session "a"\nparallel:\n  session "b"\n\n  session "c"\n'
    assert all(line == line.rstrip() for line in result.text.splitlines())


# ---------------------------------------------------------------- line endings


def test_crlf_file_stays_crlf() -> None:
    check(
        'agent a:\r\n    model:sonnet\r\n\r\n\r\n\r\nsession  "x"\r\n',
        'agent a:\r\n  model: sonnet\r\n\r\n\r\nsession "x"\r\n',
    )


def test_every_line_ending_becomes_the_first_one() -> None:
    check(
        'session "a"\r\nsession  "b"\nparallel:\n  session "c"\n',
        'session "a"\r\nsession "b"\r\nparallel:\r\n  session "c"\r\n',
    )
    check('session "a"\nsession "b"\r\n', 'session "a"\nsession "b"\n')


def test_line_endings_inside_a_triple_quoted_string_are_kept() -> None:
    source = 'agent a:\r\n  prompt: """\nline one\r\nline two\n"""\nsession "x"\n'
    expected = 'agent a:\r\n  prompt: """\nline one\r\nline two\n"""\r\nsession "x"\r\n'
    check(source, expected)


def test_crlf_final_newline_is_added_in_crlf() -> None:
    check('session "a"\r\nsession "b"', 'session "a"\r\nsession "b"\r\n')


def test_missing_final_newline_is_added() -> None:
    check('session "a"', 'session "a"\n')
    check('parallel:\n  session "a"', 'parallel:\n  session "a"\n')


def test_empty_file_stays_empty() -> None:
    result = formatted("")
    assert result.text == ""
    assert not result.changed


def test_whitespace_only_file_becomes_empty() -> None:
    assert formatted("\n\n  \n").text == ""


def test_byte_order_mark_is_kept() -> None:
    check('\ufeffsession  "a"\n', '\ufeffsession "a"\n')
    check('\ufeff# note\nsession   "x"\n', '\ufeff# note\nsession "x"\n')


# ---------------------------------------------------------------- verbatim content


def test_triple_quoted_string_content_unchanged() -> None:
    source = (
        "agent a:\n"
        "    model: sonnet\n"
        '    prompt: """\n'
        "  odd\n"
        "        deeper   \n"
        "\tand a tab\n"
        '   """\n'
    )
    expected = (
        'agent a:\n  model: sonnet\n  prompt: """\n  odd\n        deeper   \n\tand a tab\n   """\n'
    )
    check(source, expected)


def test_triple_quoted_session_prompt_in_a_block() -> None:
    source = 'parallel:\n    session """\n      keep    me\n  as is"""\n'
    expected = 'parallel:\n  session """\n      keep    me\n  as is"""\n'
    check(source, expected)


def test_string_contents_with_spaces_unchanged() -> None:
    check('session   "  a   =  b ,c  "\n', 'session "  a   =  b ,c  "\n')


def test_multi_line_discretion_condition_unchanged() -> None:
    source = 'if ***the tests\n      pass   and\n  more***:\n    session   "x"\n'
    expected = 'if ***the tests\n      pass   and\n  more***:\n  session "x"\n'
    check(source, expected)


def test_discretion_text_unchanged() -> None:
    check(
        'loop until **  all   done **:\n    session "x"\n',
        'loop until **  all   done **:\n  session "x"\n',
    )


# ---------------------------------------------------------------- syntax errors


def test_statement_with_a_syntax_error_is_left_as_written() -> None:
    source = 'session  "a"\nlet   x = = 3\nsession   "b"\n'
    result = formatted(source)
    assert result.text == 'session "a"\nlet   x = = 3\nsession "b"\n'
    assert result.unformatted == 1


def test_block_with_an_error_inside_is_left_as_written() -> None:
    source = 'agent   a:\n    model:sonnet\nparallel:\n    session  "x\n    session  "y"\n'
    result = formatted(source)
    assert result.text == (
        'agent a:\n  model: sonnet\nparallel:\n    session  "x\n    session  "y"\n'
    )
    assert result.unformatted == 1


def test_two_broken_statements_are_counted() -> None:
    source = 'let = 1\nsession   "ok"\nlet y = = 2\n'
    result = formatted(source)
    assert result.text == 'let = 1\nsession "ok"\nlet y = = 2\n'
    assert result.unformatted == 2


def test_clean_file_has_nothing_unformatted() -> None:
    assert formatted('session   "a"\n').unformatted == 0


def test_unterminated_triple_quote_at_end_gets_no_newline() -> None:
    source = 'session  "a"\nsession """abc\n  def'
    result = formatted(source)
    assert result.text == 'session "a"\nsession """abc\n  def'
    assert result.unformatted == 1


def test_unterminated_discretion_at_end_gets_no_newline() -> None:
    source = 'session  "a"\nif ***open\n  still open'
    result = formatted(source)
    assert result.text == 'session "a"\nif ***open\n  still open'


@pytest.mark.parametrize(
    "source",
    [
        "agent :\n",
        "parallel:\nsession 'x'\n",
        'session "a"\n      session "b"\n',
        "let x = [1, 2\n",
        "}}}{{{\n",
        'session "a" ->\n',
    ],
)
def test_broken_programs_lose_no_text(source: str) -> None:
    result = format_text(source)
    if result.refused:
        assert result.text == source
    else:
        assert "".join(result.text.split()) == "".join(source.split())


def test_idempotent_when_a_removed_blank_line_chose_the_line_ending() -> None:
    # The file's first line break (CRLF) is a leading blank line, which formatting removes;
    # the broken statement keeps its LF, so the output's first line ending differs from the
    # one used for the rest.  A second run must not change anything.
    source = '\r\nlet = 1\nsession  "a"\n'
    once = formatted(source).text
    assert formatted(once).text == once


def test_a_second_byte_order_mark_is_not_joined_to_the_next_line() -> None:
    # Only the first U+FEFF is a byte-order mark; a second one is a (broken) statement of its
    # own and must stay on its line, or `session` would stop being a statement keyword.
    source = '\ufeff\ufeff\nsession "a"\n'
    result = format_text(source)
    if result.refused is None:
        assert skeleton(parse(result.text)) == skeleton(parse(source))
        assert result.text.endswith('\nsession "a"\n')
    else:
        assert result.text == source


@pytest.mark.parametrize(
    "source",
    [
        's="""\nn"""\n "',
        's=""":\nn"""\n\t"',
        's="""\r\nn"""\r\n  n\\',
        'let \t"""\n""""\n  model: sonnet',
        'session\\n"""session  \r\n#"""\n :',
    ],
)
def test_indented_text_after_a_string_closed_early_is_left_as_written(source: str) -> None:
    # A `"""` that closes a string early (E031) leaves the indented lines after it as an
    # over-indented region of their own; moving them to the left margin would make them
    # statements, so they are kept as written like the statement before them.
    result = formatted(source)
    assert result.text.startswith(source.rstrip("\r\n"))
    assert result.unformatted == 2


@pytest.mark.parametrize("source", ["\n\ufeff", "\n\n\ufeffx\n", "\r\n\ufeff"])
def test_a_stray_u_feff_after_blank_lines_does_not_become_a_byte_order_mark(
    source: str,
) -> None:
    # Only a file's first character is a byte-order mark: removing the blank lines before a
    # later U+FEFF (a broken statement) would make it one.
    result = formatted(source)
    assert result.text.rstrip("\r\n") == source.rstrip("\r\n")
