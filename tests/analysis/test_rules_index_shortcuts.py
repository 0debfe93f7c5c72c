"""The shortcuts the rules take through the node index answer what its queries answer.

The rules ask ``NodeIndex.by_class()`` for the nodes of one class instead of querying
``nodes(kind)`` (a small file holds no node of most classes, and a query costs more than a
look in a dict): for each class, it must hold exactly the nodes of that class that a query
finds, in the same order, for a module's index and for the index an incremental analysis
pieces together from its runs.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprose.analysis import prepare
from openprose.analysis.context import NodeIndex
from openprose.analysis.incremental import IncrementalAnalysis
from openprose.syntax import parse
from openprose.syntax import tree as t
from tests.support.strategies import programs, texts

# Every class of node the tree defines (whether or not a program holds one).
_CLASSES = [
    kind
    for kind in vars(t).values()
    if isinstance(kind, type) and issubclass(kind, t.ProseNode) and kind is not t.ProseNode
]


def assert_by_class_answers_queries(index: NodeIndex) -> None:
    found = index.by_class()
    for kind in _CLASSES:
        exact = [node for node in index.nodes(kind) if type(node) is kind]
        assert list(found.get(kind, ())) == exact, kind.__name__


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(programs(), texts))
def test_by_class_holds_what_a_query_finds(text: str) -> None:
    assert_by_class_answers_queries(NodeIndex(parse(text)))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_by_class_of_an_index_made_of_runs(text: str) -> None:
    module = parse(text)
    ctx = IncrementalAnalysis().prepare(module)
    assert type(ctx.index) is not NodeIndex  # the runs' index, not one walk
    assert_by_class_answers_queries(ctx.index)
    whole = prepare(parse(text)).index.by_class()
    pieced = ctx.index.by_class()
    for kind in _CLASSES:
        assert _positions(pieced.get(kind, ())) == _positions(whole.get(kind, ())), kind


def test_a_class_the_module_lacks_is_absent() -> None:
    found = NodeIndex(parse('session "hello"\n')).by_class()
    assert found[t.Session][0].prompt.value == '"hello"'
    assert t.Parallel not in found


def _positions(nodes: Any) -> list[tuple[int, int]]:
    return [node.start_pos for node in nodes]
