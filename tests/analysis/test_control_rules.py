"""Control flow rules (parallel modifiers, loops, conditions, choices, blocks, context
arrays): every code with a program that breaks it (exact ranges) and one that does not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprose.analysis.context import NodeIndex
from openprose.analysis.rules import control
from openprose.analysis.rules.control import listed, statements, terminated, text_of
from openprose.checking import check_text
from openprose.syntax import parse
from openprose.syntax import tree as t
from openprose.syntax.tree import iter_nodes
from tests.analysis.rule_checks import Range, found, only
from tests.support.strategies import programs, texts

TWO = '  session "a"\n  session "b"\n'

# (code, program, [(start, end) of each diagnostic with that code])
BAD: list[tuple[str, str, list[Range]]] = [
    (
        "E050",
        'let a = session "x"\nsession "y"\n  context: [a, "text", 3, a.b]\n',
        [((3, 15), (3, 21)), ((3, 23), (3, 24))],
    ),
    (
        "E050",
        'let a = session "x"\nsession "y"\n  context: { a, "text" }\n',
        [((3, 16), (3, 22))],
    ),
    ("E054", 'block (x):\n  session "{x}"\n', [((1, 5), (1, 5))]),
    ("E055", 'parallel ("fastest"):\n' + TWO, [((1, 10), (1, 19))]),
    ("E055", "parallel (first):\n" + TWO, [((1, 10), (1, 15))]),
    ("E055", 'parallel ("any", 2):\n' + TWO, [((1, 17), (1, 18))]),
    ("E055", 'parallel ("first", "any"):\n' + TWO, [((1, 19), (1, 24))]),
    ("E056", 'parallel (on-fail: "stop"):\n' + TWO, [((1, 19), (1, 25))]),
    ("E056", "parallel (on-fail: ignore):\n" + TWO, [((1, 19), (1, 25))]),
    ("E057", 'parallel ("first", count: 1):\n' + TWO, [((1, 19), (1, 27))]),
    ("E057", "parallel (count: 2):\n" + TWO, [((1, 10), (1, 18))]),
    ("E058", 'parallel ("any", count: 0):\n' + TWO, [((1, 24), (1, 25))]),
    ("E058", 'parallel ("any", count: 1.5):\n' + TWO, [((1, 24), (1, 27))]),
    ("E058", 'parallel ("any", count: "2"):\n' + TWO, [((1, 24), (1, 27))]),
    ("E058", 'parallel ("any", 0):\n' + TWO, [((1, 17), (1, 18))]),
    ("W016", 'parallel ("any", count: 3):\n' + TWO, [((1, 24), (1, 25))]),
    ("W032", 'parallel ("first"):\n  session "a"\n', [((1, 10), (1, 17))]),
    ("W005", 'parallel (join: "first"):\n' + TWO, [((1, 10), (1, 14))]),
    ("W005", 'loop until **the draft is done** (limit: 3):\n  session "a"\n', [((1, 34), (1, 39))]),
    ("W005", 'loop until **the draft is done** (3):\n  session "a"\n', [((1, 34), (1, 35))]),
    ("E059", 'repeat 0:\n  session "a"\n', [((1, 7), (1, 8))]),
    ("E059", 'repeat -1:\n  session "a"\n', [((1, 7), (1, 9))]),
    ("E060", 'repeat 2.5:\n  session "a"\n', [((1, 7), (1, 10))]),
    ("E060", 'repeat "three":\n  session "a"\n', [((1, 7), (1, 14))]),
    ("E060", 'repeat **a few times**:\n  session "a"\n', [((1, 7), (1, 22))]),
    ("E062", 'loop (max: 0):\n  session "a"\n', [((1, 11), (1, 12))]),
    ("E062", 'loop until **it works** (max: -5):\n  session "a"\n', [((1, 30), (1, 32))]),
    ("E063", 'loop (max: 2.5):\n  session "a"\n', [((1, 11), (1, 14))]),
    ("E063", 'loop (max: "ten"):\n  session "a"\n', [((1, 11), (1, 16))]),
    ("W018", 'loop:\n  session "a"\n', [((1, 0), (1, 4))]),
    ("W018", 'loop as i:\n  session "a"\n', [((1, 0), (1, 4))]),
    ("E064", 'loop until ** ** (max: 3):\n  session "a"\n', [((1, 11), (1, 16))]),
    ("E064", 'loop while *** *** (max: 3):\n  session "a"\n', [((1, 11), (1, 18))]),
    (
        "E064",
        'if ** **:\n  session "a"\nelif **  **:\n  session "b"\n',
        [((1, 3), (1, 8)), ((3, 5), (3, 11))],
    ),
    ("E064", 'choice ** **:\n  option "a":\n    session "a"\n', [((1, 7), (1, 12))]),
    ("E064", 'if **ready** and ** **:\n  session "a"\n', [((1, 17), (1, 22))]),
    ("W019", 'loop until **x** (max: 3):\n  session "a"\n', [((1, 11), (1, 16))]),
    ("W019", 'if **ok**:\n  session "a"\n', [((1, 3), (1, 9))]),
    ("W019", 'choice **??**:\n  option "a":\n    session "a"\n', [((1, 7), (1, 13))]),
    (
        "W024",
        'choice **best**:\n  option "Fast":\n    session "a"\n  option "Fast":\n    session "b"\n',
        [((4, 9), (4, 15))],
    ),
    (
        "W025",
        'choice **best**:\n  option "Fast":\n  option "Slow":\n    session "b"\n',
        [((2, 2), (2, 16))],
    ),
    ("W025", 'choice **best**:\n  option "Fast":\n', [((2, 2), (2, 16))]),
    (
        "W026",
        'if **ready**:\nelif **maybe**:\n  session "a"\nelse:\n',
        [((1, 0), (1, 13)), ((4, 0), (4, 5))],
    ),
    ("W026", 'if **ready**:\n  session "a"\nelif **maybe**:\n', [((3, 0), (3, 15))]),
    ("W022", 'throw ""\n', [((1, 6), (1, 8))]),
    ("W022", 'throw "   "\n', [((1, 6), (1, 11))]),
    (
        "W014",
        'block greet(name, tone):\n  session "Greet {name} in a {tone} tone"\ndo greet("Ada")\n',
        [((3, 8), (3, 15))],
    ),
    (
        "W014",
        'block greet(name):\n  session "Greet {name}"\ndo greet\n',
        [((3, 3), (3, 8))],
    ),
    ("W014", 'block hello:\n  session "Hello"\ndo hello("x")\n', [((3, 8), (3, 13))]),
]


@pytest.mark.parametrize(
    ("code", "text", "ranges"), BAD, ids=[f"{c}-{i}" for i, (c, *_) in enumerate(BAD)]
)
def test_bad_program(code: str, text: str, ranges: list[Range]) -> None:
    assert found(text, code) == ranges, check_text(text)


GOOD = [
    # Every parallel modifier, written right.
    'parallel:\n  a = session "a"\n  b = session "b"\nsession "c"\n  context: { a, b }\n',
    'parallel ("all"):\n' + TWO,
    'parallel ("first"):\n' + TWO,
    'parallel ("first", on-fail: "continue"):\n' + TWO,
    'parallel ("any", count: 2, on-fail: "ignore"):\n' + TWO,
    'parallel ("any"):\n' + TWO,
    'parallel (on-fail: "fail-fast"):\n' + TWO,
    'input n: "how many"\nparallel ("any", count: n):\n' + TWO,
    # Loops with counts, variables and limits.
    'repeat 3:\n  session "a"\n',
    'repeat 5 as i:\n  session "item {i}"\n',
    'input cycles: "how many"\nrepeat cycles as cycle:\n  session "cycle {cycle}"\n',
    'loop (max: 50):\n  session "a"\n',
    'loop until **done**:\n  session "a"\n',
    'loop until **the draft is polished** (max: 5) as attempt:\n  session "try {attempt}"\n',
    'loop while ***\n  there are items\n  left to process\n***:\n  session "next"\n',
    'input limit: "max"\nloop (max: limit):\n  session "a"\n',
    # Conditions and choices.
    'if **the tests pass**:\n  session "ship"\nelif **some fail**:\n  session "fix"\n'
    'else:\n  session "investigate"\n',
    'choice **the best approach**:\n  option "Quick":\n    session "quick"\n'
    '  option "Full":\n    session "full"\n',
    'if **ready**:\n  if **very ready**:\n    session "go"\n',
    # Error handling.
    'try:\n  session "a"\ncatch:\n  throw\n',
    'try:\n  session "a"\ncatch:\n  throw "the call failed"\n',
    # Blocks and context.
    'block greet(name, tone):\n  session "Greet {name} in a {tone} tone"\n'
    'do greet("Ada", "warm")\n',
    'block hello:\n  session "Hello"\ndo hello\ndo hello()\n',
    'let a = session "a"\nlet b = session "b"\nsession "c"\n  context: [a, b]\n'
    'session "d"\n  context: []\n',
]


@pytest.mark.parametrize("text", GOOD)
def test_good_program(text: str) -> None:
    assert check_text(text) == []


# --------------------------------------------------------------------------- messages


def test_join_strategy_messages() -> None:
    assert '"all", "first" or "any"' in only('parallel ("fastest"):\n' + TWO, "E055").message
    assert '("first")' in only("parallel (first):\n" + TWO, "E055").message
    assert "count: 2" in only('parallel ("any", 2):\n' + TWO, "E055").message
    assert "count: N" in only('parallel ("any", 0):\n' + TWO, "E058").message


def test_second_join_strategy_points_at_the_first() -> None:
    d = only('parallel ("first", "any"):\n' + TWO, "E055")
    assert [(r.start, r.end) for r in d.related] == [((1, 10), (1, 17))]


def test_on_fail_messages() -> None:
    assert '"fail-fast", "continue" or "ignore"' in (
        only('parallel (on-fail: "stop"):\n' + TWO, "E056").message
    )
    assert 'on-fail: "ignore"' in only("parallel (on-fail: ignore):\n" + TWO, "E056").message


def test_count_messages() -> None:
    assert '"any"' in only('parallel ("first", count: 1):\n' + TWO, "E057").message
    assert "at least 1" in only('parallel ("any", count: 0):\n' + TWO, "E058").message
    d = only('parallel ("any", count: 3):\n' + TWO, "W016")
    assert "3" in d.message and "(2)" in d.message


def test_count_is_not_checked_against_an_invalid_strategy() -> None:
    # One mistake, one error: the invalid strategy, not also "count without any".
    text = 'parallel ("fastest", count: 2):\n' + TWO
    assert [d.code for d in check_text(text)] == ["E055"]


def test_unterminated_modifier_strings_are_only_syntax_errors() -> None:
    text = 'parallel ("first, count: 2):\n' + TWO
    assert {d.code for d in check_text(text)} <= {"E001", "E004", "E030", "E033"}
    text = 'parallel (on-fail: "stop):\n' + TWO
    assert {d.code for d in check_text(text)} <= {"E001", "E004", "E030", "E033"}


def test_race_message() -> None:
    assert "at least two branches" in only('parallel ("first"):\n  session "a"\n', "W032").message


def test_unknown_modifier_messages() -> None:
    d = only('parallel (join: "first"):\n' + TWO, "W005")
    assert "`join`" in d.message and '("first")' in d.message
    d = only('loop until **the draft is done** (limit: 3):\n  session "a"\n', "W005")
    assert "`limit`" in d.message and "(max: N)" in d.message


def test_repeat_and_loop_messages() -> None:
    assert only('repeat 0:\n  session "a"\n', "E059").message == "repeat count must be positive"
    assert only('repeat 2.5:\n  session "a"\n', "E060").message.startswith(
        "repeat count must be an integer"
    )
    assert "repeat 3:" in only('repeat "3":\n  session "a"\n', "E060").message
    assert only('loop (max: 0):\n  session "a"\n', "E062").message.startswith(
        "max iterations must be positive"
    )
    assert only('loop (max: 2.5):\n  session "a"\n', "E063").message.startswith(
        "max iterations must be an integer"
    )
    assert "(max: N)" in only('loop:\n  session "a"\n', "W018").message


def test_a_non_integer_negative_count_is_one_error() -> None:
    text = 'repeat -2.5:\n  session "a"\n'
    assert [d.code for d in check_text(text)] == ["E060"]


def test_undefined_repeat_count_is_only_an_undefined_variable() -> None:
    assert [d.code for d in check_text('repeat n:\n  session "a"\n')] == ["E043"]


def test_empty_condition_messages() -> None:
    d = only('loop until ** ** (max: 3):\n  session "a"\n', "E064")
    assert d.message.startswith("discretion condition cannot be empty")
    d = only('choice ** **:\n  option "a":\n    session "a"\n', "E064")
    assert d.message.startswith("choice criteria cannot be empty")
    d = only('if ** **:\n  session "a"\n', "E064")
    assert d.message.startswith("if/elif condition cannot be empty")


def test_unterminated_condition_is_only_a_syntax_error() -> None:
    text = 'if **ready:\n  session "a"\n'
    assert [d.code for d in check_text(text)] == ["E029"]


def test_one_word_conditions_are_not_too_short() -> None:
    for word in ("done", "ready", "approved", "ok?!"):
        assert found(f'loop until **{word}** (max: 3):\n  session "a"\n', "W019") == []


def test_duplicate_label_points_at_the_first() -> None:
    text = (
        'choice **best**:\n  option "Fast":\n    session "a"\n  option "Fast":\n    session "b"\n'
    )
    d = only(text, "W024")
    assert [(r.message, r.start, r.end) for r in d.related] == [
        ("first used here", (2, 9), (2, 15))
    ]


def test_empty_bodies_are_warnings_only() -> None:
    text = 'choice **best**:\n  option "Fast":\n  option "Slow":\n    session "b"\n'
    assert [d.code for d in check_text(text)] == ["W025"]
    text = 'if **ready**:\nelse:\n  session "b"\n'
    assert [d.code for d in check_text(text)] == ["W026"]
    assert "`if`" in only(text, "W026").message


def test_other_empty_bodies_stay_syntax_errors() -> None:
    assert [d.code for d in check_text("try:\n  throw\ncatch:\n")] == ["E033"]
    assert [d.code for d in check_text("choice **best**:\n")] == ["E033"]


def test_argument_count_message_and_related() -> None:
    text = 'block greet(name, tone):\n  session "Greet {name} in a {tone} tone"\ndo greet("Ada")\n'
    d = only(text, "W014")
    assert d.message == "block `greet` expects 2 parameters but got 1 argument"
    assert [(r.start, r.end) for r in d.related] == [((1, 6), (1, 11))]


def test_undefined_block_is_not_an_argument_mismatch() -> None:
    assert [d.code for d in check_text('do missing("x")\n')] == ["E051"]


def test_empty_block_name_message() -> None:
    d = only('block (x):\n  session "{x}"\n', "E054")
    assert "must have a name" in d.message


def test_context_message() -> None:
    d = only('let a = session "x"\nsession "y"\n  context: [a, "text"]\n', "E050")
    assert d.message.startswith("context array elements must be variable references")


def test_rules_skip_error_subtrees() -> None:
    # A statement indented where no block is open is reported once (E031); the
    # problems inside it wait until the indentation is fixed.
    text = 'session "a"\n    repeat 0:\n      session "b"\n'
    assert [d.code for d in check_text(text)] == ["E031"]


# --------------------------------------------------------------------------- shortcuts
# The rules read strings, lists and suites through shortcuts of the tree's accessors (the
# accessors are called for every node of a big program); each must answer as its accessor.

_STRING_TEXT = st.text(alphabet='ab {}\\"\n', max_size=8)


@given(_STRING_TEXT)
def test_text_of_and_terminated_answer_as_the_string_accessors(inside: str) -> None:
    for quotes in ('"', '"""'):
        for value in (quotes + inside, quotes + inside + quotes):
            leaf = t.String(value, t.LineAnchor(1), 0)
            assert terminated(leaf) == leaf.is_terminated, value
            assert text_of(leaf) == leaf.text, value


