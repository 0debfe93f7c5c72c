"""The anthropic and openai backends against a loopback server speaking each wire format."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from openprose.vm.backends.anthropic_backend import AnthropicBackend
from openprose.vm.backends.base import (
    BackendError,
    ChoiceRequest,
    ConditionRequest,
    SessionRequest,
    SummaryRequest,
    Usage,
)
from openprose.vm.backends.openai_backend import OpenAIBackend
from tests.vm.backends.provider_fakes import (
    FakeProvider,
    Reply,
    anthropic_message,
    anthropic_stream,
    error_reply,
    openai_completion,
    openai_stream,
)


@dataclass
class Provider:
    name: str
    answer: Callable[..., Reply]  # a whole JSON answer with this text
    stream: Callable[..., Reply]  # a streamed answer of these pieces
    make: Callable[..., Any]  # the backend, given the fake server's URL

    def system_and_user(self, body: dict[str, Any]) -> tuple[str | None, str]:
        if self.name == "anthropic":
            return body.get("system"), body["messages"][-1]["content"]
        messages = body["messages"]
        system = messages[0]["content"] if messages[0]["role"] == "system" else None
        return system, messages[-1]["content"]


PROVIDERS = {
    "anthropic": Provider(
        "anthropic",
        anthropic_message,
        anthropic_stream,
        lambda url, **kw: AnthropicBackend("test-key", base_url=url, **kw),
    ),
    "openai": Provider(
        "openai",
        openai_completion,
        openai_stream,
        lambda url, **kw: OpenAIBackend("test-key", base_url=url + "/v1", **kw),
    ),
}


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


@pytest.fixture(params=sorted(PROVIDERS))
def provider(request: pytest.FixtureRequest) -> Provider:
    return PROVIDERS[request.param]


SESSION = SessionRequest(
    prompt="Write the report",
    step="3/session",
    agent="writer",
    model="sonnet",
    system="You write reports.",
    context=(("notes", "bees dance"),),
)


def test_a_session_streams_with_the_agent_prompt_as_system_and_context_first(
    fake: FakeProvider, provider: Provider
) -> None:
    fake.script(provider.stream(["Hello, ", "world"]))
    backend = provider.make(fake.url)
    result = asyncio.run(backend.run_session(SESSION))
    assert result.text == "Hello, world"
    body = fake.requests[0].body
    assert body["stream"] is True
    system, user = provider.system_and_user(body)
    assert system == "You write reports."
    assert user == '<context name="notes">\nbees dance\n</context>\n\nWrite the report'
    # The alias maps to the provider's documented default.
    assert (
        body["model"] == {"anthropic": "claude-sonnet-4-6", "openai": "gpt-5-mini"}[provider.name]
    )
    headers = {name.lower(): value for name, value in fake.requests[0].headers.items()}
    assert headers.get("x-api-key") == "test-key" or headers["authorization"] == "Bearer test-key"


def test_anthropic_session_usage_cost_and_reference(fake: FakeProvider) -> None:
    fake.script(anthropic_stream(["ok"], ref="msg_abc", cache_read_input_tokens=1000))
    backend = PROVIDERS["anthropic"].make(fake.url)
    result = asyncio.run(backend.run_session(SESSION))
    assert result.session_ref == "msg_abc"
    assert result.usage == Usage(input_tokens=10, output_tokens=20, cache_read_tokens=1000)
    # claude-sonnet-4-6: $3 in, $15 out, $0.30 cache read per million tokens.
    assert result.cost == pytest.approx((10 * 3 + 20 * 15 + 1000 * 0.30) / 1e6)


def test_openai_session_usage_from_the_last_chunk_keeps_cached_tokens_apart(
    fake: FakeProvider,
) -> None:
    fake.script(openai_stream(["ok"], ref="chatcmpl-xyz", prompt=1100, completion=20, cached=1000))
    backend = PROVIDERS["openai"].make(fake.url)
    result = asyncio.run(backend.run_session(SESSION))
    assert result.session_ref == "chatcmpl-xyz"
    assert result.usage == Usage(input_tokens=100, output_tokens=20, cache_read_tokens=1000)
    assert fake.requests[0].body["stream_options"] == {"include_usage": True}
    # gpt-5-mini: $0.25 in, $2 out, $0.025 cached per million tokens.
    assert result.cost == pytest.approx((100 * 0.25 + 20 * 2 + 1000 * 0.025) / 1e6)


def test_model_map_overrides_an_alias_and_unknown_models_cost_nothing(
    fake: FakeProvider, provider: Provider
) -> None:
    fake.script(provider.stream(["ok"]))
    backend = provider.make(fake.url, model_map={"sonnet": "local-llama"})
    result = asyncio.run(backend.run_session(SESSION))
    assert fake.requests[0].body["model"] == "local-llama"
    assert result.cost == 0.0 and result.usage.output_tokens == 20


@pytest.mark.parametrize(
    ("answer", "value"), [("true", True), ("False.", False), (" `TRUE` \n", True)]
)
def test_a_condition_is_a_strict_true_or_false(
    fake: FakeProvider, provider: Provider, answer: str, value: bool
) -> None:
    fake.script(provider.answer(answer))
    backend = provider.make(fake.url)
    request = ConditionRequest("the tests pass", "5/if", "if", context=(("log", "ok"),))
    result = asyncio.run(backend.judge(request))
    assert result.value is value
    assert result.session_ref
    body = fake.requests[0].body
    assert body.get("stream") in (None, False)
    _, user = provider.system_and_user(body)
    assert "the tests pass" in user and '<context name="log">' in user


@pytest.mark.parametrize("answer", ["maybe", "true, probably", ""])
def test_an_unparseable_condition_answer_names_the_step(
    fake: FakeProvider, provider: Provider, answer: str
) -> None:
    fake.script(provider.answer(answer))
    backend = provider.make(fake.url)
    with pytest.raises(BackendError, match=r"step 5/if: .* not true or false"):
        asyncio.run(backend.judge(ConditionRequest("done", "5/if", "if")))


def test_a_choice_answers_an_option_number(fake: FakeProvider, provider: Provider) -> None:
    fake.script(provider.answer("2"))
    backend = provider.make(fake.url)
    request = ChoiceRequest("the fastest", ("walk", "fly", "swim"), "7/choice")
    assert asyncio.run(backend.choose(request)).index == 1
    _, user = provider.system_and_user(fake.requests[0].body)
    assert "1. walk\n2. fly\n3. swim" in user


@pytest.mark.parametrize("answer", ["4", "0", "fly", "2 or 3"])
def test_a_choice_outside_the_options_names_the_step(
    fake: FakeProvider, provider: Provider, answer: str
) -> None:
    fake.script(provider.answer(answer))
    backend = provider.make(fake.url)
    request = ChoiceRequest("the fastest", ("walk", "fly", "swim"), "7/choice")
    with pytest.raises(BackendError, match=r"step 7/choice: .* from 1 to 3"):
        asyncio.run(backend.choose(request))


def test_a_summary(fake: FakeProvider, provider: Provider) -> None:
    fake.script(provider.answer("short"))
    backend = provider.make(fake.url)
    result = asyncio.run(backend.summarise(SummaryRequest("notes", "x" * 500, 100, "2/let")))
    assert result.text == "short"
    _, user = provider.system_and_user(fake.requests[0].body)
    assert "at most 100 characters" in user and "x" * 500 in user


def test_a_429_with_retry_after_is_retried_by_the_sdk(
    fake: FakeProvider, provider: Provider
) -> None:
    # retry-after-ms keeps the test fast: a zero retry-after alone falls back to backoff.
    fake.script(
        error_reply(429, "slow down", **{"retry-after": "0", "retry-after-ms": "5"}),
        provider.stream(["fine"]),
    )
    backend = provider.make(fake.url, max_retries=1)
    assert asyncio.run(backend.run_session(SESSION)).text == "fine"
    assert len(fake.requests) == 2


def test_a_429_after_the_retries_names_the_step(fake: FakeProvider, provider: Provider) -> None:
    fake.script(error_reply(429, "slow down", **{"retry-after": "0", "retry-after-ms": "5"}))
    backend = provider.make(fake.url, max_retries=1)
    with pytest.raises(BackendError, match=rf"^step 3/session: {provider.name} .*HTTP 429"):
        asyncio.run(backend.run_session(SESSION))
    assert len(fake.requests) == 2


def test_a_server_error_names_the_step(fake: FakeProvider, provider: Provider) -> None:
    fake.script(error_reply(500, "boom"))
    backend = provider.make(fake.url, max_retries=0)
    with pytest.raises(BackendError, match=r"^step 3/session: .*HTTP 500"):
        asyncio.run(backend.run_session(SESSION))


def test_a_timeout_names_the_step(fake: FakeProvider, provider: Provider) -> None:
    fake.script(Reply(delay=2.0, body=b"{}"))
    backend = provider.make(fake.url, max_retries=0, timeout=0.2)
    with pytest.raises(BackendError, match=r"^step 5/if: .*Timeout"):
        asyncio.run(backend.judge(ConditionRequest("done", "5/if", "if")))


@pytest.mark.parametrize(
    "body", [b"{not json", b'{"unexpected": true}', b"[]"], ids=["garbage", "shape", "list"]
)
def test_a_malformed_answer_names_the_step(
    fake: FakeProvider, provider: Provider, body: bytes
) -> None:
    fake.script(Reply(body=body))
    backend = provider.make(fake.url, max_retries=0)
    with pytest.raises(BackendError, match=r"^step 5/if: "):
        asyncio.run(backend.judge(ConditionRequest("done", "5/if", "if")))


def test_a_malformed_stream_names_the_step(fake: FakeProvider, provider: Provider) -> None:
    fake.script(Reply(body=b"data: {broken\n\n", content_type="text/event-stream"))
    backend = provider.make(fake.url, max_retries=0)
    with pytest.raises(BackendError, match=r"^step 3/session: "):
        asyncio.run(backend.run_session(SESSION))
