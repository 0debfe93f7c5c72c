"""The local engine: today's run in this process, behind the Executor seam (the construct
suites run through it: tests/vm/conftest.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from openprose.vm.engines.base import Attachment, RunSpec, build_backend
from openprose.vm.engines.local import LocalExecutor


def test_a_spec_runs_with_its_inputs_options_and_backend(tmp_path: Path) -> None:
    main = tmp_path / "main.prose"
    text = 'input topic: "what"\noutput answer = session "Answer {topic}"\n'
    main.write_text(text, encoding="utf-8")
    spec = RunSpec(
        str(main), text, {"topic": "tides"}, runs_root=str(tmp_path / "runs"), offline_rounds=3
    )
    result = asyncio.run(LocalExecutor().run(spec, "20990101-000000-chosen", Attachment()))
    assert result.status == "success"
    assert result.run_id == "20990101-000000-chosen"  # the id the engine chose
    assert "Answer tides" in str(result.outputs["answer"])


def test_the_backend_is_made_from_the_spec(tmp_path: Path) -> None:
    spec = RunSpec("/x/main.prose", "", offline_rounds=4, offline_delay=0.5)
    backend = build_backend(spec)
    assert (backend.name, backend.rounds, backend.delay) == ("offline", 4, 0.5)  # type: ignore[attr-defined]
    recorded = build_backend(RunSpec("/x/main.prose", "", record=str(tmp_path / "exchanges.jsonl")))
    assert type(recorded).__name__ == "RecordingBackend"
    with pytest.raises(ValueError, match="needs a recording"):
        build_backend(RunSpec("/x/main.prose", "", backend="replay"))


def test_a_local_run_cannot_be_handed_over(tmp_path: Path) -> None:
    with pytest.raises(NotImplementedError, match="only while its process lives"):
        LocalExecutor().submit(RunSpec("/x/main.prose", ""), "r")
