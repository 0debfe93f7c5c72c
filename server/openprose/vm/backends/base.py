"""The one protocol every model backend implements.

The interpreter asks a backend four things, and nothing else: run a session, judge a
discretion condition, choose among a ``choice``'s options, summarise a value that is too
long to pass as context.  Each answer reports its usage, cost and a reference to the
backend's session, so that costs and transcripts can be traced back to a statement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True)
class Turn:
    """An earlier exchange of a multi-turn (``resume:``) session: what the agent was asked,
    what it answered, and the tool results it reported (one text each), if any."""

    prompt: str
    answer: str
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class SessionRequest:
    prompt: str  # the task, interpolated
    step: str  # a stable key of the statement: its path, iteration, branch, execution_id
    agent: str | None = None
    model: str | None = None
    system: str | None = None  # the agent's prompt
    context: tuple[tuple[str, str], ...] = ()  # (name, text) pairs, in the order written
    properties: tuple[tuple[str, str], ...] = ()  # other session/agent properties, as text
    attempt: int = 1
    # A multi-turn session's earlier turns, oldest first, and the summary of those compacted
    # away (vm/context/compaction.py); backends send them before the task.
    turns: tuple[Turn, ...] = ()
    history: str = ""

    def sent(self) -> SentText:
        """The text this request sends, by layer: what every sizing of a request adds up (the
        caps' estimate, the context budget, the offline backend's simulated window)."""
        return SentText(
            system=self.system or "",
            history=(
                self.history,
                *(text for turn in self.turns for text in (turn.prompt, turn.answer, *turn.tools)),
            ),
            context=self.context,
            prompt=self.prompt,
        )


@dataclass(frozen=True)
class SentText:
    """A session request's text by layer of the context budget (docs/context.md), each text
    apart, since the budget estimates each one by itself.  The agent's memory is not a layer
    here: it is sent as the first context binding, which the budget counts apart."""

    system: str
    # The summary of the turns compacted away, then each earlier turn's prompt, answer and
    # tool results, oldest first.
    history: tuple[str, ...]
    context: tuple[tuple[str, str], ...]  # (name, text) of each binding
    prompt: str

    def texts(self) -> tuple[str, ...]:
        """Every text sent, the bindings' names included."""
        bindings = (part for binding in self.context for part in binding)
        return (self.system, *self.history, *bindings, self.prompt)


@dataclass(frozen=True)
class ConditionRequest:
    condition: str  # the text between the ** markers
    step: str
    purpose: str  # "if", "elif", "until", "while", "loop", "filter"
    evaluation: int = 1  # 1 for the first evaluation of this condition in this loop run
    context: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ChoiceRequest:
    criteria: str
    options: tuple[str, ...]
    step: str
    context: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SummaryRequest:
    name: str
    text: str
    limit: int  # characters the summary should fit in
    step: str
    # What is asked (vm/context/ladder.py): "summary" (key points of a 2,000-8,000 character
    # value), "essentials" (of a longer one), "compaction" (earlier turns of a session),
    # "flush" (decisions, preferences and artifacts for an agent's memory.md), "transfer"
    # (what a fresh session needs of the one it replaces).
    mode: str = "summary"


@dataclass(frozen=True)
class _Accounting:
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0  # US dollars
    session_ref: str = ""


@dataclass(frozen=True)
class SessionResult(_Accounting):
    text: str = ""


@dataclass(frozen=True)
class ConditionResult(_Accounting):
    value: bool = False


@dataclass(frozen=True)
class ChoiceResult(_Accounting):
    index: int = 0


@dataclass(frozen=True)
class SummaryResult(_Accounting):
    text: str = ""


class BackendError(Exception):
    """A session that failed (after the backend's own transport retries, if any)."""


class ContextOverflow(BackendError):
    """The request did not fit the model's context window (Anthropic's "prompt is too long",
    OpenAI's ``context_length_exceeded``): the VM recovers by the seed-001 ladder and retries
    (vm/context/overflow.py), which no ``retry:`` count is spent on."""

    def __init__(self, message: str, tokens: int | None = None, limit: int | None = None):
        super().__init__(message)
        self.tokens = tokens  # what the provider counted, when it said
        self.limit = limit  # the window, when it said


class BackendFatal(Exception):
    """A failure no ``retry`` or ``catch`` should handle: the run stops with this message
    (a replay with no recorded answer for a step, a missing key)."""


@runtime_checkable
class Backend(Protocol):
    name: str
    dry_run: bool

    async def run_session(self, request: SessionRequest) -> SessionResult: ...

    async def judge(self, request: ConditionRequest) -> ConditionResult: ...

    async def choose(self, request: ChoiceRequest) -> ChoiceResult: ...

    async def summarise(self, request: SummaryRequest) -> SummaryResult: ...


def bind_run(backend: object, run_id: str) -> None:
    """Tell the backend (through any wrappers, which keep it as ``inner``) which run its
    requests belong to; only backends that name their sessions by run need it."""
    target: object | None = backend
    while target is not None:
        bind = getattr(target, "bind_run", None)
        if callable(bind):
            bind(run_id)
            return
        target = getattr(target, "inner", None)