_LIST_ITEM = st.sampled_from(
    ["a", '"s"', "3", "**c**", "a.b", "x: 1", "session", "[a]", "{ a }", "$", ",", ""]
)


@given(st.lists(_LIST_ITEM, max_size=5))
def test_listed_answers_as_the_list_accessors(items: list[str]) -> None:
    inside = ", ".join(items)
    module = parse(f"let a = [{inside}]\nlet b = {{ {inside} }}\ndo c({inside})\n")
    for node in iter_nodes(module):
        if isinstance(node, t.ArrayLiteral):
            assert listed(node) == node.elements()
        elif isinstance(node, t.ObjectLiteral):
            assert listed(node, t.ObjectEntry) == node.entries()
        elif isinstance(node, t.Arguments):
            assert listed(node, t.KeywordArgument) == node.items()


@given(st.lists(st.sampled_from(['session "a"', "let x = 1", "x: 1", "$", "", "# c"]), max_size=4))
def test_statements_answers_as_the_suite_accessor(lines: list[str]) -> None:
    module = parse("parallel:\n" + "".join(f"  {line}\n" for line in lines))
    for node in iter_nodes(module):
        if isinstance(node, t.Suite):
            assert statements(node) == node.statements()


# A context list whose children are all names, operators (and entries) is told to need no
# report without listing it: listing it finds only references and entries.
@given(
    st.sampled_from(["[", "{ "]),
    st.lists(st.sampled_from(["a", "b.c", '"s"', "1", "a[0]", "k: a", "**d**", ""]), max_size=4),
)
def test_a_context_list_the_shortcut_passes_has_only_references(
    opening: str, items: list[str]
) -> None:
    closing = "]" if opening == "[" else " }"
    text = f'let a = session "x"\nsession "y"\n  context: {opening}{", ".join(items)}{closing}\n'
    for value in NodeIndex(parse(text)).nodes(t.ArrayLiteral, t.ObjectLiteral):
        if any(type(c) not in control._PLAIN_LISTED[type(value)] for c in value.children):
            continue
        for element in listed(value, t.ObjectEntry):
            assert isinstance(element, t.ObjectEntry) or control._reference(element)


