"""Test backends, a fake clock and a run's record, shared by the VM tests."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprose.vm.backends.base import (
    ChoiceRequest,
    ChoiceResult,
    ConditionRequest,
    ConditionResult,
    SessionRequest,
    SessionResult,
    SummaryRequest,
    SummaryResult,
)
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.events import Event, render_text
from openprose.vm.interpreter import RunResult


class Recording:
    """Wraps a backend and records every call, in order, as a short tuple."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.dry_run = inner.dry_run
        self.calls: list[tuple[Any, ...]] = []
        self.sessions: list[SessionRequest] = []
        self.summaries: list[SummaryRequest] = []

    async def run_session(self, request: SessionRequest) -> SessionResult:
        self.calls.append(("session", request.prompt))
        self.sessions.append(request)
        result: SessionResult = await self.inner.run_session(request)
        return result

    async def judge(self, request: ConditionRequest) -> ConditionResult:
        self.calls.append(("judge", request.condition, request.purpose, request.evaluation))
        result: ConditionResult = await self.inner.judge(request)
        return result

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        self.calls.append(("choose", request.criteria, request.options))
        result: ChoiceResult = await self.inner.choose(request)
        return result

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        self.calls.append(("summarise", request.name))
        self.summaries.append(request)
        result: SummaryResult = await self.inner.summarise(request)
        return result


class Answering(OfflineBackend):
    """The offline backend, except that sessions whose prompt is in ``answers`` answer
    that text."""

    def __init__(self, answers: dict[str, str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.answers = answers

    async def run_session(self, request: SessionRequest) -> SessionResult:
        if request.prompt in self.answers:
            self.check_window(request)
            return SessionResult(text=self.answers[request.prompt], session_ref="answer")
        return await super().run_session(request)


class FakeClock:
    """Time that only moves when the program sleeps; every sleep is recorded."""

    def __init__(self) -> None:
        self.time = 1_800_000_000.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.time += seconds
        await asyncio.sleep(0)


@dataclass
class Run:
    result: RunResult
    backend: Recording
    events: list[Event] = field(default_factory=list)
    root: Path = Path()

    @property
    def calls(self) -> list[tuple[Any, ...]]:
        return self.backend.calls

    @property
    def prompts(self) -> list[str]:
        return [c[1] for c in self.calls if c[0] == "session"]

    @property
    def text(self) -> str:
        return "\n".join(render_text(e) for e in self.events)

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]

    @property
    def run_dir(self) -> Path:
        assert self.result.run_dir is not None
        return self.result.run_dir

    def state(self) -> list[str]:
        """The markers of state.md, without its header."""
        lines = (self.run_dir / "state.md").read_text(encoding="utf-8").splitlines()
        return [line for line in lines[1:] if line]

    def binding(self, name: str) -> str:
        """The value part of a binding file."""
        text = (self.run_dir / "bindings" / f"{name}.md").read_text(encoding="utf-8")
        return text.split("\n---\n\n", 1)[1].rstrip("\n")
