"""Recording a run's model exchanges, and replaying them exactly.

``RecordingBackend`` wraps any backend and appends every exchange to a JSON-lines file; a
failed session is recorded too, so that retries replay.  ``ReplayBackend`` answers from such
a file and never calls a model: a program's run can be tested in CI with no key.

An exchange is keyed by what it is (``session``, ``judge``, ``choose``, ``summarise``), the
interpreter's step key (statement path, iteration, branch, execution id), and the attempt or
evaluation; its input hash (prompt, agent, model, system, context...) tells a changed program
from the recorded one.  A step with no recorded answer, or whose input changed, stops the run
with a message naming the step (``BackendFatal``: no ``retry`` or ``catch`` can hide it).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from openprose.vm.backends.base import (
    Backend,
    BackendError,
    BackendFatal,
    ChoiceRequest,
    ChoiceResult,
    ConditionRequest,
    ConditionResult,
    ContextOverflow,
    SessionRequest,
    SessionResult,
    SummaryRequest,
    SummaryResult,
    Usage,
)

FORMAT = "openprose-record"
VERSION = 1

Request = SessionRequest | ConditionRequest | ChoiceRequest | SummaryRequest


def exchange_key(request: Request) -> tuple[str, str]:
    """(kind, key): the key names the step; the input hash is checked separately."""
    if isinstance(request, SessionRequest):
        return "session", f"{request.step}#attempt{request.attempt}"
    if isinstance(request, ConditionRequest):
        return "judge", f"{request.step}#{request.purpose}{request.evaluation}"
    if isinstance(request, ChoiceRequest):
        return "choose", request.step
    # A summary is asked by content, not by step: a value passed to ten sessions is
    # summarised once per run, and a resumed run finds it whichever step asks first.
    return "summarise", f"{request.mode}:{_digest(request.text)}:{request.limit}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# Fields added after recordings were made: left out of the hash while they hold their
# default, so that every earlier recording still matches.
_OPTIONAL = {"turns": [], "history": "", "mode": "summary"}


def input_hash(request: Request) -> str:
    fields = dataclasses.asdict(request)
    fields.pop("step", None)
    if isinstance(request, SummaryRequest):
        fields.pop("name", None)  # the same value under two names is one summary
    for name, default in _OPTIONAL.items():
        if name in fields and fields[name] == default:
            del fields[name]
    text = json.dumps(fields, sort_keys=True, ensure_ascii=False, default=list)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _result_json(result: Any) -> dict[str, Any]:
    data = dataclasses.asdict(result)
    return data


def record_line(request: Request, result: Any, error: str | None) -> str:
    """One exchange as a JSON line (no newline)."""
    kind, key = exchange_key(request)
    record: dict[str, Any] = {"kind": kind, "key": key, "hash": input_hash(request)}
    if error is not None:
        record["error"] = error
    else:
        record["result"] = _result_json(result)
    return json.dumps(record, ensure_ascii=False)


def load_records(lines: list[str]) -> dict[tuple[str, str], dict[str, Any]]:
    """Exchanges by (kind, key), from JSON lines (a header line, if any, is skipped)."""
    records: dict[tuple[str, str], dict[str, Any]] = {}
    for line in lines:
        if line.strip():
            record = json.loads(line)
            if "kind" in record:
                records[(record["kind"], record["key"])] = record
    return records


def _accounting(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "usage": Usage(**data.get("usage", {})),
        "cost": data.get("cost", 0.0),
        "session_ref": data.get("session_ref", ""),
    }


OVERFLOW = "[context_overflow] "  # how a recorded failure says it was a ContextOverflow


def error_text(failure: BackendError) -> str:
    """A failure as recorded: its message, marked when it was a context overflow (which
    the VM recovers from differently from any other failure)."""
    return f"{OVERFLOW}{failure}" if isinstance(failure, ContextOverflow) else str(failure)


def decode(request: Request, record: dict[str, Any]) -> Any:
    """The recorded answer to ``request``; a recorded failure raises ``BackendError``
    (``ContextOverflow`` when it was one)."""
    if "error" in record:
        error = str(record["error"])
        if error.startswith(OVERFLOW):
            raise ContextOverflow(error[len(OVERFLOW) :])
        raise BackendError(error)
    data: dict[str, Any] = record["result"]
    if isinstance(request, SessionRequest):
        return SessionResult(text=data["text"], **_accounting(data))
    if isinstance(request, ConditionRequest):
        return ConditionResult(value=bool(data["value"]), **_accounting(data))
    if isinstance(request, ChoiceRequest):
        return ChoiceResult(index=int(data["index"]), **_accounting(data))
    return SummaryResult(text=data["text"], **_accounting(data))


class JournalBackend:
    """Journals every exchange of a run (``state.journal.Journal``): a resumed run is
    answered from the journal for the steps it already took, and calls ``inner`` for the
    rest.  An answer is in the journal (committed) before the interpreter sees it, so a
    model call that completed is never paid for twice; ``on_live`` is called before the
    first exchange the journal cannot answer."""

    def __init__(
        self, inner: Backend, journal: Any, on_live: Callable[[], None] | None = None
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.dry_run = inner.dry_run
        self.journal = journal
        self.on_live = on_live
        self.answered = 0  # exchanges answered from the journal

    def recorded(self, request: Request) -> Any:
        """The journal's answer to ``request`` (a ``StepRecord``) when it has one for the
        same step with the same input; None when the step must run."""
        record = self.journal.step(*exchange_key(request))
        return record if record is not None and record.hash == input_hash(request) else None

    async def _ask(self, request: Request, call: Callable[[], Awaitable[Any]]) -> Any:
        from openprose.vm.state.base import StepRecord

        kind, key = exchange_key(request)
        hashed = input_hash(request)
        record = self.recorded(request)
        if record is not None:
            self.answered += 1
            if record.error is not None:
                return decode(request, {"error": record.error})
            return decode(request, {"result": record.result})
        if self.on_live is not None:
            self.on_live()
        try:
            result = await call()
        except BackendError as failure:
            self.journal.record_step(StepRecord(kind, key, hashed, None, error_text(failure)))
            raise
        data = _result_json(result)
        self.journal.record_step(
            StepRecord(kind, key, hashed, data, None, data.get("usage", {}), data.get("cost", 0.0)),
            session=kind == "session",
        )
        return result

    async def run_session(self, request: SessionRequest) -> SessionResult:
        result: SessionResult = await self._ask(request, lambda: self.inner.run_session(request))
        return result

    async def judge(self, request: ConditionRequest) -> ConditionResult:
        result: ConditionResult = await self._ask(request, lambda: self.inner.judge(request))
        return result

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        result: ChoiceResult = await self._ask(request, lambda: self.inner.choose(request))
        return result

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        result: SummaryResult = await self._ask(request, lambda: self.inner.summarise(request))
        return result


class RecordingBackend:
    """Passes every call to ``inner`` and appends the exchange to ``path``."""

    def __init__(self, inner: Backend, path: Path, *, append: bool = False) -> None:
        """``append``: a recording already there is continued (a run taken over by another
        worker records where its first worker stopped), else it is started anew."""
        self.inner = inner
        self.name = inner.name
        self.dry_run = inner.dry_run
        self.path = path
        if append and path.is_file() and path.stat().st_size > 0:
            return
        header = {
            "format": FORMAT,
            "version": VERSION,
            "backend": inner.name,
            "dry_run": inner.dry_run,
        }
        path.write_text(json.dumps(header) + "\n", encoding="utf-8")

    def _write(self, request: Request, result: Any, error: str | None) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, (record_line(request, result, error) + "\n").encode("utf-8"))
        finally:
            os.close(fd)

    async def run_session(self, request: SessionRequest) -> SessionResult:
        try:
            result = await self.inner.run_session(request)
        except BackendError as failure:
            self._write(request, None, error_text(failure))
            raise
        self._write(request, result, None)
        return result

    async def judge(self, request: ConditionRequest) -> ConditionResult:
        result = await self.inner.judge(request)
        self._write(request, result, None)
        return result

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        result = await self.inner.choose(request)
        self._write(request, result, None)
        return result

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        result = await self.inner.summarise(request)
        self._write(request, result, None)
        return result


class ReplayError(BackendFatal):
    pass


class ReplayBackend:
    """Answers from a recording; never calls a model."""

    name = "replay"

    def __init__(self, path: Path) -> None:
        self.path = path
        lines = path.read_text(encoding="utf-8").splitlines()
        header = json.loads(lines[0]) if lines else {}
        if header.get("format") != FORMAT or header.get("version") != VERSION:
            raise ValueError(f"{path} is not an OpenProse recording")
        self.dry_run = bool(header.get("dry_run", False))
        self.recorded = load_records(lines[1:])

    def _answer(self, request: Request) -> Any:
        kind, key = exchange_key(request)
        record = self.recorded.get((kind, key))
        if record is None:
            raise ReplayError(f"replay: no recorded {kind} for step {key}")
        if record["hash"] != input_hash(request):
            raise ReplayError(
                f"replay: the {kind} at step {key} differs from the recording "
                "(the program or its inputs changed)"
            )
        return decode(request, record)

    async def run_session(self, request: SessionRequest) -> SessionResult:
        result: SessionResult = self._answer(request)
        return result

    async def judge(self, request: ConditionRequest) -> ConditionResult:
        result: ConditionResult = self._answer(request)
        return result

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        result: ChoiceResult = self._answer(request)
        return result

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        result: SummaryResult = self._answer(request)
        return result
