"""The shared reparse conditions: the chain of blocks a reparse may start from, which the
incremental document walks from the module and the formatter's check from a statement."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from openprose.syntax import parse
from openprose.syntax import tree as t
from openprose.syntax.reparse import blocks_containing, blocks_in_statement, first_line, last_line

NESTED = 'if **a**:\n  if **b**:\n    session "x"\n    session "y"\nsession "z"\n'
CHOICE = 'choice **c**:\n  option "a":\n    session "x"\n'


def test_chain_runs_from_the_module_to_the_innermost_suite() -> None:
    module = parse(NESTED)
    chain = blocks_containing(module, 3, 3)
    assert chain[0] is module
    assert [type(block) for block in chain[1:]] == [t.Suite, t.Suite]
    assert 'session "x"' in chain[-1].get_code()
    assert "if **b**" not in chain[-1].get_code()


def test_lines_across_two_statements_stop_at_the_module() -> None:
    module = parse(NESTED)
    assert blocks_containing(module, 3, 5) == [module]


def test_a_choice_is_reparsed_whole_but_its_options_are_not() -> None:
    # The choice's own suite decides its "no option" error; an option's suite does not.
    module = parse(CHOICE)
    chain = blocks_containing(module, 3, 3)
    assert chain[0] is module
    assert all(not isinstance(block.parent, t.ChoiceStatement) for block in chain[1:])
    assert chain[-1].parent is not None and isinstance(chain[-1].parent, t.OptionClause)


@given(st.sampled_from([NESTED, CHOICE]), st.integers(1, 6), st.integers(0, 2))
def test_the_module_chain_is_the_module_then_the_statements_chain(
    text: str, first: int, extra: int
) -> None:
    module = parse(text)
    last = first + extra
    chain = blocks_containing(module, first, last)
    items = module.children[:-1]
    holder = [i for i in items if first_line(i) <= first and last_line(i) >= last]
    inner = blocks_in_statement(holder[0], first, last) if holder else []
    assert chain == [module, *inner]
