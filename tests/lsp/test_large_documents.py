"""Large documents: formatting one never holds up the requests on other documents, and above
the ``large-file-size`` setting formatting and code actions answer with nothing (saying so
once) instead of computing for minutes."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from openprose.format import format_text
from tests.support.edits import apply_edits, from_lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")
LIMIT = 2000  # characters, set through the initialization options


def program(units: int) -> str:
    """A badly indented program (four spaces) of ``units`` agents with a session each."""
    return "".join(
        f'agent a{i}:\n    model: sonnet\n    prompt: "Review part {i}"\n'
        f'let r{i} = session: a{i}\n    prompt: "Go"\n'
        for i in range(units)
    )


# About 300,000 characters: formatting it takes a large fraction of a second here, a hover
# on a small document a millisecond.
LARGE = program(3000)
SMALL = 'agent writer:\n  model: sonnet\nsession: writer\n  prompt: "x"\n'
# A reassigned `const`: a quick fix and a fix-all action, on its last line.
FIXABLE = 'const c = session "a"\nc = session "b"\n'
OPTIONS = types.FormattingOptions(tab_size=2, insert_spaces=True)


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "openprose.lsp"]),
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"large-file-size": len(LARGE) + 1},
        )
    )
    yield lsp_client
    await lsp_client.shutdown_session()


def open_document(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="prose", version=1, text=text)
        )
    )


async def test_a_hover_is_answered_while_a_large_document_is_formatted(
    client: LanguageClient,
) -> None:
    large, small = "file:///tmp/large-1.prose", "file:///tmp/small-1.prose"
    open_document(client, large, LARGE)
    open_document(client, small, SMALL)
    order: list[str] = []
    # Tasks start in the order they are made: the formatting request is sent first.
    formatting = asyncio.ensure_future(
        client.text_document_formatting_async(
            types.DocumentFormattingParams(
                text_document=types.TextDocumentIdentifier(uri=large), options=OPTIONS
            )
        )
    )
    formatting.add_done_callback(lambda _: order.append("formatting"))
    hover = asyncio.ensure_future(
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=small),
                position=types.Position(line=2, character=10),
            )
        )
    )
    hover.add_done_callback(lambda _: order.append("hover"))
    edits = await asyncio.wait_for(formatting, 120)
    found = await asyncio.wait_for(hover, 10)
    assert order == ["hover", "formatting"]
    assert found is not None and "writer" in str(found.contents)
    assert apply_edits(LARGE, from_lsp(LARGE, edits or [], "utf-16")) == format_text(LARGE).text


async def test_formatting_of_a_text_changed_meanwhile_is_dropped(client: LanguageClient) -> None:
    uri = "file:///tmp/large-3.prose"
    open_document(client, uri, LARGE)
    formatting = asyncio.ensure_future(
        client.text_document_formatting_async(
            types.DocumentFormattingParams(
                text_document=types.TextDocumentIdentifier(uri=uri), options=OPTIONS
            )
        )
    )
    # A hover answered after the formatting request was read: formatting has started.
    small = "file:///tmp/small-3.prose"
    open_document(client, small, SMALL)
    await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=small),
            position=types.Position(line=2, character=10),
        )
    )
    assert not formatting.done()
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=SMALL)],
        )
    )
    # Edits computed for the large text would wreck the small one: none are sent.
    sent = await asyncio.wait_for(formatting, 120)
    assert list(sent or []) == []


async def test_above_the_limit_formatting_and_code_actions_answer_nothing_and_say_so_once(
    client: LanguageClient,
) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"prose": {"large-file-size": LIMIT}})
    )
    text = program(LIMIT // 80) + FIXABLE  # a little over the limit
    assert len(text) > LIMIT
    uri = "file:///tmp/large-2.prose"
    open_document(client, uri, text)
    document = types.TextDocumentIdentifier(uri=uri)
    before = len(client.messages)
    for _ in range(2):
        edits = await client.text_document_formatting_async(
            types.DocumentFormattingParams(text_document=document, options=OPTIONS)
        )
        assert list(edits or []) == []
        ranged = await client.text_document_range_formatting_async(
            types.DocumentRangeFormattingParams(
                text_document=document,
                range=types.Range(
                    start=types.Position(line=0, character=0),
                    end=types.Position(line=3, character=0),
                ),
                options=OPTIONS,
            )
        )
        assert list(ranged or []) == []
        assert await code_actions(client, uri, text.count("\n") - 1) == []
    told = [m.message for m in client.messages[before:]]
    assert len(told) == 1 and "large-2.prose" in told[0] and "large-file-size" in told[0]
    # A small document is still formatted and fixed.
    small = "file:///tmp/small-2.prose"
    open_document(client, small, "agent  a:\n    model: sonnet\n" + FIXABLE)
    edits = await client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=small), options=OPTIONS
        )
    )
    unformatted = "agent  a:\n    model: sonnet\n" + FIXABLE
    assert apply_edits(unformatted, from_lsp(unformatted, edits or [], "utf-16")) == (
        "agent a:\n  model: sonnet\n" + FIXABLE
    )
    assert len(await code_actions(client, small, 3)) == 2  # the quick fix and fix all


async def code_actions(client: LanguageClient, uri: str, line: int) -> list[object]:
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=line, character=0),
                end=types.Position(line=line, character=0),
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return list(actions or [])


class Published(dict[str, Any]):
    """In place of the client's ``diagnostics`` (uri -> the last published): it also keeps,
    in order, the uri and codes of every publication."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, list[str]]] = []

    def __setitem__(self, uri: str, diagnostics: Any) -> None:
        super().__setitem__(uri, diagnostics)
        self.log.append((uri, [str(d.code) for d in diagnostics]))


async def published_for(client: LanguageClient, uri: str, count: int = 1) -> None:
    """Wait until ``uri``'s diagnostics were published ``count`` times in all."""
    recorded: Published = client.diagnostics  # type: ignore[assignment]
    for _ in range(2400):
        if sum(1 for u, _ in recorded.log if u == uri) >= count:
            return
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no diagnostics published for {uri}")


async def test_a_hover_is_answered_while_a_large_document_is_analysed(
    client: LanguageClient,
) -> None:
    client.diagnostics = recorded = Published()
    large, small = "file:///tmp/large-4.prose", "file:///tmp/small-4.prose"
    open_document(client, small, SMALL)
    await published_for(client, small)
    open_document(client, large, LARGE)
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=small),
                position=types.Position(line=2, character=10),
            )
        ),
        10,
    )
    answered_before = [u for u, _ in recorded.log]
    await published_for(client, large)
    assert hover is not None and "writer" in str(hover.contents)
    # The hover came while the large document was still being analysed.
    assert large not in answered_before


async def test_an_analysis_made_stale_by_an_edit_is_given_up(client: LanguageClient) -> None:
    client.diagnostics = recorded = Published()
    uri = "file:///tmp/large-5.prose"
    open_document(client, uri, LARGE)
    # A hover answered after the open was read: the large document's analysis has begun.
    small = "file:///tmp/small-5.prose"
    open_document(client, small, SMALL)
    await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=small),
            position=types.Position(line=2, character=10),
        )
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=FIXABLE)],
        )
    )
    await published_for(client, uri)
    await asyncio.sleep(0.5)  # a late publication of the first version would show now
    # Only the second version's diagnostics were ever published: the first version's
    # analysis was given up when the edit came.
    assert [codes for u, codes in recorded.log if u == uri] == [["E048"]]
