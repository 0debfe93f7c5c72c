"""The language server end to end (pytest-lsp): diagnostics follow the document."""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

URI = "file:///tmp/example.prose"
ENCODING: dict[LanguageClient, str] = {}
ASTRAL = "\U0001d11e"


def units(client: LanguageClient, text: str) -> int:
    """The length of ``text`` in the negotiated position encoding."""
    encoding = ENCODING[client]
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "openprose.lsp"]),
    params=["visual-studio-code", "neovim"],
)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    result = await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities(request.param))
    )
    # Remember the negotiated encoding: Neovim's capabilities ask for UTF-8.
    ENCODING[lsp_client] = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


async def published(client: LanguageClient, version: int | None) -> list[types.Diagnostic]:
    """Wait until diagnostics for ``version`` arrive."""
    for _ in range(50):
        params = await asyncio.wait_for(
            client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 5
        )
        if params.uri == URI and params.version == version:
            return list(params.diagnostics)
    raise AssertionError(f"no diagnostics for version {version}")


async def open_document(client: LanguageClient, text: str) -> list[types.Diagnostic]:
    waiter = asyncio.ensure_future(published(client, 1))
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=URI, language_id="prose", version=1, text=text)
        )
    )
    return await waiter


async def change(
    client: LanguageClient, version: int, start: tuple[int, int], end: tuple[int, int], text: str
) -> list[types.Diagnostic]:
    waiter = asyncio.ensure_future(published(client, version))
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=start[0], character=start[1]),
                        end=types.Position(line=end[0], character=end[1]),
                    ),
                    text=text,
                )
            ],
        )
    )
    return await waiter


async def test_unterminated_string_is_reported_with_a_utf16_range(client: LanguageClient) -> None:
    # The astral character before the error takes two UTF-16 code units.
    diagnostics = await open_document(client, 'session "\U0001d11e ok"\nsession "oops\n')
    assert len(diagnostics) == 1
    (diagnostic,) = diagnostics
    assert diagnostic.code == "E001"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.range == types.Range(
        start=types.Position(line=1, character=8), end=types.Position(line=1, character=13)
    )


async def test_incremental_changes_update_and_clear_diagnostics(client: LanguageClient) -> None:
    await open_document(client, 'session "\U0001d11e ok"\nsession "oops\n')
    # Close the string: the document becomes clean and an empty list is published.
    assert await change(client, 2, (1, 13), (1, 13), '"') == []
    # Insert a bad escape right after the astral character.
    column = units(client, f'session "{ASTRAL}')
    diagnostics = await change(client, 3, (0, column), (0, column), "\\q")
    assert [d.code for d in diagnostics] == ["E002"]
    assert diagnostics[0].range.start == types.Position(line=0, character=column)
    assert diagnostics[0].range.end == types.Position(line=0, character=column + 2)


async def test_closing_a_document_clears_its_diagnostics(client: LanguageClient) -> None:
    await open_document(client, "agent x\n")
    waiter = asyncio.ensure_future(published(client, None))
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI))
    )
    assert await waiter == []
