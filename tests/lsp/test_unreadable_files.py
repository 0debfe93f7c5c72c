"""A workspace holding a FIFO named ``*.prose`` and ``/dev/zero`` behind a ``*.prose`` link
(issue 12, finding 18): the background index skips both, so it finishes (the file after them
is indexed), the server keeps answering, and it shuts down.  Before, the index blocked for
ever on the FIFO (and would have read the device until memory ran out).

The server's address space is capped, so a regression fails instead of starving the machine.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.fifos import release

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)"),
]

MEMORY_CAP = 1 << 30  # bytes of address space for the server
_CAPPED_SERVER = (
    "import resource, runpy\n"
    f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_CAP}, {MEMORY_CAP}))\n"
    "runpy.run_module('openprose.lsp', run_name='__main__')\n"
)

PROGRAM = "agent researcher:\n  model: opus\n"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("unreadable")
    # Sorted before the real program, so the index meets them first.
    os.mkfifo(root / "a_pipe.prose")
    (root / "b_zero.prose").symlink_to("/dev/zero")
    (root / "c_real.prose").write_text("agent indexed_last:\n  model: haiku\n", encoding="utf-8")
    return root


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-c", _CAPPED_SERVER]),
)
async def client(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[LanguageClient]:
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="unreadable")],
        )
    )
    yield lsp_client
    # Should the index still be blocked on the FIFO, free it so the server can exit.
    release(workspace / "a_pipe.prose")
    await asyncio.wait_for(lsp_client.shutdown_session(), 10)


async def test_the_server_answers_a_hover(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "open.prose").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="prose", version=1, text=PROGRAM
            )
        )
    )
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=0, character=8),
            )
        ),
        10,
    )
    assert hover is not None and "researcher" in str(hover.contents)


async def test_the_index_skips_them_and_finishes(client: LanguageClient) -> None:
    for _ in range(100):
        found = await asyncio.wait_for(
            client.workspace_symbol_async(types.WorkspaceSymbolParams(query="indexed_last")), 10
        )
        if found:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("the file after the FIFO and the device was never indexed")
    assert [s.name for s in found] == ["indexed_last"]
    assert client.error is None
