"""The newest run of a program, read for the editor: real runs on the offline backend (the
filesystem and sqlite state), with context budgets written into their journals as the
interpreter writes them (``record.record``)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from pathlib import Path

import pytest

from openprose.vm.accounting import Entry, Ledger, stored_entries
from openprose.vm.backends.base import Usage
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.context import last_run as module
from openprose.vm.context.last_run import LastRun, last_run, project_root
from openprose.vm.context.record import Layers, SessionBudget, record
from openprose.vm.runner import run_file
from openprose.vm.state.journal import Journal

PROGRAM = """\
agent writer:
  model: sonnet
  prompt: "You write."

let draft = session: writer
  prompt: "Write a poem"

session "Summarise {draft}"
"""
JOURNALS = {"filesystem": ("journal.db", ""), "sqlite": ("state.db", "x_")}


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    module.clear_cache()


def run(project: Path, name: str = "main.prose", state: str = "filesystem") -> str:
    """Run ``name`` in ``project`` as ``prose run`` does; the run's id."""
    path = project / name
    if not path.exists():
        path.write_text(PROGRAM, encoding="utf-8")
    result = asyncio.run(
        run_file(
            path,
            backend=OfflineBackend(),
            runs_root=project / ".prose" / "runs",
            project_root=project,
            state=state,
        )
    )
    assert result.status == "success", result.error
    return result.run_id


def journal(project: Path, run_id: str, state: str = "filesystem") -> Journal:
    name, prefix = JOURNALS[state]
    return Journal.sqlite(project / ".prose" / "runs" / run_id / name, run_id, prefix)


def budget(key: str, line: int, statement: str, **layers: int) -> SessionBudget:
    return SessionBudget(
        key=key,
        agent="writer",
        statement=statement,
        line=line,
        program="main.prose",
        model="claude-sonnet-4",
        window=200_000,
        layers=Layers(**layers),
        actions=("summarised draft",),
    )


def write(project: Path, run_id: str, *budgets: SessionBudget, state: str = "filesystem") -> None:
    opened = journal(project, run_id, state)
    try:
        for each in budgets:
            record(each, opened)
    finally:
        opened.close()


def found(program: Path) -> LastRun:
    result = last_run(program)
    assert result is not None
    return result


def test_a_run_is_grouped_by_statement_line_and_agent(tmp_path: Path) -> None:
    run_id = run(tmp_path)
    entries = stored_entries(tmp_path / ".prose" / "runs" / run_id / "journal.db", run_id)
    assert entries is not None and len(entries) == 2
    result = found(tmp_path / "main.prose")
    assert (result.run_id, result.state, result.program) == (run_id, "filesystem", "main.prose")
    assert 0 < time.time() - result.started_at < 120
    assert sorted(result.statements) == [5, 8]
    draft = result.statements[5]
    assert draft.statement == "let draft = session: writer"
    assert draft.tally.calls == 1
    by_line = {entry.line: entry for entry in entries}
    assert draft.tally.input_tokens == by_line[5].usage.input_tokens > 0
    assert draft.tally.output_tokens == by_line[5].usage.output_tokens > 0
    assert result.statements[8].statement == 'session "Summarise {draft}"'
    # Whatever budgets the interpreter wrote are this statement's own.
    assert all((b.line, b.program) == (5, "main.prose") for b in draft.budgets)
    assert set(result.agents) == {"writer", ""}
    assert result.agents["writer"].calls == 1


def test_budgets_are_read_back_in_the_order_written(tmp_path: Path) -> None:
    run_id = run(tmp_path)
    first = budget("2#attempt91", 5, "let draft = session: writer", system=10, prompt=20)
    second = budget("2#attempt92", 5, "let draft = session: writer", system=10, prompt=30)
    write(tmp_path, run_id, first, second)
    draft = found(tmp_path / "main.prose").statements[5]
    assert draft.budgets[-2:] == (first, second)
    assert draft.tally.calls == 1  # budgets are attempts; the tally counts accounted calls


def test_the_newest_run_of_the_program_is_read_whatever_its_state(tmp_path: Path) -> None:
    older = run(tmp_path)
    newer = run(tmp_path, state="sqlite")
    (tmp_path / "other.prose").write_text('session "Something else"\n', encoding="utf-8")
    run(tmp_path, "other.prose")  # the newest run, of another program
    # Two runs can start within one clock tick: make the order unambiguous.
    stamp(tmp_path, older, "filesystem", 1000.0)
    stamp(tmp_path, newer, "sqlite", 2000.0)
    result = found(tmp_path / "main.prose")
    assert (result.run_id, result.state) == (newer, "sqlite")
    before = len(found(tmp_path / "main.prose").statements[8].budgets)
    mine = budget("3#attempt91", 8, 'session "Summarise {draft}"')
    write(tmp_path, newer, mine, state="sqlite")
    assert found(tmp_path / "main.prose").statements[8].budgets[before:] == (mine,)
    assert found(tmp_path / "other.prose").statements[1].statement == 'session "Something else"'
    assert last_run(tmp_path / "missing.prose") is None


