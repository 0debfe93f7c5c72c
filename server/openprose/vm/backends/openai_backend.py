"""The ``openai`` backend: the official SDK, Chat Completions; sessions stream.

``base_url`` reaches any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio).
The SDK is imported when a request is made, never at module import, so that ``prose check``
and ``prose-ls`` never load it.  Each request opens and closes its own client: the
interpreter runs in one event loop per run, and a client must not outlive its loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openprose.vm.backends import prompts
from openprose.vm.backends.anthropic_backend import _describe
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


class OpenAIBackend:
    name = "openai"
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
            import openai
        except ImportError:
            raise BackendError(
                "the openai backend needs the SDK: pip install 'openprose[openai]'"
            ) from None
        return openai.AsyncOpenAI(
            api_key=self.api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
        )

    async def _ask(
        self, step: str, model: str, system: str | None, user: str, stream: bool
    ) -> tuple[str, Usage, str]:
        messages = [{"role": "user", "content": user}]
        if system:
            messages.insert(0, {"role": "system", "content": system})
        try:
            async with self._client() as client:
                if stream:
                    text, usage, ref = await _streamed(client, model, messages)
                else:
                    completion = await client.chat.completions.create(
                        model=model, messages=messages
                    )
                    if not completion.choices:
                        raise ValueError("the response has no choices")
                    text = completion.choices[0].message.content or ""
                    usage, ref = _usage(completion.usage), str(completion.id)
        except BackendError:
            raise
        except Exception as error:  # the SDK's errors, and a body it could not read
            raise BackendError(f"step {step}: openai ({model}): {_describe(error)}") from None
        return text, usage, ref

    async def run_session(self, request: SessionRequest) -> SessionResult:
        model = resolve_model(self.name, request.model, self.model_map)
        system, user = prompts.session_messages(request)
        text, usage, ref = await self._ask(request.step, model, system, user, stream=True)
        return SessionResult(usage=usage, cost=cost(model, usage), session_ref=ref, text=text)

    async def judge(self, request: ConditionRequest) -> ConditionResult:
        model = resolve_model(self.name, None, self.model_map)
        text, usage, ref = await self._ask(
            request.step,
            model,
            prompts.CONDITION_SYSTEM,
            prompts.condition_message(request),
            stream=False,
        )
        value = prompts.parse_condition(text, request.step)
        return ConditionResult(usage=usage, cost=cost(model, usage), session_ref=ref, value=value)

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        model = resolve_model(self.name, None, self.model_map)
        text, usage, ref = await self._ask(
            request.step, model, prompts.CHOICE_SYSTEM, prompts.choice_message(request), False
        )
        index = prompts.parse_choice(text, len(request.options), request.step)
        return ChoiceResult(usage=usage, cost=cost(model, usage), session_ref=ref, index=index)

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        model = resolve_model(self.name, None, self.model_map)
        text, usage, ref = await self._ask(
            request.step, model, prompts.SUMMARY_SYSTEM, prompts.summary_message(request), False
        )
        return SummaryResult(usage=usage, cost=cost(model, usage), session_ref=ref, text=text)


async def _streamed(
    client: Any, model: str, messages: list[dict[str, str]]
) -> tuple[str, Usage, str]:
    parts: list[str] = []
    usage = Usage()
    ref = ""
    chunks = await client.chat.completions.create(
        model=model, messages=messages, stream=True, stream_options={"include_usage": True}
    )
    async for chunk in chunks:
        ref = ref or str(chunk.id or "")
        if chunk.usage is not None:
            usage = _usage(chunk.usage)
        for choice in chunk.choices or ():
            if choice.delta is not None and choice.delta.content:
                parts.append(choice.delta.content)
    return "".join(parts), usage, ref


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    prompt = getattr(usage, "prompt_tokens", 0) or 0
    # OpenAI counts cached tokens inside prompt_tokens; Usage keeps them apart, as Anthropic does.
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=getattr(usage, "completion_tokens", 0) or 0,
        cache_read_tokens=cached,
    )
