"""``prose.run`` end to end: the Run lens, the server-side command running a program on the
offline backend with progress and narration, refusals, and cancellation."""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

Session = Any  # the conftest's Session: a live client plus position helpers

pytestmark = pytest.mark.asyncio(loop_scope="module")

HELLO = 'let greeting = session "Say hello to the reader"\noutput answer = greeting\n'
WITH_INPUT = 'input topic: "What to research"\noutput findings = session "Research {topic}"\n'
BROKEN = "output answer = nowhere\n"
# Long enough on the offline backend to be cancelled while it runs.
ENDLESS = 'repeat 100000:\n  session "Tick"\n'

_names = itertools.count()


async def program(session: Session, text: str) -> tuple[str, Path]:
    """A program file in its own folder, opened in the editor."""
    folder = session.root / f"run-{next(_names)}"
    folder.mkdir()
    path = folder / "main.prose"
    path.write_text(text, encoding="utf-8")
    uri, _ = await session.open(text, uri=path.as_uri())
    return uri, path


async def lenses(session: Session, uri: str) -> list[types.CodeLens]:
    found = await session.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=session.doc(uri))
    )
    return list(found or [])


async def execute(session: Session, *arguments: Any) -> Any:
    return await asyncio.wait_for(
        session.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="prose.run", arguments=list(arguments))
        ),
        30,
    )


def running(session: Session) -> list[str]:
    """The progress tokens of runs that have begun and not ended."""
    return [
        token
        for token, reports in session.client.progress_reports.items()
        if getattr(reports[0], "title", "").startswith("Running ") and reports[-1].kind != "end"
    ]


def logged(session: Session) -> list[str]:
    return [m.message for m in session.client.log_messages]


async def until(predicate: Any, seconds: float = 10) -> None:
    for _ in range(int(seconds / 0.02)):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("timed out")


async def test_the_run_lens_appears_only_on_programs_without_errors(session: Session) -> None:
    uri, _ = await program(session, HELLO)
    (lens,) = await lenses(session, uri)
    assert lens.command is not None
    assert (lens.command.title, lens.command.command) == ("▶ Run program", "prose.run")
    assert list(lens.command.arguments or []) == [uri]
    broken, _ = await program(session, BROKEN)
    assert await lenses(session, broken) == []


async def test_the_command_runs_the_program_with_progress_and_narration(session: Session) -> None:
    uri, path = await program(session, HELLO)
    before = len(session.client.log_messages)
    result = await execute(session, uri)
    assert result["status"] == "success"
    assert "Say hello to the reader" in str(result["outputs"]["answer"])
    run_dir = path.parent / ".prose" / "runs" / result["runId"]
    assert Path(result["runDir"]) == run_dir
    state = (run_dir / "state.md").read_text(encoding="utf-8")
    assert "1→ greeting ✓" in state and "---end" in state
    narration = "\n".join(logged(session)[before:])
    assert "[Position] Executing: let greeting" in narration
    assert "[Program] Program complete" in narration
    # Both clients of the conftest advertise window.workDoneProgress.
    runs = [
        reports
        for reports in session.client.progress_reports.values()
        if getattr(reports[0], "title", "") == "Running main.prose"
    ]
    assert runs
    kinds = [report.kind for report in runs[-1]]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds


async def test_a_fast_loop_narrates_every_line_in_few_messages(session: Session) -> None:
    uri, _ = await program(session, 'repeat 1000:\n  session "Tick"\n')
    before = len(session.client.log_messages)
    result = await execute(session, uri)
    assert result["status"] == "success"
    messages = logged(session)[before:]
    narration = "\n".join(messages)
    # Every iteration is narrated (nothing is dropped)...
    assert narration.count('[Position] Executing: session "Tick"') == 1000
    assert "[Program] Program complete" in narration
    # ...in batches: far fewer messages than lines (one message per line flooded the log).
    assert len(messages) < 200


async def test_inputs_come_as_the_second_argument(session: Session) -> None:
    uri, _ = await program(session, WITH_INPUT)
    shown = len(session.client.messages)
    assert await execute(session, uri) is None
    await until(lambda: len(session.client.messages) > shown)
    assert "'topic'" in session.client.messages[-1].message
    result = await execute(session, uri, {"topic": "tide pools"})
    assert result["status"] == "success"
    assert "tide pools" in str(result["outputs"]["findings"])


async def test_a_program_with_errors_is_refused_with_a_message(session: Session) -> None:
    uri, path = await program(session, BROKEN)
    shown = len(session.client.messages)
    assert await execute(session, uri) is None
    await until(lambda: len(session.client.messages) > shown)
    message = session.client.messages[-1]
    assert message.type == types.MessageType.Error
    assert "has 1 error and cannot run" in message.message
    assert not (path.parent / ".prose").exists()


async def test_a_cancelled_run_stops_and_other_requests_are_answered_meanwhile(
    session: Session,
) -> None:
    uri, path = await program(session, ENDLESS)
    runs = path.parent / ".prose" / "runs"
    msg_id = f"run-{next(_names)}"
    request = asyncio.wrap_future(
        session.client.protocol.send_request(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="prose.run", arguments=[uri]),
            msg_id=msg_id,
        )
    )
    # Not a hidden `.ID.PID.new`: a run being created, renamed away once it is staged.
    await until(lambda: any(runs.glob("[!.]*/state.md")))
    (state,) = runs.glob("[!.]*/state.md")
    # The server still answers while the program runs.
    symbols = await asyncio.wait_for(
        session.client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=session.doc(uri))
        ),
        10,
    )
    assert symbols is not None
    assert not request.done()
    session.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(request, 10)
    await until(lambda: "interrupted" in state.read_text(encoding="utf-8"))
    assert "---error" in state.read_text(encoding="utf-8")
    size = state.stat().st_size
    await asyncio.sleep(0.3)
    assert state.stat().st_size == size  # stopped, not merely unanswered


async def test_cancelling_the_progress_stops_the_run(session: Session) -> None:
    uri, path = await program(session, ENDLESS)
    runs = path.parent / ".prose" / "runs"
    request = asyncio.ensure_future(execute(session, uri))
    await until(lambda: any(runs.glob("[!.]*/state.md")) and bool(running(session)))
    token = running(session)[-1]  # the newest run
    session.client.protocol.notify(
        types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token=token)
    )
    result = await asyncio.wait_for(request, 10)
    assert result["status"] == "cancelled"
    assert session.client.progress_reports[token][-1].kind == "end"
    (state,) = runs.glob("[!.]*/state.md")
    assert "interrupted" in state.read_text(encoding="utf-8")


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "openprose.lsp"]),
)
async def runs_itself(
    lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[LanguageClient]:
    """A client that runs programs itself (the VS Code extension's initialization option)."""
    root = tmp_path_factory.mktemp("client-runs")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            initialization_options={"debounce": 20, "runCommand": "client"},
        )
    )
    yield lsp_client
    await lsp_client.shutdown_session()


async def test_a_client_that_runs_programs_gets_lenses_naming_its_commands(
    runs_itself: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "main.prose"
    path.write_text(WITH_INPUT, encoding="utf-8")
    runs_itself.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(), language_id="prose", version=1, text=WITH_INPUT
            )
        )
    )
    found = await runs_itself.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()))
    )
    commands = [(lens.command.title, lens.command.command) for lens in found or [] if lens.command]
    assert commands == [
        ("▶ Run program", "prose.runProgram"),
        ("Run with inputs…", "prose.runProgramWithInputs"),
    ]
