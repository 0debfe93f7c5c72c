"""Document synchronisation end to end: the server's text follows the client's exactly, in
UTF-16, UTF-8 and UTF-32 positions, around astral characters and the line-like characters
(form feed, U+2028...) that LSP does not count as line breaks.

The server's text is not observable directly, so after every edit the test compares what the
server computes from it (diagnostics, semantic tokens, outline) with what it computes for a
fresh document opened with the client's text: any difference in the texts shows up there.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.support.edits import units

pytestmark = pytest.mark.asyncio(loop_scope="module")

# None: a client that names no encoding (VS Code) gets UTF-16, the protocol's default.
ENCODINGS = (None, "utf-8", "utf-32")
EMOJI = "\U0001f600"  # two UTF-16 code units, four UTF-8 bytes
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_names = itertools.count()


def lines(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each line's characters, lines split as LSP splits them."""
    found, start = [], 0
    for match in _LINE_BREAK.finditer(text):
        found.append((start, match.start()))
        start = match.end()
    found.append((start, len(text)))
    return found


def offset(text: str, position: types.Position, encoding: str) -> int:
    """The offset of a client position, clamped to its line as the protocol says."""
    spans = lines(text)
    if position.line >= len(spans):
        return len(text)
    start, end = spans[position.line]
    count = 0
    for index in range(start, end):
        if count >= position.character:
            return index
        count += units(text[index], encoding)
    return end


def position(text: str, at: int, encoding: str) -> types.Position:
    """The client position of offset ``at``."""
    for line, (start, end) in enumerate(lines(text)):
        if start <= at <= end:
            return types.Position(line=line, character=units(text[start:at], encoding))
    raise ValueError(at)


@dataclass
class Editor:
    """A client-side copy of one document, edited the way an editor edits it."""

    client: LanguageClient
    encoding: str
    root: Path

    def new_uri(self) -> str:
        return (self.root / f"sync-{next(_names)}.prose").as_uri()

    async def open(self, text: str) -> str:
        uri = self.new_uri()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="prose", version=1, text=text
                )
            )
        )
        return uri

    def change(
        self, uri: str, version: int, start: types.Position, end: types.Position, new_text: str
    ) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=start, end=end), text=new_text
                    )
                ],
            )
        )

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    async def view(self, uri: str) -> Any:
        """What the server derives from its text of ``uri``."""
        document = types.TextDocumentIdentifier(uri=uri)
        report = await self.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=document)
        )
        tokens = await self.client.text_document_semantic_tokens_full_async(
            types.SemanticTokensParams(text_document=document)
        )
        symbols = await self.client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=document)
        )
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        diagnostics = [(d.code, d.range, d.message) for d in report.items]
        return diagnostics, tokens.data if tokens else None, symbols

    async def fresh_view(self, text: str) -> Any:
        uri = await self.open(text)
        try:
            return await self.view(uri)
        finally:
            self.close(uri)


@pytest_lsp.fixture(
    scope="module",
    params=ENCODINGS,
    ids=["utf-16-by-default", "utf-8", "utf-32"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "openprose.lsp"]),
)
async def lsp(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, root: Path
) -> AsyncIterator[LanguageClient]:
    # A parameter of this fixture (not a fixture it asks for): pytest-lsp looks its
    # arguments up by name, so pytest would not start one server per encoding otherwise.
    capabilities = client_capabilities("visual-studio-code")  # pulls diagnostics
    if request.param is not None:
        capabilities.general = types.GeneralClientCapabilities(position_encodings=[request.param])
    elif capabilities.general is not None:
        capabilities.general.position_encodings = None
    encoding = request.param or "utf-16"
    result = await lsp_client.initialize_session(
        types.InitializeParams(capabilities=capabilities, root_uri=root.as_uri())
    )
    assert result.capabilities.position_encoding == encoding
    lsp_client.encoding = encoding  # type: ignore[attr-defined]
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sync")


@pytest.fixture(scope="module")
def editor(lsp: LanguageClient, root: Path) -> Editor:
    return Editor(lsp, lsp.encoding, root)  # type: ignore[attr-defined]


