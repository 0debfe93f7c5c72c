"""A context overflow answered by the backend (the offline backend's ``window``), and one the
VM foresees: the seed-001 ladder, one step at a time, each step narrated, then a retry."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from openprose.vm.backends.base import BackendError, ContextOverflow, SummaryRequest
from openprose.vm.backends.replay import decode, error_text
from openprose.vm.context import windows
from tests.vm.vm_support import Answering

BIG = "Found in data/q3.csv: revenue 4.2M. " + "filler " * 400  # ~2,800 characters


def _agent(turns: int) -> str:
    text = 'agent analyst:\n  model: opus\n  persist: true\n  prompt: "Analyse"\n\n'
    text += 'session: analyst\n  prompt: "Turn 0"\n'
    return text + "".join(f'resume: analyst\n  prompt: "Turn {n}"\n' for n in range(1, turns))


def _answers(turns: int) -> dict[str, str]:
    return {f"Turn {n}": f"Turn {n}. {BIG}" for n in range(turns)}


def test_an_overflow_first_compacts_all_but_the_last_two_turns(run_prose: Any) -> None:
    # 5 turns of ~700 tokens: the fifth session overflows a 2,500-token window.
    run = run_prose(_agent(6), backend=Answering(_answers(6), window=2_500))
    assert run.result.status == "success", run.result.error
    retried = [r for r in run.backend.sessions if r.history]
    assert retried and len(retried[0].turns) == 2
    assert "[Context] context overflow, emergency compaction: compacted" in run.text
    # The failed attempt and its retry are two attempts of one step, no retry: spent.
    attempts = [r.attempt for r in run.backend.sessions if r.prompt == retried[0].prompt]
    assert attempts == [1, 2]
    assert "[Warning]" not in run.text


def test_an_overflow_with_no_turns_drops_the_context_contents(run_prose: Any) -> None:
    source = f'let doc = "{"word " * 1_400}"\nsession "Use it"\n  context: doc\n'
    run = run_prose(source, backend=Answering({}, window=300))
    assert run.result.status == "success", run.result.error
    first, second = run.backend.sessions
    assert len(dict(first.context)["doc"]) <= 2_000  # summarised to its key points
    assert dict(second.context)["doc"] == (
        "[doc: 7,000 characters left out to fit the model's context window]"
    )
    assert "[Context] context overflow: dropped the contents of doc" in run.text


def test_a_session_that_reads_files_gets_the_dropped_binding_by_reference(run_prose: Any) -> None:
    source = 'let doc = "short but too much for a tiny window"\nsession "Use it"\n  context: doc\n'
    run = run_prose(source, backend=Answering({}, window=10, reads_files=True))
    second = run.backend.sessions[1]
    path = run.run_dir / "bindings" / "doc.md"
    assert dict(second.context)["doc"].startswith(f"[by reference: {path}")


def test_two_big_turns_end_in_a_fresh_session_with_a_transfer_summary(run_prose: Any) -> None:
    answers = {"Turn 0": "Turn 0. " + "a " * 2_000, "Turn 1": "Turn 1. " + "b " * 2_000}
    run = run_prose(_agent(3), backend=Answering(answers, window=1_600))
    assert run.result.status == "success", run.result.error
    last = run.backend.sessions[-1]
    assert last.turns == () and last.history.startswith("## Transfer summary (fresh session)")
    assert [s.mode for s in run.backend.summaries][-1] == "transfer"
    assert "started a fresh session with a transfer summary of the 2 earlier turns" in run.text


def test_when_every_step_is_spent_the_session_fails_with_the_overflow(run_prose: Any) -> None:
    source = f'session "{"Too long a task. " * 200}"\n'
    run = run_prose(source, backend=Answering({}, window=100))
    assert run.result.status == "error"
    assert "context overflow" in run.result.error
    assert "every recovery step" in run.result.error


def test_a_failure_after_recovery_can_be_caught(run_prose: Any) -> None:
    source = f'try:\n  session "{"Too long a task. " * 200}"\ncatch as err:\n  session "Recover"\n'
    run = run_prose(source, backend=Answering({}, window=100))
    assert run.result.status == "success"
    assert run.prompts[-1] == "Recover"


def test_the_vm_foresees_an_overflow_and_recovers_before_sending(
    run_prose: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ~300 tokens beyond the reserve: the value's 500-token summary cannot fit.
    monkeypatch.setitem(windows.WINDOWS, "claude-opus-4-8", 8_500)
    source = f'let doc = "{"word " * 1_000}"\nsession "Use it"\n  model: opus\n  context: doc\n'
    run = run_prose(source)
    assert run.result.status == "success"
    (sent,) = run.backend.sessions  # no request the provider would refuse
    assert dict(sent.context)["doc"].startswith("[doc: 5,000 characters left out")
    assert "[Context] the request is about" in run.text
    assert "more than the window of 8,500" in run.text


def test_an_overflow_is_journaled_as_one_and_replays_as_one(run_prose: Any) -> None:
    run = run_prose(_agent(6), backend=Answering(_answers(6), window=2_500))
    journal = sqlite3.connect(run.run_dir / "journal.db")
    errors = [
        e for (e,) in journal.execute("SELECT error FROM journal_steps WHERE error IS NOT NULL")
    ]
    assert errors and all(e.startswith("[context_overflow] ") for e in errors)
    request = SummaryRequest("x", "y", 10, "1")
    with pytest.raises(ContextOverflow):
        decode(request, {"error": errors[0]})
    with pytest.raises(BackendError) as plain:
        decode(request, {"error": error_text(BackendError("boom"))})
    assert not isinstance(plain.value, ContextOverflow)
