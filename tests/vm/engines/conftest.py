"""The engines' shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# A fixture (it skips without PostgreSQL locally, and fails under CI).
from tests.postgres_cluster import postgres_db_url  # noqa: F401


@pytest.fixture(params=["sqlite", "postgres"])
def system_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A system database of the dbos engine (SQLite, then the throwaway PostgreSQL) with
    the engine's tables a process's launch makes, made twice: a second worker finds them
    made."""
    import sqlalchemy as sa

    from openprose.vm.engines import dbos_budget, dbos_summaries

    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'system.sqlite'}"
    else:
        url = request.getfixturevalue("postgres_db_url").replace(
            "postgresql://", "postgresql+psycopg://", 1
        )
    engine = sa.create_engine(url)
    for module in (dbos_budget, dbos_summaries, dbos_budget, dbos_summaries):
        module.make_table(engine)
    yield engine
    engine.dispose()
