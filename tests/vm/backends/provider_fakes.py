"""A loopback HTTP server that speaks the Anthropic Messages and OpenAI Chat Completions
wire formats (JSON and server-sent events), so the real SDKs can be tested with no network.

``respx`` does not intercept the current SDKs, so this is a real server on 127.0.0.1.  Each
test scripts its answers; the last one repeats.  Every request is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


class FakeProvider:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Seen] = []
        # Answers computed from the request (a context overflow until it is small enough,
        # say); None falls back to the script.
        self.respond: Callable[[Seen], Reply | None] | None = None
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw
                seen = Seen(self.path, dict(self.headers), body)
                fake.requests.append(seen)
                reply = fake.respond(seen) if fake.respond is not None else None
                if reply is None:
                    reply = fake.replies.pop(0) if len(fake.replies) > 1 else fake.replies[0]
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", reply.content_type)
                    self.send_header("content-length", str(len(reply.body)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(reply.body)
                except OSError:  # the client gave up (the timeout test)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False  # a handler still sleeping must not hold the test
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeProvider:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def script(self, *replies: Reply) -> None:
        self.replies = list(replies)


def json_reply(payload: Any) -> Reply:
    return Reply(body=json.dumps(payload).encode())


def sse_reply(events: list[tuple[str | None, Any]]) -> Reply:
    lines: list[str] = []
    for event, data in events:
        if event is not None:
            lines.append(f"event: {event}")
        lines.append(f"data: {data if isinstance(data, str) else json.dumps(data)}")
        lines.append("")
    return Reply(body=("\n".join(lines) + "\n").encode(), content_type="text/event-stream")


def error_reply(status: int, message: str, **headers: str) -> Reply:
    payload = {"type": "error", "error": {"type": "api_error", "message": message}}
    return Reply(status=status, body=json.dumps(payload).encode(), headers=headers)


# Anthropic Messages


def anthropic_message(text: str, ref: str = "msg_01", **usage: int) -> Reply:
    return json_reply(
        {
            "id": ref,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 2, **usage},
        }
    )


def anthropic_stream(pieces: list[str], ref: str = "msg_02", **usage: int) -> Reply:
    start_usage = {"input_tokens": 10, "output_tokens": 1, **usage}
    events: list[tuple[str | None, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": ref,
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    for piece in pieces:
        events.append(
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": piece},
                },
            )
        )
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse_reply(events)


# OpenAI Chat Completions


def _openai_usage(prompt: int, completion: int, cached: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def openai_completion(
    text: str, ref: str = "chatcmpl-01", prompt: int = 10, completion: int = 2, cached: int = 0
) -> Reply:
    return json_reply(
        {
            "id": ref,
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-5-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": _openai_usage(prompt, completion, cached),
        }
    )


def openai_stream(
    pieces: list[str],
    ref: str = "chatcmpl-02",
    prompt: int = 10,
    completion: int = 20,
    cached: int = 0,
) -> Reply:
    def chunk(choices: list[Any], usage: Any = None) -> dict[str, Any]:
        return {
            "id": ref,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "gpt-5-mini",
            "choices": choices,
            "usage": usage,
        }

    events: list[tuple[str | None, Any]] = []
    for number, piece in enumerate(pieces):
        delta = {"content": piece, **({"role": "assistant"} if number == 0 else {})}
        events.append((None, chunk([{"index": 0, "delta": delta, "finish_reason": None}])))
    events.append((None, chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}])))
    events.append((None, chunk([], _openai_usage(prompt, completion, cached))))
    events.append((None, "[DONE]"))
    return sse_reply(events)


def anthropic_tool_use_stream(
    name: str, arguments: dict[str, Any], ref: str = "msg_tool", call: str = "toolu_01"
) -> Reply:
    """A streamed answer that only calls one tool (``stop_reason: tool_use``), as an agent's
    first turn does; the client runs the tool and sends its result in the next request."""
    message: dict[str, Any] = {
        "id": ref,
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    block = {"type": "tool_use", "id": call, "name": name, "input": {}}
    delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
    return sse_reply(
        [
            ("message_start", {"type": "message_start", "message": message}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": block},
            ),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                    "usage": {"output_tokens": 15},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )
