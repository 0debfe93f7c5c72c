"""Renaming an input of a program renames it in the workspace's programs that call it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIBRARY = 'input topic: "What to research"\noutput findings = session "Research {topic}"\n'
CALLER = 'use "./library.prose" as library\nlet r = library(topic: "tides")\n'


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("callers")
    (root / "library.prose").write_text(LIBRARY, encoding="utf-8")
    (root / "caller.prose").write_text(CALLER, encoding="utf-8")
    return root


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "openprose.lsp"]),
)
async def client(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[LanguageClient]:
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="callers")],
        )
    )
    yield lsp_client
    await lsp_client.shutdown_session()


async def indexed(client: LanguageClient, name: str) -> None:
    """Wait until the background workspace index holds a symbol called ``name``."""
    for _ in range(200):
        found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=name))
        if found:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the workspace index never listed {name}")


async def test_renaming_an_input_edits_the_calls_in_other_files(
    client: LanguageClient, workspace: Path
) -> None:
    await indexed(client, "library")  # the caller's `use ... as library`
    library_uri = (workspace / "library.prose").resolve().as_uri()
    caller_uri = (workspace / "caller.prose").resolve().as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=library_uri, language_id="prose", version=1, text=LIBRARY
            )
        )
    )
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=library_uri),
            position=types.Position(line=0, character=7),
            new_name="subject",
        )
    )
    assert edit is not None and edit.changes is not None
    assert sorted(edit.changes) == sorted([library_uri, caller_uri])
    [call_edit] = edit.changes[caller_uri]
    assert call_edit.new_text == "subject"
    assert call_edit.range == types.Range(
        start=types.Position(line=1, character=16), end=types.Position(line=1, character=21)
    )
    assert len(edit.changes[library_uri]) == 2  # the declaration and `{topic}`
