"""The ``anthropic`` backend: the official SDK, Messages API; sessions stream.

The SDK is imported when a request is made, never at module import, so that ``prose check``
and ``prose-ls`` never load it.  Each request opens and closes its own client: the
interpreter runs in one event loop per run, and a client must not outlive its loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openprose.vm.backends import prompts
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
from openprose.vm.backends.pricing import cost, resolve_model

SESSION_MAX_TOKENS = 8192
ANSWER_MAX_TOKENS = 1024


class AnthropicBackend:
    name = "anthropic"
    dry_run = False

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
        try:
            import anthropic
        except ImportError:
            raise BackendError(
                "the anthropic backend needs the SDK: pip install 'openprose[anthropic]'"
            ) from None
        return anthropic.AsyncAnthropic(
            api_key=self.api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
        )

    async def _ask(
        self, step: str, model: str, system: str | None, user: str, max_tokens: int, stream: bool
    ) -> tuple[str, Usage, str]:
        arguments: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": user}],
        }
        if system:
            arguments["system"] = system
        try:
            async with self._client() as client:
                if stream:
                    async with client.messages.stream(**arguments) as events:
                        message = await events.get_final_message()
                else:
                    message = await client.messages.create(**arguments)
            text = "".join(
                block.text for block in message.content if getattr(block, "type", "") == "text"
            )
            usage = _usage(message.usage)
            ref = str(message.id)
        except BackendError:
            raise
        except Exception as error:  # the SDK's errors, and a body it could not read
            raise BackendError(f"step {step}: anthropic ({model}): {_describe(error)}") from None
        return text, usage, ref

    async def run_session(self, request: SessionRequest) -> SessionResult:
        model = resolve_model(self.name, request.model, self.model_map)
        system, user = prompts.session_messages(request)
        text, usage, ref = await self._ask(
            request.step, model, system, user, SESSION_MAX_TOKENS, stream=True
        )
        return SessionResult(usage=usage, cost=cost(model, usage), session_ref=ref, text=text)

    async def judge(self, request: ConditionRequest) -> ConditionResult:
        model = resolve_model(self.name, None, self.model_map)
        text, usage, ref = await self._ask(
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
        text, usage, ref = await self._ask(
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
        text, usage, ref = await self._ask(
            request.step,
            model,
            prompts.SUMMARY_SYSTEM,
            prompts.summary_message(request),
            SESSION_MAX_TOKENS,
            stream=False,
        )
        return SummaryResult(usage=usage, cost=cost(model, usage), session_ref=ref, text=text)


def _usage(usage: Any) -> Usage:
    return Usage(
        input_tokens=getattr(usage, "input_tokens", 0) or 0,
        output_tokens=getattr(usage, "output_tokens", 0) or 0,
        cache_read_tokens=getattr(usage, "cache_read_input_tokens", 0) or 0,
        cache_write_tokens=getattr(usage, "cache_creation_input_tokens", 0) or 0,
    )


def _describe(error: Exception) -> str:
    status = getattr(error, "status_code", None)
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    return f"HTTP {status}: {message}" if status else f"{type(error).__name__}: {message}"
