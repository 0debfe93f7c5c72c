"""Converting between the ide layer's plain results and LSP types.

ide positions count code points; the client counts in its negotiated encoding (UTF-16 by
default, UTF-8 or UTF-32 when it asked), so every position goes through the line's text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from openprose.diagnostics import Diagnostic, Severity
from openprose.lsp.positions import to_client_units, to_code_points
from openprose.reference import code_url

if TYPE_CHECKING:
    # Not imported at run time: the server imports this module before answering
    # `initialize`, and making ide.types' classes costs ~20 ms (the formatter more).
    from openprose.format import TextEdit
    from openprose.ide import types as ide

LineText = Callable[[int], str]

SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}
SOURCE = "openprose"  # what editors show beside each diagnostic; ours are told apart by it
# Codes whose subject has no effect: editors grey it out.
UNNECESSARY = frozenset(("W010", "W013", "W031"))

COMPLETION_KIND: dict[ide.CompletionKind, types.CompletionItemKind] = {
    "agent": types.CompletionItemKind.Class,
    "block": types.CompletionItemKind.Function,
    "variable": types.CompletionItemKind.Variable,
    "parameter": types.CompletionItemKind.Variable,
    "property": types.CompletionItemKind.Property,
    "value": types.CompletionItemKind.EnumMember,
    "keyword": types.CompletionItemKind.Keyword,
    "snippet": types.CompletionItemKind.Snippet,
    "program": types.CompletionItemKind.Module,
    "input": types.CompletionItemKind.Field,
    "file": types.CompletionItemKind.File,
    "folder": types.CompletionItemKind.Folder,
}
SYMBOL_KIND: dict[ide.SymbolKind, types.SymbolKind] = {
    "agent": types.SymbolKind.Class,
    "block": types.SymbolKind.Function,
    "variable": types.SymbolKind.Variable,
    "constant": types.SymbolKind.Constant,
    "input": types.SymbolKind.Field,
    "output": types.SymbolKind.Property,
    "program": types.SymbolKind.Module,
    "property": types.SymbolKind.Property,
    "session": types.SymbolKind.Event,
    "statement": types.SymbolKind.Namespace,
    "option": types.SymbolKind.EnumMember,
    "parameter": types.SymbolKind.Variable,
}
HIGHLIGHT_KIND: dict[ide.HighlightKind, types.DocumentHighlightKind] = {
    "text": types.DocumentHighlightKind.Text,
    "read": types.DocumentHighlightKind.Read,
    "write": types.DocumentHighlightKind.Write,
}
FOLDING_KIND: dict[ide.FoldingKind, types.FoldingRangeKind] = {
    "comment": types.FoldingRangeKind.Comment,
    "region": types.FoldingRangeKind.Region,
}
# Our semantic token types as the standard LSP types themes colour.
TOKEN_TYPE: dict[ide.TokenType, str] = {
    "agent": "class",
    "block": "function",
    "variable": "variable",
    "parameter": "parameter",
    "property": "property",
    "keyword": "keyword",
    "string": "string",
    "interpolation": "variable",
    "discretion": "regexp",
    "comment": "comment",
    "number": "number",
    "operator": "operator",
    "program": "namespace",
}
LEGEND_TYPES = list(dict.fromkeys(TOKEN_TYPE.values()))
LEGEND_MODIFIERS: list[ide.TokenModifier] = ["declaration", "readonly"]


class Positions:
    """Position conversion for one document in the negotiated encoding."""

    def __init__(self, line_text: LineText, encoding: str) -> None:
        self.line_text = line_text
        self.encoding = encoding

    def to_client(self, pos: ide.Pos) -> types.Position:
        line, character = pos
        line = max(line, 0)
        return types.Position(
            line=line, character=to_client_units(self.line_text(line), character, self.encoding)
        )

    def from_client(self, position: types.Position) -> ide.Pos:
        line = max(position.line, 0)
        text = self.line_text(line)
        return line, to_code_points(text, max(position.character, 0), self.encoding)

    def range(self, value: ide.Range) -> types.Range:
        return self.span(value.start, value.end)

    def span(self, start: ide.Pos, end: ide.Pos) -> types.Range:
        return types.Range(start=self.to_client(start), end=self.to_client(end))

    def from_range(self, value: types.Range) -> ide.Range:
        from openprose.ide.types import Range

        return Range(self.from_client(value.start), self.from_client(value.end))

    def units(self, line: int, start: int, length: int) -> tuple[int, int]:
        """Client (start, length) of a code-point span on one line."""
        text = self.line_text(line)
        begin = to_client_units(text, start, self.encoding)
        end = to_client_units(text, start + length, self.encoding)
        return begin, end - begin


# ---------------------------------------------------------------- diagnostics


def _span(positions: Positions, start: tuple[int, int], end: tuple[int, int]) -> types.Range:
    """The client's range of a span in parso positions (1-based lines)."""
    return positions.span((start[0] - 1, start[1]), (end[0] - 1, end[1]))


