"""A program that imports another is checked against the imported program as the editor has
it (unsaved edits included), and checked again when that program changes, is saved or is
closed: pushed to a client that takes pushed diagnostics, and for a client that pulls them,
announced with workspace/diagnostic/refresh when it supports that."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

pytestmark = pytest.mark.asyncio(loop_scope="module")

CHILD = 'input topic: "What to summarise"\noutput summary = session "Summarise {topic}"\n'
# The child with a second input, added as the line after the first.
DEPTH_LINE = 'input depth: "How deep to go"\n'
PARENT = 'use "./child" as child\nlet r = child(topic: "tides", depth: "deep")\n'


def pushing() -> types.ClientCapabilities:
    return client_capabilities("visual-studio-code")  # pytest-lsp's VS Code 1.65: pushed


def pulling(refresh: bool) -> types.ClientCapabilities:
    capabilities = client_capabilities("neovim")  # Neovim 0.11 pulls
    assert capabilities.text_document and capabilities.text_document.diagnostic
    if refresh:  # what VS Code's current client adds
        capabilities.workspace = capabilities.workspace or types.WorkspaceClientCapabilities()
        capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(
            refresh_support=True
        )
    return capabilities


CLIENTS = {
    "push": pushing(),
    "pull-with-refresh": pulling(True),
    "pull-without-refresh": pulling(False),
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("importers")


# The kind is a parameter of the server fixture itself (see conftest.py: pytest-lsp's
# fixture would not start a new server for a parametrized fixture it depends on).
@pytest_lsp.fixture(
    scope="module",
    params=sorted(CLIENTS),
    config=ClientServerConfig(server_command=[sys.executable, "-m", "openprose.lsp"]),
)
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, root: Path
) -> AsyncIterator[LanguageClient]:
    kind = request.param
    _kinds[id(lsp_client)] = kind
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=CLIENTS[kind],
            root_uri=root.as_uri(),
            initialization_options={"debounce": 20},
        )
    )
    yield lsp_client
    await lsp_client.shutdown_session()


_kinds: dict[int, str] = {}  # the live clients' kinds


class Pushes(dict[str, Any]):
    """The client's pushed diagnostics by URI, counting the pushes (a push of the same
    empty list as before is a push too)."""

    def __init__(self) -> None:
        super().__init__()
        self.count: dict[str, int] = {}

    def __setitem__(self, uri: str, diagnostics: Any) -> None:
        self.count[uri] = self.count.get(uri, 0) + 1
        super().__setitem__(uri, diagnostics)


class Editor:
    """The client side of one test: a folder with a child program and a parent importing it."""

    def __init__(self, client: LanguageClient, kind: str, folder: Path) -> None:
        self.client = client
        self.kind = kind
        if not isinstance(client.diagnostics, Pushes):
            client.diagnostics = Pushes()
        self.pushes: Pushes = client.diagnostics
        folder.mkdir()
        self.child = folder / "child.prose"
        self.child.write_text(CHILD, encoding="utf-8")
        self.parent = folder / "parent.prose"
        self.parent.write_text(PARENT, encoding="utf-8")
        self.child_version = 1

    def uri(self, path: Path) -> str:
        return path.as_uri()

    def open(self, path: Path) -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=self.uri(path),
                    language_id="prose",
                    version=1,
                    text=path.read_text(encoding="utf-8"),
                )
            )
        )

    def edit_child(self, line: int, end_line: int, text: str) -> None:
        self.child_version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=self.uri(self.child), version=self.child_version
                ),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=line, character=0),
                            end=types.Position(line=end_line, character=0),
                        ),
                        text=text,
                    )
                ],
            )
        )

    def save_child(self, text: str) -> None:
        self.child.write_text(text, encoding="utf-8")
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri(self.child))
            )
        )

    def close_child(self) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri(self.child))
            )
        )

    async def pull(self) -> list[str]:
        report = await self.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri(self.parent))
            )
        )
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        return [str(d.code) for d in report.items]

    async def after(self, action: Callable[[], None], changes: bool = True) -> list[str]:
        """The parent's codes after ``action`` (done here) changed the child, once the server
        has told the client (pushed them, or asked for a pull); a client that is told nothing
        pulls until they change (``changes``: they are expected to)."""
        uri = self.uri(self.parent)
        pushed = self.pushes.count.get(uri, 0)
        refreshes = self.client.diagnostic_refresh_count
        action()

        async def told() -> list[str]:
            if self.kind == "push":
                while self.pushes.count.get(uri, 0) == pushed:
                    await asyncio.sleep(0.01)
                return [str(d.code) for d in self.pushes[uri]]
            if self.kind == "pull-with-refresh":
                while self.client.diagnostic_refresh_count == refreshes:
                    await asyncio.sleep(0.01)
                return await self.pull()
            if not changes:
                return await self.pull()
            while (codes := await self.pull()) == self.last:
                await asyncio.sleep(0.02)
            return codes

        self.last = await asyncio.wait_for(told(), 10)
        return self.last

    async def start(self) -> list[str]:
        """Open the parent and return its first diagnostics."""
        uri = self.uri(self.parent)
        self.open(self.parent)
        if self.kind == "push":

            async def pushed() -> None:
                while uri not in self.client.diagnostics:
                    await asyncio.sleep(0.01)

            await asyncio.wait_for(pushed(), 10)
            self.last = [str(d.code) for d in self.client.diagnostics[uri]]
        else:
            self.last = await self.pull()
        return self.last


_folders = iter(range(1000))


@pytest.fixture
def editor(client: LanguageClient, root: Path) -> Editor:
    return Editor(client, _kinds[id(client)], root / f"case{next(_folders)}")


async def test_unsaved_edits_of_an_imported_program_reach_its_importer(editor: Editor) -> None:
    assert await editor.start() == ["E027"]  # `depth` is not an input of the child
    assert await editor.after(lambda: editor.open(editor.child), changes=False) == ["E027"]
    # The child gains the input in the editor, not on disk: the parent is checked against it.
    assert await editor.after(lambda: editor.edit_child(1, 1, DEPTH_LINE)) == []
    # And loses it again.
    assert await editor.after(lambda: editor.edit_child(1, 2, "")) == ["E027"]


async def test_saving_and_closing_the_imported_program(editor: Editor) -> None:
    assert await editor.start() == ["E027"]
    assert await editor.after(lambda: editor.open(editor.child), changes=False) == ["E027"]
    assert await editor.after(lambda: editor.edit_child(1, 1, DEPTH_LINE)) == []
    # Saved: still clean, now from the file as well.
    saved = CHILD.replace("\n", "\n" + DEPTH_LINE, 1)
    assert await editor.after(lambda: editor.save_child(saved), changes=False) == []
    # An unsaved removal makes it wrong again; closing without saving puts the file back.
    assert await editor.after(lambda: editor.edit_child(1, 2, "")) == ["E027"]
    assert await editor.after(editor.close_child) == []


async def test_a_file_that_appears_in_the_editor_is_found(editor: Editor) -> None:
    """A new program open in the editor but never saved is what the import names."""
    editor.child.unlink()
    assert await editor.start() == ["E072"]  # not found

    def open_unsaved() -> None:
        editor.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=editor.uri(editor.child),
                    language_id="prose",
                    version=1,
                    text=CHILD + DEPTH_LINE,
                )
            )
        )

    assert await editor.after(open_unsaved) == []
    assert await editor.after(editor.close_child) == ["E072"]
