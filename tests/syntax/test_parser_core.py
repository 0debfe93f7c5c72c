"""The parser's machinery (syntax/parser/core.py): how a line's indentation stands to an
open block, and the block kinds an item is parsed as."""

from __future__ import annotations

import pytest

from openprose.syntax import tree as t
from openprose.syntax.parser import BlockKind, Parser, Relation, relation


@pytest.mark.parametrize(
    ("indent", "block", "parent", "expected"),
    [
        ("", "", None, Relation.SAME),
        ("  ", "", None, Relation.DEEPER),
        ("  ", "  ", "", Relation.SAME),
        ("    ", "  ", "", Relation.DEEPER),
        # Left of the block but right of its header: no block is open there.
        (" ", "    ", "", Relation.BAD_DEDENT),
        ("", "  ", "", Relation.OUT),
        ("  ", "    ", "  ", Relation.OUT),
        # A tab where the block has spaces, right of the header: mixed, not a new level.
        ("\t", "  ", "", Relation.MIXED),
        ("\t", "  ", None, Relation.MIXED),
        ("\t", "    ", "  ", Relation.OUT),
    ],
)
def test_relation_of_a_line_to_an_open_block(
    indent: str, block: str, parent: str | None, expected: Relation
) -> None:
    assert relation(indent, block, parent) is expected


def test_block_kind_decides_what_an_item_is() -> None:
    text = 'model: opus\nprompt: "hi"\n'
    as_statements = Parser(text).parse_items(BlockKind.STATEMENTS, None, "")
    assert [type(item) for item in as_statements] == [t.ErrorStatement, t.ErrorStatement]
    as_properties = Parser(text).parse_items(BlockKind.PROPERTIES, None, "")
    assert [type(item) for item in as_properties] == [t.Property, t.Property]


def test_an_options_block_takes_only_option_clauses() -> None:
    text = 'option "a":\n  session "x"\nsession "y"\n'
    items = Parser(text).parse_items(BlockKind.OPTIONS, None, "")
    assert isinstance(items[0], t.OptionClause)
    assert not items[0].issues
    assert isinstance(items[1], t.Session)
    assert [issue.code for issue in items[1].issues or []] == ["E005"]
