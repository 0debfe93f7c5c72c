"""The binder's shortcuts give what the tree's accessors give.

The binder (analysis/model.py) reads some nodes directly instead of through their accessors
(the walk costs most of a check's analysis): a string's interpolations without building its
parts, positions from the leaf's when a value is one line, a construct's body and a block's
statements from the children, classes by exact type.  Each property below draws programs
(well formed, and random text that leaves broken trees) and checks a shortcut against what
it replaced.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprose.analysis import model as model_module
from openprose.analysis.context import NodeIndex
from openprose.analysis.model import (
    _INTERPOLATION,
    _LEAF_START,
    _UNSEEN,
    _VALUES,
    Binder,
    Model,
    _after_equals,
    _body,
    _do_arguments,
    _keyword_name,
    _output_name,
    _parameters,
    _property_value,
    _session_parts,
    build_model,
)
from openprose.syntax import parse
from openprose.syntax import tree as t
from tests.support.strategies import programs, texts

_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces of a string's body that make interpolations, escapes and near misses.
_PIECES = st.sampled_from(
    [
        "{x}",
        "{a.b}",
        "{a-b.c-d}",
        "{item}",
        "{1x}",
        "{x",
        "}",
        "{",
        "{}",
        "{a b}",
        "{a.}",
        "\\{x}",
        "\\",
        "\\\\",
        '\\"',
        "\n",
        "\r\n",
        "\r",
        "  ",
        "text",
        "é",
        "{é}",
        "{_x}",
        "x",
        ".",
        "-",
    ]
)


def _string_programs() -> st.SearchStrategy[str]:
    body = st.lists(_PIECES, max_size=12).map("".join)
    quote = st.sampled_from(['"', '"""'])
    closed = st.booleans()

    def program(parts: tuple[str, str, bool, str]) -> str:
        text, q, close, where = parts
        literal = q + text + (q if close else "")
        if where == "prompt":
            return f"let x = 1\nsession {literal}\n"
        return f"let x = 1\nsession: writer\n  prompt: {literal}\n  context: x\n"

    return st.tuples(body, quote, closed, st.sampled_from(["prompt", "property"])).map(program)


def _expected(string: t.String) -> list[tuple[str | None, str, Any, Any]]:
    role = "placeholder" if string.is_triple else "interpolation"
    return [
        (part.name, role, part.start, part.end)
        for part in string.parts()
        if part.kind == "interpolation"
    ]


@_SETTINGS
@given(st.one_of(_string_programs(), programs(), texts))
def test_interpolation_references_are_the_string_parts(text: str) -> None:
    module = parse(text)
    model = build_model(module, NodeIndex(module).nodes)
    found: dict[int, list[tuple[str, str, Any, Any]]] = {}
    for reference in model.references:
        if isinstance(reference.leaf, t.String):
            found.setdefault(id(reference.leaf), []).append(
                (reference.name, reference.role, reference.start, reference.end)
            )
    strings = {id(leaf): leaf for leaf in t.iter_leaves(module) if isinstance(leaf, t.String)}
    for key, references in found.items():
        assert references == _expected(strings[key])


def test_interpolation_pattern_agrees_with_parts_on_every_short_value() -> None:
    # Scanned to the end of the value (closing quotes included, terminated or not): every
    # value of up to five characters of backslash, quote, braces and a name after each
    # opening quote.
    for quote in ('"', '"""'):
        for length in range(6):
            for chars in itertools.product('\\"{x}', repeat=length):
                value = quote + "".join(chars)
                leaf = t.String(value, t.LineAnchor(1), 0)
                expected = [
                    (part.start_offset, part.end_offset, part.name)
                    for part in leaf.parts()
                    if part.kind == "interpolation"
                ]
                found = [
                    (match.start(), match.end(), match.group(1))
                    for match in _INTERPOLATION.finditer(value, len(quote))
                    if match.group(1) is not None
                ]
                assert found == expected, value


