"""The claude-code backend: the SDK's bundled CLI against the loopback fake Anthropic server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.backends.base import BackendError, ConditionRequest, SessionRequest, bind_run
from openprose.vm.backends.claude_code_backend import ClaudeCodeBackend, session_id
from tests.vm.backends.provider_fakes import (
    FakeProvider,
    anthropic_stream,
    anthropic_tool_use_stream,
    error_reply,
)

pytest.importorskip("claude_agent_sdk")

WRITE_NOTES = json.dumps({"write": ["notes/"]})


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


def backend(url: str, root: Path, **kw: Any) -> ClaudeCodeBackend:
    (root / "work").mkdir(exist_ok=True)
    # The CLI's transcripts and settings go to the test's own directory, never ~/.claude.
    environ = {"CLAUDE_CONFIG_DIR": str(root / "config")}
    return ClaudeCodeBackend(
        "test-key", base_url=url, cwd=root / "work", run_key="run-1", environ=environ, **kw
    )


def session(step: str = "3/session", permissions: str | None = None) -> SessionRequest:
    properties = (("permissions", permissions),) if permissions is not None else ()
    return SessionRequest(
        prompt="Write the notes",
        step=step,
        agent="writer",
        system="You write notes.",
        properties=properties,
    )


def tool_results(fake: FakeProvider) -> list[dict[str, Any]]:
    """The tool_result blocks the CLI sent back in its requests."""
    found = []
    for seen in fake.requests:
        for message in seen.body["messages"]:
            content = message["content"]
            for block in content if isinstance(content, list) else ():
                if block.get("type") == "tool_result":
                    found.append(block)
    return found


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def test_a_plain_session_answers_with_usage_cost_and_its_session(
    fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(anthropic_stream(["All ", "done"]))
    model = backend(fake.url, tmp_path)
    result = asyncio.run(model.run_session(session()))
    assert result.text == "All done"
    assert result.usage.input_tokens == 10 and result.usage.output_tokens > 0
    assert result.cost > 0
    assert result.session_ref == session_id("run-1", "3/session")
    body = fake.requests[0].body
    system = body["system"]
    system_text = system if isinstance(system, str) else " ".join(b["text"] for b in system)
    assert "You write notes." in system_text
    assert body["model"] == "claude-sonnet-4-6"  # the sonnet alias, as for the anthropic backend
    assert fake.requests[0].headers.get("x-api-key") == "test-key"


def test_a_tool_call_runs_and_the_agent_answers_after_its_result(
    fake: FakeProvider, tmp_path: Path
) -> None:
    target = tmp_path / "work" / "notes" / "a.md"
    fake.script(
        anthropic_tool_use_stream("Write", {"file_path": str(target), "content": "hello\n"}),
        anthropic_stream(["Wrote it"]),
    )
    model = backend(fake.url, tmp_path)
    result = asyncio.run(model.run_session(session(permissions=WRITE_NOTES)))
    assert result.text == "Wrote it"
    assert target.read_text() == "hello\n"
    [block] = tool_results(fake)
    assert block["tool_use_id"] == "toolu_01" and not block.get("is_error")


def test_dont_ask_denies_a_write_outside_the_permissions(
    fake: FakeProvider, tmp_path: Path
) -> None:
    target = tmp_path / "work" / "secret.txt"
    fake.script(
        anthropic_tool_use_stream("Write", {"file_path": str(target), "content": "x\n"}),
        anthropic_stream(["Could not write"]),
    )
    model = backend(fake.url, tmp_path)
    result = asyncio.run(model.run_session(session(permissions=WRITE_NOTES)))
    assert result.text == "Could not write"
    assert not target.exists()
    [block] = tool_results(fake)
    assert "denied" in result_text(block)
    assert model.denials["3/session"][0]["tool_name"] == "Write"


def test_with_no_permissions_block_a_session_cannot_write(
    fake: FakeProvider, tmp_path: Path
) -> None:
    target = tmp_path / "work" / "notes" / "a.md"
    fake.script(
        anthropic_tool_use_stream("Write", {"file_path": str(target), "content": "x\n"}),
        anthropic_stream(["No"]),
    )
    asyncio.run(backend(fake.url, tmp_path).run_session(session()))
    assert not target.exists()


def test_the_callback_decides_by_the_same_rules_outside_dont_ask(
    fake: FakeProvider, tmp_path: Path
) -> None:
    target = tmp_path / "work" / "secret.txt"
    fake.script(
        anthropic_tool_use_stream("Write", {"file_path": str(target), "content": "x\n"}),
        anthropic_stream(["Denied"]),
    )
    model = backend(fake.url, tmp_path, permission_mode="default")
    asyncio.run(model.run_session(session(permissions=WRITE_NOTES)))
    assert not target.exists()
    [block] = tool_results(fake)
    assert "denied by the program's permissions" in result_text(block)


def test_the_session_id_is_the_run_and_step_and_a_cut_session_is_resumed(
    fake: FakeProvider, tmp_path: Path
) -> None:
    assert session_id("run-1", "3/session") == session_id("run-1", "3/session")
    assert session_id("run-1", "3/session") != session_id("run-2", "3/session")
    assert session_id("run-1", "3/session") != session_id("run-1", "4/session")
    fake.script(anthropic_stream(["first"]), anthropic_stream(["second"]))
    first = asyncio.run(backend(fake.url, tmp_path).run_session(session()))
    # A new process (a resumed run) finds the transcript of the same step and resumes it:
    # the model sees the first exchange again instead of a fresh conversation.
    second = asyncio.run(backend(fake.url, tmp_path).run_session(session()))
    assert first.session_ref == second.session_ref
    assert second.text == "second"
    assert len(fake.requests[0].body["messages"]) == 1
    assert len(fake.requests[1].body["messages"]) > 1


def test_bind_run_reaches_the_backend_through_wrappers(tmp_path: Path) -> None:
    class Wrapper:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

    model = backend("http://127.0.0.1:9", tmp_path)
    bind_run(Wrapper(model), "20260101-000000-abcdef")
    assert model.session_id("1") == session_id("20260101-000000-abcdef", "1")


def test_a_condition_is_a_one_turn_query_with_no_tools(fake: FakeProvider, tmp_path: Path) -> None:
    fake.script(anthropic_stream(["true"]))
    request = ConditionRequest(condition="the notes are done", step="5/if", purpose="if")
    result = asyncio.run(backend(fake.url, tmp_path).judge(request))
    assert result.value is True
    assert not fake.requests[0].body.get("tools")


def test_a_refused_request_is_a_backend_error_naming_the_step(
    fake: FakeProvider, tmp_path: Path
) -> None:
    # 400 is not retried by the CLI (a 5xx or a dead server is, for minutes).
    fake.script(error_reply(400, "prompt is malformed"))
    with pytest.raises(BackendError, match="step 3/session: claude-code"):
        asyncio.run(backend(fake.url, tmp_path).run_session(session()))


def test_execute_patterns_let_the_agent_run_those_programs_only(
    fake: FakeProvider, tmp_path: Path
) -> None:
    model = backend(fake.url, tmp_path)
    script = tmp_path / "work" / "scripts" / "hi.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho ran > out.txt\n")
    script.chmod(0o755)
    permissions = json.dumps({"execute": ["scripts/*.sh"]})
    for step, command in (("1", "./scripts/hi.sh --now"), ("2", "rm -f scripts/hi.sh")):
        fake.script(
            anthropic_tool_use_stream("Bash", {"command": command}), anthropic_stream(["ok"])
        )
        request = SessionRequest(
            prompt="Run it", step=step, properties=(("permissions", permissions),)
        )
        asyncio.run(model.run_session(request))
    assert (tmp_path / "work" / "out.txt").read_text() == "ran\n"
    assert script.exists()
    assert list(model.denials) == ["2"]
