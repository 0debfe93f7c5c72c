"""dbos_wait against a stand-in for DBOS's client that plays a run's life: what the waiter
is told, once per change, and the result of each way a run's workflow can end.
tests/cli/test_runs_wait.py waits for real runs executed by real workers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.engines import dbos_wait
from openprose.vm.engines.base import RunSpec
from openprose.vm.engines.dbos_engine import AWAITING_INPUT, RUN_WORKFLOW, NoRun
from openprose.vm.interpreter import RunResult
from tests.support.extras import require

require("dbos", "pip install 'openprose[dbos]'")

RUN = "20261207-120000-abcdef"


@dataclass
class Workflow:
    status: str
    executor_id: str | None = None
    output: Any = None
    error: Any = None
    workflow_id: str = RUN
    name: str = RUN_WORKFLOW
    input: dict[str, Any] = field(default_factory=dict)


class PlayedClient:
    """Answers each look at the workflow with the next of ``states`` (the last one for
    ever after); an awaiting-input event goes with the states that name one."""

    def __init__(self, states: list[tuple[Workflow, dict[str, str] | None]]) -> None:
        self.states = states
        self.looks = 0

    def list_workflows(self, **asked: Any) -> list[Workflow]:
        if "workflow_ids" not in asked:  # the run's attempts
            return [self.states[0][0]] if self.states else []
        if not self.states:
            return []
        workflow, _ = self.states[min(self.looks, len(self.states) - 1)]
        self.looks += 1
        return [workflow]

    def get_event(self, workflow_id: str, key: str, timeout_seconds: float) -> Any:
        assert key == AWAITING_INPUT and timeout_seconds == 0
        return self.states[min(self.looks, len(self.states)) - 1][1]


def _playing(monkeypatch: pytest.MonkeyPatch, played: PlayedClient) -> None:
    @contextmanager
    def client(url: str) -> Iterator[PlayedClient]:
        yield played

    monkeypatch.setattr(dbos_wait, "client", client)


def test_the_waiter_hears_each_change_once_and_gets_the_run_s_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = RunResult(status="success", outputs={"report": "done"}, run_id=RUN)
    asking = {"name": "angle", "prompt": "Which angle to take"}
    played = PlayedClient(
        [
            (Workflow("ENQUEUED"), None),
            (Workflow("ENQUEUED"), None),
            (Workflow("PENDING", "vm:1"), None),
            (Workflow("PENDING", "vm:1"), asking),
            (Workflow("PENDING", "vm:1"), asking),
            (Workflow("PENDING", "vm:2"), None),  # taken over by another worker
            (Workflow("SUCCESS", "vm:2", output=result), None),
        ]
    )
    _playing(monkeypatch, played)
    heard: list[dbos_wait.Seen] = []
    assert dbos_wait.wait("sqlite://", RUN, tell=heard.append, poll=0) == result
    assert heard == [
        dbos_wait.Seen("queued"),
        dbos_wait.Seen("running", "vm:1"),
        dbos_wait.Seen("awaiting-input", "vm:1", "angle", "Which angle to take"),
        dbos_wait.Seen("running", "vm:2"),
    ]


def test_a_wait_past_its_timeout_returns_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    _playing(monkeypatch, PlayedClient([(Workflow("ENQUEUED"), None)]))
    heard: list[dbos_wait.Seen] = []
    assert dbos_wait.wait("sqlite://", RUN, timeout=0.05, tell=heard.append, poll=0.01) is None
    assert heard == [dbos_wait.Seen("queued")]


def test_a_cancelled_run_reports_as_the_attached_one_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    spec = RunSpec(str(tmp_path / "main.prose"), "", runs_root=str(tmp_path / "runs"))
    _playing(
        monkeypatch,
        PlayedClient([(Workflow("CANCELLED", input={"args": [spec], "kwargs": {}}), None)]),
    )
    result = dbos_wait.wait("sqlite://", RUN, poll=0)
    assert result is not None
    assert (result.status, result.run_id) == ("cancelled", RUN)
    assert result.error == f"cancelled (`prose runs cancel {RUN}`)"
    assert result.run_dir == tmp_path / "runs" / RUN


@pytest.mark.parametrize(
    ("workflow", "said"),
    [
        (
            Workflow("ERROR", error=RuntimeError("run 1 is still running (process 7)")),
            "the dbos engine ended it: run 1 is still running (process 7)",
        ),
        (
            Workflow("MAX_RECOVERY_ATTEMPTS_EXCEEDED"),
            "the dbos engine ended it: MAX_RECOVERY_ATTEMPTS_EXCEEDED",
        ),
    ],
)
def test_a_workflow_that_ended_outside_the_vm_is_a_failed_run(
    monkeypatch: pytest.MonkeyPatch, workflow: Workflow, said: str
) -> None:
    _playing(monkeypatch, PlayedClient([(workflow, None)]))
    result = dbos_wait.wait("sqlite://", RUN, poll=0)
    assert result is not None
    assert (result.status, result.error, result.run_id) == ("error", said, RUN)


def test_a_run_the_engine_does_not_have_is_no_run(monkeypatch: pytest.MonkeyPatch) -> None:
    _playing(monkeypatch, PlayedClient([]))
    with pytest.raises(NoRun, match=f"no DBOS run {RUN}"):
        dbos_wait.wait("sqlite://", RUN, poll=0)
