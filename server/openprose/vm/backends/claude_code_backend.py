"""The ``claude-code`` backend: each session is a full Claude Code agent (``claude-agent-sdk``).

The SDK and its bundled CLI are imported when a request is made, never at module import, so
``prose check`` and ``prose-ls`` never load them.  Each session is one CLI process (about
0.4 s and 200 MB here), so at most ``concurrency`` run at once whatever the program's own
parallelism.  The agent's tools and rules come from the session's ``permissions:`` block
(``claude_code_rules``); unattended runs use ``permission_mode="dontAsk"``, which denies any
call the rules do not allow without asking; ``permission_mode="default"`` sends such calls to
a ``can_use_tool`` callback that decides by the same rules (``prompt``: ``confirm``, or deny).

A session's id is ``uuid5(run id, step key)``: the same step of the same run always has the
same id, so a run resumed after a crash resumes the CLI's transcript of a session that was
cut short instead of starting it again.  Conditions, choices and summaries are one-turn
queries with no tools, the same questions (``prompts``) the other backends ask.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
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
from openprose.vm.backends.claude_code_rules import Rules, rules_for
from openprose.vm.backends.pricing import cost, resolve_model
from openprose.vm.telemetry import ToolCalls

NAMESPACE = uuid.UUID("5b0f6f2e-8c1d-5e7a-9a43-0d6c2f1e9b71")  # fixed: ids stable across versions
DEFAULT_CONCURRENCY = 2
QUIET = {"DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}

Confirm = Callable[[str, dict[str, Any]], Awaitable[bool]]


def session_id(run_key: str, step: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{run_key}\x00{step}"))


class ClaudeCodeBackend:
    name = "claude-code"
    dry_run = False

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str | None = None,
        model_map: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        run_key: str = "",
        permission_mode: str = "dontAsk",
        confirm: Confirm | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        max_turns: int | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url
        self.model_map = dict(model_map or {})
        self.cwd = (cwd or Path.cwd()).resolve()
        self.run_key = run_key
        self.permission_mode = permission_mode
        self.confirm = confirm
        self.max_turns = max_turns
        self.environ = dict(environ or {})
        self.slots = asyncio.Semaphore(max(1, concurrency))
        self.started: set[str] = set()  # session ids begun by this process
        self.denials: dict[str, list[Any]] = {}  # step -> the tool calls the rules denied

    def bind_run(self, run_id: str) -> None:
        """The run the sessions belong to (the runner calls this once it knows the id)."""
        self.run_key = run_id

    def session_id(self, step: str) -> str:
        return session_id(self.run_key, step)

    def can_read(self, path: str, properties: tuple[tuple[str, str], ...]) -> bool:
        """Whether a session with these properties may read ``path`` without asking: then
        its context bindings are passed by reference (vm/context/ladder.py)."""
        rules = rules_for(dict(properties).get("permissions"))
        return rules.decide("Read", {"file_path": path}, str(self.cwd))[0] == "allow"

    def _env(self) -> dict[str, str]:
        env = {**self.environ, **QUIET, "ANTHROPIC_API_KEY": self.api_key}
        if self.base_url:
            env["ANTHROPIC_BASE_URL"] = self.base_url
        return env

    def _transcript_exists(self, sid: str, sdk: Any) -> bool:
        home = self.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")
        key = str(sdk.project_key_for_directory(str(self.cwd)))
        return (Path(home) / "projects" / key / f"{sid}.jsonl").exists()

    def _decider(self, rules: Rules, sdk: Any) -> Any:
        async def can_use_tool(tool: str, arguments: dict[str, Any], _context: Any) -> Any:
            verdict, reason = rules.decide(tool, arguments, str(self.cwd))
            if verdict == "prompt" and self.confirm is not None:
                verdict = "allow" if await self.confirm(tool, arguments) else "deny"
            if verdict == "allow":
                return sdk.PermissionResultAllow()
            return sdk.PermissionResultDeny(
                message=f"denied by the program's permissions ({reason})"
            )

        return can_use_tool

    async def _query(
        self, step: str, model: str, system: str | None, user: str, rules: Rules | None, sid: str
    ) -> tuple[str, Usage, float, str, list[Any]]:
        try:
            import claude_agent_sdk as sdk
        except ImportError:
            raise BackendError(
                "the claude-code backend needs the SDK: pip install 'openprose[claude-code]'"
            ) from None
        options: dict[str, Any] = {
            "model": model,
            "cwd": str(self.cwd),
            "env": self._env(),
            "setting_sources": [],  # the program's permissions, not the user's settings
            "system_prompt": system,
            "tools": list(rules.tools) if rules else [],
            # Outside dontAsk the callback decides every call: an allow rule would answer
            # first and the callback would never hear of it.
            "allowed_tools": list(rules.allow)
            if rules and self.permission_mode == "dontAsk"
            else [],
            "permission_mode": self.permission_mode,
            "max_turns": self.max_turns if rules else 1,
            "stderr": lambda _line: None,
        }
        if rules is not None and self.permission_mode != "dontAsk":
            options["can_use_tool"] = self._decider(rules, sdk)
        if sid in self.started or self._transcript_exists(sid, sdk):
            options["resume"] = sid
        else:
            options["session_id"] = sid
        self.started.add(sid)

        async def conversation() -> AsyncIterator[dict[str, Any]]:
            # A stream, not a string: the SDK sends can_use_tool questions only in this mode.
            yield {"type": "user", "message": {"role": "user", "content": user}}

        result: Any = None
        texts: list[str] = []
        tools = ToolCalls()  # execute_tool spans when the run is traced
        try:
            async with self.slots:
                async for message in sdk.query(
                    prompt=conversation(), options=sdk.ClaudeAgentOptions(**options)
                ):
                    if isinstance(message, sdk.AssistantMessage):
                        texts = [b.text for b in message.content if isinstance(b, sdk.TextBlock)]
                        for block in message.content:
                            if isinstance(block, sdk.ToolUseBlock):
                                tools.called(block.id, block.name)
                    elif isinstance(message, sdk.UserMessage):
                        for block in message.content if isinstance(message.content, list) else ():
                            if isinstance(block, sdk.ToolResultBlock):
                                tools.returned(block.tool_use_id, bool(block.is_error))
                    elif isinstance(message, sdk.ResultMessage):
                        result = message
        except Exception as error:  # the CLI could not start, or exited with an error
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise BackendError(f"step {step}: claude-code ({model}): {first}") from None
        finally:
            tools.close()
        if result is None:
            raise BackendError(f"step {step}: claude-code ({model}): the agent gave no result")
        if result.is_error:
            detail = "; ".join(result.errors or []) or result.subtype
            raise BackendError(f"step {step}: claude-code ({model}): {detail}")
        text = result.result if isinstance(result.result, str) else "".join(texts)
        usage = _usage(result.usage or {})
        spent = result.total_cost_usd if result.total_cost_usd is not None else cost(model, usage)
        return (
            text,
            usage,
            float(spent),
            str(result.session_id),
            list(result.permission_denials or []),
        )

    async def run_session(self, request: SessionRequest) -> SessionResult:
        model = resolve_model("anthropic", request.model, self.model_map)
        system, user = prompts.session_messages(request)
        rules = rules_for(dict(request.properties).get("permissions"))
        text, usage, spent, ref, denied = await self._query(
            request.step, model, system, user, rules, self.session_id(request.step)
        )
        if denied:
            self.denials[request.step] = denied
        return SessionResult(usage=usage, cost=spent, session_ref=ref, text=text)

    async def _answer(self, step: str, system: str, user: str) -> tuple[str, Usage, float, str]:
        model = resolve_model("anthropic", None, self.model_map)
        # A fresh id each time: a question is cheap to ask again and has nothing to resume.
        text, usage, spent, ref, _ = await self._query(
            step, model, system, user, None, str(uuid.uuid4())
        )
        return text, usage, spent, ref

    async def judge(self, request: ConditionRequest) -> ConditionResult:
        text, usage, spent, ref = await self._answer(
            request.step, prompts.CONDITION_SYSTEM, prompts.condition_message(request)
        )
        value = prompts.parse_condition(text, request.step)
        return ConditionResult(usage=usage, cost=spent, session_ref=ref, value=value)

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        text, usage, spent, ref = await self._answer(
            request.step, prompts.CHOICE_SYSTEM, prompts.choice_message(request)
        )
        index = prompts.parse_choice(text, len(request.options), request.step)
        return ChoiceResult(usage=usage, cost=spent, session_ref=ref, index=index)

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        text, usage, spent, ref = await self._answer(
            request.step, prompts.SUMMARY_SYSTEM, prompts.summary_message(request)
        )
        return SummaryResult(usage=usage, cost=spent, session_ref=ref, text=text)


def _usage(usage: Mapping[str, Any]) -> Usage:
    return Usage(
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
        cache_write_tokens=int(usage.get("cache_creation_input_tokens") or 0),
    )
