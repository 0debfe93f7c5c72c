"""The engine's own tables in DBOS's system database (executors' heartbeats, rate-limit
windows, spending, summaries): made at a process's launch, and serialised where two workers must not
count at once.  Imported only by the dbos engine."""

from __future__ import annotations

import zlib
from typing import Any


def make(engine: Any, table: Any) -> None:
    """``table``, made if missing.  Workers started together race to make it (PostgreSQL
    refuses the second CREATE TABLE even with IF NOT EXISTS): the one that lost finds it
    made."""
    try:
        table.metadata.create_all(engine, checkfirst=True)
    except Exception:
        table.metadata.create_all(engine, checkfirst=True)


def serialise(engine: Any, connection: Any, name: str) -> None:
    """On PostgreSQL, hold the transaction-scoped advisory lock ``name`` until
    ``connection``'s transaction ends.  On SQLite DBOS's engine begins its transactions
    IMMEDIATE at their first write: a caller writes before it counts."""
    if engine.dialect.name == "postgresql":
        import sqlalchemy as sa

        lock = zlib.crc32(name.encode())
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock})


def insert(engine: Any, table: Any, row: dict[str, Any]) -> Any:
    """An INSERT of ``row`` in the dialect of ``engine``, which says what to do on a
    conflict."""
    from sqlalchemy.dialects import postgresql, sqlite

    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    return dialect.insert(table).values(**row)
