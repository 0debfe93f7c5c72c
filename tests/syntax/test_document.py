"""The incremental Document: edits as an editor sends them, reusing unchanged statements."""

from __future__ import annotations

import pytest
from parso import tree as parso_tree

from openprose.syntax import Document, parse
from openprose.syntax import tree as t
from openprose.syntax.debug import check_parents, signature


def flat_program(statements: int) -> str:
    return "".join(
        f'let v{i} = session "Step {i}"\n  context: v{i - 1}\n' for i in range(statements)
    )


def block_program(statements: int) -> str:
    body = "".join(f'  let v{i} = session "Step {i}"\n' for i in range(statements))
    return f"block main:\n{body}\ndo main\n"


def assert_matches_full_parse(doc: Document) -> None:
    assert doc.module.get_code() == doc.text
    check_parents(doc.module)
    assert signature(doc.module) == signature(parse(doc.text))


def test_one_character_edit_reparses_only_nearby_statements() -> None:
    doc = Document(flat_program(500))
    old_statements = doc.module.statements()
    doc.apply_edit((500, 14), (500, 14), "x")  # inside the prompt of statement 250
    assert doc.stats.mode == "incremental"
    assert doc.stats.reparsed_statements <= 3
    assert doc.stats.reused_statements >= 490
    new_statements = doc.module.statements()
    assert new_statements[0] is old_statements[0]
    assert new_statements[-1] is old_statements[-1]
    assert_matches_full_parse(doc)


def test_edit_inside_a_big_block_reparses_inside_the_block() -> None:
    doc = Document(block_program(400))
    block = doc.module.statements()[0]
    doc.apply_edit((200, 20), (200, 20), "y")
    assert doc.stats.mode == "incremental"
    assert doc.stats.reused_statements >= 390
    assert doc.module.statements()[0] is block  # the block node itself was kept
    assert_matches_full_parse(doc)


def test_inserting_a_line_shifts_the_statements_after_it() -> None:
    doc = Document(flat_program(50))
    last = doc.module.statements()[-1]
    line_before = last.start_pos[0]
    doc.apply_edit((10, 0), (10, 0), 'session "inserted"\n')
    assert doc.stats.mode == "incremental"
    assert doc.module.statements()[-1] is last
    assert last.start_pos[0] == line_before + 1
    assert_matches_full_parse(doc)


def test_typing_else_attaches_to_the_preceding_if() -> None:
    text = 'if **ready**:\n  session "go"\nsession "next"\n'
    doc = Document(text)
    doc.apply_edit((2, 0), (2, 0), 'else:\n  session "wait"\n')
    assert_matches_full_parse(doc)
    statement = doc.module.statements()[0]
    assert isinstance(statement, t.IfStatement) and statement.else_clause is not None


def test_opening_a_triple_quote_swallows_the_rest_like_a_full_parse() -> None:
    doc = Document(flat_program(30))
    doc.apply_edit((5, 8), (5, 8), '"""')
    assert_matches_full_parse(doc)
    doc.apply_edit((5, 8), (5, 11), "")
    assert_matches_full_parse(doc)
    assert doc.text == flat_program(30)


def test_dedenting_the_first_statement_of_a_block_escalates() -> None:
    doc = Document(block_program(20))
    doc.apply_edit((1, 0), (1, 2), "")
    assert_matches_full_parse(doc)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_breaks_of_every_kind(newline: str) -> None:
    text = newline.join(["agent a:", "  model: sonnet", "session: a", '  prompt: "hi"', ""])
    doc = Document(text)
    doc.apply_edit((3, 10), (3, 12), "hello")
    assert_matches_full_parse(doc)
    doc.apply_edit((1, 15), (1, 15), newline + "  persist: true")
    assert_matches_full_parse(doc)


def test_joining_cr_and_lf_across_an_edit_boundary() -> None:
    doc = Document('session "a"\r\rsession "b"\n')
    doc.apply_edit((1, 0), (1, 0), "\n")  # "\r" + "\n" becomes one line break
    assert_matches_full_parse(doc)


def test_offsets_and_positions_clamp_like_lsp() -> None:
    doc = Document("ab\ncd\n")
    assert doc.offset_at(0, 99) == 2  # past the end of the line: its end
    assert doc.offset_at(99, 0) == len(doc.text)
    assert doc.position_at(4) == (1, 1)
    doc.apply_edit((0, 1), (1, 1), "X")
    assert doc.text == "aXd\n"
    assert doc.line_count == 2


def test_replace_is_a_full_parse() -> None:
    doc = Document('session "a"\n')
    doc.replace('session "b"\n')
    assert doc.stats.mode == "full"
    assert_matches_full_parse(doc)


def test_astral_characters_are_one_column_each() -> None:
    doc = Document('session "\U0001d11e x"\n')
    doc.apply_edit((0, 12), (0, 12), "y")  # the astral character counts as one
    assert doc.text == 'session "\U0001d11e xy"\n'
    assert_matches_full_parse(doc)


# --------------------------------------------------------------------------- cost bounds

BLOCK_UNDER = '\n  session "a"\n  session "b"\n'


@pytest.mark.parametrize(
    "header",
    ["let x = items" + " | map:" * 10_000, "if " + "not " * 10_000 + "**c**:"],
    ids=["pipe stages", "nested not"],
)
def test_an_edit_under_a_long_header_does_not_walk_back_along_it(
    header: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # parso's get_previous_leaf searches the parent's children at each step: finding the
    # header's indentation that way was quadratic in the header's length (seconds).
    calls = 0
    previous_leaf = parso_tree.NodeOrLeaf.get_previous_leaf

    def counting(self: parso_tree.NodeOrLeaf) -> parso_tree.Leaf | None:
        nonlocal calls
        calls += 1
        return previous_leaf(self)

    doc = Document(header + BLOCK_UNDER)
    monkeypatch.setattr(parso_tree.NodeOrLeaf, "get_previous_leaf", counting)
    doc.apply_edit((2, 3), (2, 3), "x")
    monkeypatch.undo()
    assert doc.stats.mode == "incremental"
    assert calls <= 5
    assert_matches_full_parse(doc)


def test_a_block_reparse_that_runs_away_reads_a_bounded_share_of_the_text() -> None:
    # Closing a `"""` that ran to the end of the file turns the rest into statements: the
    # block's reparse reads them all, then fails (the block now ends before `do main`), and
    # the module's reparse reads them again.  The blocks inside the module may read a
    # quarter of the text before the reparse goes to the module level.
    text = block_program(2000).replace(
        '  let v2 = session "Step 2"', '  let v2 = session """Step 2'
    )
    doc = Document(text)
    doc.apply_edit((3, 30), (3, 30), '"""')
    assert_matches_full_parse(doc)
    assert doc.stats.read <= 1.25 * len(doc.text) + 100  # and a logical line past the limit
