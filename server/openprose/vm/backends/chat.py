"""What the ``anthropic`` and ``openai`` backends share: one chat request per question.

Each provider's backend says only how to ask its API one question (``_ask``: a system and a
user message in, the answer's text, usage and reference out); the four questions of the
backend protocol are put, parsed and priced here, the same way for both.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import Any

from openprose.vm.backends import prompts
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
from openprose.vm.backends.pricing import cost, resolve_model
from openprose.vm.telemetry import traced_chat

SESSION_MAX_TOKENS = 8192
ANSWER_MAX_TOKENS = 1024


class ChatBackend:
    name = "chat"
    dry_run = False
    sdk = ""  # the SDK's module, imported by the first request (its extra has the same name)
    client_class = ""  # the SDK's async client

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str | None = None,
        model_map: Mapping[str, str] | None = None,
        timeout: float = 600.0,
        max_retries: int = 2,
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url
        self.model_map = dict(model_map or {})
        self.timeout = timeout
        self.max_retries = max_retries

    def _client(self) -> Any:
        """A new client of the SDK: imported here, never at module import, so that ``prose
        check`` and ``prose-ls`` never load it."""
        try:
            module = importlib.import_module(self.sdk)
        except ImportError:
            raise BackendError(
                f"the {self.name} backend needs the SDK: pip install 'openprose[{self.sdk}]'"
            ) from None
        return getattr(module, self.client_class)(
            api_key=self.api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
        )

    async def _ask(
        self,
        step: str,
        model: str,
        system: str | None,
        messages: list[dict[str, str]],
        max_tokens: int,
        stream: bool,
    ) -> tuple[str, Usage, str]:
        """The answer's text, usage and reference; a BackendError naming ``step`` when the
        provider cannot answer (``ContextOverflow`` when the request is too long)."""
        raise NotImplementedError

    async def _request(
        self,
        step: str,
        model: str,
        system: str | None,
        user: str | list[dict[str, str]],
        max_tokens: int,
        stream: bool,
    ) -> tuple[str, Usage, str]:
        messages = [{"role": "user", "content": user}] if isinstance(user, str) else user
        # A `chat` span of its own when the run is traced (vm/telemetry.py).
        return await traced_chat(
            self.name,
            model,
            max_tokens,
            lambda: self._ask(step, model, system, messages, max_tokens, stream),
        )

    async def run_session(self, request: SessionRequest) -> SessionResult:
        model = resolve_model(self.name, request.model, self.model_map)
        system, messages = prompts.session_turns(request)
        text, usage, ref = await self._request(
            request.step, model, system, messages, SESSION_MAX_TOKENS, stream=True
        )
        return SessionResult(usage=usage, cost=cost(model, usage), session_ref=ref, text=text)

    async def judge(self, request: ConditionRequest) -> ConditionResult:
        model = resolve_model(self.name, None, self.model_map)
        text, usage, ref = await self._request(
            request.step,
            model,
            prompts.CONDITION_SYSTEM,
            prompts.condition_message(request),
            ANSWER_MAX_TOKENS,
            stream=False,
        )
        value = prompts.parse_condition(text, request.step)
        return ConditionResult(usage=usage, cost=cost(model, usage), session_ref=ref, value=value)

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        model = resolve_model(self.name, None, self.model_map)
        text, usage, ref = await self._request(
            request.step,
            model,
            prompts.CHOICE_SYSTEM,
            prompts.choice_message(request),
            ANSWER_MAX_TOKENS,
            stream=False,
        )
        index = prompts.parse_choice(text, len(request.options), request.step)
        return ChoiceResult(usage=usage, cost=cost(model, usage), session_ref=ref, index=index)

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        model = resolve_model(self.name, None, self.model_map)
        text, usage, ref = await self._request(
            request.step,
            model,
            prompts.SUMMARY_SYSTEM,
            prompts.summary_message(request),
            SESSION_MAX_TOKENS,
            stream=False,
        )
        return SummaryResult(usage=usage, cost=cost(model, usage), session_ref=ref, text=text)


_TOO_LONG = re.compile(
    r"prompt is too long|context.length|context window|maximum context|too many tokens"
    r"|input is too long|reduce the length",
    re.IGNORECASE,
)
_COUNTS = re.compile(r"(\d[\d,]*) tokens? > (\d[\d,]*)")
_OPENAI_COUNTS = re.compile(r"maximum context length is (\d+) tokens.*?(\d+) tokens", re.S)


def overflow(error: Exception, step: str, provider: str, model: str) -> ContextOverflow | None:
    """A ``ContextOverflow`` when the SDK's error says the request did not fit the window:
    HTTP 400 or 413 with OpenAI's ``context_length_exceeded`` code, or a message saying so
    (Anthropic's "prompt is too long: N tokens > M maximum", and the wording of the
    OpenAI-compatible servers)."""
    status = getattr(error, "status_code", None)
    if status not in (400, 413):
        return None
    code = getattr(error, "code", None)
    body = getattr(error, "body", None)
    if code is None and isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        code = inner.get("code") if isinstance(inner, dict) else None
    text = str(error)
    if code != "context_length_exceeded" and not _TOO_LONG.search(text):
        return None
    tokens = limit = None
    if found := _COUNTS.search(text):
        tokens, limit = (int(n.replace(",", "")) for n in found.groups())
    elif found := _OPENAI_COUNTS.search(text):
        limit, tokens = (int(n) for n in found.groups())
    return ContextOverflow(
        f"step {step}: {provider} ({model}): context overflow: {describe(error)}", tokens, limit
    )


def describe(error: Exception) -> str:
    """One line for an SDK's error: its HTTP status when it has one."""
    status = getattr(error, "status_code", None)
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    return f"HTTP {status}: {message}" if status else f"{type(error).__name__}: {message}"
