"""Inputs that once broke an invariant, kept so they never break it again."""

from __future__ import annotations

import pytest

from openprose.syntax import Document, parse, syntax_diagnostics
from openprose.syntax.debug import check_parents, signature


@pytest.mark.parametrize(
    "text",
    [
        # A session in a header took the lines below as its properties; the header's
        # own block must not then skip the line after them.
        "for x in session\n a\nb\n c",
        'for x in session:\n  session "a"\nsession "b"\n  session "c"\n',
        "parallel for x in session\n a\nb\n",
        "repeat session\n  prompt: x\nlet y = 1\n",
    ],
)
def test_nothing_is_lost_when_a_header_expression_takes_a_block(text: str) -> None:
    module = parse(text)
    assert module.get_code() == text
    check_parents(module)


@pytest.mark.parametrize(
    ("text", "start", "end", "new_text"),
    [
        # A `"""` string running to the end of the file that ends in a backslash.
        ('session """\nhello\n\n\\', (2, 0), (2, 0), '"""'),
        ('"""\nr\n\\', (2, 1), (2, 1), "#"),
        # A header's own errors anchored at the end of a block inside its brackets: an edit
        # in that block must move them too (they stayed at the old line).
        ("parallel(loop)\n        else", (1, 0), (1, 0), "\n"),
        ('parallel(loop)\n  session "a"\n  session "b"\n  else', (3, 2), (3, 2), "x"),
        ('parallel(loop)\n  session "a"\n  session "b"\n  else', (3, 6), (3, 6), "\n"),
        ("if not do:\n  session\n", (1, 0), (1, 0), "\n"),
        # ... and whether it reports the missing `:` at all depends on how that block ends
        # (not after an unclosed string, which is the one error).
        ('if not do:\n session"', (1, 8), (1, 9), ""),
        # A block's first line that continues the header's expression (`->`) is not the
        # block's any more.
        ("for x in session\n a\nb\n c", (1, 1), (1, 1), "->"),
        ("for x in session:\n  a\n", (1, 2), (1, 2), "->"),
    ],
)
def test_incremental_matches_full_parse(
    text: str, start: tuple[int, int], end: tuple[int, int], new_text: str
) -> None:
    doc = Document(text)
    doc.apply_edit(start, end, new_text)
    assert signature(doc.module) == signature(parse(doc.text))


def test_unterminated_triple_string_ending_in_a_backslash_is_one_token() -> None:
    module = parse('"""\nr\n\\')
    assert [type(leaf).__name__ for leaf in module.statements()[0].children][:1] == ["String"]


@pytest.mark.parametrize(
    "text",
    [
        "let x = " + "[" * 5000,
        "let x = " + "(" * 3000 + "a",
        "".join(" " * i + "if **c**:\n" for i in range(500)),
        "let x = " + "not " * 5000 + "a",
    ],
    ids=["brackets", "parentheses", "blocks", "nots"],
)
def test_deep_nesting_never_raises(text: str) -> None:
    module = parse(text)
    assert module.get_code() == text
    assert syntax_diagnostics(module)


def test_editing_deep_inside_nested_blocks_matches_a_full_parse() -> None:
    text = "".join(" " * i + "if **c**:\n" for i in range(80)) + " " * 80 + 'session "x"\n'
    doc = Document(text)
    for line in (10, 60, 70):
        doc.apply_edit((line, line + 5), (line, line + 5), "z")
        assert signature(doc.module) == signature(parse(doc.text))


def test_editing_a_block_inside_brackets_near_the_nesting_limit_matches_a_full_parse() -> None:
    # Brackets count toward the nesting limit like blocks: a block inside one must not be
    # reparsed as if only the blocks around it counted.
    depth = 63
    lines = ["  " * k + "if **c**:" for k in range(depth)] + ["  " * depth + "let x = [do:"]
    lines += ["  " * (depth + 1) + 'session "a"', "  " * (depth + 1) + 'session "b"']
    doc = Document("\n".join(lines) + "\n")
    doc.apply_edit((depth + 2, 2 * depth + 5), (depth + 2, 2 * depth + 5), "x")
    assert signature(doc.module) == signature(parse(doc.text))
