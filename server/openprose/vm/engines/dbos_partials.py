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
An item that ends writes its row before it returns: a cancellation between its return and
DBOS's record of its outcome (which DBOS then refuses) would otherwise lose it.  The run
drops the rows of the items whose outcomes DBOS recorded (``drop``).
A program call spread as a workflow of its own (a race's losing branch called it, or the
run was cancelled during it) keeps what it narrated and spent the same way.

Imported only by the dbos engine.
"""

from __future__ import annotations

import asyncio
import functools
import pickle
import time
from collections.abc import Callable, Sequence
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
    keep_all(engine, [(attempt, workflow_id, outcome)])


def keep_all(engine: Any, kept: Sequence[tuple[str, str, Outcome]]) -> None:
    """``keep`` for each (attempt, workflow id, outcome) of ``kept``, in one transaction."""
    with engine.begin() as connection:
        for attempt, workflow_id, outcome in kept:
            row = {
                "workflow_id": workflow_id,
                "attempt": attempt,
                "outcome": pickle.dumps(partial(outcome)),
            }
            connection.execute(
                insert(engine, _table(), row).on_conflict_do_nothing(index_elements=["workflow_id"])
            )


class Keeper:
    """The partial outcomes of the items ending on one event loop, written together: an
    item that ends while another's row is being written waits for the next write, with
    every row that came meanwhile (one transaction for many, where SQLite's single writer
    made each item's own a wait for the lock)."""

    def __init__(
        self, engine: Any, write: Callable[[Any, Sequence[tuple[str, str, Outcome]]], None]
    ) -> None:
        self.engine = engine
        self.write = write  # keep_all, waiting out a lost connection as DBOS's writes do
        self.waiting: list[tuple[tuple[str, str, Outcome], asyncio.Future[None]]] = []
        self.writer: asyncio.Task[None] | None = None

    async def keep(self, attempt: str, workflow_id: str, outcome: Outcome) -> None:
        done = asyncio.get_running_loop().create_future()
        self.waiting.append(((attempt, workflow_id, outcome), done))
        if self.writer is None or self.writer.done():
            self.writer = asyncio.get_running_loop().create_task(self._write())
        await done

    async def _write(self) -> None:
        while self.waiting:
            batch, self.waiting = self.waiting, []
            try:
                await asyncio.to_thread(self.write, self.engine, [row for row, _ in batch])
            except Exception as error:
                for _, done in batch:
                    if not done.done():
                        done.set_exception(error)
            else:
                for _, done in batch:
                    if not done.done():
                        done.set_result(None)


def drop(engine: Any, ids: Sequence[str]) -> None:
    """Removes the partial outcomes of the items (or calls) ``ids``, which DBOS recorded
    the outcomes of: only a cancelled one's is ever read."""
    import sqlalchemy as sa

    table = _table()
    with engine.begin() as connection:
        for start in range(0, len(ids), _CHUNK):
            chunk = list(ids[start : start + _CHUNK])
            connection.execute(sa.delete(table).where(table.c.workflow_id.in_(chunk)))


_CHUNK = 500  # ids in one statement (SQLite's limit on variables is 32,766 since 3.32)


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
