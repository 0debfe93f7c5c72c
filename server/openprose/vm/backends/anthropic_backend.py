"""The ``anthropic`` backend: the official SDK, Messages API; sessions stream.

The SDK is imported when a request is made, never at module import, so that ``prose check``
and ``prose-ls`` never load it.  Each request opens and closes its own client: the
interpreter runs in one event loop per run, and a client must not outlive its loop.
"""

from __future__ import annotations

from typing import Any

from openprose.vm.backends import prompts
from openprose.vm.backends.base import BackendError, SessionRequest, Usage
from openprose.vm.backends.chat import ChatBackend, describe, overflow
from openprose.vm.backends.pricing import resolve_model


class AnthropicBackend(ChatBackend):
    name = "anthropic"

    sdk = "anthropic"
    client_class = "AsyncAnthropic"

    async def _ask(
        self,
        step: str,
        model: str,
        system: str | None,
        messages: list[dict[str, str]],
        max_tokens: int,
        stream: bool,
    ) -> tuple[str, Usage, str]:
        arguments: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "messages": messages,
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
            too_long = overflow(error, step, "anthropic", model)
            if too_long is not None:
                raise too_long from None
            raise BackendError(f"step {step}: anthropic ({model}): {describe(error)}") from None
        return text, usage, ref

    async def count_tokens(self, request: SessionRequest) -> int:
        """The request's input tokens by Anthropic's counter (the token-counting endpoint,
        which is free of charge but a round trip); BackendError when it cannot answer."""
        model = resolve_model(self.name, request.model, self.model_map)
        system, messages = prompts.session_turns(request)
        arguments: dict[str, Any] = {"model": model, "messages": messages}
        if system:
            arguments["system"] = system
        try:
            async with self._client() as client:
                counted = await client.messages.count_tokens(**arguments)
            return int(counted.input_tokens)
        except Exception as error:
            raise BackendError(f"anthropic token count ({model}): {describe(error)}") from None


def _usage(usage: Any) -> Usage:
    return Usage(
        input_tokens=getattr(usage, "input_tokens", 0) or 0,
        output_tokens=getattr(usage, "output_tokens", 0) or 0,
        cache_read_tokens=getattr(usage, "cache_read_input_tokens", 0) or 0,
        cache_write_tokens=getattr(usage, "cache_creation_input_tokens", 0) or 0,
    )
