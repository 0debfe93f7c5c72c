"""A run's summaries asked once by the whole run on the dbos engine, whichever processes
execute its items and calls, as the local engine asks each once per run.

A summary is keyed by its content (backends/replay.exchange_key): a long value passed to
every item of a fan-out is summarised for the first and reused by the others.  Spread over
workers, each item has an interpreter of its own, so each asked the model again, was
charged once under the run's cost cap (the charge is keyed by the summary) and narrated
"summarised" once per item.

Here the first part of the run's attempt to want a summary claims it: a row of
``openprose_summaries`` in the system database, keyed by the attempt's workflow id and the
summary's key, naming the claiming workflow (the run's, an item's, a call's).  The holder
asks (through the run's journal, which replays a summary an earlier attempt asked),
narrates and pays, then writes the answer (or the backend's failure) into the row.  The
others wait for it there, and use it without narrating or paying.  A holder that ended
without answering (it was cancelled, or failed on something else than the model) leaves
its claim to the next that wants it; one whose worker died is still pending and is
executed again, and asks again as the holder.

Imported only by the dbos engine.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from openprose.vm.backends.base import BackendError, SummaryRequest
from openprose.vm.backends.replay import decode, error_text, exchange_key
from openprose.vm.engines.dbos_tables import insert, make

SUMMARIES_TABLE = "openprose_summaries"

# How often a part of the run waiting for another's summary looks whether it came
# (seconds), and how often whether its holder is still going.
POLL_SECONDS = 0.1
HOLDER_CHECK_SECONDS = 1.0

# The summaries this process learnt, by the attempt's workflow id and the summary's key:
# the thousand items of one fan-out in one worker read the row once.  Bounded by attempt,
# as the process's other per-run caches (dbos_branches.keep_for_run).
_answers: dict[str, dict[str, tuple[str, str | None, str | None]]] = {}


@functools.cache
def _table() -> Any:
    import sqlalchemy as sa

    return sa.Table(
        SUMMARIES_TABLE,
        sa.MetaData(),
        sa.Column("attempt", sa.String(255), primary_key=True),
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("holder", sa.Text, nullable=False),
        sa.Column("answered", sa.Boolean, nullable=False),
        sa.Column("text", sa.Text),
        sa.Column("error", sa.Text),
    )


def make_table(engine: Any) -> None:
    """The table, made by a process's launch."""
    make(engine, _table())


@dataclass(frozen=True)
class Claim:
    holder: str
    answered: bool
    text: str | None
    error: str | None


@dataclass
class SharedSummaries:
    """The summaries of the run's attempt ``attempt`` (its workflow id) as the workflow
    ``holder`` (the run's, or one of its items' or calls') asks them, in the system
    database ``engine``; ``ended`` tells whether a workflow is over (DBOS's status)."""

    engine: Any
    attempt: str
    holder: str
    ended: Callable[[str], Awaitable[bool]]

    async def once(self, asked: SummaryRequest, ask: Callable[[], Awaitable[str]]) -> str:
        """The summary ``asked``: ``ask`` asks, narrates and pays for it when this holder
        is the first of the attempt to want it; else the holder's answer."""
        key = ":".join(exchange_key(asked))
        known = _answers.get(self.attempt, {}).get(key)
        if known is not None and known[0] != self.holder:
            return _answer(asked, known[1], known[2])
        claim = await asyncio.to_thread(self._claim, key)
        checked = time.monotonic()
        while claim.holder != self.holder:
            if claim.answered:
                _learn(self.attempt, key, (claim.holder, claim.text, claim.error))
                return _answer(asked, claim.text, claim.error)
            await asyncio.sleep(POLL_SECONDS)
            if time.monotonic() - checked >= HOLDER_CHECK_SECONDS:
                checked = time.monotonic()
                if await self.ended(claim.holder):
                    # It ended without an answer: the claim is the next one's.
                    claim = await asyncio.to_thread(self._take_over, key, claim.holder)
                    continue
            claim = await asyncio.to_thread(self._look, key)
        return await self._ask(key, ask)

    async def _ask(self, key: str, ask: Callable[[], Awaitable[str]]) -> str:
        try:
            text = await ask()
        except BackendError as failure:
            # The model's failure is the summary's answer, as the journal replays it.
            await asyncio.to_thread(self._answered, key, None, error_text(failure))
            raise
        except BaseException:
            await asyncio.to_thread(self._let_go, key)
            raise
        await asyncio.to_thread(self._answered, key, text, None)
        return text

    # ------------------------------------------------------------------ the rows

    def _mine(self, key: str) -> Any:
        table = _table()
        return (table.c.attempt == self.attempt) & (table.c.key == key)

    def _claim(self, key: str) -> Claim:
        """The summary's claim: this holder's, unless another's was there first."""
        row = dict(attempt=self.attempt, key=key, holder=self.holder, answered=False)
        with self.engine.begin() as connection:
            connection.execute(insert(self.engine, _table(), row).on_conflict_do_nothing())
            claim = self._row(connection, key)
        assert claim is not None  # (inserted, or there already, in the same transaction)
        return claim

    def _look(self, key: str) -> Claim:
        """The claim as it is now (a read, as a wait is made of many), claimed again if
        its holder let it go."""
        with self.engine.connect() as connection:
            claim = self._row(connection, key)
        return claim if claim is not None else self._claim(key)

    def _row(self, connection: Any, key: str) -> Claim | None:
        import sqlalchemy as sa

        table = _table()
        found = connection.execute(
            sa.select(table.c.holder, table.c.answered, table.c.text, table.c.error).where(
                self._mine(key)
            )
        ).one_or_none()
        if found is None:
            return None
        return Claim(found.holder, bool(found.answered), found.text, found.error)

    def _take_over(self, key: str, holder: str) -> Claim:
        table = _table()
        with self.engine.begin() as connection:
            connection.execute(
                table.update()
                .where(self._mine(key), table.c.holder == holder, ~table.c.answered)
                .values(holder=self.holder)
            )
            claim = self._row(connection, key)
        return claim if claim is not None else self._claim(key)

    def _answered(self, key: str, text: str | None, error: str | None) -> None:
        table = _table()
        with self.engine.begin() as connection:
            connection.execute(
                table.update()
                .where(self._mine(key), table.c.holder == self.holder)
                .values(answered=True, text=text, error=error)
            )

    def _let_go(self, key: str) -> None:
        table = _table()
        with self.engine.begin() as connection:
            connection.execute(
                table.delete().where(
                    self._mine(key), table.c.holder == self.holder, ~table.c.answered
                )
            )


def _learn(attempt: str, key: str, answer: tuple[str, str | None, str | None]) -> None:
    from openprose.vm.engines.dbos_branches import keep_for_run

    if attempt not in _answers:
        keep_for_run(_answers, attempt, {})
    _answers[attempt][key] = answer


def _answer(asked: SummaryRequest, text: str | None, error: str | None) -> str:
    """The holder's answer, or its failure raised again as the journal replays one."""
    if error is not None:
        decode(asked, {"error": error})  # raises the failure
    assert text is not None
    return text