def stamp(project: Path, run_id: str, state: str, started_at: float) -> None:
    name, prefix = JOURNALS[state]
    connection = sqlite3.connect(project / ".prose" / "runs" / run_id / name)
    with connection:
        connection.execute(
            f"UPDATE {prefix}journal_runs SET started_at = ? WHERE run_id = ?",
            (started_at, run_id),
        )
    connection.close()
    module.clear_cache()  # a run's start is read once: this test rewrites it


def test_entries_of_other_programs_in_the_journal_are_left_out(tmp_path: Path) -> None:
    run_id = run(tmp_path)
    before = found(tmp_path / "main.prose").statements[5].budgets
    opened = journal(tmp_path, run_id)
    try:
        # An imported program's calls are in its caller's journal, named by their program.
        usage = Usage(input_tokens=100, output_tokens=100)
        Ledger().add(Entry("session", "9/1#attempt1", "writer", "x", 5, "lib.prose", usage, 1.0),
                     opened)  # fmt: skip
        other = SessionBudget("9/1#attempt1", "", "x", 5, "lib.prose", "", 0)
        record(other, opened)
    finally:
        opened.close()
    draft = found(tmp_path / "main.prose").statements[5]
    assert draft.tally.calls == 1 and draft.tally.cost == 0.0
    assert draft.budgets == before


def test_a_program_below_the_project_root_finds_its_runs(tmp_path: Path) -> None:
    (tmp_path / ".prose").mkdir()
    nested = tmp_path / "flows" / "daily"
    nested.mkdir(parents=True)
    assert project_root(nested / "main.prose") == tmp_path
    assert last_run(nested / "main.prose") is None  # a project without runs
    run_id = run(tmp_path)
    (nested / "main.prose").write_text(PROGRAM, encoding="utf-8")
    assert found(nested / "main.prose").run_id == run_id
    assert project_root(tmp_path / "elsewhere" / "x.prose") == tmp_path
    assert last_run(Path("/nonexistent-project/main.prose")) is None


def test_what_was_read_is_kept_until_the_journal_changes(tmp_path: Path) -> None:
    run_id = run(tmp_path)
    program = tmp_path / "main.prose"
    first = found(program)
    assert last_run(program) is first  # unchanged: not read again
    mine = budget("2#attempt91", 5, "let draft = session: writer", prompt=7)
    write(tmp_path, run_id, mine)
    after = found(program)
    assert after is not first
    assert after.statements[5].budgets[-1] == mine
    newer = run(tmp_path)  # a new run in the runs root
    stamp(tmp_path, newer, "filesystem", time.time() + 60)
    assert found(program).run_id == newer


def test_an_unreadable_journal_is_no_figures_and_no_error(tmp_path: Path) -> None:
    run_id = run(tmp_path)
    database = tmp_path / ".prose" / "runs" / run_id / "journal.db"
    for suffix in ("-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    database.write_bytes(b"not a database" * 100)
    assert last_run(tmp_path / "main.prose") is None


def test_a_row_this_version_cannot_read_is_left_out(tmp_path: Path) -> None:
    run_id = run(tmp_path)
    before = found(tmp_path / "main.prose").statements[5].budgets
    module.clear_cache()
    opened = journal(tmp_path, run_id)
    try:
        opened.record_commit("2#attempt9", "@context:session", None, "{not json")
        opened.record_commit("2#attempt8", "@context:session", None, '{"line": "five"}')
    finally:
        opened.close()
    assert found(tmp_path / "main.prose").statements[5].budgets == before


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0, reason="root reads any file")
def test_a_journal_without_read_permission_is_no_figures(tmp_path: Path) -> None:
    run_id = run(tmp_path)
    database = tmp_path / ".prose" / "runs" / run_id / "journal.db"
    database.chmod(0)
    try:
        assert last_run(tmp_path / "main.prose") is None
    finally:
        database.chmod(0o644)


def test_a_folder_that_is_no_run_is_passed_over(tmp_path: Path) -> None:
    run_id = run(tmp_path)
    stray = tmp_path / ".prose" / "runs" / "notes"
    stray.mkdir()
    (stray / "state.md").write_text("# an in-context run keeps no journal\n", encoding="utf-8")
    assert found(tmp_path / "main.prose").run_id == run_id
    # ...and the listing is still kept: nothing in it needs reading again.
    assert (tmp_path / ".prose" / "runs") in module._newest
