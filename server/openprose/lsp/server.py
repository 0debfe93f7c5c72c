"""``prose-ls``: the OpenProse language server.

Today it keeps an incrementally parsed ``Document`` per open file and publishes the
syntax diagnostics on every change; editor features arrive with the ide layer.
Internal failures are logged, never shown to the user as pop-ups.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer

from openprose import __version__
from openprose.checking import check_module
from openprose.diagnostics import Diagnostic, Severity
from openprose.lsp.positions import UTF16, to_client_units, to_code_points
from openprose.syntax import Document

log = logging.getLogger(__name__)

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


class ProseLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("prose-ls", __version__)
        self.documents: dict[str, Document] = {}

    @property
    def encoding(self) -> str:
        return str(self.workspace.position_encoding or UTF16)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Log internal failures instead of showing the user a pop-up; keep serving.
        log.error("internal error (%s): %r", getattr(source, "__name__", source), error)

    def publish(self, uri: str, version: int | None) -> None:
        document = self.documents.get(uri)
        diagnostics = []
        if document is not None:
            # A file on disk gets the cross-file rules (imported programs' contracts).
            path = uris.to_fs_path(uri) if uri.startswith("file:") else None
            found = check_module(document.module, path, text=document.text)
            diagnostics = self.to_lsp(document, found)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    def to_lsp(self, document: Document, diagnostics: list[Diagnostic]) -> list[types.Diagnostic]:
        return [
            types.Diagnostic(
                range=self.to_range(document, d.start, d.end),
                message=d.message,
                severity=_SEVERITY[d.severity],
                code=d.code,
                source="openprose",
            )
            for d in diagnostics
        ]

    def to_range(self, document: Document, start: Any, end: Any) -> types.Range:
        return types.Range(
            start=self.to_position(document, start), end=self.to_position(document, end)
        )

    def to_position(self, document: Document, position: tuple[int, int]) -> types.Position:
        line = position[0] - 1
        character = to_client_units(document.line_text(line), position[1], self.encoding)
        return types.Position(line=line, character=character)

    def from_position(self, document: Document, position: types.Position) -> tuple[int, int]:
        column = to_code_points(
            document.line_text(position.line), position.character, self.encoding
        )
        return position.line, column


server = ProseLanguageServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: ProseLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    ls.documents[item.uri] = Document(item.text)
    ls.publish(item.uri, item.version)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ProseLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    document = ls.documents.get(uri)
    if document is None:
        return
    for change in params.content_changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            start = ls.from_position(document, change.range.start)
            end = ls.from_position(document, change.range.end)
            document.apply_edit(start, end, change.text)
        else:
            document.replace(change.text)
    ls.publish(uri, params.text_document.version)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: ProseLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.documents.pop(uri, None)
    ls.publish(uri, None)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="prose-ls", description="OpenProse language server")
    parser.add_argument("--version", action="version", version=f"prose-ls {__version__}")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (default)")
    parser.add_argument("--tcp", action="store_true", help="listen on a TCP port instead")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2087)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
