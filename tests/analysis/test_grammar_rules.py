"""Constructs outside the grammar and invalid interpolations: every code with a program
that breaks it (exact ranges) and one that does not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprose.analysis import prepare
from openprose.analysis.context import NodeIndex
from openprose.analysis.rules import grammar
from openprose.analysis.rules.control import terminated
from openprose.checking import check_text
from openprose.syntax import parse
from openprose.syntax import tree as t
from tests.analysis.rule_checks import Range, found, only
from tests.support.strategies import programs, texts

A = 'let a = session "first"\n'
N = 'input n: "a number"\n'

# (code, program, [(start, end) of each diagnostic with that code])
BAD: list[tuple[str, str, list[Range]]] = [
    ("W027", 'import "web-search" from "github:acme/search"\n', [((1, 0), (1, 45))]),
    ("W028", A + "let o = { key: a }\n", [((2, 8), (2, 18))]),
    (
        "W028",
        A + "let o = { a, nested: { deep: a } }\nlet p = [{ k: 1 }]\n",
        [((2, 8), (2, 34)), ((3, 9), (3, 17))],
    ),
    ("W029", N + 'if n:\n  session "a"\n', [((2, 3), (2, 4))]),
    ("W029", N + 'if n > 3:\n  session "a"\n', [((2, 3), (2, 8))]),
    ("W029", N + 'if not n:\n  session "a"\n', [((2, 3), (2, 8))]),
    ("W029", N + 'if n and n:\n  session "a"\n', [((2, 3), (2, 10))]),
    ("W029", N + 'if **ready** or n <= 0:\n  session "a"\n', [((2, 16), (2, 22))]),
    ("W029", N + 'if not **ready** and n:\n  session "a"\n', [((2, 21), (2, 22))]),
    (
        "W029",
        N + 'if **ready**:\n  session "a"\nelif n == 2:\n  session "b"\n',
        [((4, 5), (4, 11))],
    ),
    ("W029", N + 'loop until n == 3 (max: 5):\n  session "a"\n', [((2, 11), (2, 17))]),
    ("W029", N + 'loop while n:\n  session "a"\n', [((2, 11), (2, 12))]),
    ("W029", N + 'choice n:\n  option "a":\n    session "a"\n', [((2, 7), (2, 8))]),
    ("W030", A + "let b = a + a\n", [((2, 8), (2, 13))]),
    ("W030", A + "let b = a[0]\n", [((2, 8), (2, 12))]),
    ("W030", A + "let b = a + a[0]\n", [((2, 8), (2, 16))]),
    ("W030", A + 'let b = a == "x"\n', [((2, 8), (2, 16))]),
    ("W030", A + "let b = a and a\n", [((2, 8), (2, 15))]),
    ("W030", N + 'if n + 1:\n  session "a"\n', []),  # the condition is W029
    (
        "W030",
        'block f(x):\n  session "{x}"\n' + N + "do f(n - 1)\n",
        [((4, 5), (4, 10))],
    ),
    ("W033", 'block b:\n  output session "x"\ndo b\n', [((2, 2), (2, 8))]),
    ("W033", A + "block b:\n  output a\ndo b\n", [((3, 2), (3, 8))]),
    ("E070", 'let x = "1"\nsession "Value {x + 1}"\n', [((2, 15), (2, 22))]),
    ("E070", 'let text = "t"\nsession "Upper: {text.upper()}"\n', [((2, 16), (2, 30))]),
    (
        "E070",
        'let x = "1"\nsession "Value {x[0]} and {x.y.z()}"\n',
        [((2, 15), (2, 21)), ((2, 26), (2, 35))],
    ),
    ("E070", 'let x = "1"\nsession "Value {{x}}"\n', [((2, 15), (2, 20))]),
    ("E070", 'let x = "1"\nsession "Value {x"\n', [((2, 15), (2, 17))]),
    ("E070", 'let x = "1"\nsession "Value {x.y and more"\n', [((2, 15), (2, 19))]),
    ("E070", 'let name = "n"\nsession "Hello name}"\n', [((2, 15), (2, 20))]),
    ("E070", 'let x = "1"\nsession "Value { x }"\n', [((2, 15), (2, 20))]),
    ("E070", N + 'session "Count {n * 2}"\n', [((2, 15), (2, 22))]),
    (
        "E070",
        'block f(topic):\n  session "About {topic.upper()}"\ndo f("x")\n',
        [((2, 17), (2, 32))],
    ),
]


@pytest.mark.parametrize(
    ("code", "text", "ranges"), BAD, ids=[f"{c}-{i}" for i, (c, *_) in enumerate(BAD)]
)
def test_bad_program(code: str, text: str, ranges: list[Range]) -> None:
    assert found(text, code) == ranges, check_text(text)


GOOD = [
    'use "@acme/research" as research\nsession "a"\n',
    # Object context shorthand, and destructuring.
    'parallel:\n  a = session "a"\n  b = session "b"\nsession "c"\n  context: { a, b }\n',
    'let { a, b } = session "two results"\nsession "c"\n  context: [a, b]\n',
    # Discretion conditions, alone or combined.
    'if **the tests pass**:\n  session "ship"\nelif **they do not**:\n  session "fix"\n',
    'if **ready** and not **blocked**:\n  session "go"\n',
    'loop until **the draft is good** or **time is up** (max: 3):\n  session "a"\n',
    'choice **the best approach**:\n  option "Quick":\n    session "quick"\n',
    # Named outputs, also from blocks.
    'output result = session "a"\n',
    'block b:\n  output answer = session "x"\ndo b\n',
    # Interpolations and brace text that is not an interpolation.
    'let x = "1"\nsession "Value {x} and {x.field} and {x.a.b}"\n',
    'let x = "1"\nsession "Literal \\{x\\} and \\{x} and {x}"\n',
    'let x = "1"\nsession "JSON {\\"x\\": 1}, {}, {prediction 1}, {x conclusion}, {x, y}"\n',
    'let x = "1"\nsession "Set notation {a + b} and {1, 2} and a}"\n',
    'let x = "1"\nsession """\nTemplates for the model: {x[0].id}, { x }, {{x}}, {x.upper()}\n'
    '"""\n',
    'session "Value {x + 1} when nothing is defined"\n',
]