def diagnostic(
    d: Diagnostic, positions: Positions, uri: str, reference: str | None = None
) -> types.Diagnostic:
    """``reference``: the URL of the diagnostics reference codes link into (by default this
    version's on GitHub); "" for no links."""
    related = []
    for r in d.related:
        if r.path is None:
            where = _span(positions, r.start, r.end)
        else:  # another file: its columns are sent as code points
            where = types.Range(
                start=types.Position(line=r.start[0] - 1, character=r.start[1]),
                end=types.Position(line=r.end[0] - 1, character=r.end[1]),
            )
        related.append(
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=_uri_for(r.path) or uri, range=where),
                message=r.message,
            )
        )
    href = code_url(d.code, reference) if reference != "" else None
    return types.Diagnostic(
        range=_span(positions, d.start, d.end),
        message=d.message,
        severity=SEVERITY[d.severity],
        code=d.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        related_information=related or None,
        tags=[types.DiagnosticTag.Unnecessary] if d.code in UNNECESSARY else None,
    )


class ConvertedDiagnostics:
    """One document's diagnostics as sent to the client, each converted once.

    Most diagnostics of a keystroke are those of the keystroke before (an incremental
    analysis keeps those of the parts of a program an edit did not reach; the rules over
    the whole program find the same ones again), so a keystroke converts only the new
    ones. A conversion is kept by the diagnostic's value and the text of the lines its
    places lie on (a column in UTF-16 depends on the text before it)."""

    def __init__(self) -> None:
        self._known: dict[Diagnostic, _Converted] = {}
        self._settings: tuple[str, str | None] | None = None
        self._last: list[_Converted] = []

    def convert(
        self,
        found: list[Diagnostic],
        positions: Positions,
        uri: str,
        reference: str | None,
        ascii_text: bool = False,
    ) -> list[types.Diagnostic]:
        """``ascii_text``: the document is ASCII, so every column is the same in every
        encoding and no conversion depends on the text of its lines."""
        if self._settings != (positions.encoding, reference):
            self._settings = (positions.encoding, reference)
            self._known = {}
        known = self._known
        kept: dict[Diagnostic, _Converted] = {}
        last = []
        for d in found:
            lines = () if ascii_text else tuple(positions.line_text(n - 1) for n in _lines(d))
            entry = known.get(d)
            if entry is None or entry.lines != lines:
                entry = _Converted(d, lines, diagnostic(d, positions, uri, reference))
            kept[d] = entry
            last.append(entry)
        self._known = kept
        self._last = last
        return [entry.converted for entry in last]

    def publication(self, uri: str, version: int | None, unstructure: Callable[[Any], Any]) -> str:
        """The JSON of the publishDiagnostics notification of the last ``convert``, each
        diagnostic serialised once (as ``unstructure``, the protocol's converter, makes it)."""
        parts = []
        for entry in self._last:
            if entry.json is None:
                entry.json = json.dumps(unstructure(entry.converted))
            parts.append(entry.json)
        return (
            f'{{"jsonrpc": "2.0", "method": "{types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS}", '
            f'"params": {{"uri": {json.dumps(uri)}, "version": {json.dumps(version)}, '
            f'"diagnostics": [{", ".join(parts)}]}}}}'
        )


