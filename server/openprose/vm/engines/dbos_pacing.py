"""Per-provider rate limits on each model request, across every process of the dbos engine.

A rate limit (``run.rate-limits``, ``prose worker --rate-limit``) is the limiter of its
backend's items queue, which paces the starts of fan-out items (dbos_engine).  An item of
five sessions is five requests, though, and a run's own sessions are requests too: so each
request a run or an item makes of a limited backend first takes a place in a window kept in
the system database (``openprose_request_starts``), at most N places in any window of the
period, whichever process asks.  A request the journal answers is not one: the journal sits
outside this wrapper.

SQLite serialises the places through DBOS's engine, whose transactions begin IMMEDIATE at
their first write (``Pacer.take`` writes first); PostgreSQL through a transaction-scoped
advisory lock per backend.  Imported only by the
dbos engine.
"""

from __future__ import annotations

import asyncio
import functools
import time
from typing import TYPE_CHECKING, Any

from openprose.vm.engines.dbos_tables import make, serialise

if TYPE_CHECKING:
    from openprose.config import RateLimit
    from openprose.vm.backends.base import (
        Backend,
        ChoiceRequest,
        ChoiceResult,
        ConditionRequest,
        ConditionResult,
        SessionRequest,
        SessionResult,
        SummaryRequest,
        SummaryResult,
    )

PACE_TABLE = "openprose_request_starts"


@functools.cache
def _table() -> Any:
    import sqlalchemy as sa

    return sa.Table(
        PACE_TABLE,
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("backend", sa.String(64), nullable=False),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Index(f"{PACE_TABLE}_window", "backend", "started_at"),
    )


def make_table(engine: Any) -> None:
    """The window's table, made by a process's launch."""
    make(engine, _table())


class Pacer:
    """The places of one backend's requests: at most ``limit[0]`` in any ``limit[1]``
    seconds, across every process sharing the system database ``engine``."""

    def __init__(self, engine: Any, backend: str, limit: RateLimit) -> None:
        self.engine = engine
        self.backend = backend
        self.count, self.period = limit

    def take(self) -> float:
        """Takes a place now and returns 0, or returns how long to wait for one."""
        import sqlalchemy as sa

        table = _table()
        with self.engine.begin() as connection:
            serialise(self.engine, connection, f"{PACE_TABLE}:{self.backend}")
            now = time.time()
            window = table.c.backend == self.backend
            # A write first: pysqlite begins DBOS's IMMEDIATE transaction only at a write, so
            # the count below is taken under the lock that serialises every taker.
            connection.execute(
                table.delete().where(window, table.c.started_at <= now - self.period)
            )
            taken, oldest = connection.execute(
                sa.select(sa.func.count(), sa.func.min(table.c.started_at)).where(window)
            ).one()
            if taken < self.count:
                connection.execute(table.insert().values(backend=self.backend, started_at=now))
                return 0.0
            return max(0.0, float(oldest) + self.period - now)  # until the oldest leaves

    async def place(self) -> None:
        """Waits for a place, then takes it."""
        while (wait := await asyncio.to_thread(self.take)) > 0:
            await asyncio.sleep(wait)


class PacedBackend:
    """``inner``, each of whose requests first takes a place of ``pacer``."""

    def __init__(self, inner: Backend, pacer: Pacer) -> None:
        self.inner = inner
        self.name = inner.name
        self.dry_run = inner.dry_run
        self.pacer = pacer

    async def run_session(self, request: SessionRequest) -> SessionResult:
        await self.pacer.place()
        return await self.inner.run_session(request)

    async def judge(self, request: ConditionRequest) -> ConditionResult:
        await self.pacer.place()
        return await self.inner.judge(request)

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        await self.pacer.place()
        return await self.inner.choose(request)

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        await self.pacer.place()
        return await self.inner.summarise(request)