@pytest.mark.parametrize("text", GOOD)
def test_good_program(text: str) -> None:
    assert check_text(text) == []


# --------------------------------------------------------------------------- messages


def test_legacy_import_message() -> None:
    d = only('import "web-search" from "github:acme/search"\n', "W027")
    assert 'use "@handle/slug"' in d.message


def test_object_literal_message() -> None:
    d = only(A + "let o = { key: a }\n", "W028")
    assert "{ a, b }" in d.message


def test_condition_message_suggests_a_discretion() -> None:
    d = only(N + 'if n > 3:\n  session "a"\n', "W029")
    assert "**n > 3**" in d.message


def test_expression_messages() -> None:
    assert "arithmetic" in only(A + "let b = a + a\n", "W030").message
    assert "indexing" in only(A + "let b = a[0]\n", "W030").message
    assert "compared" in only(A + 'let b = a == "x"\n', "W030").message


def test_unnamed_output_message() -> None:
    d = only('block b:\n  output session "x"\ndo b\n', "W033")
    assert "output name = ..." in d.message


def test_empty_output_name_is_only_the_syntax_error() -> None:
    codes = [d.code for d in check_text('output = session "x"\n')]
    assert "E023" in codes and "W033" not in codes


def test_interpolation_messages() -> None:
    d = only('let x = "1"\nsession "Value {x + 1}"\n', "E070")
    assert "`{x}`" in d.message
    d = only('let text = "t"\nsession "Upper: {text.upper()}"\n', "E070")
    assert "`{text}`" in d.message
    d = only('let x = "1"\nsession "Value {{x}}"\n', "E070")
    assert "nested braces" in d.message and "`{x}`" in d.message
    d = only('let x = "1"\nsession "Value {x"\n', "E070")
    assert "never closed" in d.message and "`{x}`" in d.message
    d = only('let name = "n"\nsession "Hello name}"\n', "E070")
    assert "opening brace" in d.message and "`{name}`" in d.message
    d = only('let x = "1"\nsession "Value { x }"\n', "E070")
    assert "`{x}`" in d.message


def test_error_subtrees_are_skipped() -> None:
    text = 'session "a"\n    let b = a + a\n'
    assert [d.code for d in check_text(text)] == ["E031"]