# A suite's statements are told by their class, the union's `isinstance` asked once a
# class: they are those the suite's children are, checked one by one.
@given(st.one_of(programs(), texts))
def test_a_suite_s_statements_are_told_by_class(text: str) -> None:
    for suite in NodeIndex(parse(text)).nodes(t.Suite):
        expected = [
            c for c in suite.children if type(c) is not t.Newline and isinstance(c, t.Statement)
        ]
        assert statements(suite) == expected


# The condition of an if or elif and the criteria of a choice are read without the
# accessors' calls (the union's `isinstance` told once a class): each is its accessor's,
# on programs, texts and recovered headers whose condition is missing or broken.
_CONDITION = st.sampled_from(["**a**", "a", "a > 1", "not **b**", '"s"', ":", "(", "$", ""])


@given(st.one_of(programs(), texts), _CONDITION)
def test_a_condition_after_its_keyword_is_the_accessor_s(text: str, condition: str) -> None:
    text += f'if {condition}:\n  session "a"\nelif {condition}\n  x\nchoice {condition}:\n'
    for node in NodeIndex(parse(text)).nodes(t.IfStatement, t.ElifClause, t.ChoiceStatement):
        expected = node.criteria if isinstance(node, t.ChoiceStatement) else node.condition
        assert control.expression_after_keyword(node) is expected
