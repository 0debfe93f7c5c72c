"""The last run's figures in the editor, through the real server: a program run on the offline
backend in a project of the workspace, a context budget written into its journal as the
interpreter writes them, then hover and inlay hints on the open program."""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.context.record import Layers, SessionBudget, record
from openprose.vm.runner import run_file
from openprose.vm.state.journal import Journal
from tests.support.characters import ASTRAL
from tests.support.edits import units

Session = Any  # the conftest's Session: a live client plus position helpers

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROGRAM = f"""\
agent writer:
  model: sonnet
  prompt: "You write."

let draft = session: writer
  prompt: "Write a poem"

session "Summarise {{draft}} {ASTRAL}"
"""
SUMMARY_LINE = 7
_documents = itertools.count()
EVERYTHING = types.Range(
    start=types.Position(line=0, character=0), end=types.Position(line=50, character=0)
)


@pytest.fixture(scope="module")
def project(workspace: Path) -> Path:
    """A project in the workspace with one run of ``main.prose`` and a budget for line 5."""
    root = workspace / "costs"
    (root / ".prose").mkdir(parents=True, exist_ok=True)
    path = root / "main.prose"
    if not path.exists():
        path.write_text(PROGRAM, encoding="utf-8")
        result = asyncio.run(
            run_file(
                path, backend=OfflineBackend(), runs_root=root / ".prose" / "runs",
                project_root=root,
            )
        )  # fmt: skip
        assert result.status == "success", result.error
        journal = Journal.sqlite(root / ".prose" / "runs" / result.run_id / "journal.db",
                                 result.run_id)  # fmt: skip
        try:
            budget = SessionBudget(
                "2#attempt91", "writer", "let draft = session: writer", 5, "main.prose",
                "claude-sonnet-4", 200_000, Layers(system=3, context=4_321, prompt=5),
                actions=("summarised `notes`",),
            )  # fmt: skip
            record(budget, journal)
        finally:
            journal.close()
    return root


async def open_program(session: Session, project: Path, text: str = PROGRAM) -> str:
    """A new document of the run's file name in the project: the run is of its name, and
    every test opens its own document (the project root is the nearest ``.prose``)."""
    uri = (project / f"doc-{next(_documents)}" / "main.prose").as_uri()
    await session.open(text, uri)
    return uri


async def hints(session: Session, uri: str) -> list[types.InlayHint]:
    found = await session.client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=session.doc(uri), range=EVERYTHING)
    )
    return [h for h in found or [] if isinstance(h.label, str) and " tok" in h.label]


async def test_hover_on_a_session_shows_its_budget_and_cost(
    session: Session, project: Path
) -> None:
    uri = await open_program(session, project)
    hover = await session.client.text_document_hover_async(
        types.HoverParams(text_document=session.doc(uri), position=session.position(PROGRAM, 4, 14))
    )
    assert hover is not None
    text = hover.contents.value
    assert "**`session`** (keyword)" in text  # the keyword's own hover stays first
    assert "**Last run** `" in text
    assert "This statement: 1 call, " in text
    assert "| context | 4,321 |" in text
    assert "Window: 4,329 of 200,000 tokens (2%)." in text  # no reserve in this budget
    assert "- summarised `notes`" in text
    agent = await session.client.text_document_hover_async(
        types.HoverParams(text_document=session.doc(uri), position=session.position(PROGRAM, 0, 8))
    )
    assert agent is not None and "`writer`: 1 session, " in agent.contents.value


async def test_an_inlay_hint_follows_each_session_that_ran(session: Session, project: Path) -> None:
    uri = await open_program(session, project)
    found = await hints(session, uri)
    summary = PROGRAM.split("\n")[SUMMARY_LINE]
    assert [(h.position.line, h.position.character) for h in found] == [
        (4, len("let draft = session: writer")),
        (SUMMARY_LINE, units(summary, session.encoding)),
    ]
    # The offline backend costs nothing.
    assert all(isinstance(h.label, str) and h.label.endswith(" tok") for h in found)
    assert all(h.padding_left and h.tooltip for h in found)


async def test_a_moved_or_changed_statement_shows_nothing(session: Session, project: Path) -> None:
    uri = await open_program(session, project)
    assert len(await hints(session, uri)) == 2
    blank = types.Position(line=SUMMARY_LINE - 1, character=0)
    await session.change(uri, 2, blank, blank, "\n")  # the second session one line down
    assert [h.position.line for h in await hints(session, uri)] == [4]
    name = types.Position(line=4, character=len("let draft"))
    await session.change(uri, 3, name, name, "s")  # the first one changed in place
    assert await hints(session, uri) == []
    for line, character in ((4, 14), (SUMMARY_LINE + 1, 2)):  # on `session`: its own hover
        hover = await session.client.text_document_hover_async(
            types.HoverParams(
                text_document=session.doc(uri),
                position=types.Position(line=line, character=character),
            )
        )
        assert hover is not None and "Last run" not in hover.contents.value


async def test_the_setting_turns_the_hints_off(session: Session, project: Path) -> None:
    uri = await open_program(session, project)
    features = session.client.protocol.fm.features
    if types.WORKSPACE_INLAY_HINT_REFRESH not in features:
        # Neovim's capabilities say it can be asked to request its hints again, and the
        # server asks when this setting changes: the test client answers (and asks nothing).
        session.client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)(lambda params: None)

    async def settle(check: Callable[[list[types.InlayHint]], bool]) -> None:
        # Settings are applied asynchronously: ask until the answer reflects them.
        while not check(await hints(session, uri)):
            await asyncio.sleep(0.01)

    def configure(value: bool) -> Awaitable[None]:
        session.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"prose": {"inlayHints": {"runCost": value}}}
            )
        )
        return asyncio.wait_for(settle(lambda found: bool(found) == value), 10)

    try:
        assert len(await hints(session, uri)) == 2
        await configure(False)
        assert await hints(session, uri) == []
    finally:
        await configure(True)  # restored: this server's other tests see the hints


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "openprose.lsp"]),
)
async def refreshing(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    """A client that can be asked to request its inlay hints again, and counts the asks."""
    asked: list[None] = []
    lsp_client.inlay_hint_refreshes = asked  # type: ignore[attr-defined]

    @lsp_client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def refresh(params: None) -> None:
        asked.append(params)

    capabilities = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            inlay_hint=types.InlayHintWorkspaceClientCapabilities(refresh_support=True)
        )
    )
    await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities))
    yield lsp_client
    await lsp_client.shutdown_session()


async def test_the_client_is_asked_for_hints_again_when_the_setting_changes(
    refreshing: LanguageClient,
) -> None:
    asked: list[None] = refreshing.inlay_hint_refreshes  # type: ignore[attr-defined]

    async def configure(settings: dict[str, Any], count: int) -> None:
        refreshing.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"prose": settings})
        )
        while len(asked) < count:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(configure({"inlayHints": {"runCost": False}}, 1), 10)
    await asyncio.wait_for(configure({"debounce": 20}, 1), 10)  # another setting: no ask
    await asyncio.wait_for(configure({"inlayHints": {"runCost": True}}, 2), 10)
    assert len(asked) == 2