# A string whose braces (outside escapes) are all valid interpolations is skipped without
# the brace-by-brace scan: whatever such a string holds, the scan would report nothing.
@given(st.text(alphabet="ab {}.\\-1\t", max_size=12))
def test_a_string_the_shortcut_skips_has_nothing_to_report(inside: str) -> None:
    value = f'"{inside}"'
    leaf = t.String(value, t.LineAnchor(1), 0)
    if not (terminated(leaf) and grammar._ONLY_INTERPOLATIONS.fullmatch(value, 1, len(value) - 1)):
        return
    ctx = prepare(parse(""))
    grammar._string(ctx, leaf, frozenset({"a", "b", "ab", "a-1"}))
    assert ctx.diagnostics == []


def test_the_shortcut_skips_valid_interpolations_and_escaped_braces() -> None:
    for inside in ("{a} and {b.c}", "\\{a", "a\\}", "\\\\{a}", "no braces"):
        value = f'"{inside}"'
        assert grammar._ONLY_INTERPOLATIONS.fullmatch(value, 1, len(value) - 1), inside
    for inside in ("{a", "a}", "{ a }", "{a+1}", "{{a}}", "\\\\{a"):
        value = f'"{inside}"'
        assert not grammar._ONLY_INTERPOLATIONS.fullmatch(value, 1, len(value) - 1), inside


# The loop over strings tells a closed string without a call: it reports what asking
# `terminated` of each string would.
@given(st.text(alphabet='a {}."\\-', max_size=10))
def test_the_interpolation_loop_reports_as_asking_terminated(inside: str) -> None:
    module = parse(f'let a = "x"\nsession "{inside}\n')
    ctx = prepare(module)
    grammar._interpolations(ctx)
    expected = prepare(module)
    for leaf in expected.strings():
        value = leaf.value
        if ("{" not in value and "}" not in value) or value.startswith('"""'):
            continue
        if terminated(leaf) and grammar._ONLY_INTERPOLATIONS.fullmatch(value, 1, len(value) - 1):
            continue
        grammar._string(expected, leaf, frozenset({"a"}))
    assert ctx.diagnostics == expected.diagnostics


# An object whose children are all names and operators is told shorthand without listing
# its entries: it answers as listing them would.
@given(
    st.lists(st.sampled_from(["a", "b", ",", ":", " ", "1", '"s"', "{", "}", "[", "]"]), max_size=8)
)
def test_an_object_is_shorthand_as_its_listed_entries_say(parts: list[str]) -> None:
    from openprose.analysis.rules.control import listed

    module = parse("session:\n  context: { " + "".join(parts) + " }\n")
    for node in prepare(module).nodes(t.ObjectLiteral):
        expected = all(type(e) is t.Name for e in listed(node, t.ObjectEntry))
        assert grammar._shorthand(node) is expected


# An output's name is told from its children without the accessor: W033 is reported as the
# accessor says, on outputs of every shape, and an expression is covered (inside one reported
# or an unsupported statement) as `isinstance` of the covering classes says at each ancestor.
_OUTPUT_LINE = st.sampled_from(
    [
        "output a = b",
        "output a",
        "output = a",
        "output a =",
        "output",
        "output a b = c",
        "output a = = b",
        'output "a" = b',
        "output a.b = c",
        "output a = b + 1",
    ]
)


@given(st.one_of(programs(), texts), st.lists(_OUTPUT_LINE, max_size=4))
def test_an_unnamed_output_is_told_as_by_the_accessor(text: str, lines: list[str]) -> None:
    text += "".join(f"{line}\n" for line in lines)
    ctx = prepare(parse(text))
    for node in ctx.nodes(t.OutputBinding):
        ctx.diagnostics.clear()
        grammar._unnamed_output(ctx, node)
        expected = node.name is None and not any(
            isinstance(c, t.Operator) and c.value == "=" for c in node.children
        )
        assert [d.code for d in ctx.diagnostics] == (["W033"] if expected else []), text


@given(st.one_of(programs(), texts))
def test_covering_is_told_by_class_as_isinstance_says(text: str) -> None:
    for node in NodeIndex(parse(text)).nodes(*grammar._OUTSIDE):
        expected = False
        parent = node.parent
        while parent is not None:
            if isinstance(parent, grammar._COVERING):
                expected = True
                break
            parent = parent.parent
        assert grammar._covered(node, set()) == expected, text
