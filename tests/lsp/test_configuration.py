"""Settings from initializationOptions and workspace/didChangeConfiguration reach the rules."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

pytestmark = pytest.mark.asyncio(loop_scope="module")
URI = "file:///tmp/configured.prose"
TEXT = 'session "a"\n  backoff: linear\nsession ""\n'  # W031 and W001


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "openprose.lsp"]),
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"ignore": ["W031"], "debounce": 10},
        )
    )
    yield lsp_client
    await lsp_client.shutdown_session()


async def published(client: LanguageClient) -> list[types.Diagnostic]:
    for _ in range(50):
        params = await asyncio.wait_for(
            client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10
        )
        if params.uri == URI:
            return list(params.diagnostics)
    raise AssertionError("no diagnostics")


async def test_initialization_options_and_configuration_changes(client: LanguageClient) -> None:
    waiter = asyncio.ensure_future(published(client))
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=URI, language_id="prose", version=1, text=TEXT)
        )
    )
    assert [d.code for d in await waiter] == ["W001"]  # W031 ignored by the options
    waiter = asyncio.ensure_future(published(client))
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"prose": {"severity": {"W001": "error"}}})
    )
    diagnostics = await waiter
    assert sorted((d.code, d.severity) for d in diagnostics) == [
        ("W001", types.DiagnosticSeverity.Error),
        ("W031", types.DiagnosticSeverity.Warning),
    ]


async def test_rejected_settings_are_shown_to_the_user_and_change_nothing(
    client: LanguageClient,
) -> None:
    # Follows the test above: W001 is an error, and URI is open.
    shown = len(client.messages)
    waiter = asyncio.ensure_future(published(client))
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"prose": {"ignore": ["E001", "W001"]}})
    )
    diagnostics = await waiter
    assert sorted((d.code, d.severity) for d in diagnostics) == [
        ("W001", types.DiagnosticSeverity.Error),
        ("W031", types.DiagnosticSeverity.Warning),
    ]
    [message] = client.messages[shown:]
    assert message.type == types.MessageType.Warning
    assert "E001" in message.message and "not applied" in message.message


PULL_URI = "file:///tmp/pulled.prose"


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "openprose.lsp"]),
)
async def pulling_client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    capabilities = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            diagnostic=types.DiagnosticClientCapabilities()
        ),
        workspace=types.WorkspaceClientCapabilities(
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
        ),
    )
    await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities))
    yield lsp_client
    await lsp_client.shutdown_session()


async def test_a_configuration_change_asks_a_pulling_client_to_pull_again(
    pulling_client: LanguageClient,
) -> None:
    async def refreshed() -> None:
        # pytest-lsp answers workspace/diagnostic/refresh itself and counts the requests.
        while pulling_client.diagnostic_refresh_count == 0:
            await asyncio.sleep(0.01)

    async def pull() -> list[tuple[str, types.DiagnosticSeverity | None]]:
        report = await pulling_client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(PULL_URI))
        )
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        return sorted((str(d.code), d.severity) for d in report.items)

    pulling_client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=PULL_URI, language_id="prose", version=1, text=TEXT
            )
        )
    )
    assert await pull() == [
        ("W001", types.DiagnosticSeverity.Warning),
        ("W031", types.DiagnosticSeverity.Warning),
    ]
    assert pulling_client.diagnostic_refresh_count == 0
    pulling_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"prose": {"severity": {"W001": "error"}}})
    )
    await asyncio.wait_for(refreshed(), 10)
    assert await pull() == [
        ("W001", types.DiagnosticSeverity.Error),
        ("W031", types.DiagnosticSeverity.Warning),
    ]
