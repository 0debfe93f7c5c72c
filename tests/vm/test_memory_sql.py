"""Agent memory in the database backends: SQLite's agents.db and state.db
(spec/state/sqlite.md) and PostgreSQL's openprose schema (spec/state/postgres.md)."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.memory import AgentMemories
from openprose.vm.state.base import StateError
from tests.postgres_cluster import postgres_db_url, postgres_url  # noqa: F401

TS = 1_800_000_000.0


def sqlite_memories(tmp_path: Path, run: str = "r1") -> AgentMemories:
    return AgentMemories(
        tmp_path / ".prose" / "runs" / run, tmp_path, home=tmp_path / "home", state="sqlite"
    )


def rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(path)) as connection:
        return connection.execute(sql).fetchall()


def test_each_scope_has_its_database(tmp_path: Path) -> None:
    (tmp_path / ".prose" / "runs" / "r1").mkdir(parents=True)
    m = sqlite_memories(tmp_path)
    for scope in ("true", "project", "user", "state/shared"):
        m.record("a", scope, "Go", f"memory of {scope}", TS, key="0")
    places = {
        "true": tmp_path / ".prose" / "runs" / "r1" / "state.db",
        "project": tmp_path / ".prose" / "agents.db",
        "user": tmp_path / "home" / ".prose" / "agents.db",
        "state/shared": tmp_path / "state" / "shared" / "agents.db",
    }
    labels = {"true": "execution", "project": "project", "user": "user"}
    for scope, path in places.items():
        assert rows(path, "SELECT name, scope, memory FROM agents") == [
            ("a", labels.get(scope, "custom"), f"# Agent Memory: a\n\n"
             f"## Current Understanding\n\nmemory of {scope}\n")
        ]  # fmt: skip
        assert rows(path, "SELECT agent_name, segment_number, timestamp, prompt, summary "
                    "FROM agent_segments") == [
            ("a", 1, "2027-01-15T08:00:00Z", "Go", f"memory of {scope}")
        ]  # fmt: skip
        assert m.store.location("a", scope) == f"{path} (agents, name='a')"
        fresh = sqlite_memories(tmp_path)
        assert fresh.read("a", scope) == f"memory of {scope}"
        assert not fresh.record("a", scope, "Go", "again", TS, key="0")
    assert not (tmp_path / ".prose" / "agents").exists()  # no files next to the database


def test_the_schema_holds_one_segment_per_number(tmp_path: Path) -> None:
    m = sqlite_memories(tmp_path)
    m.record("a", "project", "Go", "one", TS)
    database = tmp_path / ".prose" / "agents.db"
    with contextlib.closing(sqlite3.connect(database)) as db, pytest.raises(sqlite3.IntegrityError):
        db.execute(
            "INSERT INTO agent_segments (agent_name, segment_number, prompt, summary) "
            "VALUES ('a', 1, 'x', 'y')"
        )


def test_a_database_without_agent_tables_has_no_memory(tmp_path: Path) -> None:
    run = tmp_path / ".prose" / "runs" / "r1"
    run.mkdir(parents=True)
    with contextlib.closing(sqlite3.connect(run / "state.db")) as db:
        db.execute("CREATE TABLE execution (id INTEGER)")
    m = sqlite_memories(tmp_path)
    assert m.read("a", "true") is None
    assert m.describe("a", "true")["exists"] is False
    assert m.agents("true") == []
    assert m.reset("a", "true")["cleared"] is False


def test_a_broken_database_is_a_state_error(tmp_path: Path) -> None:
    (tmp_path / ".prose").mkdir()
    (tmp_path / ".prose" / "agents.db").write_bytes(b"not a database" * 100)
    with pytest.raises(StateError, match=r"agent memory \(sqlite\)"):
        sqlite_memories(tmp_path).describe("a", "project")


# ---------------------------------------------------------------------- PostgreSQL


@pytest.fixture
def connect(postgres_db_url: str) -> Any:  # noqa: F811
    import psycopg

    return lambda: psycopg.connect(postgres_db_url)


def pg_memories(tmp_path: Path, connect: Any, run: str = "r1") -> AgentMemories:
    return AgentMemories(
        None, tmp_path, home=tmp_path / "home", state="postgres", run_id=run, connect=connect
    )


def pg_rows(connect: Any, sql: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(connect()) as connection:
        return connection.execute(sql).fetchall()


def test_postgres_keeps_every_scope_apart(tmp_path: Path, connect: Any) -> None:
    m = pg_memories(tmp_path, connect)
    for scope in ("true", "project", "user", "state/shared"):
        assert m.record("a", scope, "Go", f"memory of {scope}", TS, key="0")
    assert sorted(
        pg_rows(connect, "SELECT name, COALESCE(run_id, '-'), scope FROM openprose.agents")
    ) == [
        ("__path__:state/shared:a", "-", "custom"),
        ("__user__a", "-", "user"),
        ("a", "-", "project"),
        ("a", "r1", "execution"),
    ]
    segments = pg_rows(
        connect, "SELECT agent_name, run_id, segment_number FROM openprose.agent_segments"
    )
    assert len(segments) == 4 and {s[2] for s in segments} == {1}
    other_run = pg_memories(tmp_path, connect, run="r2")
    for scope in ("true", "project", "user", "state/shared"):
        expected = None if scope == "true" else f"memory of {scope}"
        assert pg_memories(tmp_path, connect, run="r2").read("a", scope) == expected
        assert not pg_memories(tmp_path, connect).record("a", scope, "Go", "x", TS, key="0")
    assert other_run.agents("project") == ["a"] and other_run.agents("user") == ["a"]
    assert m.agents("true") == ["a"] and other_run.agents("true") == []
    assert (
        m.store.location("a", "user") == "postgres openprose.agents (name='__user__a', run_id NULL)"
    )


def test_postgres_compacts_describes_and_resets(tmp_path: Path, connect: Any) -> None:
    m = pg_memories(tmp_path, connect)
    for n in range(1, 5):
        m.record("a", "project", f"p{n}", f"Port {8000 + n} chosen.", TS + n, key=str(n))
    report = m.describe("a", "project", include_data=True)
    assert report["store"] == "postgres" and report["items"]["segments"] == 4
    assert report["data"]["segments"][0]["timestamp"] == "2027-01-15T08:00:01Z"
    assert report["data"]["segments"][0]["step"] == "1"
    compacted = m.compact("a", "project", "recent", max_messages=1)
    assert compacted["compacted"] == [1, 2, 3] and compacted["after"]["segments"] == 1
    memory = m.describe("a", "project", include_data=True)["data"]["memory"]
    assert "Port 8001 chosen." in memory and "Port 8003 chosen." in memory
    assert not m.record("a", "project", "p1", "Port 8001 chosen.", TS, key="1")
    assert m.record("a", "project", "p5", "Done.", TS, key="5")
    assert m.describe("a", "project")["metadata"]["last_segment"] == 5
    m.record("a", "user", "p", "user memory", TS)
    assert m.reset("a", "project")["cleared"]
    assert m.read("a", "user") == "user memory"  # another scope, untouched
    assert not m.describe("a", "project")["exists"]


def test_postgres_writers_never_share_a_number(tmp_path: Path, connect: Any) -> None:
    errors: list[BaseException] = []

    def write(run: str) -> None:
        try:
            m = pg_memories(tmp_path, connect, run=run)
            for i in range(15):
                m.record("shared", "project", f"{run} {i}", f"{run} answer {i}", TS, key=str(i))
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=write, args=(run,)) for run in ("ra", "rb", "rc")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    segments = pg_memories(tmp_path, connect).describe("shared", "project", True)["data"]
    assert [s["number"] for s in segments["segments"]] == list(range(1, 46))
    assert sorted((s["run"], s["step"]) for s in segments["segments"]) == sorted(
        (run, str(i)) for run in ("ra", "rb", "rc") for i in range(15)
    )


def test_postgres_schema_holds_one_segment_per_number(tmp_path: Path, connect: Any) -> None:
    import psycopg

    pg_memories(tmp_path, connect).record("a", "project", "Go", "one", TS)
    with contextlib.closing(connect()) as connection, pytest.raises(psycopg.errors.UniqueViolation):
        connection.execute(
            "INSERT INTO openprose.agent_segments (agent_name, run_id, segment_number) "
            "VALUES ('a', NULL, 1)"
        )


def test_postgres_without_a_server_is_a_state_error(tmp_path: Path) -> None:
    def refuse() -> Any:
        raise OSError("connection refused")

    m = pg_memories(tmp_path, refuse)
    with pytest.raises(StateError, match="postgres: cannot connect"):
        m.describe("a", "project")