class _Converted:
    """One diagnostic as converted for the client (and serialised, once asked)."""

    __slots__ = ("converted", "json", "lines", "source")

    def __init__(self, source: Diagnostic, lines: tuple[str, ...], converted: types.Diagnostic):
        self.source = source
        self.lines = lines
        self.converted = converted
        self.json: str | None = None


def _lines(d: Diagnostic) -> list[int]:
    """The lines (1-based) of a diagnostic's places in its own file."""
    lines = [d.start[0], d.end[0]]
    for r in d.related:
        if r.path is None:
            lines += (r.start[0], r.end[0])
    return lines


def from_client_diagnostic(d: types.Diagnostic, positions: Positions) -> Diagnostic | None:
    """One of our diagnostics as the client sent it back (in a code action request), in
    the ide's terms; None for another tool's."""
    if d.source != SOURCE or not isinstance(d.code, str):
        return None
    start = positions.from_client(d.range.start)
    end = positions.from_client(d.range.end)
    severity = Severity(d.severity) if d.severity is not None else Severity.ERROR
    return Diagnostic(d.code, d.message, severity, (start[0] + 1, start[1]), (end[0] + 1, end[1]))


def _uri_for(path: str | None) -> str | None:
    return Path(path).resolve().as_uri() if path else None


# ---------------------------------------------------------------- features


def text_edits(edits: Iterable[TextEdit], positions: Positions) -> list[types.TextEdit]:
    return [types.TextEdit(range=positions.span(e.start, e.end), new_text=e.text) for e in edits]


def completion_item(item: ide.CompletionItem, positions: Positions) -> types.CompletionItem:
    insert = item.insert_text if item.insert_text is not None else item.label
    edit = None
    if item.replace is not None:
        edit = types.TextEdit(range=positions.range(item.replace), new_text=insert)
    return types.CompletionItem(
        label=item.label,
        kind=COMPLETION_KIND.get(item.kind, types.CompletionItemKind.Text),
        detail=item.detail or None,
        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=item.documentation)
        if item.documentation
        else None,
        insert_text=None if edit else insert,
        insert_text_format=types.InsertTextFormat.Snippet
        if item.snippet
        else types.InsertTextFormat.PlainText,
        text_edit=edit,
        sort_text=item.sort_text,
        filter_text=item.label,
    )


def document_symbol(symbol: ide.Symbol, positions: Positions) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=symbol.name or "(unnamed)",
        kind=SYMBOL_KIND.get(symbol.kind, types.SymbolKind.Object),
        range=positions.range(symbol.range),
        selection_range=positions.range(symbol.selection_range),
        detail=symbol.detail or None,
        children=[document_symbol(c, positions) for c in symbol.children] or None,
    )


def selection(chain: ide.Selection, positions: Positions) -> types.SelectionRange:
    parent: types.SelectionRange | None = None
    for value in reversed(chain.ranges):
        parent = types.SelectionRange(range=positions.range(value), parent=parent)
    assert parent is not None
    return parent


def semantic_tokens(
    tokens: Iterable[ide.SemanticToken], positions: Positions, type_names: list[str]
) -> list[int]:
    """The relative five-integer encoding, in the client's units."""
    data: list[int] = []
    previous_line = 0
    previous_start = 0
    for token in tokens:
        lsp_type = TOKEN_TYPE.get(token.type)
        if lsp_type is None:
            continue
        start, length = positions.units(token.line, token.start, token.length)
        if length <= 0:
            continue
        delta_line = token.line - previous_line
        delta_start = start - previous_start if delta_line == 0 else start
        modifiers = 0
        for i, name in enumerate(LEGEND_MODIFIERS):
            if name in token.modifiers:
                modifiers |= 1 << i
        data += [delta_line, delta_start, length, type_names.index(lsp_type), modifiers]
        previous_line, previous_start = token.line, start
    return data


def markdown(text: str) -> types.MarkupContent:
    return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)


def location(
    value: ide.Location, uri: str, positions_for: Callable[[str | None], Positions]
) -> types.Location:
    target = uri if value.path is None else Path(value.path).resolve().as_uri()
    return types.Location(uri=target, range=positions_for(value.path).range(value.range))