@_SETTINGS
@given(st.one_of(_string_programs(), programs()))
def test_every_prompt_interpolation_is_a_reference(text: str) -> None:
    # Sessions' prompts and properties are always walked: none of their interpolations is
    # missing from the references.
    module = parse(text)
    model = build_model(module, NodeIndex(module).nodes)
    referenced = {id(reference.leaf) for reference in model.references}
    for session in NodeIndex(module).nodes(t.Session):
        prompt = session.prompt
        if prompt is not None and _expected(prompt):
            assert id(prompt) in referenced


@_SETTINGS
@given(st.one_of(programs(), texts))
def test_body_children_hold_the_body_statements(text: str) -> None:
    module = parse(text)
    for node in t.iter_nodes(module):
        if isinstance(node, t._HasSuite):
            statements = [c for c in _body(node) if isinstance(c, t.Statement)]
            assert statements == node.body_statements()


@_SETTINGS
@given(st.one_of(programs(), texts))
def test_nodes_read_from_their_children_as_the_accessors_read_them(text: str) -> None:
    module = parse(text)
    for node in t.iter_nodes(module):
        children = node.children
        if isinstance(node, t.Session):
            agent, block = _session_parts(children)
            assert agent is node.agent
            assert block is node.property_block
        elif isinstance(node, t.Property):
            assert _property_value(node) is node.value
        elif isinstance(node, t.AgentDefinition | t.BlockDefinition):
            word = "agent" if isinstance(node, t.AgentDefinition) else "block"
            assert _keyword_name(node, word) is node.name_leaf
            if isinstance(node, t.BlockDefinition):
                assert _parameters(node) == node.parameters()
        elif isinstance(node, t.InputDeclaration):
            assert _keyword_name(node, "input") is node.name
        elif isinstance(node, t.OutputBinding):
            assert _output_name(children) is node.name
            value = _after_equals(children, 2)
            assert value is _UNSEEN or value is node.value
        elif isinstance(node, t.DoInvocation):
            assert _do_arguments(node) is node.arguments
        elif isinstance(node, t.LetBinding | t.Assignment):
            value = _after_equals(children, 2 if isinstance(node, t.LetBinding) else 1)
            assert value is _UNSEEN or value is node.value
        elif isinstance(node, t.Arguments):
            items = [c for c in children if type(c) is t.KeywordArgument or type(c) in _VALUES]
            assert items == node.items()
        elif isinstance(node, t.ArrayLiteral):
            assert [c for c in children if type(c) in _VALUES] == node.elements()
        elif isinstance(node, t.ObjectLiteral):
            entries = [c for c in children if type(c) is t.ObjectEntry or type(c) in _VALUES]
            assert entries == node.entries()


@_SETTINGS
@given(st.one_of(programs(), texts))
def test_value_classes_are_the_accessors_values(text: str) -> None:
    for node in t.iter_nodes(parse(text)):
        for child in node.children:
            is_value = isinstance(child, t.Expression) and not isinstance(child, t.ErrorNode)
            assert (type(child) in _VALUES) == is_value
            if isinstance(child, t.Name):
                # The binder takes a name's end as its column plus its length.
                assert child.end_pos == (child.line, child.column + len(child.value))


def test_the_shortcuts_read_the_usual_shapes() -> None:
    # The shortcuts are taken (not only their fallbacks) for the common statements.
    module = parse('let x = session: writer\n  context: x\ny = "a"\n')
    let, assignment = module.statements()
    assert isinstance(let, t.LetBinding) and isinstance(assignment, t.Assignment)
    assert _after_equals(let.children, 2) is let.value is not None
    assert _after_equals(assignment.children, 1) is assignment.value is not None


def test_classes_read_by_exact_type_have_no_subclasses() -> None:
    # The binder tests these with ``type(node) is``: a subclass would be missed.
    for cls in (
        t.AgentDefinition,
        t.UseStatement,
        t.InputDeclaration,
        t.Suite,
        t.String,
        t.Name,
        t.Operator,
        t.Property,
        t.PropertyBlock,
        t.KeywordArgument,
        t.ObjectEntry,
        t.ConstBinding,
        t.Keyword,
        t.Parameters,
        t.Arguments,
        t.ElifClause,
        t.ElseClause,
        t.CatchClause,
        t.FinallyClause,
    ):
        assert cls.__subclasses__() == [], cls


