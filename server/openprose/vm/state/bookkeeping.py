"""A run's bookkeeping entries: JSON values the VM writes to its journal's commits under a
reserved name (``@account:KIND`` by vm/accounting.py, ``@context:session`` by
vm/context/record.py), and reading them back for ``prose runs show`` and the editor."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any


def values(
    cursor: Any, table: str, run_id: str, pattern: str, placeholder: str = "?"
) -> list[dict[str, Any]]:
    """The entries of ``run_id`` whose name is LIKE ``pattern`` in a journal's commits
    ``table``, in the order written, through a DB-API cursor (``placeholder``: ``?`` for
    sqlite3, ``%s`` for psycopg).  A row this version cannot read is left out."""
    cursor.execute(
        f"SELECT value_hash FROM {table} WHERE run_id = {placeholder} AND name LIKE "
        f"{placeholder} ORDER BY recorded_at",
        (run_id, pattern),
    )
    found = []
    for (value,) in cursor.fetchall():
        try:
            data = json.loads(value)
        except (ValueError, TypeError):
            continue
        if isinstance(data, dict):
            found.append(data)
    return found


def stored_values(
    database: Path, run_id: str, pattern: str, prefix: str = ""
) -> list[dict[str, Any]] | None:
    """``values`` of a run's journal in a SQLite file; None when it has none or cannot be
    read."""
    if not database.is_file():
        return None
    connection = sqlite3.connect(database, timeout=10)
    try:
        return values(connection.cursor(), f"{prefix}journal_commits", run_id, pattern)
    except sqlite3.Error:
        return None
    finally:
        connection.close()
