"""Program order found from the node index equals program order found by walking the tree.

``flow.runs`` finds what each top-level item and each statement of a block's body runs
(sessions, resumes, ``do`` invocations) from the index of a module, each climbing to the
root it runs in, rather than walking every node (``flow._events``).  Both must give the
same events in the same order, and so the same runs, whatever the program: in blocks,
nested blocks, invocations whose arguments hold sessions, error nodes, a block's header.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprose.analysis import flow, prepare
from openprose.syntax import parse
from openprose.syntax import tree as t
from tests.support.strategies import programs, texts

KINDS = [(t.Session, t.Resume), (t.Session,), (t.Resume,)]

EXAMPLES = [
    'session "a"\nsession "b"\n',
    'block twice:\n  session "inner"\n  do other\nblock other:\n  resume: writer\n'
    'session "first"\ndo twice\ndo twice\n',
    'block outer:\n  block inner:\n    session "deep"\n  session "shallow"\ndo outer\n',
    'agent writer:\n  persist: true\n  model: sonnet\nsession: writer\n  prompt: "x"\n'
    'resume: writer\n  prompt: "y"\n',
    'let x = do helper(session "arg")\nblock helper(a):\n  session "body"\n',
    'parallel:\n  a = session "a"\n  b = do step\nblock step:\n  session "s"\n',
    'if **x**:\n  session "a"\nelse:\n  do b\nblock b:\n  session ) "broken"\n',
    'repeat 2:\n  session "a"\n  $$ session "b"\ndo nothing\n',
    'block b(x, session "in header"):\n  session "body"\n',
]


def walked(ctx: Any, kinds: tuple[type, ...]) -> dict[int, list[tuple[bool, Any]]]:
    """Each root's events as walking it finds them."""
    found = {}
    for child in ctx.module.children:
        if hasattr(child, "children"):
            found[id(child)] = flow._events(child, kinds)
    for block in ctx.nodes(t.BlockDefinition):
        for statement in block.body_statements():
            found[id(statement)] = flow._events(statement, kinds)
    return found


def run_view(runs: list[flow.Run]) -> list[tuple[Any, ...]]:
    return [
        (id(run.node), run.order, run.key, [(key, id(node)) for key, node in run.chain])
        for run in runs
    ]


def assert_same_as_walking(text: str) -> None:
    ctx = prepare(parse(text))
    for kinds in KINDS:
        indexed = flow._indexed_events(ctx, kinds)
        assert indexed is not None
        for key, events in walked(ctx, kinds).items():
            got = indexed.get(key, [])
            assert [(r, id(n)) for r, n in got] == [(r, id(n)) for r, n in events], text
        agents = {leaf.value for leaf, _ in ctx.model.agent_references} | {"writer"}
        for wanted in (None, agents):
            fast = flow.runs(ctx, kinds, wanted)
            slow = _runs_walking(ctx, kinds, wanted)
            assert run_view(fast) == run_view(slow), text


def _runs_walking(ctx: Any, kinds: tuple[type, ...], agents: Any) -> list[flow.Run]:
    saved = flow._indexed_events
    flow._indexed_events = lambda ctx, kinds: None
    try:
        return flow.runs(ctx, kinds, agents)
    finally:
        flow._indexed_events = saved


@pytest.mark.parametrize("text", EXAMPLES)
def test_examples(text: str) -> None:
    assert_same_as_walking(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(programs(), texts))
def test_random_programs(text: str) -> None:
    assert_same_as_walking(text)


def test_an_index_of_runs_walks() -> None:
    # The incremental analysis's index of runs keeps each run's events in its memo: walked.
    from openprose.analysis.incremental import IncrementalAnalysis

    ctx = IncrementalAnalysis().prepare(parse('session "a"\n'))
    assert flow._indexed_events(ctx, (t.Session,)) is None
    # Nor does a class whose order by position this does not know to be the walk's.
    assert flow._indexed_events(prepare(parse('session "a"\n')), (t.Parallel,)) is None


_AGENT_LINES = st.sampled_from(
    [
        "session: a\n",
        "session x: a\n",
        "session a\n",
        'session "p"\n',
        "session:\n",
        "session: 1\n",
        "session = a\n",
        "resume: a\n",
        "resume a\n",
        "resume = a\n",
        "resume:\n",
        'let x = session: a\n  prompt: "p"\n',
        "  model: opus\n",
    ]
)


# The runs read a session's or resume's agent in one look at its children: it is the
# accessor's, whatever the header.
@given(st.one_of(programs(), texts, st.lists(_AGENT_LINES, max_size=6).map("".join)))
def test_agent_of_is_the_accessor_s(text: str) -> None:
    index = prepare(parse(text)).index
    for node in index.nodes(t.Session, t.Resume):
        assert flow.agent_of(node) is node.agent
    for node in index.nodes(t.DoInvocation):
        assert flow.agent_of(node) is None


# The runs of a program stop at MAX_RUNS, wherever the bound falls: in a group that inlines
# no block (read from the index without a summary) or in one that does (played).
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(min_value=0, max_value=6))
def test_the_bound_cuts_the_runs_as_walking_does(text: str, bound: int) -> None:
    _bounded(text, bound)


_WRITERS = (
    "agent writer:\n  persist: true\n"
    + 'session: writer\n  prompt: "a"\nsession "b"\nresume: writer\n  prompt: "c"\n' * 3
)


@pytest.mark.parametrize("bound", range(8))
@pytest.mark.parametrize("text", [_WRITERS, _WRITERS + 'block b():\n  session "d"\ndo b()\n'])
def test_the_bound_falls_between_an_agent_s_runs(text: str, bound: int) -> None:
    _bounded(text, bound)


def _bounded(text: str, bound: int) -> None:
    saved = flow.MAX_RUNS
    flow.MAX_RUNS = bound
    try:
        assert_same_as_walking(text)
    finally:
        flow.MAX_RUNS = saved
