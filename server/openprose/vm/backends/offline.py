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
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from openprose.vm.backends.base import (
    BackendError,
    ChoiceRequest,
    ChoiceResult,
    ConditionRequest,
    ConditionResult,
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
    ) -> None:
        if rounds < 1:
            raise ValueError("offline rounds must be at least 1")
        self.rounds = rounds
        self.conditions = dict(conditions or {})
        self.choices = dict(choices or {})
        self.failures = dict(failures or {})
        self._asked: Counter[str] = Counter()
        self._failed: Counter[str] = Counter()
        self._sessions = 0

    async def run_session(self, request: SessionRequest) -> SessionResult:
        self._sessions += 1
        ref = f"offline-{self._sessions}"
        for needle, times in self.failures.items():
            if needle in request.prompt and self._failed[needle] < times:
                self._failed[needle] += 1
                raise BackendError(f"{DRY_RUN_LABEL}: scripted failure of {needle!r}")
        details = [f"agent: {request.agent or '-'}", f"model: {request.model or 'default'}"]
        if request.context:
            details.append("context: " + ", ".join(name for name, _ in request.context))
        text = f"[{DRY_RUN_LABEL}] {request.prompt} ({'; '.join(details)})"
        sent = request.prompt + (request.system or "") + "".join(t for _, t in request.context)
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

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        index = self.choices.get(request.criteria, 0)
        index = max(0, min(index, len(request.options) - 1))
        return ChoiceResult(usage=Usage(input_tokens=_tokens(request.criteria)), index=index)

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        text = request.text
        if len(text) > request.limit:
            text = text[: max(0, request.limit - 1)] + "…"
        return SummaryResult(usage=Usage(input_tokens=_tokens(request.text)), text=text)
