"""Typed narration events, and their renderings: seed 000's marker text and JSON lines.

Every event carries ``step`` (the statement path of the run directory's ``state.md``:
``"3"``, ``"2a"``), ``level`` (nesting, for indentation) and ``ts`` (seconds since the epoch,
set when the event is emitted).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

INDENT = "   "
PENDING_SHOWN = 20  # branches listed by name when a parallel block starts


@dataclass
class Event:
    marker: ClassVar[str] = ""
    step: str = ""
    level: int = 0
    ts: float = 0.0

    @property
    def kind(self) -> str:
        return _kind(type(self).__name__)

    def lines(self) -> list[str]:  # pragma: no cover - every subclass overrides
        return []

    def to_json(self) -> dict[str, Any]:
        data = {"event": self.kind, **dataclasses.asdict(self)}
        return data


def _kind(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def _suffix(execution_id: int | None) -> str:
    return f" (execution_id: {execution_id})" if execution_id is not None else ""


@dataclass
class ProgramStart(Event):
    marker: ClassVar[str] = "[Program]"
    program: str = ""
    run_id: str = ""
    dry_run: bool = True
    state: str = "filesystem"

    def lines(self) -> list[str]:
        mode = "dry run, offline backend" if self.dry_run else "model backend"
        return [
            f"{self.marker} OpenProse Program Start: {self.program}",
            f"{INDENT}State mode: {self.state} (run {self.run_id}; {mode})",
        ]


@dataclass
class ProgramEnd(Event):
    marker: ClassVar[str] = "[Program]"
    status: str = "success"  # success | error | cancelled
    error: str = ""
    statement: str = ""  # the statement that failed, when one did

    def lines(self) -> list[str]:
        if self.status == "success":
            return [f"{self.marker} Program complete"]
        return [f"{self.marker} Program {self.status}: {self.error}"]


@dataclass
class Position(Event):
    marker: ClassVar[str] = "[Position]"
    statement: str = ""
    line: int = 0

    def lines(self) -> list[str]:
        return [f"{self.marker} Executing: {self.statement}"]


@dataclass
class Binding(Event):
    marker: ClassVar[str] = "[Binding]"
    name: str = ""
    binding_kind: str = "let"  # input | output | let | const | assignment | anonymous
    value: str = ""  # a shortened preview; the binding file holds the whole value
    execution_id: int | None = None
    previous: str | None = None

    def lines(self) -> list[str]:
        scope = _suffix(self.execution_id)
        if self.binding_kind == "assignment":
            was = f", was: {self.previous}" if self.previous is not None else ""
            return [f"{self.marker} {self.name} = {self.value} (reassignment{was}){scope}"]
        if self.binding_kind == "anonymous":
            return [f"{self.marker} {self.name} = {self.value}{scope}"]
        note = {"let": " (mutable)", "const": " (immutable)"}.get(self.binding_kind, "")
        return [f"{self.marker} {self.binding_kind} {self.name} = {self.value}{note}{scope}"]


@dataclass
class InputReceived(Event):
    marker: ClassVar[str] = "[Input]"
    values: dict[str, str] = field(default_factory=dict)
    source: str = "caller"

    def lines(self) -> list[str]:
        body = [f"{INDENT}{k} = {v} (from {self.source})" for k, v in self.values.items()]
        return [f"{self.marker} Inputs received:", *body]


@dataclass
class Output(Event):
    marker: ClassVar[str] = "[Output]"
    name: str = ""
    value: str = ""

    def lines(self) -> list[str]:
        return [f"{self.marker} output {self.name} = {self.value} (will return to caller)"]


@dataclass
class Import(Event):
    marker: ClassVar[str] = "[Import]"
    source: str = ""
    alias: str = ""
    status: str = "invoking"

    def lines(self) -> list[str]:
        return [f"{self.marker} {self.status.capitalize()} {self.source} as {self.alias}"]


@dataclass
class Success(Event):
    marker: ClassVar[str] = "[Success]"
    what: str = "Session"
    value: str = ""
    session_ref: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0

    def lines(self) -> list[str]:
        tail = f": {self.value}" if self.value else ""
        return [f"{self.marker} {self.what} complete{tail}"]


@dataclass
class Warning(Event):
    marker: ClassVar[str] = "[Warning]"
    message: str = ""

    def lines(self) -> list[str]:
        return [f"{self.marker} {self.message}"]


@dataclass
class ParallelEnter(Event):
    marker: ClassVar[str] = "[Parallel]"
    branches: list[str] = field(default_factory=list)
    strategy: str = "all"
    count: int | None = None
    on_fail: str = "fail-fast"

    def lines(self) -> list[str]:
        count = f", count: {self.count}" if self.count is not None else ""
        head = (
            f"{self.marker} Entering parallel block ({len(self.branches)} branches, "
            f"strategy: {self.strategy}{count}, on-fail: {self.on_fail})"
        )
        shown = [f"{INDENT}- {b}: pending" for b in self.branches[:PENDING_SHOWN]]
        hidden = len(self.branches) - PENDING_SHOWN
        if hidden > 0:  # a `parallel for` over many items
            shown.append(f"{INDENT}  ... and {hidden} more")
        return [head, *shown]


@dataclass
class ParallelBranch(Event):
    marker: ClassVar[str] = "[Parallel]"
    branch: str = ""
    status: str = "done"  # done | failed | cancelled
    value: str = ""
    named: bool = False

    def lines(self) -> list[str]:
        tail = f" = {self.value}" if self.value else ""
        return [f"{self.marker} Branch {self.branch}: {self.status}{tail}"]


@dataclass
class ParallelJoin(Event):
    marker: ClassVar[str] = "[Parallel]"
    results: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        body = [f"{INDENT}- {k} = {v}" for k, v in self.results.items()]
        return [f"{self.marker} Parallel complete:", *body]


@dataclass
class LoopStart(Event):
    marker: ClassVar[str] = "[Loop]"
    description: str = ""

    def lines(self) -> list[str]:
        return [f"{self.marker} Starting {self.description}"]


@dataclass
class LoopIteration(Event):
    marker: ClassVar[str] = "[Loop]"
    iteration: int = 0
    maximum: int | None = None

    def lines(self) -> list[str]:
        of = f" of max {self.maximum}" if self.maximum is not None else ""
        return [f"{self.marker} Iteration {self.iteration}{of}"]


@dataclass
class LoopEvaluation(Event):
    marker: ClassVar[str] = "[Loop]"
    condition: str = ""

    def lines(self) -> list[str]:
        return [f"{self.marker} Evaluating: {self.condition}"]


@dataclass
class LoopExit(Event):
    marker: ClassVar[str] = "[Loop]"
    reason: str = ""
    iteration: int = 0
    maximum: int | None = None

    def lines(self) -> list[str]:
        return [f"{self.marker} Loop exited: {self.reason} at iteration {self.iteration}"]


@dataclass
class PipelineStage(Event):
    marker: ClassVar[str] = "[Pipeline]"
    operation: str = ""
    stage: int = 0
    items: int = 0

    def lines(self) -> list[str]:
        return [f"{self.marker} Stage {self.stage}: {self.operation} over {self.items} items"]


@dataclass
class Try(Event):
    marker: ClassVar[str] = "[Try]"
    phase: str = "enter"  # enter | catch | finally

    def lines(self) -> list[str]:
        text = {
            "enter": "Entering try block",
            "catch": "Executing catch block",
            "finally": "Executing finally block",
        }[self.phase]
        return [f"{self.marker} {text}"]


@dataclass
class Flow(Event):
    marker: ClassVar[str] = "[Flow]"
    condition: str = ""
    result: str = ""

    def lines(self) -> list[str]:
        return [f"{self.marker} {self.condition}: {self.result}"]


@dataclass
class FramePush(Event):
    marker: ClassVar[str] = "[Frame+]"
    block: str = ""
    execution_id: int = 0
    depth: int = 1
    parent: int | None = None
    arguments: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        out = [
            f"{self.marker} Entering block: {self.block} "
            f"(execution_id: {self.execution_id}, depth: {self.depth})"
        ]
        if self.arguments:
            args = ", ".join(f"{k}={v}" for k, v in self.arguments.items())
            out.append(f"{INDENT}Arguments: {args}")
        if self.parent is not None:
            out.append(f"{INDENT}Parent: execution_id {self.parent}")
        return out


@dataclass
class FramePop(Event):
    marker: ClassVar[str] = "[Frame-]"
    block: str = ""
    execution_id: int = 0
    failed: bool = False

    def lines(self) -> list[str]:
        return [f"{self.marker} Exiting block: {self.block} (execution_id: {self.execution_id})"]


@dataclass
class Retry(Event):
    marker: ClassVar[str] = "[Warning]"
    attempt: int = 0
    maximum: int = 0
    delay: float = 0.0
    error: str = ""

    def lines(self) -> list[str]:
        return [
            f"{self.marker} Session failed: {self.error}; retry {self.attempt}/{self.maximum}"
            f" after {self.delay:.2f}s"
        ]


@dataclass
class ContextStep(Event):
    """What the VM did to a session's context to fit its model's window (docs/context.md):
    ``action`` is summarised, compacted, overflow, purged, dropped or reset."""

    marker: ClassVar[str] = "[Context]"
    action: str = ""
    detail: str = ""

    def lines(self) -> list[str]:
        return [f"{self.marker} {self.detail}"]


@dataclass
class Failure(Event):
    marker: ClassVar[str] = "[Warning]"
    message: str = ""

    def lines(self) -> list[str]:
        return [f"{self.marker} Failed: {self.message}"]


def render_text(event: Event) -> str:
    """The seed-000 marker text, indented by nesting level."""
    pad = INDENT * event.level
    return "\n".join(pad + line for line in event.lines())


def render_json(event: Event) -> str:
    """One JSON line (no newline at the end)."""
    return json.dumps(event.to_json(), ensure_ascii=False, sort_keys=False)
