"""The ``openprose`` schema of the ``postgres`` state backend: the spec's core tables
(spec/state/postgres.md, "Core Schema") and the journal's, created with ``IF NOT EXISTS``.

Where the spec's keys cannot be written as keys (a primary key holds columns, not
``COALESCE(...)``), the invariant they mean is a unique index on the expression: one
binding per (name, run, scope), one agent per (name, scope), one agent segment per number.
A plain key on the columns would not do: NULLs differ, so root-scope bindings (and
project-scoped agents) could repeat.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from openprose.vm.state.journal import schema

if TYPE_CHECKING:
    import psycopg

SCHEMA = "openprose"
# Serialises the schema's creation: two first runs at once would race CREATE TABLE.
SCHEMA_LOCK = 0x6F7000

# The agent tables, shared with agent memory (vm/memory_sql.py), which may be the first
# to create them: whichever does, they are the same.
AGENTS = """CREATE TABLE IF NOT EXISTS openprose.agents (
    name TEXT NOT NULL,
    run_id TEXT,
    scope TEXT NOT NULL CHECK (scope IN ('execution', 'project', 'user', 'custom')),
    memory TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    metadata JSONB DEFAULT '{}'::jsonb
)"""
AGENTS_SCOPE = """CREATE UNIQUE INDEX IF NOT EXISTS agents_scope
    ON openprose.agents (name, COALESCE(run_id, '__project__'))"""
AGENT_SEGMENTS = """CREATE TABLE IF NOT EXISTS openprose.agent_segments (
    id SERIAL PRIMARY KEY,
    agent_name TEXT NOT NULL,
    run_id TEXT,
    segment_number INTEGER NOT NULL,
    timestamp TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    prompt TEXT,
    summary TEXT,
    metadata JSONB DEFAULT '{}'::jsonb
)"""
AGENT_SEGMENTS_NUMBER = """CREATE UNIQUE INDEX IF NOT EXISTS agent_segments_number
    ON openprose.agent_segments (agent_name, COALESCE(run_id, '__project__'), segment_number)"""

CORE_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS openprose.run (
        id TEXT PRIMARY KEY,
        program_path TEXT,
        program_source TEXT,
        started_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
        updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
        status TEXT NOT NULL DEFAULT 'running'
            CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
        state_mode TEXT NOT NULL DEFAULT 'postgres',
        metadata JSONB DEFAULT '{}'::jsonb
    )""",
    """CREATE TABLE IF NOT EXISTS openprose.execution (
        id SERIAL PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES openprose.run(id) ON DELETE CASCADE,
        statement_index INTEGER NOT NULL,
        statement_text TEXT,
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'executing', 'completed', 'failed', 'skipped')),
        started_at TIMESTAMPTZ,
        completed_at TIMESTAMPTZ,
        error_message TEXT,
        parent_id INTEGER REFERENCES openprose.execution(id) ON DELETE CASCADE,
        metadata JSONB DEFAULT '{}'::jsonb
    )""",
    # No primary key: the spec's (name, run_id, COALESCE(execution_id, -1)) is not valid
    # SQL; the unique index below holds that invariant, and is what the spec's
    # `ON CONFLICT (name, run_id, COALESCE(execution_id, -1))` infers.
    """CREATE TABLE IF NOT EXISTS openprose.bindings (
        name TEXT NOT NULL,
        run_id TEXT NOT NULL REFERENCES openprose.run(id) ON DELETE CASCADE,
        execution_id INTEGER,
        kind TEXT NOT NULL CHECK (kind IN ('input', 'output', 'let', 'const')),
        value TEXT,
        source_statement TEXT,
        created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
        updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
        attachment_path TEXT,
        metadata JSONB DEFAULT '{}'::jsonb
    )""",
    """CREATE UNIQUE INDEX IF NOT EXISTS bindings_scope
        ON openprose.bindings (name, run_id, COALESCE(execution_id, -1))""",
    AGENTS,
    AGENTS_SCOPE,
    AGENT_SEGMENTS,
    AGENT_SEGMENTS_NUMBER,
    """CREATE TABLE IF NOT EXISTS openprose.imports (
        alias TEXT NOT NULL,
        run_id TEXT NOT NULL REFERENCES openprose.run(id) ON DELETE CASCADE,
        source_url TEXT NOT NULL,
        fetched_at TIMESTAMPTZ,
        inputs_schema JSONB,
        outputs_schema JSONB,
        content_hash TEXT,
        metadata JSONB DEFAULT '{}'::jsonb,
        PRIMARY KEY (alias, run_id)
    )""",
    "CREATE INDEX IF NOT EXISTS idx_execution_run_id ON openprose.execution(run_id)",
    "CREATE INDEX IF NOT EXISTS idx_execution_status ON openprose.execution(status)",
    "CREATE INDEX IF NOT EXISTS idx_execution_parent_id ON openprose.execution(parent_id) "
    "WHERE parent_id IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS idx_execution_metadata_gin ON openprose.execution "
    "USING GIN (metadata jsonb_path_ops)",
    "CREATE INDEX IF NOT EXISTS idx_bindings_run_id ON openprose.bindings(run_id)",
    "CREATE INDEX IF NOT EXISTS idx_bindings_execution_id ON openprose.bindings(execution_id) "
    "WHERE execution_id IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS idx_agents_run_id ON openprose.agents(run_id) "
    "WHERE run_id IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS idx_agents_project_scoped ON openprose.agents(name) "
    "WHERE run_id IS NULL",
    "CREATE INDEX IF NOT EXISTS idx_agent_segments_lookup "
    "ON openprose.agent_segments(agent_name, run_id)",
)


_NAME = re.compile(r"IF NOT EXISTS\s+(?:openprose\.)?(\w+)")


def relations() -> list[str]:
    """The names of every table and index the schema creates (in ``openprose``)."""
    statements = (*CORE_SCHEMA, *schema(f"{SCHEMA}.", "DOUBLE PRECISION"))
    return [m.group(1) for m in map(_NAME.search, statements) if m is not None]


def create_schema(connection: psycopg.Connection[Any]) -> None:
    """Create what is missing.  When everything exists (every run but a database's
    first) nothing is locked: ``CREATE INDEX IF NOT EXISTS`` takes a table's SHARE lock
    even when the index is there, and a transaction holding several such locks
    deadlocks with a writer of two tables (an agent's memory and its segments)."""
    wanted = relations()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relname = ANY(%s)",
            (SCHEMA, wanted),
        )
        found = cursor.fetchone()
        if found is not None and found[0] == len(wanted):
            return
        # A session lock, and each statement its own transaction (the connection is in
        # autocommit): two first runs do not race, and no table lock outlives its statement.
        cursor.execute("SELECT pg_advisory_lock(%s, 0)", (SCHEMA_LOCK,))
        try:
            # CREATE SCHEMA IF NOT EXISTS still needs CREATE on the database, which the
            # spec's limited-privilege user (given the schema by an admin) does not have.
            cursor.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (SCHEMA,))
            if cursor.fetchone() is None:
                cursor.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            for statement in (*CORE_SCHEMA, *schema(f"{SCHEMA}.", "DOUBLE PRECISION")):
                cursor.execute(statement)
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s, 0)", (SCHEMA_LOCK,))
