"""The last run's figures for the editor features: the VM's reading of the journal
(``vm/context/last_run.py``) as the plain ``ide.run_costs`` data, and the features' answers
with them.  Any failure is no figures: a hover or an inlay hint never fails for them."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from openprose.ide.run_costs import (
    Budget,
    RunCosts,
    RunHint,
    StatementCost,
    Totals,
    hover_section,
    run_hints,
)
from openprose.ide.types import Pos, Range

log = logging.getLogger("prose-ls")


def costs_for(path: Path | None) -> RunCosts | None:
    """The figures of the newest run of the program at ``path``; None without one."""
    if path is None:
        return None
    try:
        from openprose.vm.context.last_run import last_run

        found = last_run(path)
        return convert(found) if found is not None else None
    except Exception:
        log.exception("cannot read the last run of %s", path)
        return None


def convert(found: Any) -> RunCosts:
    """``vm.context.last_run.LastRun`` as ``RunCosts``."""
    from openprose.vm.context.record import LAYERS

    statements = {}
    for line, statement in found.statements.items():
        budget = statement.budgets[-1] if statement.budgets else None
        statements[line] = StatementCost(
            line,
            statement.statement,
            _totals(statement.tally),
            Budget(
                budget.model,
                budget.window,
                tuple((name, int(getattr(budget.layers, name))) for name in LAYERS),
                budget.counter,
                tuple(budget.actions),
            )
            if budget is not None
            else None,
            len(statement.budgets),
        )
    agents = {name: _totals(tally) for name, tally in found.agents.items()}
    return RunCosts(found.run_id, found.started_at, statements, agents)


def _totals(tally: Any) -> Totals:
    return Totals(
        tally.calls,
        tally.input_tokens,
        tally.output_tokens,
        tally.cache_read_tokens + tally.cache_write_tokens,
        tally.cost,
    )


def hover_text(analysis: Any, position: Pos) -> str | None:
    """The run section of the hover at ``position``, if any."""
    try:
        return hover_section(analysis, position, costs_for(analysis.path), time.time())
    except Exception:
        log.exception("run figures for the hover failed")
        return None


def hints(analysis: Any, range: Range) -> list[RunHint]:
    try:
        return run_hints(analysis, range, costs_for(analysis.path))
    except Exception:
        log.exception("run figures for the inlay hints failed")
        return []
