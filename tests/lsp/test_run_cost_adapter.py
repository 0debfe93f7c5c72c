"""The server's reading of the last run (lsp/run_costs.py): the VM's figures as the editor's
plain data, and no figures, never an error, when reading them fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.ide.analysis import analyze_document
from openprose.ide.run_costs import Budget, Totals
from openprose.ide.types import Range
from openprose.lsp import run_costs
from openprose.vm.accounting import Tally
from openprose.vm.backends.base import Usage
from openprose.vm.context import last_run
from openprose.vm.context.last_run import LastRun, StatementRun
from openprose.vm.context.record import Layers, SessionBudget

TEXT = 'let notes = session "Take notes"\n'


def figures() -> LastRun:
    tally = Tally()
    tally.add(
        Usage(input_tokens=10, output_tokens=5, cache_read_tokens=2, cache_write_tokens=1), 0.5
    )
    budgets = tuple(
        SessionBudget(f"1#attempt{n}", "", TEXT.strip(), 1, "main.prose", "m", 1_000,
                      Layers(prompt=n, reserve=100), actions=(f"try {n}",))
        for n in (1, 2)
    )  # fmt: skip
    statements = {1: StatementRun(1, TEXT.strip(), tally, budgets)}
    return LastRun("r1", 1.0, "filesystem", "main.prose", statements, {"": tally})


def test_the_vm_figures_become_plain_data() -> None:
    costs = run_costs.convert(figures())
    assert (costs.run_id, costs.started_at) == ("r1", 1.0)
    statement = costs.statements[1]
    assert statement.totals == Totals(1, 10, 5, 3, 0.5)
    assert statement.attempts == 2
    assert statement.budget == Budget(
        "m",
        1_000,
        (("system", 0), ("memory", 0), ("history", 0), ("context", 0), ("prompt", 2),
         ("reserve", 100)),
        "estimate",
        ("try 2",),
    )  # fmt: skip
    assert costs.agents == {"": Totals(1, 10, 5, 3, 0.5)}


def test_a_failure_to_read_the_run_is_no_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(path: Path) -> LastRun:
        raise RuntimeError("a bug in the reader")

    monkeypatch.setattr(last_run, "last_run", broken)
    analysis = analyze_document(TEXT, path="/project/main.prose")
    assert run_costs.costs_for(analysis.path) is None
    assert run_costs.hover_text(analysis, (0, 14)) is None
    assert run_costs.hints(analysis, Range((0, 0), (9, 0))) == []


def test_the_figures_reach_the_features(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(last_run, "last_run", lambda path: figures())
    analysis = analyze_document(TEXT, path="/project/main.prose")
    assert [h.label for h in run_costs.hints(analysis, Range((0, 0), (9, 0)))] == [
        "18 tok · $0.5000"
    ]
    text = run_costs.hover_text(analysis, (0, 14))
    assert text is not None and "| prompt | 2 |" in text
    assert run_costs.costs_for(None) is None  # an unsaved document has no runs
