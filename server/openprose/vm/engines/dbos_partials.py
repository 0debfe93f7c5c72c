"""What a fan-out's item did before a sibling's failure cancelled it, kept for its run on the
dbos engine, as the local engine keeps it.

A local fan-out's fail-fast cancels the items still running, in the run's process: what
they narrated and spent until then is in the run's narration and its totals.  Spread over
workers, a cancelled item's workflow records no outcome (DBOS refuses the output of a
cancelled workflow), so the run reported a failed fan-out without the sessions its
cancelled items had completed, though their exchanges were journaled and paid for.

Here the worker of an item cancelled by DBOS writes the item's partial outcome (its events
and spending so far, without bindings or a value) into ``openprose_partials`` in the system
database, keyed by the item's workflow id; the run that cancelled it waits for the rows of
the items that were running, and applies them as it applies an outcome, less its bindings.
A program call spread as a workflow of its own (a race's losing branch called it, or the
run was cancelled during it) keeps what it narrated and spent the same way.

Imported only by the dbos engine.
"""

from __future__ import annotations

import asyncio
import functools
import pickle
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from openprose.vm.branches import BranchOutcome, CallOutcome
from openprose.vm.engines.dbos_tables import insert, make

PARTIALS_TABLE = "openprose_partials"
# How long a run waits for the partial outcomes of the items it cancelled that were running:
# their workers notice the cancellation within dbos_branches.CANCEL_POLL_SECONDS.
# A dead worker's item writes none, nor one whose outcome DBOS refused in the instant
# between its last look and the cancellation; the run goes on without it then.
WAIT_SECONDS = 3.0
POLL_SECONDS = 0.05


@functools.cache
def _table() -> Any:
    import sqlalchemy as sa

    return sa.Table(
        PARTIALS_TABLE,
        sa.MetaData(),
        sa.Column("workflow_id", sa.Text, primary_key=True),
        sa.Column("attempt", sa.String(255), nullable=False, index=True),
        sa.Column("outcome", sa.LargeBinary, nullable=False),
    )


def make_table(engine: Any) -> None:
    """The table, made by a process's launch."""
    make(engine, _table())


Outcome = BranchOutcome | CallOutcome


def partial(outcome: Outcome) -> Outcome:
    """What of an item's (or a program call's) outcome its run keeps when it was
    cancelled: its narration and spending; no value, no failure, no bindings (a failed
    fan-out commits none), no outputs."""
    if isinstance(outcome, CallOutcome):
        return replace(outcome, status="cancelled", outputs={}, error="", fatal=False, raised=None)
    return replace(
        outcome,
        value=None,
        error=None,
        fatal=None,
        bindings=[],
        scope={},
        shadowed=frozenset(),
    )


def keep(engine: Any, attempt: str, workflow_id: str, outcome: Outcome) -> None:
    """Writes the partial outcome of the item ``workflow_id`` of the run's attempt
    ``attempt`` (once: an item run again after its worker died keeps the first)."""
    row = {
        "workflow_id": workflow_id,
        "attempt": attempt,
        "outcome": pickle.dumps(partial(outcome)),
    }
    with engine.begin() as connection:
        connection.execute(
            insert(engine, _table(), row).on_conflict_do_nothing(index_elements=["workflow_id"])
        )


def _read(engine: Any, ids: Sequence[str]) -> dict[str, Outcome]:
    import sqlalchemy as sa

    table = _table()
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(table.c.workflow_id, table.c.outcome).where(table.c.workflow_id.in_(ids))
        ).all()
    found = {}
    for workflow_id, blob in rows:
        outcome = pickle.loads(blob)
        if isinstance(outcome, BranchOutcome | CallOutcome):
            found[str(workflow_id)] = outcome
    return found


async def collect(
    engine: Any, ids: Sequence[str], seconds: float = WAIT_SECONDS
) -> dict[str, Outcome]:
    """The partial outcomes of the items (or calls) ``ids``, waited for up to ``seconds`` (0: those
    written already)."""
    deadline = time.monotonic() + seconds
    while True:
        found = await asyncio.to_thread(_read, engine, list(ids)) if ids else {}
        if len(found) == len(ids) or time.monotonic() >= deadline:
            return found
        await asyncio.sleep(POLL_SECONDS)
