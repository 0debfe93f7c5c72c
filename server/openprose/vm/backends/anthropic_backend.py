"""The ``anthropic`` backend: the official SDK, Messages API; sessions stream.

The SDK is imported when a request is made, never at module import, so that ``prose check``
and ``prose-ls`` never load it.  Each request opens and closes its own client: the
interpreter runs in one event loop per run, and a client must not outlive its loop.
"""

from __future__ import annotations

from typing import Any

from openprose.vm.backends.base import BackendError, Usage
from openprose.vm.backends.chat import ChatBackend, describe


class AnthropicBackend(ChatBackend):
    name = "anthropic"

    sdk = "anthropic"
    client_class = "AsyncAnthropic"

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
            raise BackendError(f"step {step}: anthropic ({model}): {describe(error)}") from None
        return text, usage, ref


def _usage(usage: Any) -> Usage:
    return Usage(
        input_tokens=getattr(usage, "input_tokens", 0) or 0,
        output_tokens=getattr(usage, "output_tokens", 0) or 0,
        cache_read_tokens=getattr(usage, "cache_read_input_tokens", 0) or 0,
        cache_write_tokens=getattr(usage, "cache_creation_input_tokens", 0) or 0,
    )
