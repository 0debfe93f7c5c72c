"""The incremental analysis equals a full analysis after every edit.

An `IncrementalAnalysis` keeps a document's analysis across edits and redoes only what an
edit can change (analysis/incremental.py). After each edit of a random sequence, its
diagnostics and its semantic model must equal those of `analysis.check` on a fresh parse of
the same text. The edits favour what invalidation must get right: names that start or stop
meaning an agent, block or variable, definitions added and removed, lines that move the
statements below. bench/incremental_analysis.py runs the same comparison over many more
edits.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprose.analysis import diagnostics_of, prepare
from openprose.analysis.incremental import IncrementalAnalysis
from openprose.diagnostics import Diagnostic
from openprose.syntax import Document, parse
from tests.corpus import location
from tests.support.analysis_edits import LINES, analysed, compared, diagnostics_view, edit_at
from tests.support.strategies import programs


def abandon_midway(incremental: IncrementalAnalysis, module: Any, rng: random.Random) -> None:
    """Start an analysis and close it after a few of its steps, as the server does when an
    edit arrives while it analyses.  (Both counts are drawn first: how many steps there are
    depends on how the items fall into runs, which may differ from one run to the next.)"""
    preparing_steps, checking_steps = rng.randint(0, 30), rng.randint(0, 10)
    preparing = incremental.prepare_steps(module)
    for _ in range(preparing_steps):
        try:
            next(preparing)
        except StopIteration as done:
            checking = incremental.diagnostics_steps(done.value)
            for _ in range(checking_steps):
                try:
                    next(checking)
                except StopIteration:
                    break
            checking.close()
            return
    preparing.close()


def check_edits(text: str, rng: random.Random, count: int, abandon: bool = False) -> None:
    document, incremental = analysed(text)
    for _ in range(count):
        start, end, new = edit_at(rng, document.text)
        before = document.text
        document.apply_edit(start, end, new)
        incremental.changed(document.touched)
        if abandon and rng.random() < 0.5:
            # The analysis of this version is given up; the next edit comes on top.
            abandon_midway(incremental, document.module, rng)
            continue
        differs, model = compared(document, incremental)
        assert differs is None, f"{differs} differ after {(start, end, new)!r} on {before!r}"
        assert_coherent(model)


def assert_coherent(model: Any) -> None:
    """The model's parts name the same objects: each variable a reference finds, and each
    the program scope binds, is one of its definitions (a model pieced together from old
    and new records could list a symbol that no longer is the one found)."""
    defined = {id(symbol) for symbol in model.definitions}
    found = [r.symbol for r in model.references if r.symbol is not None]
    found += model.program_scope.symbols.values()
    assert all(id(symbol) in defined for symbol in found)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.randoms(use_true_random=False))
def test_equals_a_full_analysis_after_every_edit(text: str, rng: random.Random) -> None:
    check_edits(text, rng, 12)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=25), st.randoms(use_true_random=False))
def test_definitions_and_uses_added_renamed_and_removed(
    lines: list[str], rng: random.Random
) -> None:
    check_edits("".join(lines), rng, 15)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=40), st.randoms(use_true_random=False))
def test_an_analysis_closed_midway_leaves_the_next_one_exact(
    lines: list[str], rng: random.Random
) -> None:
    check_edits("".join(lines * 3), rng, 16, abandon=True)


CORPUS = location.files()[::7]


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS, ids=[location.relative(p) for p in CORPUS])
def test_corpus_program_after_random_edits(path: Any) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    check_edits(text, random.Random(location.relative(path)), 10)


# --------------------------------------------------------------------------- what is redone

MANY = "".join(
    f'agent agent{k}:\n  model: sonnet\n\nlet value{k} = session: agent{k}\n  prompt: "{k}"\n\n'
    for k in range(300)
)


def edited(
    document: Document,
    incremental: IncrementalAnalysis,
    start: tuple[int, int],
    end: tuple[int, int],
    text: str,
) -> list[Diagnostic]:
    document.apply_edit(start, end, text)
    incremental.changed(document.touched)
    return incremental.diagnostics(incremental.prepare(document.module))


def test_an_edit_rechecks_the_runs_it_reaches_not_the_program() -> None:
    document, incremental = analysed(MANY)
    before = {tuple(map(id, run)) for run in incremental.runs()}
    # A character typed into one prompt (line 905).
    edited(document, incremental, (904, 12), (904, 12), "x")
    runs = incremental.runs()
    new = [k for k, run in enumerate(runs) if tuple(map(id, run)) not in before]
    edited_run = next(
        k for k, run in enumerate(runs) if run[0].start_pos[0] <= 905 <= run[-1].end_pos[0]
    )
    # Exactly the runs the edit made anew are checked again: one stretch holding the edited
    # line. Where a run ends depends on its items' identities (their addresses), so the
    # stretch may reach a few runs past the edited one before the cuts fall where they fell
    # (1 to 5 runs in 100 tries; a bound of 6 failed about once in 30): never the program.
    assert len(runs) >= 20
    assert incremental.statistics.rechecked == len(new)
    assert edited_run in new and new == list(range(new[0], new[-1] + 1))
    assert len(new) < len(runs) // 2
    assert incremental.statistics.rebound <= 3


def test_a_statement_reparsed_with_the_same_text_keeps_its_symbols() -> None:
    # The incremental parser reparses the statement before an edit too: the input below is
    # a new node with the same text after a keystroke in the prompt under it. Its symbol
    # stays the one every use far below found, so their statements are replayed, not bound
    # again (each new symbol used to rebind its readers, whose new symbols rebound theirs).
    text = 'input topic: "t"\n\nsession "about it"\n' + "".join(
        f'let v{k} = session "on {{topic}}"\n' for k in range(300)
    )
    document, incremental = analysed(text)
    symbol = incremental.prepare(document.module).model.program_scope.symbols["topic"]
    input_node = document.module.children[0]
    found = edited(document, incremental, (2, 10), (2, 10), "x")
    assert incremental.statistics.rebound <= 3
    assert found == []
    assert document.module.children[0] is not input_node  # reparsed with the same text
    model = incremental.prepare(document.module).model
    assert model.program_scope.symbols["topic"] is symbol
    assert symbol.node is document.module.children[0]
    assert_coherent(model)


def test_renaming_a_skill_with_spaces_reaches_its_uses_far_below() -> None:
    # A run keeps the words of its strings, not their whole texts when they hold spaces:
    # a changed name that is such a text may be used in any run.
    text = (
        'import " web search " from "./skills/web"\n\n'
        + 'session "filler"\n' * 300
        + 'agent a:\n  skills: [" web search "]\n'
    )
    document, incremental = analysed(text)
    before = edited(document, incremental, (0, 0), (0, 0), "")
    assert "W007" not in [d.code for d in before]
    found = edited(document, incremental, (0, 12), (0, 18), "find")
    want = diagnostics_of(prepare(parse(document.text)))
    assert diagnostics_view(found) == diagnostics_view(want)
    assert "W007" in [d.code for d in found]


def test_renaming_an_agent_reaches_its_sessions_far_below() -> None:
    text = "agent writer:\n  model: sonnet\n\n" + 'session "filler"\n' * 400 + "session: writer\n"
    document, incremental = analysed(text)
    found = edited(document, incremental, (0, 6), (0, 12), "author")
    assert [(d.code, d.start) for d in found] == [("E007", (404, 9))]
    found = edited(document, incremental, (0, 6), (0, 12), "writer")
    assert found == []


def test_enter_above_moves_the_diagnostics_below_without_checking_them_again() -> None:
    text = 'session "x"\n' * 300 + "session: nobody\n"
    document, incremental = analysed(text)
    found = edited(document, incremental, (0, 0), (0, 0), "\n\n")
    assert [(d.code, d.start) for d in found] == [("E007", (303, 9))]
    assert incremental.statistics.rechecked <= 1
    assert incremental.statistics.moved >= 1


def test_a_definition_far_above_changes_what_a_reference_means() -> None:
    text = 'session "{draft}"\n' + 'session "filler"\n' * 300 + 'let draft = session "d"\n'
    document, incremental = analysed(text)
    [undefined] = edited(document, incremental, (300, 0), (300, 0), "\n")
    assert undefined.code == "E044"
    assert "used before it is defined" in undefined.message
    found = edited(document, incremental, (0, 0), (0, 0), 'let draft = session "first"\n')
    assert [d.code for d in found] == ["E019"]  # now defined twice, and the use is fine


def test_an_analysis_closed_while_binding_leaves_no_stale_run_behind() -> None:
    # Every run below uses `draft`; renaming its definition makes each use undefined, so
    # the binder binds the runs again, and is stopped halfway through them.
    text = 'let draft = session "d"\n' + "".join(
        f'let v{k} = session "about {{draft}}"\n' for k in range(600)
    )
    document, incremental = analysed(text)
    runs = incremental.statistics.items
    document.apply_edit((0, 4), (0, 9), "sketch")
    incremental.changed(document.touched)
    preparing = incremental.prepare_steps(document.module)
    # The declarations of the renamed run, then half the walk (every run is bound again,
    # and pauses after it).
    for _ in range(1 + runs // 2):
        next(preparing)
    preparing.close()
    found = edited(document, incremental, (600, 0), (600, 0), "\n")
    want = diagnostics_of(prepare(parse(document.text)))
    assert diagnostics_view(found) == diagnostics_view(want)
    assert len(found) == 600
    assert_coherent(incremental.prepare(document.module).model)


def test_the_index_of_runs_gives_each_class_in_the_order_of_one_walk() -> None:
    # Enough items for several runs (a run holds at most 64), each run holding sessions,
    # agents, blocks and bindings: the runs' lists joined out of order would differ.
    text = "".join(
        f"agent a{i}:\n  model: sonnet\n"
        f'let x{i} = session: a{i}\n  prompt: "step {i}"\n'
        f'block b{i}():\n  session "inner {i}"\n'
        f"do b{i}()\n"
        for i in range(60)
    )
    ctx = IncrementalAnalysis().prepare(parse(text))
    assert len(ctx.index.groups()) > 2
    pieced = ctx.index.by_class()
    whole = prepare(parse(text)).index.by_class()
    assert set(pieced) == set(whole)
    for kind, nodes in whole.items():
        assert [n.start_pos for n in pieced[kind]] == [n.start_pos for n in nodes], kind
