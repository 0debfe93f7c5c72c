"""Overflow recovery against loopback servers speaking each provider's wire format: the
server refuses a request as too long until it is small enough, as the real APIs do."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.backends.anthropic_backend import AnthropicBackend
from openprose.vm.backends.base import ContextOverflow, SessionRequest
from openprose.vm.backends.openai_backend import OpenAIBackend
from openprose.vm.context import windows
from openprose.vm.context.record import stored_budgets
from openprose.vm.interpreter import Options
from openprose.vm.runner import run_file
from tests.vm.backends.provider_fakes import (
    FakeProvider,
    Reply,
    Seen,
    anthropic_message,
    anthropic_stream,
    json_reply,
    openai_completion,
    openai_stream,
)
from tests.vm.vm_support import FakeClock, Recording

LIMIT = 6_000  # characters of messages the fake provider accepts
ANSWER = "Result: table_7 holds 42 rows. " + "more " * 300  # ~1,500 characters


def _size(body: dict[str, Any]) -> int:
    messages = body.get("messages") or []
    return len(str(body.get("system") or "")) + sum(len(str(m["content"])) for m in messages)


def _too_long(provider: str, size: int) -> Reply:
    tokens = size // 4
    if provider == "anthropic":
        error = {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": f"prompt is too long: {tokens} tokens > {LIMIT // 4} maximum",
            },
        }
    else:
        error = {
            "error": {
                "message": f"This model's maximum context length is {LIMIT // 4} tokens. "
                f"However, your messages resulted in {tokens} tokens.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }
    return Reply(status=400, body=json.dumps(error).encode())


def _responder(provider: str) -> Any:
    def respond(seen: Seen) -> Reply | None:
        body = seen.body
        if seen.path.endswith("/count_tokens"):
            return json_reply({"input_tokens": _size(body) // 3})
        if _size(body) > LIMIT:
            return _too_long(provider, _size(body))
        stream = bool(body.get("stream"))
        if provider == "anthropic":
            return anthropic_stream([ANSWER]) if stream else anthropic_message("Summary: 42 rows.")
        return openai_stream([ANSWER]) if stream else openai_completion("Summary: 42 rows.")

    return respond


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


def _backend(provider: str, url: str) -> Any:
    if provider == "anthropic":
        return AnthropicBackend("test-key", base_url=url, max_retries=0)
    return OpenAIBackend("test-key", base_url=url + "/v1", max_retries=0)


PROGRAM = 'agent analyst:\n  model: opus\n  persist: true\n  prompt: "Analyse"\n\n' + (
    'session: analyst\n  prompt: "Turn 0"\n'
    + "".join(f'resume: analyst\n  prompt: "Turn {n}"\n' for n in range(1, 7))
)


def _run(tmp_path: Path, backend: Any) -> Any:
    main = tmp_path / "main.prose"
    main.write_text(PROGRAM, encoding="utf-8")
    return asyncio.run(
        run_file(
            main,
            backend=backend,
            runs_root=tmp_path / ".prose" / "runs",
            options=Options(jitter=False),
            clock=FakeClock(),
        )
    )


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_error_is_a_context_overflow(fake: FakeProvider, provider: str) -> None:
    fake.respond = lambda seen: _too_long(provider, 99_999)
    request = SessionRequest(prompt="x", step="1")
    with pytest.raises(ContextOverflow) as raised:
        asyncio.run(_backend(provider, fake.url).run_session(request))
    assert (raised.value.tokens, raised.value.limit) == (24_999, LIMIT // 4)
    assert "step 1" in str(raised.value) and "context overflow" in str(raised.value)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_run_recovers_until_the_provider_accepts(
    fake: FakeProvider, provider: str, tmp_path: Path
) -> None:
    fake.respond = _responder(provider)
    backend = Recording(_backend(provider, fake.url))
    result = _run(tmp_path, backend)
    assert result.status == "success", result.error
    refused = [s for s in fake.requests if s.path.endswith(("/messages", "/completions"))]
    sizes = [_size(s.body) for s in refused]
    assert any(size > LIMIT for size in sizes), "the provider never refused a request"
    # Every session the provider refused was sent again, smaller, and accepted.
    sessions = [s for s in refused if s.body.get("stream")]
    assert _size(sessions[-1].body) <= LIMIT
    recovered = [r for r in backend.sessions if r.history]
    assert recovered and all(len(r.turns) <= 4 for r in recovered)
    # The turns reach the provider as turns: user and assistant messages.
    roles = [m["role"] for m in sessions[-1].body["messages"] if m["role"] != "system"]
    assert roles[-1] == "user" and "assistant" in roles


def test_anthropics_counter_counts_a_request_near_its_window(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(windows.WINDOWS, "claude-opus-4-8", 14_000)
    fake.respond = _responder("anthropic")
    result = _run(tmp_path, _backend("anthropic", fake.url))
    assert result.status == "success", result.error
    assert any(s.path.endswith("/messages/count_tokens") for s in fake.requests)
    found = stored_budgets(result.run_dir / "journal.db", result.run_id)
    assert found is not None
    assert {b.counter for b in found} == {"anthropic"}  # the reserve alone passes half
