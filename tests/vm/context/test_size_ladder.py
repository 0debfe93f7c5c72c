"""Context bindings as sessions receive them: the spec's ladder of sizes, by reference for
sessions that can read the run's files, each summary asked once per value."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.backends.replay import ReplayBackend


def _program(size: int, uses: int = 1) -> str:
    value = "x" * size
    lines = [f'let doc = "{value}"']
    lines += [f'session "Use {n}"\n  context: doc' for n in range(uses)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("size", "mode"),
    [(1_999, None), (2_000, "summary"), (8_000, "summary"), (8_001, "essentials")],
)
def test_a_value_is_passed_by_the_ladder_of_its_size(
    run_prose: Any, size: int, mode: str | None
) -> None:
    run = run_prose(_program(size))
    assert run.result.status == "success"
    sent = dict(run.backend.sessions[-1].context)["doc"]
    if mode is None:
        assert sent == "x" * size and run.backend.summaries == []
    else:
        (asked,) = run.backend.summaries
        assert (asked.mode, asked.text, asked.limit) == (mode, "x" * size, 2_000)
        assert len(sent) <= 2_000
        assert "[Context] doc: " in run.text
    # The binding itself is never changed: its file holds the whole value.
    assert run.binding("doc") == "x" * size


def test_a_value_passed_to_many_sessions_is_summarised_once(run_prose: Any) -> None:
    run = run_prose(_program(5_000, uses=3))
    assert [call[0] for call in run.calls].count("summarise") == 1
    assert len({dict(r.context)["doc"] for r in run.backend.sessions}) == 1
    summaries = [e for e in run.result.breakdown.sessions if e.kind == "summarise"]
    assert summaries == []  # sessions only; the one summary is in the totals:
    assert run.result.breakdown.total.calls == 4


def test_the_summary_is_journaled_by_content_and_a_resume_does_not_ask_again(
    run_prose: Any,
) -> None:
    run = run_prose(_program(5_000, uses=2))
    journal = sqlite3.connect(run.run_dir / "journal.db")
    keys = [k for (k,) in journal.execute("SELECT key FROM journal_steps WHERE kind='summarise'")]
    assert len(keys) == 1 and keys[0].startswith("summary:") and keys[0].endswith(":2000")


def test_a_session_that_reads_files_gets_large_bindings_by_reference(run_prose: Any) -> None:
    run = run_prose(
        _program(3_000) + 'let small = "tiny"\nsession "Both"\n  context: [doc, small]\n',
        backend=OfflineBackend(reads_files=True),
    )
    assert run.result.status == "success"
    context = dict(run.backend.sessions[-1].context)
    path = run.run_dir / "bindings" / "doc.md"
    assert context["doc"].startswith(f"[by reference: {path} (3,000 characters)")
    assert context["small"] == "tiny"  # small values stay verbatim
    assert run.backend.summaries == []


def test_a_binding_held_in_a_database_is_passed_by_value(tmp_path: Path) -> None:
    import asyncio

    from openprose.vm.interpreter import Options
    from openprose.vm.runner import run_file
    from tests.vm.vm_support import FakeClock, Recording

    main = tmp_path / "main.prose"
    main.write_text(_program(3_000), encoding="utf-8")
    backend = Recording(OfflineBackend(reads_files=True))
    result = asyncio.run(
        run_file(
            main,
            backend=backend,
            runs_root=tmp_path / ".prose" / "runs",
            state="sqlite",
            options=Options(jitter=False),
            clock=FakeClock(),
        )
    )
    assert result.status == "success"
    assert [r.mode for r in backend.summaries] == ["summary"]


def test_the_ladder_replays_from_a_recording(run_prose: Any, tmp_path: Path) -> None:
    from openprose.vm.backends.replay import RecordingBackend

    source = _program(9_000, uses=2)
    recorded = tmp_path / "record.jsonl"
    first = run_prose(source, backend=RecordingBackend(OfflineBackend(), recorded))
    assert first.result.status == "success"
    lines = [json.loads(line) for line in recorded.read_text().splitlines()[1:]]
    assert [line["kind"] for line in lines].count("summarise") == 1
    again = run_prose(source, backend=ReplayBackend(recorded))
    assert again.result.status == "success"
    assert [r.context for r in again.backend.sessions] == [
        r.context for r in first.backend.sessions
    ]
