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
from tests.support.analysis_edits import LINES, diagnostics_view, edit_at, model_view
from tests.support.strategies import programs


def check_edits(text: str, rng: random.Random, count: int) -> None:
    document = Document(text)
    incremental = IncrementalAnalysis()
    incremental.diagnostics(incremental.prepare(document.module))
    for _ in range(count):
        start, end, new = edit_at(rng, document.text)
        before = document.text
        document.apply_edit(start, end, new)
        incremental.changed(document.touched)
        ctx = incremental.prepare(document.module)
        got = diagnostics_view(incremental.diagnostics(ctx))
        full = prepare(parse(document.text))
        want = diagnostics_view(diagnostics_of(full))
        where = f"after {(start, end, new)!r} on {before!r}"
        assert got == want, where
        assert model_view(ctx.model) == model_view(full.model), where


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


def analysed(text: str) -> tuple[Document, IncrementalAnalysis]:
    document = Document(text)
    incremental = IncrementalAnalysis()
    incremental.diagnostics(incremental.prepare(document.module))
    return document, incremental


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
    runs = incremental.statistics.items
    # A character typed into one prompt.
    edited(document, incremental, (904, 12), (904, 12), "x")
    assert runs > 10
    assert incremental.statistics.rechecked <= 2
    assert incremental.statistics.rebound <= 2


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
