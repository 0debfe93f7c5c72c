"""Open documents: an incrementally parsed ``Document`` and analyses cached per version."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprose.diagnostics import Diagnostic
from openprose.ide.analysis import Analysis, analyze_document
from openprose.syntax import Document


@dataclass
class OpenDocument:
    uri: str
    path: Path | None
    document: Document
    version: int | None
    _analysis: Analysis | None = field(default=None, repr=False)
    # The diagnostics last published (or returned to a pull) and their version.
    published: tuple[int | None, list[Diagnostic]] | None = None
    pending: Any = None  # the debounce task, if one is waiting

    @property
    def text(self) -> str:
        return self.document.text

    def analysis(self) -> Analysis:
        """The analysis of the current text, built once per version."""
        current = self._analysis
        if current is None or current.version != self.version or current.text is not self.text:
            current = analyze_document(self.text, self.document.module, self.path, self.version)
            self._analysis = current
        return current

    def line_text(self, line: int) -> str:
        return self.document.line_text(line)


class Documents:
    def __init__(self) -> None:
        self._open: dict[str, OpenDocument] = {}

    def open(self, uri: str, text: str, version: int | None, path: Path | None) -> OpenDocument:
        doc = OpenDocument(uri, path, Document(text), version)
        self._open[uri] = doc
        return doc

    def get(self, uri: str) -> OpenDocument | None:
        return self._open.get(uri)

    def close(self, uri: str) -> OpenDocument | None:
        return self._open.pop(uri, None)

    def all(self) -> list[OpenDocument]:
        return list(self._open.values())
