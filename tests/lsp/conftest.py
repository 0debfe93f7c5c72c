"""The real server over stdio, for each client capability set and position encoding.

One server per (client, encoding) pair and test module; every test opens its own
documents (unique URIs), so tests do not see each other's state.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.support.cursor import cursor
from tests.support.edits import units

CLIENTS = ("visual-studio-code", "neovim")
ENCODINGS = ("utf-16", "utf-8")

_counter = itertools.count()


@dataclass
class Session:
    """A client talking to a live server, with helpers that speak in code points."""

    client: LanguageClient
    name: str
    encoding: str
    root: Path
    pulls: bool
    # What the server advertised in its initialize result (trigger characters, legend...).
    server: types.ServerCapabilities

    def uri(self, stem: str = "doc") -> str:
        return (self.root / f"{stem}-{next(_counter)}.prose").as_uri()

    def position(self, text: str, line: int, character: int) -> types.Position:
        """A client position for a code-point (line, character) in ``text``."""
        line_text = text.split("\n")[line]
        return types.Position(line=line, character=units(line_text[:character], self.encoding))

    def at_cursor(self, text: str) -> tuple[str, types.Position]:
        """``text`` without its cursor marker, and the client position where it was."""
        clean, (line, column) = cursor(text)
        return clean, self.position(clean, line, column)

    def doc(self, uri: str) -> types.TextDocumentIdentifier:
        return types.TextDocumentIdentifier(uri=uri)

    async def open(self, text: str, uri: str | None = None) -> tuple[str, list[types.Diagnostic]]:
        """Open a document and return its URI and its first diagnostics."""
        uri = uri or self.uri()
        waiter = None if self.pulls else asyncio.ensure_future(self.published(uri, 1))
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="prose", version=1, text=text
                )
            )
        )
        if waiter is not None:
            return uri, await waiter
        return uri, await self.pull(uri)

    async def change(
        self, uri: str, version: int, start: types.Position, end: types.Position, text: str
    ) -> list[types.Diagnostic]:
        waiter = None if self.pulls else asyncio.ensure_future(self.published(uri, version))
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=start, end=end), text=text
                    )
                ],
            )
        )
        if waiter is not None:
            return await waiter
        return await self.pull(uri)

    async def published(self, uri: str, version: int | None) -> list[types.Diagnostic]:
        """Wait for pushed diagnostics of ``uri`` at ``version``."""
        for _ in range(100):
            params = await asyncio.wait_for(
                self.client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10
            )
            if params.uri == uri and params.version == version:
                return list(params.diagnostics)
        raise AssertionError(f"no diagnostics for {uri} version {version}")

    async def pull(self, uri: str) -> list[types.Diagnostic]:
        report = await self.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=self.doc(uri))
        )
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        return list(report.items)


def _capabilities(name: str, encoding: str) -> types.ClientCapabilities:
    capabilities = client_capabilities(name)
    if capabilities.general is None:
        capabilities.general = types.GeneralClientCapabilities()
    capabilities.general.position_encodings = [encoding]
    return capabilities


PAIRS = [(c, e) for c in CLIENTS for e in ENCODINGS]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    (root / "library.prose").write_text(
        'input topic: "What to research"\noutput findings = session "Research {topic}"\n',
        encoding="utf-8",
    )
    (root / "tools").mkdir()
    (root / "tools" / "helpers.prose").write_text(
        "agent librarian:\n  model: haiku\n\nblock catalogue(shelf):\n"
        '  session: librarian\n    prompt: "List {shelf}"\n',
        encoding="utf-8",
    )
    return root


# The pair is a parameter of the server fixture itself: pytest-lsp's fixture asks for the
# fixtures it needs at run time, so a parametrized fixture it depends on would not start a
# new server per pair (every pair would share the first pair's server).
@pytest_lsp.fixture(
    scope="module",
    params=PAIRS,
    ids=[f"{c}-{e}" for c, e in PAIRS],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "openprose.lsp"]),
)
async def lsp(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path
) -> AsyncIterator[LanguageClient]:
    name, encoding = request.param
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=_capabilities(name, encoding),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="workspace")],
            initialization_options={"debounce": 20},
        )
    )
    _started[id(lsp_client)] = (name, encoding, result.capabilities)
    yield lsp_client
    await lsp_client.shutdown_session()


# The live clients' (client, encoding) pairs and what their server said it can do.
_started: dict[int, tuple[str, str, types.ServerCapabilities]] = {}


@pytest.fixture(scope="module")
def session(lsp: LanguageClient, workspace: Path) -> Session:
    name, encoding, server = _started[id(lsp)]
    assert server.position_encoding == encoding  # the server took the one offered
    capabilities = _capabilities(name, encoding)
    pulls = bool(capabilities.text_document and capabilities.text_document.diagnostic)
    return Session(lsp, name, encoding, workspace, pulls, server)
