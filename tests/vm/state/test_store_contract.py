"""What every state backend does alike (base.Catalog and base.RunStore), run against all
four.  In-context keeps nothing after its process: the tests of what survives a crash run
on the durable backends, and in-context's refusals are tested explicitly."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from openprose.vm import events as ev
from openprose.vm.state import Catalog, RunStore, StateError, open_catalog
from openprose.vm.state.base import StepRecord, program_hash, value_hash
from tests.vm.state.state_support import binding_text, crash

PROGRAM = 'input topic: "t"\nlet a = session "One {topic}"\noutput out = a\n'
CALLED = 'input x: "x"\noutput y = session "Called {x}"\n'


def create(catalog: Catalog, run_id: str | None = None) -> RunStore:
    return catalog.create(
        PROGRAM, "main.prose", {"topic": "bees"}, backend="offline", run_id=run_id
    )


# ------------------------------------------------------------------ creating


def test_a_new_run_is_running_with_its_program_and_inputs(catalog: Catalog) -> None:
    store = create(catalog)
    assert store.state == catalog.state
    assert store.run_id
    assert store.program_text() == PROGRAM
    # ... and read from the catalogue, without claiming the run (a dbos resume checks it).
    assert catalog.program_text(store.run_id) == PROGRAM
    assert store.inputs() == {"topic": "bees"}
    assert not store.replaying
    info = catalog.info(store.run_id)
    assert (info.run_id, info.state, info.status) == (store.run_id, catalog.state, "running")
    assert (info.program_name, info.backend) == ("main.prose", "offline")
    assert info.program_hash == program_hash(PROGRAM)
    assert info.pid == os.getpid()
    assert info.ended_at is None and info.duration is None
    store.close()


def test_a_run_lives_where_its_document_says(catalog: Catalog) -> None:
    store = create(catalog)
    if catalog.state in ("filesystem", "sqlite"):
        assert store.path is not None and store.path.is_dir()
        assert (store.path / "program.prose").read_text(encoding="utf-8") == PROGRAM
        assert store.path.name == store.run_id
    else:
        assert store.path is None
    store.close()


def test_a_run_can_be_given_its_id(catalog: Catalog) -> None:
    store = create(catalog, run_id="20260101-000000-abc123")
    assert store.run_id == "20260101-000000-abc123"
    assert catalog.info("20260101-000000-abc123").run_id == store.run_id
    store.close()


def test_saved_inputs_replace_the_given_ones(catalog: Catalog) -> None:
    store = create(catalog)
    store.save_inputs({"topic": "ants", "more": ["a", "b"]})
    assert store.inputs() == {"topic": "ants", "more": ["a", "b"]}
    store.close()


# ------------------------------------------------------------------ bindings


def test_commit_binding_writes_once_per_value(catalog: Catalog) -> None:
    store = create(catalog)
    assert store.commit_binding("2", "a", "let", 'let a = session "One"', "first", None)
    assert binding_text(store, "a") == "first"
    # The same binding of the same step again (a replay): nothing is written.
    assert not store.commit_binding("2", "a", "let", 'let a = session "One"', "first", None)
    # A new value for it (the step ran again): written.
    assert store.commit_binding("2", "a", "let", 'let a = session "One"', "second", None)
    assert binding_text(store, "a") == "second"
    assert store.journal.committed("2", "a", None) == value_hash("second")
    store.close()


def test_bindings_are_scoped_by_execution_id(catalog: Catalog) -> None:
    store = create(catalog)
    assert store.commit_binding("4", "r", "let", "let r = 1", "root", None)
    assert store.commit_binding("4/b:1", "r", "let", "let r = 1", "in one", 1)
    assert store.commit_binding("4/b:2", "r", "let", "let r = 1", "in two", 2)
    assert [binding_text(store, "r", scope) for scope in (None, 1, 2)] == [
        "root",
        "in one",
        "in two",
    ]
    assert binding_text(store, "r", 3) is None
    store.close()


def test_structured_values_are_committed(catalog: Catalog) -> None:
    store = create(catalog)
    value = ["one", "two"]
    assert store.commit_binding("5", "items", "const", "const items = [...]", value, None)
    assert not store.commit_binding("5", "items", "const", "const items = [...]", value, None)
    text = binding_text(store, "items")
    assert text is not None and "one" in text and "two" in text
    store.close()


def test_a_committed_binding_survives_the_process(durable_catalog: Catalog) -> None:
    store = create(durable_catalog)
    store.commit_binding("2", "a", "let", 'let a = session "One"', "kept", None)
    run_id = store.run_id
    crash(store)
    reopened = durable_catalog.open(run_id)
    assert binding_text(reopened, "a") == "kept"
    assert reopened.journal.committed("2", "a", None) == value_hash("kept")
    # The resumed run replays the statement: the binding is not written twice.
    assert not reopened.commit_binding("2", "a", "let", 'let a = session "One"', "kept", None)
    reopened.close()


# ------------------------------------------------------------------ the journal


def test_journal_steps_round_trip_after_reopening(durable_catalog: Catalog) -> None:
    store = create(durable_catalog)
    answered = StepRecord(
        "session",
        "2",
        "h-two",
        {"text": "an answer", "session_ref": "s1"},
        None,
        {"input_tokens": 12, "output_tokens": 7, "cache_read_tokens": 3, "cache_write_tokens": 1},
        0.25,
    )
    failed = StepRecord("judge", "3", "h-three", None, "timeout")
    store.journal.record_step(answered, session=True)
    store.journal.record_step(failed)
    run_id = store.run_id
    crash(store)
    reopened = durable_catalog.open(run_id)
    assert reopened.replaying
    assert reopened.journal.step("session", "2") == answered
    back = reopened.journal.step("judge", "3")
    assert (back.hash, back.result, back.error) == ("h-three", None, "timeout")
    assert reopened.journal.step("session", "9") is None
    reopened.close()


def test_an_item_s_journal_holds_its_own_steps_and_the_run_s_summaries(
    durable_catalog: Catalog,
) -> None:
    store = create(durable_catalog)
    for kind, key in [
        ("session", "2@1.1#attempt1"),
        ("session", "2@10.1#attempt1"),  # another item's: its key only starts alike
        ("session", "3#attempt1"),
        ("summarise", "summary:0123abcd:2000"),  # keyed by content, wherever it was asked
    ]:
        store.journal.record_step(StepRecord(kind, key, "h", {"text": key}, None))
    item = durable_catalog.branch_journal(store.run_id, "2@1.")
    assert sorted(item.steps) == [
        ("session", "2@1.1#attempt1"),
        ("summarise", "summary:0123abcd:2000"),
    ]
    item.close()
    store.close()


def test_an_item_s_journal_opens_while_the_run_is_writing(durable_catalog: Catalog) -> None:
    # Opening an item's journal only reads: it does not wait for the run's write to end
    # (on SQLite it took the write lock twice, to make the tables and to read).
    store = create(durable_catalog)
    store.journal.record_step(StepRecord("session", "2@0.1#attempt1", "h", {"text": "a"}, None))
    with ThreadPoolExecutor(1) as pool, store.journal._transaction() as cursor:
        cursor.execute(store.journal._sql("SELECT count(*) FROM {p}journal_steps"))
        opening = pool.submit(durable_catalog.branch_journal, store.run_id, "2@0.")
        item = opening.result(timeout=5)  # SQLite's lock wait is 10 s
    assert sorted(item.steps) == [("session", "2@0.1#attempt1")]
    item.close()
    store.close()


def test_numbers_are_kept_per_step_and_counted_on_from_before_counters(
    catalog: Catalog,
) -> None:
    store = create(catalog)
    journal = store.journal
    # A number a run gave before its journal had counters: the counter starts above it.
    journal.record_commit("1/study", "@execution:", None, "4", durable=True)
    assert journal.number("2/study", "@execution:", durable=True) == 5
    assert journal.number("3/study", "@execution:") == 6
    assert journal.number("2/study", "@execution:") == 5  # the step's own, again
    assert journal.number("2", "@anon:") == 1  # each kind counts alone
    store.close()


def test_processes_sharing_a_run_never_hand_out_one_number_twice(
    durable_catalog: Catalog,
) -> None:
    store = create(durable_catalog)
    run_id = store.run_id
    store.journal.number("1/study", "@execution:", durable=True)
    # Items of a fan-out number from their own connections, each reading only its keys.
    journals = [durable_catalog.branch_journal(run_id, f"2@{i}") for i in range(4)]

    def number_many(index: int) -> list[int]:
        journal = journals[index]
        return [
            journal.number(f"2@{index}.{n}/study", "@execution:", durable=True) for n in range(25)
        ]

    with ThreadPoolExecutor(len(journals)) as pool:
        given = [n for numbers in pool.map(number_many, range(4)) for n in numbers]
    given.append(store.journal.number("3/study", "@execution:", durable=True))
    assert sorted(given) == list(range(2, 103))
    for journal in journals:
        journal.close()
    crash(store)
    # A resumed run keeps every step's number and counts on after them all.
    reopened = durable_catalog.open(run_id)
    assert reopened.journal.number("2@3.24/study", "@execution:") in given
    assert reopened.journal.number("4/study", "@execution:") == 103
    reopened.close()


def test_run_info_counts_steps_sessions_tokens_and_cost(catalog: Catalog) -> None:
    store = create(catalog)
    usage = {"input_tokens": 100, "output_tokens": 40}
    store.journal.record_step(
        StepRecord("session", "1", "h1", {"text": "x"}, None, usage, 0.5), session=True
    )
    store.journal.record_step(StepRecord("judge", "2", "h2", {"met": True}, None, usage, 0.25))
    info = catalog.info(store.run_id)
    assert (info.steps, info.sessions) == (2, 1)
    assert (info.input_tokens, info.output_tokens) == (200, 80)
    assert info.cost == pytest.approx(0.75)
    store.close()


# ------------------------------------------------------------------ ending and resuming


@pytest.mark.parametrize(
    ("status", "error", "expected"),
    [
        ("success", "", "completed"),
        ("error", "boom", "failed"),
        ("cancelled", "interrupted", "cancelled"),
    ],
)
def test_program_end_closes_the_summary(
    catalog: Catalog, status: str, error: str, expected: str
) -> None:
    store = create(catalog)
    store.record(ev.ProgramEnd(step="", ts=1_900_000_000.0, status=status, error=error))
    info = catalog.info(store.run_id)
    assert (info.status, info.error, info.ended_at) == (expected, error, 1_900_000_000.0)
    store.close()


def test_resume_is_refused_while_the_run_is_running(durable_catalog: Catalog) -> None:
    store = create(durable_catalog)
    with pytest.raises(StateError, match="still running"):
        durable_catalog.open(store.run_id)
    store.close()


def test_a_run_whose_process_died_is_interrupted_and_resumable(durable_catalog: Catalog) -> None:
    store = create(durable_catalog)
    run_id = store.run_id
    crash(store)
    assert durable_catalog.info(run_id).status == "interrupted"
    reopened = durable_catalog.open(run_id)
    # Claimed: this process runs it now, and a second resume is refused.
    info = durable_catalog.info(run_id)
    assert (info.status, info.pid) == ("running", os.getpid())
    with pytest.raises(StateError, match="still running"):
        durable_catalog.open(run_id)
    assert reopened.program_text() == PROGRAM
    assert reopened.inputs() == {"topic": "bees"}
    reopened.close()


def test_a_resumed_run_with_no_steps_does_not_replay(durable_catalog: Catalog) -> None:
    store = create(durable_catalog)
    run_id = store.run_id
    crash(store)
    reopened = durable_catalog.open(run_id)
    assert not reopened.replaying
    reopened.close()


def test_a_new_commit_ends_the_replay_of_the_run_and_its_children(
    durable_catalog: Catalog,
) -> None:
    store = create(durable_catalog)
    store.commit_binding("2", "a", "let", "let a = 1", "one", None)
    run_id = store.run_id
    crash(store)
    reopened = durable_catalog.open(run_id)
    called = reopened.child("3", "local--called-1", CALLED, "called.prose")
    assert reopened.replaying and called.replaying
    assert not reopened.commit_binding("2", "a", "let", "let a = 1", "one", None)
    assert reopened.replaying
    assert called.commit_binding("3/called:1", "y", "output", "output y = 1", "new", None)
    assert not reopened.replaying and not called.replaying
    called.close()
    reopened.close()


def test_an_unknown_run_is_a_state_error(catalog: Catalog) -> None:
    for run_id in ("20990101-000000-nosuch", "", "../etc", "."):
        with pytest.raises(StateError):
            catalog.open(run_id)
        with pytest.raises(StateError):
            catalog.info(run_id)
        with pytest.raises(StateError):
            catalog.remove(run_id)
        with pytest.raises(StateError):
            catalog.program_text(run_id)


# ------------------------------------------------------------------ called programs


def test_a_called_program_has_a_store_per_step(catalog: Catalog) -> None:
    store = create(catalog)
    called = store.child("3", "local--called-1", CALLED, "called.prose")
    assert called.state == catalog.state
    assert called.program_text() == CALLED
    assert called.journal is store.journal
    assert called.commit_binding("3/called:1", "y", "output", "output y = 1", "made", None)
    assert binding_text(called, "y") == "made"
    # The binding is the called program's: the caller has none of that name.
    assert binding_text(store, "y") is None
    # The same step gets the same store back; another step, a store of its own.
    again = store.child("3", "local--called-1", CALLED, "called.prose")
    assert (again.run_id, again.path) == (called.run_id, called.path)
    assert binding_text(again, "y") == "made"
    other = store.child("4", "local--called-2", CALLED, "called.prose")
    assert binding_text(other, "y") is None
    assert other.commit_binding("4/called:1", "y", "output", "output y = 1", "other", None)
    assert (binding_text(called, "y"), binding_text(other, "y")) == ("made", "other")
    for each in (other, called):
        each.close()
    store.close()


def test_a_resumed_run_gets_its_called_programs_back(durable_catalog: Catalog) -> None:
    store = create(durable_catalog)
    called = store.child("3", "local--called-1", CALLED, "called.prose")
    called.commit_binding("3/called:1", "y", "output", "output y = 1", "made", None)
    first = (called.run_id, called.path)
    called.close()
    run_id = store.run_id
    crash(store)
    reopened = durable_catalog.open(run_id)
    back = reopened.child("3", "local--called-1", CALLED, "called.prose")
    assert (back.run_id, back.path) == first
    assert binding_text(back, "y") == "made"
    back.close()
    reopened.close()


# ------------------------------------------------------------------ the catalogue


def test_runs_lists_every_run_newest_first(durable_catalog: Catalog) -> None:
    older = create(durable_catalog, run_id="20260101-000000-older1")
    newer = create(durable_catalog, run_id="20260102-000000-newer1")
    listed = [info.run_id for info in durable_catalog.runs()]
    ours = [run_id for run_id in listed if run_id in (older.run_id, newer.run_id)]
    assert ours == [newer.run_id, older.run_id]
    for store in (older, newer):
        store.close()


def test_remove_refuses_a_running_run_and_forgets_a_dead_one(durable_catalog: Catalog) -> None:
    store = create(durable_catalog)
    run_id = store.run_id
    with pytest.raises(StateError, match="still running"):
        durable_catalog.remove(run_id)
    store.commit_binding("2", "a", "let", "let a = 1", "one", None)
    path = store.path
    crash(store)
    durable_catalog.remove(run_id)
    assert run_id not in [info.run_id for info in durable_catalog.runs()]
    with pytest.raises(StateError):
        durable_catalog.info(run_id)
    with pytest.raises(StateError):
        durable_catalog.open(run_id)
    if path is not None:
        assert not path.exists()


def test_a_finished_run_is_removed(durable_catalog: Catalog) -> None:
    store = create(durable_catalog)
    store.record(ev.ProgramEnd(step="", ts=1_900_000_000.0))
    store.close()
    durable_catalog.remove(store.run_id)
    assert store.run_id not in [info.run_id for info in durable_catalog.runs()]


# ------------------------------------------------------------------ in-context


def test_in_context_leaves_nothing_to_resume_list_or_remove(tmp_path: Path) -> None:
    catalog = open_catalog("in-context", tmp_path / ".prose" / "runs")
    store = create(catalog)
    store.commit_binding("2", "a", "let", "let a = 1", "one", None)
    store.record(ev.ProgramEnd(step="", ts=1_900_000_000.0))
    with pytest.raises(StateError, match="nothing to resume"):
        catalog.open(store.run_id)
    assert catalog.runs() == []
    with pytest.raises(StateError):
        catalog.remove(store.run_id)
    store.close()
    assert not (tmp_path / ".prose").exists()