def _plain_session(binder: Binder, node: t.Session, scope: Any, role: str) -> None:
    """A session bound through its accessors and ``_property`` (what the binder's inline
    reading of the usual properties stands for)."""
    if node.agent is not None:
        binder._trace.agent_references.append((node.agent, node))
    for prop in node.properties():
        binder._property(prop, scope)
    prompt = node.prompt
    if prompt is not None:
        binder._interpolations(prompt, scope)


def _plain_if(binder: Binder, node: t.IfStatement, scope: Any, in_parallel: bool) -> None:
    binder._expression(node.condition, scope)
    binder._walk(_body(node), scope, False)
    for clause in node.elif_clauses():
        binder._expression(clause.condition, scope)
        binder._walk(_body(clause), scope, False)
    if node.else_clause is not None:
        binder._walk(_body(node.else_clause), scope, False)


def _plain_try(binder: Binder, node: t.TryStatement, scope: Any, in_parallel: bool) -> None:
    binder._walk(_body(node), scope, False)
    for catch in node.catch_clauses():
        binder._catch(catch, scope)
    if node.finally_clause is not None:
        binder._walk(_body(node.finally_clause), scope, False)


def _plain_parallel(binder: Binder, node: t.Parallel, scope: Any, role: str) -> None:
    if node.modifiers is not None:
        for item in node.modifiers.items():
            if isinstance(item, t.KeywordArgument):
                binder._expression(item.value, scope)
    binder._walk(_body(node), scope, True)


def _summary(model: Model) -> list[Any]:
    """The references, agent references and definitions of a model, their symbols and scopes
    told by what they stand for (each binding makes its own)."""

    def symbol(found: Any) -> Any:
        return None if found is None else (found.name, found.kind, id(found.leaf))

    def scope(found: Any) -> tuple[Any, ...]:
        return found.kind, id(found.node)

    def positions(r: Any) -> tuple[Any, ...]:
        return r.start, r.end, symbol(r.hidden)

    return [
        [
            (r.name, r.role, id(r.leaf), symbol(r.symbol), *scope(r.scope), *positions(r))
            for r in model.references
        ],
        [(id(agent), id(node)) for agent, node in model.agent_references],
        [symbol(found) for found in model.definitions],
    ]


@_SETTINGS
@given(st.one_of(_string_programs(), programs(), texts))
def test_constructs_bind_as_through_their_accessors(text: str) -> None:
    # Sessions, ifs, trys and parallels are bound from their children as the parser puts
    # them; bound through the accessors instead, the model is the same.
    module = parse(text)
    nodes = NodeIndex(module).nodes
    fast = _summary(build_model(module, nodes))
    with pytest.MonkeyPatch.context() as patch:
        # The binder's tables by class, pointed at handlers that read through the accessors.
        expressions = model_module._EXPRESSION_HANDLERS
        statements = model_module._STATEMENT_HANDLERS
        walk = model_module._WALK_ENTRIES
        values: list[tuple[type, Any]] = [
            (t.Session, _plain_session),
            (t.Parallel, _plain_parallel),
        ]
        for kind, handler in values:
            patch.setitem(expressions, kind, handler)
            patch.setitem(walk, kind, (handler, "value"))
        constructs: list[tuple[type, Any]] = [
            (t.IfStatement, _plain_if),
            (t.TryStatement, _plain_try),
        ]
        for kind, handler in constructs:
            patch.setitem(statements, kind, handler)
            patch.setitem(walk, kind, (handler, None))
        plain = _summary(build_model(module, nodes))
    assert fast == plain


@_SETTINGS
@given(st.one_of(programs(), texts))
def test_definitions_sort_by_their_leaves_start(text: str) -> None:
    module = parse(text)
    for symbol in build_model(module, NodeIndex(module).nodes).definitions:
        assert _LEAF_START(symbol) == symbol.leaf.start_pos
