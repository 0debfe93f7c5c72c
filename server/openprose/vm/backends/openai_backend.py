"""The ``openai`` backend: the official SDK, Chat Completions; sessions stream.

``base_url`` reaches any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio).
The SDK is imported when a request is made, never at module import, so that ``prose check``
and ``prose-ls`` never load it.  Each request opens and closes its own client: the
interpreter runs in one event loop per run, and a client must not outlive its loop.
"""

from __future__ import annotations

from typing import Any

from openprose.vm.backends.base import BackendError, Usage
from openprose.vm.backends.chat import ChatBackend, describe, overflow


class OpenAIBackend(ChatBackend):
    name = "openai"

    sdk = "openai"
    client_class = "AsyncOpenAI"

    async def _ask(
        self,
        step: str,
        model: str,
        system: str | None,
        messages: list[dict[str, str]],
        max_tokens: int,
        stream: bool,
    ) -> tuple[str, Usage, str]:
        # No max_tokens: the Chat Completions default leaves the length to the server's model
        # (OpenAI-compatible servers differ in what they accept there).
        messages = list(messages)
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
            too_long = overflow(error, step, "openai", model)
            if too_long is not None:
                raise too_long from None
            raise BackendError(f"step {step}: openai ({model}): {describe(error)}") from None
        return text, usage, ref


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
