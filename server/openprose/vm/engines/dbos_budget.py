"""A run's spending limits (``--max-sessions``, ``--max-cost``, ``--max-tokens``) counted
across every process of the dbos engine, so that a limited run's items and program calls
travel to workers as an unlimited run's do.

Every session attempt and every model call of the run's attempt is a row of
``openprose_spending`` in the system database, keyed by the attempt's workflow id and the
exchange's key (``session:4@17#attempt1``): a step run again (its worker died, the run was
taken over) finds its row and is not counted twice, as a resumed local run counts each
step once.  A session is started by inserting its row when fewer than the limit are;
SQLite serialises the starts through DBOS's engine, whose transactions begin IMMEDIATE at
their first write (the insert comes first), PostgreSQL through a transaction-scoped
advisory lock per attempt.  A cap on cost or tokens is checked against the sums of the
rows.  The rows stay after the run returns, as DBOS's records of its workflows do: an item
cancelled by the run's failure may still be starting a session in its worker (it stops at
the next look for cancellations, within a quarter of a second), and must find the run's
count.
Imported only by the dbos engine.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from typing import Any

from openprose.vm.engines.dbos_tables import insert, make, serialise
from openprose.vm.interpreter import Budget

SPEND_TABLE = "openprose_spending"


@functools.cache
def _table() -> Any:
    import sqlalchemy as sa

    return sa.Table(
        SPEND_TABLE,
        sa.MetaData(),
        sa.Column("budget", sa.String(255), primary_key=True),
        sa.Column("key", sa.Text, primary_key=True),  # a step key, as long as it nests
        sa.Column("session", sa.Boolean, nullable=False),
        sa.Column("cost", sa.Float, nullable=False),
        sa.Column("tokens", sa.BigInteger, nullable=False),
    )


def make_table(engine: Any) -> None:
    """The table, made by a process's launch."""
    make(engine, _table())


@dataclass
class SharedBudget(Budget):
    """The budget of the run's attempt ``budget`` (its workflow id), in the system database
    ``engine``.  Its own fields still count what this process spent (what an item's
    outcome brings back to the run's, ``absorb``), but the limits are checked against the
    database's rows, which every process of the run writes."""

    engine: Any = None
    budget: str = ""
    # What the run limits: a run with only a session limit writes no charges, one with
    # only caps on cost or tokens no session starts (each is a transaction of the system
    # database).
    sessions: bool = True
    spending: bool = True
    shared = True

    async def spent(self) -> tuple[float, int]:
        return await asyncio.to_thread(self._sums)

    async def start_session(self, key: str, limit: int | None) -> bool:
        started = not self.sessions or await asyncio.to_thread(self._start, key, limit)
        if started:
            await super().start_session(key, None)
        return started

    async def charge(self, key: str, cost: float, tokens: int) -> None:
        if self.spending:
            await asyncio.to_thread(self._charge, key, cost, tokens)
        await super().charge(key, cost, tokens)

    def _start(self, key: str, limit: int | None) -> bool:
        import sqlalchemy as sa

        table = _table()
        with self.engine.begin() as connection:
            serialise(self.engine, connection, f"{SPEND_TABLE}:{self.budget}")
            # The insert first: the count below is then taken under the lock that
            # serialises every start on SQLite too.
            row = dict(budget=self.budget, key=key, session=True, cost=0.0, tokens=0)
            inserted = connection.execute(insert(self.engine, table, row).on_conflict_do_nothing())
            if inserted.rowcount == 0 or limit is None:
                return True  # (a row already: this session was counted when first asked)
            mine = table.c.budget == self.budget
            started = connection.execute(
                sa.select(sa.func.count()).where(mine, table.c.session)
            ).scalar_one()
            if started <= limit:
                return True
            connection.execute(table.delete().where(mine, table.c.key == key))
            return False

    def _charge(self, key: str, cost: float, tokens: int) -> None:
        table = _table()
        row = dict(budget=self.budget, key=key, session=False, cost=cost, tokens=tokens)
        with self.engine.begin() as connection:
            # Set, not added: a call answered again for a step run again is the same call.
            statement = insert(self.engine, table, row)
            connection.execute(
                statement.on_conflict_do_update(
                    index_elements=[table.c.budget, table.c.key],
                    set_={"cost": cost, "tokens": tokens},
                )
            )

    def _sums(self) -> tuple[float, int]:
        import sqlalchemy as sa

        table = _table()
        with self.engine.connect() as connection:
            cost, tokens = connection.execute(
                sa.select(
                    sa.func.coalesce(sa.func.sum(table.c.cost), 0.0),
                    sa.func.coalesce(sa.func.sum(table.c.tokens), 0),
                ).where(table.c.budget == self.budget)
            ).one()
        return float(cost), int(tokens)
