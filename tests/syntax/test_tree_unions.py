"""The tree's accessors return what their types say: an ``Expression`` where a value is read,
a ``Statement`` in a block of statements (the unions of ``syntax/tree.py``).

mypy trusts these annotations in every layer above, so they are checked here against the
parser's real output, on valid programs and on arbitrary fragments.
"""

from __future__ import annotations

import types

from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.syntax import parse
from openprose.syntax import tree as t
from tests.support.fragments import FRAGMENTS

_VALUE_ACCESSORS = {
    t.Property: ("value",),
    t.InputDeclaration: ("description",),
    t.OutputBinding: ("value",),
    t.LetBinding: ("value",),
    t.Assignment: ("value",),
    t.ForEach: ("collection",),
    t.Loop: ("condition",),
    t.ChoiceStatement: ("criteria",),
    t.IfStatement: ("condition",),
    t.ElifClause: ("condition",),
    t.Repeat: ("count",),
    t.Pipeline: ("source",),
    t.KeywordArgument: ("value",),
    t.ObjectEntry: ("value",),
}

# Bracketed lists: what their accessors return, and what else stands among their children.
_LISTS: dict[type[t.ProseNode], tuple[str, type[object] | types.UnionType, str]] = {
    t.Arguments: ("items", t.KeywordArgument | t.Expression, "(),"),
    t.ArrayLiteral: ("elements", t.Expression, "[],"),
    t.ObjectLiteral: ("entries", t.ObjectEntry | t.Expression, "{},"),
}


def _mistyped(source: str) -> list[str]:
    found = []
    for node in t.iter_nodes(parse(source)):
        if isinstance(node, t.Module | t.Suite):
            kids = node.children[:-1] if isinstance(node, t.Module) else node.children[1:]
            found += [f"statement {c!r}" for c in kids if not isinstance(c, t.Statement)]
        if isinstance(node, t.ErrorBlock):
            found += [
                f"error block {c!r}"
                for c in node.children
                if not isinstance(c, t.ProseLeaf | t.Statement | t.Property)
            ]
        for cls, names in _VALUE_ACCESSORS.items():
            if isinstance(node, cls):
                for name in names:
                    value = getattr(node, name)
                    if value is not None and not isinstance(value, t.Expression):
                        found.append(f"{cls.__name__}.{name} {value!r}")
        for cls, (name, kinds, punctuation) in _LISTS.items():
            if isinstance(node, cls):
                # The accessors keep what has their type: nothing else may stand in the list.
                found += [
                    f"{cls.__name__}.{name} {c!r}"
                    for c in node.children
                    if not isinstance(c, kinds | t.ErrorNode)
                    and not (isinstance(c, t.Operator) and c.value in punctuation)
                ]
        # These two assert their types as they read them.
        if isinstance(node, t.Attribute):
            assert isinstance(node.base, t.Name | t.ProgramCall | t.Subscript)
        if isinstance(node, t.ObjectEntry):
            assert isinstance(node.key, t.Name | t.String)
        if isinstance(node, t.ArrowSequence):
            found += [f"step {s!r}" for s in node.steps() if not isinstance(s, t.Expression)]
    return found


def test_a_header_missing_its_value_has_none_not_its_colon() -> None:
    assert _mistyped('for x in :\n  session "a"\nchoice :\n  option "o":\n    session "b"\n') == []
    module = parse('for x in :\n  session "a"\n')
    loop = module.statements()[0]
    assert isinstance(loop, t.ForEach)
    assert loop.collection is None


def test_every_construct_of_a_program_is_typed() -> None:
    source = (
        'agent a:\n  model: sonnet\n  prompt: "p"\n'
        'input topic: "t"\n'
        'let x = session: a\n  prompt: "q"\n'
        "const { r, s } = prog(n: 1)\n"
        'y = session "a" -> session "b"\n'
        'for item, i in [1, 2] | map:\n  session "m"\n'
        'loop until **done** (max: 3):\n  session "l"\n'
        'if **c** and not **d**:\n  session "i"\nelif x == 1:\n  throw "e"\nelse:\n'
        "  output z = x.a[0]\n"
        'choice **best**:\n  option "o":\n    session "c"\n'
    )
    assert _mistyped(source) == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join))
def test_arbitrary_text_is_typed(source: str) -> None:
    assert _mistyped(source) == []
