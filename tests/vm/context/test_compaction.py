"""A multi-turn session past 70 % of its window: the older turns compacted into a summary,
the last four kept, and a memory flush written to memory.md first (seed 001)."""

from __future__ import annotations

from typing import Any

import pytest

from openprose.vm.context import windows
from tests.vm.vm_support import Answering

TURNS = 8
ANSWER = "Decided: keep the cache in cache_dir/. " + "detail " * 250  # ~1,800 characters


def _program() -> str:
    head = 'agent scribe:\n  model: opus\n  persist: true\n  prompt: "You keep notes"\n\n'
    head += 'session: scribe\n  prompt: "Step 0"\n'
    return head + "".join(f'resume: scribe\n  prompt: "Step {n}"\n' for n in range(1, TURNS))


@pytest.fixture
def small_window(monkeypatch: pytest.MonkeyPatch) -> int:
    # 8,192 of it is the answer's reserve; ~3,800 tokens are left for history and task.
    monkeypatch.setitem(windows.WINDOWS, "claude-opus-4-8", 12_000)
    return 12_000


def test_history_past_70_percent_is_compacted_keeping_the_last_four(
    run_prose: Any, small_window: int
) -> None:
    backend = Answering({f"Step {n}": f"Step {n}. {ANSWER}" for n in range(TURNS)})
    run = run_prose(_program(), backend=backend)
    assert run.result.status == "success"
    compacted = [r for r in run.backend.sessions if r.history]
    assert compacted, "no session was compacted"
    first = compacted[0]
    assert first.history.startswith("## Session Summary (compacted)\n")
    assert len(first.turns) == 4
    # The turns kept are the most recent ones, verbatim.
    number = int(first.prompt.split()[-1])
    assert [t.prompt for t in first.turns] == [f"Step {n}" for n in range(number - 4, number)]
    assert first.turns[-1].answer.startswith(f"Step {number - 1}. Decided")
    # The flush is asked before the summary, over the same turns.
    modes = [s.mode for s in run.backend.summaries]
    assert modes[:2] == ["flush", "compaction"]
    assert run.backend.summaries[0].text == run.backend.summaries[1].text
    assert "[Context] history past 70 % of the window: compacted" in run.text


def test_the_flush_and_the_fold_are_in_memory_md(run_prose: Any, small_window: int) -> None:
    backend = Answering({f"Step {n}": f"Step {n}. {ANSWER}" for n in range(TURNS)})
    run = run_prose(_program(), backend=backend)
    agent = run.run_dir / "agents" / "scribe"
    memory = (agent / "memory.md").read_text(encoding="utf-8")
    assert "## Compacted history" in memory
    assert "- Memory flush (" in memory
    assert "- Segment 001" in memory  # the first turns were folded, their specifics kept
    segments = sorted(p.name for p in agent.glob("scribe-*.md"))
    assert len(segments) < TURNS  # folded segments left the store
    assert segments[-1] == f"scribe-{TURNS:03d}.md"


def test_no_compaction_while_the_history_fits(run_prose: Any) -> None:
    run = run_prose(_program())  # the offline answers are short; the window is 1,000,000
    assert run.result.status == "success"
    assert all(not r.history for r in run.backend.sessions)
    assert len(run.backend.sessions[-1].turns) == TURNS - 1
    assert run.backend.summaries == []


def test_the_budget_of_each_attempt_is_journaled(run_prose: Any, small_window: int) -> None:
    from openprose.vm.context.record import stored_budgets

    backend = Answering({f"Step {n}": f"Step {n}. {ANSWER}" for n in range(TURNS)})
    run = run_prose(_program(), backend=backend)
    found = stored_budgets(run.run_dir / "journal.db", run.result.run_id)
    assert found is not None and len(found) == TURNS
    assert {b.window for b in found} == {small_window}
    assert all(b.layers.reserve == windows.RESERVE and b.counter == "estimate" for b in found)
    assert found[0].layers.history == 0 and found[-1].layers.history > 0
    assert found[0].line == 6 and found[0].statement == "session: scribe"
    assert any("compacted" in action for b in found for action in b.actions)
    # Each budget fits its window.
    assert all(b.layers.total <= b.window for b in found)
