"""A worker's kept connections for its items' journals (vm/state/postgres_pool.py), on a
throwaway cluster: an item's connection serves the next item, a connection the server
dropped meanwhile is not handed out, and an unreachable server is a clear error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from openprose.vm.state import StateError
from tests import postgres_cluster
from tests.postgres_cluster import free_port
from tests.support.extras import require

require("psycopg_pool", "pip install 'openprose[postgres]'")

postgres_db_url = postgres_cluster.postgres_db_url

PROGRAM = 'let a = session "one"\n'


@pytest.fixture
def catalog(postgres_db_url: str) -> Iterator[Any]:
    from openprose.vm.state import postgres_pool
    from openprose.vm.state.postgres import PostgresCatalog

    yield PostgresCatalog(postgres_db_url)
    postgres_pool.close_all()  # the test's database is dropped after it


def _backend(journal: Any) -> int:
    return int(journal.connection.info.backend_pid)


def _run(catalog: Any) -> str:
    store = catalog.create(PROGRAM, "main", {}, backend="offline")
    run_id: str = store.run_id
    store.close()
    return run_id


def test_an_item_s_connection_serves_the_next_item(catalog: Any) -> None:
    run_id = _run(catalog)
    first = catalog.branch_journal(run_id, "1@0")
    pid = _backend(first)
    first.close()
    second = catalog.branch_journal(run_id, "1@1")
    assert _backend(second) == pid  # no new connection, no new authentication
    # Two items at once have a connection each.
    third = catalog.branch_journal(run_id, "1@2")
    assert _backend(third) != pid
    second.close()
    third.close()


def test_an_item_s_journal_writes_are_committed_before_its_connection_is_reused(
    catalog: Any,
) -> None:
    from openprose.vm.state.base import StepRecord

    run_id = _run(catalog)
    journal = catalog.branch_journal(run_id, "1@0")
    journal.record_step(
        StepRecord(kind="session", key="1@0/session", hash="h", result={"text": "x"})
    )
    journal.close()
    # Read back on a connection of its own: the write was committed, not left pending
    # on the kept connection.
    reader = catalog.open(run_id)
    assert ("session", "1@0/session") in reader.journal.steps
    reader.close()


def test_a_connection_the_server_dropped_is_not_handed_out(
    catalog: Any, postgres_db_url: str
) -> None:
    import psycopg

    run_id = _run(catalog)
    journal = catalog.branch_journal(run_id, "1@0")
    pid = _backend(journal)
    journal.close()
    with psycopg.connect(postgres_db_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    again = catalog.branch_journal(run_id, "1@1")  # would fail on the dead connection
    assert _backend(again) != pid
    again.close()


def test_an_unreachable_server_is_a_state_error_without_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from openprose.vm.state import postgres_pool
    from openprose.vm.state.postgres import PostgresCatalog

    monkeypatch.setattr(postgres_pool, "WAIT_SECONDS", 1.0)
    url = f"postgresql://u:s3cret-pw@127.0.0.1:{free_port()}/nothing"
    try:
        with pytest.raises(StateError) as raised:
            PostgresCatalog(url).branch_journal("20261207-000000-aaaaaa", "1@0")
    finally:
        postgres_pool.close_all()
    assert "cannot connect to PostgreSQL at postgresql://u:***@127.0.0.1" in str(raised.value)
    assert "s3cret-pw" not in str(raised.value)


def test_a_worker_without_the_pool_package_is_told_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from openprose.vm.state import postgres_pool

    monkeypatch.setitem(sys.modules, "psycopg_pool", None)  # import fails
    with pytest.raises(StateError) as raised:
        postgres_pool.borrow("postgresql://u:pw@127.0.0.1:1/db", 1)
    assert str(raised.value) == (
        "the postgres state backend's workers need psycopg-pool: pip install 'openprose[postgres]'"
    )
