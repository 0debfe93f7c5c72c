"""What executes a run (vm/engines/base.py: ``Executor``): ``local``, this process on asyncio
(the default, needing nothing), or ``dbos``, durable workflows on DBOS Transact over SQLite or
PostgreSQL, executed by ``prose worker`` processes on one machine or many (docs/scale.md)."""

from __future__ import annotations
