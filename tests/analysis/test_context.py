"""analysis/context.py: ``prepare`` builds the whole context in one step, and the semantic
model and the rules read one walk of the tree."""

from __future__ import annotations

from openprose.analysis import check, diagnostics_of, prepare
from openprose.syntax import parse
from openprose.syntax import tree as t

SOURCE = 'agent a:\n  model: sonnet\nlet x = session: a\n  prompt: "p"\nsession "{x}"\n'


def test_prepare_builds_the_model_from_the_index_the_rules_query() -> None:
    module = parse(SOURCE)
    ctx = prepare(module)
    assert ctx.model.module is module
    assert ctx.index.module is module
    # One walk: the model's queries are the rules' cached answers.
    sessions = ctx.nodes(t.Session)
    assert sessions is ctx.index.nodes(t.Session)
    assert [s.start_pos for s in sessions] == [(3, 8), (5, 0)]
    assert [leaf.value for leaf in ctx.strings()] == ['"p"', '"{x}"']


def test_a_prepared_context_reports_as_the_one_shot_check() -> None:
    for source in (SOURCE, "session\n", 'let y = x\nsession "{z}"\n'):
        prepared = [d.code for d in diagnostics_of(prepare(parse(source)))]
        assert prepared == [d.code for d in check(parse(source))]
    assert [d.code for d in diagnostics_of(prepare(parse("session\n")))] == ["E003"]
