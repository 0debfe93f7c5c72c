"""Recording a run's exchanges and replaying them exactly, with no model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.backends.replay import RecordingBackend, ReplayBackend

PROGRAM = """\
block polish(text):
  let better = session "Polish {text}"
  output better

let drafts = parallel for topic in ["a", "b", "c"]:
  do polish(topic)
loop until **good enough** (max: 4):
  session "Improve"
    retry: 2
choice **route**:
  option "x":
    session "Route x"
  option "y":
    session "Route y"
if **ship it**:
  output final = session "Final"
    context: drafts
"""


def record(run_prose: Any, tmp_path: Path, source: str = PROGRAM) -> tuple[Any, Path]:
    path = tmp_path / "run.jsonl"
    inner = OfflineBackend(rounds=3, failures={"Improve": 1}, choices={"route": 1})
    return run_prose(source, backend=RecordingBackend(inner, path)), path


def test_a_replay_reproduces_the_recorded_run_without_a_model(
    run_prose: Any, tmp_path: Path
) -> None:
    recorded, path = record(run_prose, tmp_path)
    assert recorded.result.status == "success"
    replayed = run_prose(PROGRAM, backend=ReplayBackend(path))
    assert replayed.result.status == "success"
    assert replayed.result.outputs == recorded.result.outputs
    assert replayed.calls == recorded.calls  # the same questions, in the same order
    assert replayed.result.usage == recorded.result.usage
    assert "Route y" in replayed.prompts  # the recorded choice, not the offline default
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert header == {"format": "openprose-record", "version": 1, "backend": "offline",
                      "dry_run": True}  # fmt: skip


def test_a_changed_program_fails_naming_the_step(run_prose: Any, tmp_path: Path) -> None:
    _, path = record(run_prose, tmp_path)
    changed = PROGRAM.replace('session "Final"', 'session "Final!"')
    run = run_prose(changed, backend=ReplayBackend(path))
    assert run.result.status == "error"
    assert run.result.error == (
        "replay: the session at step 5?0.1#attempt1 differs from the recording "
        "(the program or its inputs changed)"
    )


def test_a_missing_answer_fails_even_inside_try(run_prose: Any, tmp_path: Path) -> None:
    _, path = record(run_prose, tmp_path, 'session "Only"\n')
    run = run_prose(
        'session "Only"\ntry:\n  session "New"\ncatch:\n  session "Hidden"\n',
        backend=ReplayBackend(path),
    )
    assert run.result.status == "error"
    assert run.result.error == "replay: no recorded session for step 2:try.1#attempt1"
    assert run.prompts == ["Only", "New"]


def test_only_recordings_are_replayed(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"something": "else"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="not an OpenProse recording"):
        ReplayBackend(path)
