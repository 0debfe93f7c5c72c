"""The JSON-RPC side of prose-ls: pygls' protocol, with the rules it does not keep.

- Document synchronisation is ours alone: pygls' workspace copy of each document is not
  kept, because keeping it rewrites the client's edit ranges in place (clamping them to
  lines it splits at characters LSP does not break lines at) before our handler sees them.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol, lsp_method


class ProseProtocol(LanguageServerProtocol):
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Any:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Any:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None
