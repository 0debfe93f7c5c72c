"""The default backend: deterministic, no network, no key; every result is a dry run.

A session's text names what the session received (prompt, agent, model, context names), so
that a program's data flow shows in its outputs.  The rules for the intelligent parts are
fixed and documented in docs/run.md:

- ``loop until **c**`` is satisfied on evaluation ``rounds`` (default 2); ``loop while **c**``
  holds for the first ``rounds - 1`` evaluations; a plain ``loop:`` is told to stop on
  evaluation ``rounds``.
- ``if``/``elif`` conditions are true, so the first branch runs; a ``filter`` keeps every item.
- ``choice`` takes the first option.
- Scripted answers override these: ``conditions={"text": [False, True]}`` answers the
  condition of that text in turn (the last answer repeats), ``choices={"criteria": 1}``.
- ``failures={"prompt text": n}`` makes the first ``n`` attempts of sessions whose prompt
  contains the text fail, to exercise ``retry``, ``try`` and ``on-fail``.
- ``window=N`` answers a context overflow to any session whose request is estimated at more
  than ``N`` tokens (four characters a token), to exercise the recovery of docs/context.md;
  ``reads_files=True`` lets sessions read the run's files, so context is passed by reference.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence

from openprose.vm.backends.base import (
    BackendError,
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

DEFAULT_ROUNDS = 2
DRY_RUN_LABEL = "dry run"


def _tokens(text: str) -> int:
    # A rough, deterministic stand-in (about four characters a token), so usage and the
    # accounting paths are exercised without a model.
    return (len(text) + 3) // 4


class OfflineBackend:
    name = "offline"
    dry_run = True

    def __init__(
        self,
        rounds: int = DEFAULT_ROUNDS,
        conditions: Mapping[str, bool | Sequence[bool]] | None = None,
        choices: Mapping[str, int] | None = None,
        failures: Mapping[str, int] | None = None,
        window: int | None = None,
        reads_files: bool = False,
        delay: float = 0.0,
    ) -> None:
        if rounds < 1:
            raise ValueError("offline rounds must be at least 1")
        if delay < 0:
            raise ValueError("the offline delay must be 0 or more")
        # Seconds each session takes to answer: a dry run paced like a real one (to watch
        # its progress, or to interrupt it on purpose).
        self.delay = delay
        self.rounds = rounds
        self.conditions = dict(conditions or {})
        self.choices = dict(choices or {})
        self.failures = dict(failures or {})
        self.window = window
        self.reads_files = reads_files
        self._asked: Counter[str] = Counter()
        self._failed: Counter[str] = Counter()
        self._sessions = 0

    async def run_session(self, request: SessionRequest) -> SessionResult:
        if self.delay:
            await asyncio.sleep(self.delay)
        self._sessions += 1
        ref = f"offline-{self._sessions}"
        for needle, times in self.failures.items():
            if needle in request.prompt and self._failed[needle] < times:
                self._failed[needle] += 1
                raise BackendError(f"{DRY_RUN_LABEL}: scripted failure of {needle!r}")
        sent = self.check_window(request)
        details = [f"agent: {request.agent or '-'}", f"model: {request.model or 'default'}"]
        if request.context:
            details.append("context: " + ", ".join(name for name, _ in request.context))
        if request.turns:
            details.append(f"turns: {len(request.turns)}")
        text = f"[{DRY_RUN_LABEL}] {request.prompt} ({'; '.join(details)})"
        usage = Usage(input_tokens=_tokens(sent), output_tokens=_tokens(text))
        return SessionResult(usage=usage, cost=0.0, session_ref=ref, text=text)

    async def judge(self, request: ConditionRequest) -> ConditionResult:
        scripted = self.conditions.get(request.condition)
        if scripted is not None:
            value = self._next(request.condition, scripted)
        elif request.purpose in ("until", "loop"):
            value = request.evaluation >= self.rounds
        elif request.purpose == "while":
            value = request.evaluation < self.rounds
        else:
            value = True
        return ConditionResult(usage=Usage(input_tokens=_tokens(request.condition)), value=value)

    def _next(self, key: str, scripted: bool | Sequence[bool]) -> bool:
        if isinstance(scripted, bool):
            return scripted
        n = self._asked[key]
        self._asked[key] += 1
        return bool(scripted[min(n, len(scripted) - 1)]) if scripted else False

    def check_window(self, request: SessionRequest) -> str:
        """The request's text; a ContextOverflow when it is estimated over ``window``."""
        layers = request.sent()
        # The bindings' texts without their names, as this simulated window always counted.
        context = "".join(text for _, text in layers.context)
        sent = layers.system + "".join(layers.history) + context + layers.prompt
        if self.window is not None and _tokens(sent) > self.window:
            raise ContextOverflow(
                f"{DRY_RUN_LABEL}: context overflow: {_tokens(sent)} tokens > "
                f"{self.window} maximum",
                _tokens(sent),
                self.window,
            )
        return sent

    def can_read(self, path: str, properties: tuple[tuple[str, str], ...]) -> bool:
        return self.reads_files

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        index = self.choices.get(request.criteria, 0)
        index = max(0, min(index, len(request.options) - 1))
        return ChoiceResult(usage=Usage(input_tokens=_tokens(request.criteria)), index=index)

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        text = request.text
        if len(text) > request.limit:
            text = text[: max(0, request.limit - 1)] + "…"
        return SummaryResult(usage=Usage(input_tokens=_tokens(request.text)), text=text)
