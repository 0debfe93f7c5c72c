"""The connections a worker process keeps to each PostgreSQL server for the journals of
the fan-out items it executes, one item at a time each.

An item used to open a connection of its own and close it when it ended.  Opening one
costs PostgreSQL's password check on both sides (SCRAM: about 6 ms of CPU on the 2-core
machine of bench/scale_out.py), which was the largest part of an item's own work: a
thousand items spent six seconds of CPU authenticating.  A pool (psycopg_pool, the
driver's own) hands a connection back to the next item instead.

What an item leaves on its connection goes with the transactions it ran (its journal
writes are transactions, and ``SET LOCAL`` ends with them); a connection returned inside
a transaction is rolled back by the pool, and a broken one is dropped.  A connection is
checked when it is taken (a server restarted since would fail the item otherwise).  The
pool grows to as many connections as items run at once, as before, and closes those left
idle for a minute.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from openprose.vm.state.base import StateError
from openprose.vm.state.postgres_url import redact

MAX_CONNECTIONS = 1024  # in effect unbounded: a worker's own --branch-concurrency bounds it
IDLE_SECONDS = 60.0
WAIT_SECONDS = 30.0  # for a connection, the server being unreachable meanwhile

_pools: dict[str, Any] = {}
_lock = threading.Lock()


def borrow(url: str, connect_timeout: int) -> Any:
    """An autocommit connection to ``url``: one kept since an item gave it back, or a new
    one; a StateError naming the server without its password if none can be had, or the
    package to install if the pool is missing."""
    try:
        import psycopg_pool
    except ImportError:
        from openprose.vm.state.postgres import INSTALL

        raise StateError(
            f"the postgres state backend's workers need psycopg-pool: {INSTALL}"
        ) from None

    pool = _pool(url, connect_timeout)
    try:
        return pool.getconn(timeout=WAIT_SECONDS)
    except psycopg_pool.PoolTimeout:
        raise StateError(
            f"cannot connect to PostgreSQL at {redact(url)}: no connection in {WAIT_SECONDS:.0f} s"
        ) from None


def give_back(url: str, connection: Any) -> None:
    """``connection``, borrowed from ``url``'s pool, for the next item."""
    pool = _pools.get(url)
    if pool is None:  # closed meanwhile (the process is ending)
        connection.close()
    else:
        pool.putconn(connection)


def _pool(url: str, connect_timeout: int) -> Any:
    with _lock:
        pool = _pools.get(url)
        if pool is None:
            from psycopg_pool import ConnectionPool

            pool = ConnectionPool(
                url,
                min_size=0,
                max_size=MAX_CONNECTIONS,
                max_idle=IDLE_SECONDS,
                kwargs={"autocommit": True, "connect_timeout": connect_timeout},
                check=ConnectionPool.check_connection,
                name=f"openprose items at {redact(url)}",
                open=True,
            )
            if not _pools:
                atexit.register(close_all)
            _pools[url] = pool
        return pool


def close_all() -> None:
    """Close every pool of this process (at its exit)."""
    with _lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()
