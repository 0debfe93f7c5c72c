"""The ``postgres`` state backend on a throwaway cluster, and its URL's handling (which
needs no server)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from openprose.vm import events as ev
from openprose.vm.state import StateError, open_catalog
from openprose.vm.state.base import StepRecord
from openprose.vm.state.postgres_url import find_url, passwords, redact, scrub
from tests import postgres_cluster
from tests.postgres_cluster import free_port

# The fixtures, made visible to this module's tests.
postgres_url = postgres_cluster.postgres_url
postgres_db_url = postgres_cluster.postgres_db_url

PROGRAM = 'let a = session "one"\nlet b = session "two"\n'
SECRET = "s3cret-Pa55"


@pytest.fixture
def catalog(postgres_db_url: str, tmp_path: Path) -> Any:
    from openprose.vm.state.postgres import PostgresCatalog

    return PostgresCatalog(postgres_db_url)


def connect(url: str) -> Any:
    import psycopg

    return psycopg.connect(url, autocommit=True)


# ---------------------------------------------------------------------- the URL


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://user:pw@host:5432/db", "postgresql://user:***@host:5432/db"),
        ("postgres://u:p%40ss@h/db?sslmode=require", "postgres://u:***@h/db?sslmode=require"),
        ("postgresql://u:p@ss/w?rd@h/db", "postgresql://u:***@h/db"),  # unencoded @ / ?
        ("postgresql://u@h/db?password=pw&x=1", "postgresql://u@h/db?password=***&x=1"),
        ("postgresql://h/db", "postgresql://h/db"),
        ("postgresql:///db", "postgresql:///db"),
        ("host=h password=pw dbname=d", "host=h password=*** dbname=d"),
        ("host=h password='p w' dbname=d", "host=h password=*** dbname=d"),
    ],
)
def test_redact_hides_the_password(url: str, shown: str) -> None:
    assert redact(url) == shown


@given(
    st.text(
        alphabet=st.characters(codec="utf-8", exclude_characters="\x00"),
        min_size=4,
    )
)
def test_redact_never_shows_a_password(password: str) -> None:
    url = f"postgresql://alice:{password}@db.example:5432/prose?sslmode=require"
    assume(password not in "postgresql://alice:***@db.example:5432/prose?sslmode=require")
    assert password not in redact(url)
    assert password not in scrub(f"failed for {url}: {password}", url)


def test_passwords_are_found_as_written_and_decoded() -> None:
    assert passwords("postgresql://u:a%2Fb@h/db") == ["a%2Fb", "a/b"]


def env_file(root: Path, text: str) -> None:
    (root / ".prose").mkdir(exist_ok=True)
    (root / ".prose" / ".env").write_text(text, encoding="utf-8")


def test_url_precedence_is_the_specs(tmp_path: Path) -> None:
    environ = {
        "OPENPROSE_POSTGRES_URL": "postgresql://from-env/db",
        "DATABASE_URL": "postgresql://generic/db",
    }
    assert find_url(tmp_path, {"DATABASE_URL": "postgresql://generic/db"}).url.endswith(
        "generic/db"
    )
    assert find_url(tmp_path, environ).url == "postgresql://from-env/db"
    env_file(
        tmp_path, "# the project's database\nexport OPENPROSE_POSTGRES_URL='postgresql://file/db'\n"
    )
    source = find_url(tmp_path, environ)
    assert (source.url, source.origin) == ("postgresql://file/db", ".prose/.env")


def test_env_file_other_variables_are_ignored(tmp_path: Path) -> None:
    env_file(tmp_path, 'DATABASE_URL="postgresql://file-generic/db"\n')
    assert find_url(tmp_path, {"DATABASE_URL": "postgresql://env/db"}).url == "postgresql://env/db"


def test_no_url_is_a_state_error_saying_where_to_put_one(tmp_path: Path) -> None:
    with pytest.raises(StateError, match=r"OPENPROSE_POSTGRES_URL.*\.prose/\.env"):
        open_catalog("postgres", tmp_path / ".prose" / "runs", environ={})


def test_open_catalog_reads_the_env_file(tmp_path: Path) -> None:
    env_file(tmp_path, f"OPENPROSE_POSTGRES_URL=postgresql://u:{SECRET}@127.0.0.1:1/db\n")
    catalog = open_catalog("postgres", tmp_path / ".prose" / "runs", environ={})
    assert catalog.state == "postgres"
    assert SECRET not in repr(catalog)
    assert SECRET not in str(vars(catalog).get("location"))


def test_missing_psycopg_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from openprose.vm.state import postgres

    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg raises ImportError
    with pytest.raises(StateError, match=r"pip install 'openprose\[postgres\]'"):
        postgres.connect("postgresql://u@127.0.0.1/db")


def all_text(error: BaseException) -> str:
    """Everything a traceback of ``error`` could show."""
    parts = [str(error), repr(error)]
    for linked in (error.__cause__, error.__context__):
        if linked is not None:
            parts += [str(linked), repr(linked)]
    return "\n".join(parts)


def test_a_missing_server_is_a_clear_state_error_without_the_password() -> None:
    from openprose.vm.state.postgres import PostgresCatalog

    port = free_port()  # nothing listens there
    url = f"postgresql://alice:{SECRET}@127.0.0.1:{port}/prose"
    with pytest.raises(StateError) as raised:
        PostgresCatalog(url).runs()
    message = str(raised.value)
    assert message.startswith(
        f"cannot connect to PostgreSQL at postgresql://alice:***@127.0.0.1:{port}"
    )
    assert "refused" in message.lower()
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    assert SECRET not in all_text(raised.value)


def test_a_malformed_url_does_not_echo_its_password() -> None:
    from openprose.vm.state.postgres import connect as pg_connect

    url = f"postgresql://alice:{SECRET}@127.0.0.1:notaport/prose"
    with pytest.raises(StateError) as raised:
        pg_connect(url)
    assert SECRET not in all_text(raised.value)


def test_a_wrong_password_is_a_state_error_without_it(postgres_url: str) -> None:
    from openprose.vm.state.postgres import PostgresCatalog

    head, _, tail = postgres_url.partition("@")
    url = f"{head.rsplit(':', 1)[0]}:{SECRET}@{tail}"
    with pytest.raises(StateError, match="password authentication failed") as raised:
        PostgresCatalog(url).runs()
    assert SECRET not in all_text(raised.value)


# ---------------------------------------------------------------------- the catalogue


def password_of(url: str) -> str:
    return url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]


def test_create_info_runs_and_remove(catalog: Any, postgres_db_url: str) -> None:
    store = catalog.create(PROGRAM, "main.prose", {"topic": "x"}, backend="offline")
    assert store.state == "postgres" and store.path is None
    assert store.program_text() == PROGRAM
    assert store.inputs() == {"topic": "x"}
    info = catalog.info(store.run_id)
    assert (info.status, info.program_name, info.backend) == ("running", "main.prose", "offline")
    assert password_of(postgres_db_url) not in info.location
    assert info.location == redact(postgres_db_url)
    other = catalog.create(PROGRAM, "other.prose", {})
    other.record(ev.ProgramEnd(ts=1.0))
    assert [i.run_id for i in catalog.runs()] == sorted([store.run_id, other.run_id], reverse=True)
    assert catalog.info(other.run_id).status == "completed"
    with pytest.raises(StateError, match="still running"):
        catalog.remove(store.run_id)
    store.close()
    catalog.remove(store.run_id)
    assert [i.run_id for i in catalog.runs()] == [other.run_id]
    with pytest.raises(StateError, match="no run"):
        catalog.info(store.run_id)
    with pytest.raises(StateError, match="no run"):
        catalog.open(store.run_id)
    with pytest.raises(StateError, match="no run"):
        catalog.remove(store.run_id)
    other.close()


def test_remove_deletes_every_row_of_the_run(catalog: Any, postgres_db_url: str) -> None:
    store = catalog.create(PROGRAM, "main.prose", {})
    store.commit_binding("1", "a", "let", "let a = ...", "A", None)
    store.record(ev.Position(step="1", statement="let a = ...", ts=1.0))
    store.journal.record_step(StepRecord("session", "1", "h", {"text": "A"}))
    store.close()
    catalog.remove(store.run_id)
    with connect(postgres_db_url) as db:
        for table in ("run", "execution", "bindings", "journal_runs", "journal_steps"):
            column = "id" if table == "run" else "run_id"
            count = db.execute(
                f"SELECT count(*) FROM openprose.{table} WHERE {column} = %s", (store.run_id,)
            ).fetchone()
            assert count == (0,), table


# Run ids whose lock keys are negative and positive (pg_locks shows keys unsigned).
@pytest.mark.parametrize("run_id", ["20260101-000000-run000", "20260101-000000-run001"])
def test_a_run_is_running_exactly_while_its_store_is_open(catalog: Any, run_id: str) -> None:
    store = catalog.create(PROGRAM, "main.prose", {}, run_id=run_id)
    assert [info.status for info in catalog.runs()] == ["running"]
    # A client machine that dies silently frees the run's lock within a minute.
    idle = store.record_rows.connection.execute("SHOW tcp_keepalives_idle").fetchone()
    assert idle == ("30",)
    with pytest.raises(StateError, match="still running"):
        catalog.open(store.run_id)
    store.close()  # as if its process died: the connection, and with it the lock, is gone
    assert catalog.info(store.run_id).status == "interrupted"
    resumed = catalog.open(store.run_id)
    assert catalog.info(store.run_id).status == "running"
    resumed.close()


def test_a_given_run_id_is_used_and_refused_twice(catalog: Any) -> None:
    store = catalog.create(PROGRAM, "main.prose", {}, run_id="20260101-000000-abcdef")
    assert store.run_id == "20260101-000000-abcdef"
    store.close()
    with pytest.raises(StateError, match="exists already"):
        catalog.create(PROGRAM, "main.prose", {}, run_id="20260101-000000-abcdef")


def test_the_schema_is_the_specs(catalog: Any, postgres_db_url: str) -> None:
    catalog.create(PROGRAM, "main.prose", {}).close()
    with connect(postgres_db_url) as db:
        tables = {
            row[0]
            for row in db.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'openprose'"
            )
        }
    assert {"run", "execution", "bindings", "agents", "agent_segments", "imports"} <= tables
    assert {"journal_runs", "journal_steps", "journal_commits"} <= tables


def test_the_invariants_the_specs_keys_mean_are_held(catalog: Any, postgres_db_url: str) -> None:
    import psycopg

    catalog.create(PROGRAM, "main.prose", {}).close()
    with connect(postgres_db_url) as db:
        db.execute(
            "INSERT INTO openprose.agents (name, run_id, scope) VALUES ('a', NULL, 'project')"
        )
        with pytest.raises(psycopg.errors.UniqueViolation):
            db.execute(
                "INSERT INTO openprose.agents (name, run_id, scope) VALUES ('a', NULL, 'project')"
            )
        insert = (
            "INSERT INTO openprose.agent_segments (agent_name, run_id, segment_number) "
            "VALUES ('a', NULL, 1)"
        )
        db.execute(insert)
        with pytest.raises(psycopg.errors.UniqueViolation):
            db.execute(insert)


def test_the_specs_limited_privilege_user_can_run(postgres_db_url: str) -> None:
    from openprose.vm.state.postgres import PostgresCatalog

    # The spec's recommended setup: an admin gives the user the schema, nothing else (not
    # even CREATE on the database, which CREATE SCHEMA IF NOT EXISTS would need).
    role = f"agent_{postgres_db_url.rsplit('/', 1)[1]}"
    with connect(postgres_db_url) as db:
        db.execute(f"CREATE USER {role} WITH PASSWORD '{SECRET}'")
        db.execute(f"CREATE SCHEMA openprose AUTHORIZATION {role}")
        db.execute(f"GRANT ALL ON SCHEMA openprose TO {role}")
    tail = postgres_db_url.partition("@")[2]
    url = f"postgresql://{role}:{SECRET}@{tail}"
    try:
        catalog = PostgresCatalog(url)
        store = catalog.create(PROGRAM, "main.prose", {})
        assert store.commit_binding("1", "a", "let", "let a = ...", "A", None)
        store.close()
        assert [info.run_id for info in catalog.runs()] == [store.run_id]
    finally:
        with connect(postgres_db_url) as db:
            db.execute("DROP SCHEMA openprose CASCADE")
            db.execute(f"DROP USER {role}")


def test_a_new_catalogue_does_not_lock_tables_another_run_is_writing(
    catalog: Any, postgres_db_url: str
) -> None:
    from openprose.vm.state.postgres import PostgresCatalog

    catalog.create(PROGRAM, "main.prose", {}).close()  # the schema exists
    writer = connect(postgres_db_url)
    try:
        # An agent's memory being written: its transaction holds the table until commit.
        with writer.transaction():
            writer.execute(
                "INSERT INTO openprose.agents (name, run_id, scope) VALUES ('a', NULL, 'project')"
            )
            # A second process starting a run meanwhile: a lock it waited for would time out.
            url = postgres_db_url + "?options=-c%20lock_timeout%3D1000"
            PostgresCatalog(url).create(PROGRAM, "main.prose", {}).close()
    finally:
        writer.close()


# ---------------------------------------------------------------------- the store


def bindings(url: str, run_id: str) -> list[tuple[Any, ...]]:
    with connect(url) as db:
        return db.execute(
            "SELECT name, execution_id, kind, value FROM openprose.bindings WHERE run_id = %s "
            "ORDER BY name, execution_id NULLS FIRST",
            (run_id,),
        ).fetchall()


def test_commit_binding_is_idempotent(catalog: Any, postgres_db_url: str) -> None:
    store = catalog.create(PROGRAM, "main.prose", {})
    assert store.commit_binding("1", "a", "let", "let a = ...", "A", None) is True
    assert store.commit_binding("1", "a", "let", "let a = ...", "A", None) is False
    assert store.commit_binding("3", "r", "let", "let r = ...", "R7", 7) is True
    assert store.commit_binding("3", "r", "let", "let r = ...", "R7", 7) is False
    assert store.binding_text("a") == "A" and store.binding_text("r", 7) == "R7"
    store.close()
    assert store.binding_text("a") == "A"  # read back after the run, as its tests do
    assert password_of(postgres_db_url) not in repr(vars(store.record_rows))
    resumed = catalog.open(store.run_id)
    assert resumed.replaying
    assert resumed.commit_binding("1", "a", "let", "let a = ...", "A", None) is False
    assert resumed.replaying  # nothing new was written
    assert resumed.commit_binding("1", "a", "let", "let a = ...", "A2", None) is True
    assert not resumed.replaying
    assert bindings(postgres_db_url, store.run_id) == [
        ("a", None, "let", "A2"),
        ("r", 7, "let", "R7"),
    ]
    resumed.close()


def test_journal_steps_and_commits_survive_a_reconnect(catalog: Any) -> None:
    store = catalog.create(PROGRAM, "main.prose", {"n": 1})
    step = StepRecord(
        "session",
        "1",
        "hash-1",
        {"text": "A"},
        usage={"input_tokens": 3, "output_tokens": 5},
        cost=0.25,
    )
    store.journal.record_step(step, session=True)
    store.commit_binding("1", "a", "let", "let a = ...", "A", None)
    store.close()
    resumed = catalog.open(store.run_id)
    assert resumed.journal.step("session", "1") == StepRecord(
        "session",
        "1",
        "hash-1",
        {"text": "A"},
        None,
        {"input_tokens": 3, "output_tokens": 5, "cache_read_tokens": 0, "cache_write_tokens": 0},
        0.25,
    )
    assert resumed.journal.committed("1", "a", None) is not None
    assert resumed.inputs() == {"n": 1}
    assert resumed.program_text() == PROGRAM
    info = catalog.info(store.run_id)
    assert (info.steps, info.sessions, info.input_tokens, info.output_tokens) == (1, 1, 3, 5)
    assert info.cost == pytest.approx(0.25)
    resumed.close()


def narration(url: str, run_id: str) -> list[tuple[Any, ...]]:
    with connect(url) as db:
        return db.execute(
            "SELECT statement_index, statement_text, status, error_message, "
            "metadata->>'parallel_id', metadata->>'import', parent_id IS NOT NULL "
            "FROM openprose.execution WHERE run_id = %s ORDER BY id",
            (run_id,),
        ).fetchall()


def test_the_narration_is_appended_to_execution(catalog: Any, postgres_db_url: str) -> None:
    store = catalog.create(PROGRAM, "main.prose", {})
    for event in (
        ev.Position(step="1", statement='let a = session "one"', ts=1.0),
        ev.Binding(step="1", name="a", binding_kind="let", value="A", ts=1.0),
        ev.ParallelEnter(step="2", branches=["x", "y"], ts=2.0),
        ev.ParallelBranch(step="2a", branch="x", status="done", ts=2.0),
        ev.ParallelBranch(step="2b", branch="y", status="cancelled", ts=2.0),
        ev.ParallelJoin(step="2", ts=2.0),
        ev.Failure(step="3", message="boom", ts=3.0),
        ev.ProgramEnd(step="", status="error", error="boom", ts=4.0),
    ):
        store.record(event)
    rows = narration(postgres_db_url, store.run_id)
    assert rows == [
        (1, 'let a = session "one"', "executing", None, None, None, False),
        (1, "1→ a ✓", "completed", None, None, None, False),
        (2, "2→ ∥start x,y", "executing", None, "p1", None, False),
        (2, "2a→ ∥x done", "completed", None, "p1", None, True),
        (2, "2b→ ∥y cancelled", "skipped", None, "p1", None, True),
        (2, "2→ ∥done", "completed", None, "p1", None, True),
        (3, "3→ ✗ boom", "failed", "boom", None, None, False),
        (0, "---error 1970-01-01T00:00:04Z boom", "failed", "boom", None, None, False),
    ]
    info = catalog.info(store.run_id)
    assert (info.status, info.error, info.ended_at) == ("failed", "boom", 4.0)
    with connect(postgres_db_url) as db:
        status = db.execute("SELECT status FROM openprose.run WHERE id = %s", (store.run_id,))
        assert status.fetchone() == ("failed",)
    store.close()


def test_a_cancelled_run_is_the_specs_interrupted(catalog: Any, postgres_db_url: str) -> None:
    store = catalog.create(PROGRAM, "main.prose", {})
    store.record(ev.ProgramEnd(status="cancelled", error="Ctrl-C", ts=1.0))
    store.close()
    assert catalog.info(store.run_id).status == "cancelled"
    with connect(postgres_db_url) as db:
        status = db.execute("SELECT status FROM openprose.run WHERE id = %s", (store.run_id,))
        assert status.fetchone() == ("interrupted",)


def test_a_replayed_step_is_not_narrated_again(catalog: Any, postgres_db_url: str) -> None:
    store = catalog.create(PROGRAM, "main.prose", {})
    store.commit_binding("1", "a", "let", "let a = ...", "A", None)
    store.record(ev.Binding(step="1", name="a", value="A", ts=1.0))
    store.close()
    resumed = catalog.open(store.run_id)
    resumed.commit_binding("1", "a", "let", "let a = ...", "A", None)
    resumed.record(ev.Binding(step="1", name="a", value="A", ts=2.0))  # replayed: no row
    resumed.commit_binding("2", "b", "let", "let b = ...", "B", None)
    resumed.record(ev.Binding(step="2", name="b", value="B", ts=3.0))
    texts = [row[1] for row in narration(postgres_db_url, store.run_id)]
    assert texts[0] == "1→ a ✓" and texts[1].startswith("---resume ")
    assert texts[2:] == ["2→ b ✓"]
    resumed.close()


def test_a_called_program_shares_the_run_and_comes_back_on_resume(
    catalog: Any, postgres_db_url: str
) -> None:
    store = catalog.create(PROGRAM, "main.prose", {})
    child = store.child("4", "research", "output x = session 'x'\n", "research.prose")
    assert child.journal is store.journal and child.path is None
    child.save_inputs({"topic": "t"})
    assert child.inputs() == {"topic": "t"}
    assert child.program_text() == "output x = session 'x'\n"
    assert child.commit_binding("4/1", "x", "output", "output x = ...", "X", None)
    child.record(ev.ProgramEnd(ts=5.0))
    assert catalog.info(store.run_id).status == "running"  # the caller's run goes on
    second = store.child("5", "research", "output x = session 'y'\n", "research.prose")
    assert second.commit_binding("5/1", "x", "output", "output x = ...", "Y", None)
    assert [(b[0], b[3]) for b in bindings(postgres_db_url, store.run_id)] == [
        ("research-2.x", "Y"),
        ("research.x", "X"),
    ]
    store.close()
    resumed = catalog.open(store.run_id)
    again = resumed.child("4", "research", "output x = session 'x'\n", "research.prose")
    assert again.inputs() == {"topic": "t"}
    assert again.commit_binding("4/1", "x", "output", "output x = ...", "X", None) is False
    imports = narration(postgres_db_url, store.run_id)
    assert imports[0][1].startswith("---end") and imports[0][5] == "research"
    assert imports[-1][1].startswith("---resume") and imports[-1][5] == "research"
    resumed.close()


def test_two_connections_committing_one_binding_do_not_duplicate_it(
    catalog: Any, postgres_db_url: str
) -> None:
    from openprose.vm.state.postgres import RunRecord

    store = catalog.create(PROGRAM, "main.prose", {})
    writers = [RunRecord(connect(postgres_db_url), store.run_id) for _ in range(2)]
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def write(record: RunRecord, who: int) -> None:
        start.wait()
        try:
            for n in range(100):
                # Root scope (NULL execution_id) is where a plain unique key would not hold.
                record.write_binding(f"b{n % 10}", "let", "let b = ...", f"{who}-{n}", None)
                record.write_binding(f"b{n % 10}", "let", "let b = ...", f"{who}-{n}", 3)
        except BaseException as error:  # pragma: no cover - reported below
            failures.append(error)

    threads = [threading.Thread(target=write, args=(w, i)) for i, w in enumerate(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    rows = bindings(postgres_db_url, store.run_id)
    assert [(r[0], r[1]) for r in rows] == [(f"b{n}", s) for n in range(10) for s in (None, 3)]
    for writer in writers:
        writer.connection.close()
    store.close()


def test_a_connection_cut_mid_run_is_a_state_error(catalog: Any, postgres_db_url: str) -> None:
    store = catalog.create(PROGRAM, "main.prose", {})
    with connect(postgres_db_url) as db:  # as if the server restarted under the run
        db.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    with pytest.raises(StateError, match=f"run {store.run_id} in postgresql://") as raised:
        store.commit_binding("1", "a", "let", "let a = ...", "A", None)
    assert password_of(postgres_db_url) not in all_text(raised.value)
    with pytest.raises(StateError):
        store.record(ev.Position(step="1", statement="let a = ...", ts=1.0))
    store.close()


class Spy:
    """A connection that, after each binding's INSERT, asks the server whether that
    transaction commits synchronously."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.seen: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connection, name)

    def cursor(self) -> Any:
        spy = self

        class Cursor:
            def __init__(self, inner: Any) -> None:
                self.inner = inner

            def __enter__(self) -> Cursor:
                self.inner.__enter__()
                return self

            def __exit__(self, *exc: Any) -> None:
                self.inner.__exit__(*exc)

            def __getattr__(self, name: str) -> Any:
                return getattr(self.inner, name)

            def execute(self, query: Any, params: Any = None) -> Any:
                result = self.inner.execute(query, params)
                if "INSERT INTO openprose.bindings" in str(query):
                    shown = self.inner.execute("SHOW synchronous_commit").fetchone()
                    spy.seen.append(shown[0])
                return result

        return Cursor(self.connection.cursor())


def test_the_narration_commits_asynchronously_but_a_binding_does_not(
    catalog: Any, postgres_db_url: str
) -> None:
    from openprose.vm.state.postgres import RunRecord

    store = catalog.create(PROGRAM, "main.prose", {})
    connection = store.record_rows.connection
    assert connection.execute("SHOW synchronous_commit").fetchone() == ("off",)
    spy = Spy(connection)
    # A stand-in for the driver's connection: only the calls the record makes are seen.
    RunRecord(spy, store.run_id).write_binding(  # type: ignore[arg-type]
        "a", "let", "let a = ...", "A", None
    )
    assert spy.seen == ["on"]
    assert connection.execute("SHOW synchronous_commit").fetchone() == ("off",)
    store.close()
