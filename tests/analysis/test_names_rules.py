"""Names and scopes: every rule with a program that breaks it and one that does not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprose.analysis import prepare
from openprose.analysis.model import Kind
from openprose.analysis.rules import names
from openprose.checking import check_text
from openprose.diagnostics import Diagnostic
from openprose.syntax import parse
from openprose.syntax import tree as t
from tests.analysis.rule_checks import only
from tests.support.strategies import programs, texts


def where(d: Diagnostic) -> tuple[tuple[int, int], tuple[int, int]]:
    return d.start, d.end


BAD = {
    # code: (program, start, end)
    "E006": ("agent a:\n  model: sonnet\nagent a:\n  model: opus\nsession: a\n", (3, 6), (3, 7)),
    "E007": ("session: ghost\n", (1, 9), (1, 14)),
    "E019": ('let x = session "a"\nlet x = session "b"\n', (2, 4), (2, 5)),
    "E021": ('input t: "a"\ninput t: "b"\nsession "{t}"\n', (2, 6), (2, 7)),
    "E024": ('output r = session "a"\noutput r = session "b"\n', (2, 7), (2, 8)),
    "E043": ('y = session "a"\n', (1, 0), (1, 1)),
    "E044": ('session "Hello {nobody}"\n', (1, 15), (1, 23)),
    "E045": ('session "a"\n  context: missing\n', (2, 11), (2, 18)),
    "E047": ('let r = session "a"\noutput r = session "b"\n', (2, 7), (2, 8)),
    "E048": ('const c = session "a"\nc = session "b"\n', (2, 0), (2, 1)),
    "E049": (
        "agent writer:\n  model: sonnet\nlet writer = session: writer\n",
        (3, 4),
        (3, 10),
    ),
    "E051": ("do nowhere\n", (1, 3), (1, 10)),
    "E052": ('block b:\n  session "a"\nblock b:\n  session "c"\ndo b\n', (3, 6), (3, 7)),
    "E053": (
        "agent b:\n  model: sonnet\nblock b:\n  session: b\ndo b\n",
        (3, 6),
        (3, 7),
    ),
    "E061": ('for x in nothing:\n  session "{x}"\n', (1, 9), (1, 16)),
    "E068": ('let session = "x"\n', (1, 4), (1, 11)),
    "E069": (
        'block outer:\n  block inner:\n    session "a"\n  do inner\ndo outer\n',
        (2, 8),
        (2, 13),
    ),
    "W015": (
        'let topic = session "t"\nblock b(topic):\n  session "{topic}"\ndo b(topic)\n',
        (2, 8),
        (2, 13),
    ),
    "W017": (
        'let item = session "a"\nfor item in [item]:\n  session "{item}"\n',
        (2, 4),
        (2, 8),
    ),
    "W020": (
        'let item = session "a"\nlet out = [item] | map:\n  session "{item}"\n',
        (2, 19),
        (2, 22),
    ),
    "W021": (
        'let err = session "a"\ntry:\n  session "b"\ncatch as err:\n  session "{err}"\n',
        (4, 9),
        (4, 12),
    ),
    "W034": ('session """\nUse {nothing} here\n"""\n', (2, 4), (2, 13)),
}

GOOD = {
    "E006": "agent a:\n  model: sonnet\nagent b:\n  model: opus\nsession: a\nsession: b\n",
    "E007": "agent helper:\n  model: haiku\nsession: helper\n",
    "E019": 'let x = session "a"\nlet y = session "b"\n  context: x\nsession "{y}"\n',
    "E021": 'input t: "a"\ninput u: "b"\nsession "{t} {u}"\n',
    "E024": 'output r = session "a"\noutput s = session "b"\n',
    "E043": 'let y = session "a"\ny = session "b"\n  context: y\n',
    "E044": 'let who = session "a"\nsession "Hello {who}"\n',
    "E045": 'let found = session "a"\nsession "b"\n  context: found\n',
    "E047": 'let r = session "a"\noutput result = session "b"\n  context: r\n',
    "E048": 'let c = session "a"\nc = session "b"\n  context: c\n',
    "E049": 'agent writer:\n  model: sonnet\nlet draft = session: writer\nsession "{draft}"\n',
    "E051": 'block somewhere:\n  session "a"\ndo somewhere\n',
    "E052": 'block b:\n  session "a"\nblock c:\n  session "c"\ndo b\ndo c\n',
    "E053": "agent b:\n  model: sonnet\nblock run-b:\n  session: b\ndo run-b\n",
    "E061": 'let things = ["a"]\nfor x in things:\n  session "{x}"\n',
    "E068": 'let sessions = session "x"\nsession "{sessions}"\n',
    "E069": 'block inner:\n  session "a"\nblock outer:\n  do inner\ndo outer\n',
    "W015": 'let topic = session "t"\nblock b(subject):\n  session "{subject}"\ndo b(topic)\n',
    "W017": 'let things = session "a"\nfor item in [things]:\n  session "{item}"\n',
    "W020": 'let things = ["a"]\nlet out = things | map:\n  session "{item}"\nsession "{out}"\n',
    "W021": 'try:\n  session "b"\ncatch as err:\n  session "{err}"\n',
    "W034": 'let nothing = session "n"\nsession """\nUse {nothing} here\n"""\n',
}


@pytest.mark.parametrize("code", sorted(BAD))
def test_bad_program_reports_the_code_at_the_offending_token(code: str) -> None:
    text, start, end = BAD[code]
    assert where(only(text, code)) == (start, end)


@pytest.mark.parametrize("code", sorted(GOOD))
def test_good_program_is_clean(code: str) -> None:
    assert check_text(GOOD[code]) == []


def test_duplicates_point_at_the_first_definition() -> None:
    d = only('let x = session "a"\nlet x = session "b"\n', "E019")
    assert d.related and d.related[0].start == (1, 4)
    assert d.related[0].message == "first defined here"


def test_let_inside_a_loop_is_not_visible_after_it() -> None:
    text = 'repeat 2:\n  let step = session "a"\nsession "after"\n  context: step\n'
    d = only(text, "E045")
    assert "inside a loop body" in d.message and "reduce" in d.message
    assert d.related[0].start == (2, 6)


def test_let_inside_a_block_is_local_but_its_output_is_exported() -> None:
    text = (
        "block login():\n"
        '  let secret = session "a"\n'
        "  output access = secret\n"
        "do login()\n"
        'session "Use {access}"\n'
        'session "Use {secret}"\n'
    )
    codes = [(d.code, d.start[0]) for d in check_text(text)]
    assert codes == [("E044", 6)]


def test_use_before_definition_says_so() -> None:
    d = only('session "{later}"\nlet later = session "a"\n', "E044")
    assert "used before it is defined" in d.message


def test_same_name_in_exclusive_branches_is_one_binding() -> None:
    text = (
        "if **ready**:\n"
        '  let plan = session "a"\n'
        "else:\n"
        '  let plan = session "b"\n'
        'session "{plan}"\n'
    )
    assert check_text(text) == []


def test_let_that_redefines_the_loop_variable_is_a_duplicate() -> None:
    text = 'let items = ["a"]\nfor item in items:\n  let item = session "x"\n'
    d = only(text, "E019")
    assert d.start == (3, 6) and "loop variable" in d.message


def test_persistent_agent_may_be_passed_as_context() -> None:
    text = (
        "agent keeper:\n  model: sonnet\n  persist: true\n"
        'session: keeper\n  prompt: "Remember"\n'
        'session "Use it"\n  context: keeper\n'
    )
    assert [d.code for d in check_text(text)] == []


def test_literals_are_not_variables() -> None:
    assert check_text('let flag = true\nlet nothing = null\nsession "{flag} {nothing}"\n') == []


def test_an_unknown_pipe_operator_is_reported_once_not_again_as_an_undefined_item() -> None:
    text = (
        'let things = ["a"]\nlet out = things | mapp:\n  session "Handle it"\n    context: item\n'
    )
    assert [d.code for d in check_text(text)] == ["E039"]


def test_a_definition_is_named_by_its_leaf() -> None:
    # The reserved-word check reads a definition's name, not its leaf: they are one text.
    text = (
        'input session: "x"\nlet agent = session "a"\nblock b(if, item):\n'
        '  output result = session "b"\n'
        "for parallel, index in [agent]:\n  const c = parallel\n"
        'let d = [agent] | map:\n  session "{item}"\n'
        'try:\n  session "t"\ncatch as err:\n  throw\n'
        'parallel:\n  e = session "p"\nrepeat 2 as r:\n  session "r"\n'
    )
    definitions = prepare(parse(text)).model.definitions
    assert len(definitions) > 8
    for symbol in definitions:
        if not symbol.implicit:
            assert symbol.name == symbol.leaf.value


_HEADERS = [
    "agent a:\n",
    "agent:\n",
    "agent 1:\n",
    "block b(x):\n",
    "block:\n",
    "  block c:\n",
    "  agent d:\n",
    "    model: opus\n",
    '  session "p"\n',
    "agent agent:\n",
    "block (x):\n",
    ")\n",
]


# An agent's or block's name leaf is read at once when the keyword comes first: it is the
# accessor's, whatever the header (recovered ones included).
@given(st.one_of(programs(), texts, st.lists(st.sampled_from(_HEADERS), max_size=6).map("".join)))
def test_a_definition_s_name_leaf_is_the_accessor_s(text: str) -> None:
    from openprose.analysis.context import NodeIndex
    from openprose.analysis.rules import names
    from openprose.syntax import tree as t

    index = NodeIndex(parse(text))
    for kind, keyword in ((t.AgentDefinition, "agent"), (t.BlockDefinition, "block")):
        for node in index.nodes(kind):
            assert names._name_leaf(node, keyword) is node.name_leaf


# A re-export (`output review = review`) is told from the output's children in one look:
# the accessor's answer, on programs, texts and outputs of every shape (missing names,
# values, `=`, or a value that is an error).
_OUTPUT_LINE = st.sampled_from(
    [
        "output a = a",
        "output a = b",
        "output a",
        "output = a",
        "output a =",
        "output a = $",
        "output a = a.b",
        "output a = = a",
        "output a b = a",
        'output a = "a"',
        "output",
    ]
)


@given(st.one_of(programs(), texts), st.lists(_OUTPUT_LINE, max_size=3))
def test_a_reexport_is_told_as_by_the_accessor(text: str, lines: list[str]) -> None:
    text += "".join(f"block b{i}():\n  {line}\n{line}\n" for i, line in enumerate(lines))
    model = prepare(parse(text)).model
    for symbol in model.definitions:
        node = symbol.node
        expected = (
            symbol.kind is Kind.OUTPUT
            and isinstance(node.value, t.Name)
            and node.value.value == symbol.name
        )
        assert names._reexport(symbol) == expected, text