Step = Callable[[str], tuple[int, int, str]]


def insert(after: str, new_text: str, skip: int = 0) -> Step:
    """Insert ``new_text`` ``skip`` characters into the first occurrence of ``after``."""

    def step(text: str) -> tuple[int, int, str]:
        a = text.index(after) + skip
        return a, a, new_text

    return step


def replace(old: str, new_text: str) -> Step:
    """Replace the first occurrence of ``old``."""

    def step(text: str) -> tuple[int, int, str]:
        a = text.index(old)
        return a, a + len(old), new_text

    return step


async def typing_session(editor: Editor, text: str, steps: list[Step]) -> None:
    """Open ``text``, apply each step's edit (offsets into the text as it is then) and check
    after each that the server computes what it computes for a fresh document holding the
    client's text."""
    uri = await editor.open(text)
    try:
        for version, step in enumerate(steps, start=2):
            a, b, new_text = step(text)
            start = position(text, a, editor.encoding)
            end = position(text, b, editor.encoding)
            editor.change(uri, version, start, end, new_text)
            text = text[:a] + new_text + text[b:]
            assert await editor.view(uri) == await editor.fresh_view(text), (version, text)
    finally:
        editor.close(uri)


async def test_typing_around_astral_characters(editor: Editor) -> None:
    e = EMOJI
    await typing_session(
        editor,
        f'let x = "{e}ab"\nsession "{e}" {e}\n',
        [
            insert(f"{e}ab", "X", 1),  # the example: right after the emoji
            replace(e, "ok"),  # the emoji itself
            insert(f'" {e}', f"{e}{e}"),  # before a quote
            replace(f" {e}\n", "\n"),  # the stray emoji: E042 goes away
            insert(f"{e}{e}", "Q", 1),  # between two emojis
        ],
    )


async def test_typing_a_program_with_emojis_and_line_breaks(editor: Editor) -> None:
    e = EMOJI
    await typing_session(
        editor,
        f'session "{e}{e}"\n',
        [
            insert(f'{e}"', f" {e}x", 1),  # between an emoji and the quote
            insert(f"{e}{e}", "\n", 1),  # a line break after an emoji
            insert(f'"{e}', "\r\n", 1),  # a CRLF line break before an emoji
            insert(f"{e}x", f"{{y}} \u00e9{e}", 1),  # 2-byte and 4-byte characters
            replace(f'"\r\n{e}', '"'),  # across a line break and an emoji
            insert(f"{e}x", '"', 1),  # a quote after an emoji
        ],
    )


async def test_an_edit_past_the_end_of_a_line_is_clamped_to_it(editor: Editor) -> None:
    # The example: (0,8)-(0,99) replaced by "1" leaves `let x = 1`.
    text = 'let x = "abc"'
    uri = await editor.open(text)
    try:
        editor.change(
            uri,
            2,
            types.Position(line=0, character=8),
            types.Position(line=0, character=99),
            "1",
        )
        assert await editor.view(uri) == await editor.fresh_view("let x = 1")
    finally:
        editor.close(uri)


@pytest.mark.parametrize("separator", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029"])
async def test_characters_that_are_not_line_breaks_in_lsp(editor: Editor, separator: str) -> None:
    # Python's str.splitlines() breaks lines there; LSP (and our parser) does not.
    text = f'# a{separator}b\nlet x = "{separator}{EMOJI}c"\nsession "{{x}}"\n'
    await typing_session(
        editor,
        text,
        [insert("c", "Z"), insert("b", EMOJI, 1), replace("Zc", ""), insert(separator, "#", 1)],
    )


async def test_an_invalid_character_is_reported_in_client_units(editor: Editor) -> None:
    text = f'session "{EMOJI}" {EMOJI}\n'
    uri = await editor.open(text)
    try:
        diagnostics, _, _ = await editor.view(uri)
        (e042,) = [d for d in diagnostics if d[0] == "E042"]
        a = text.rindex(EMOJI)
        assert e042[1] == types.Range(
            start=position(text, a, editor.encoding), end=position(text, a + 1, editor.encoding)
        )
    finally:
        editor.close(uri)
