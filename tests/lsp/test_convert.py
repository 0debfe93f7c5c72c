"""lsp/convert.py on its own: positions in each encoding, diagnostics both ways, the
semantic token encoding, and the other conversions the handlers rely on."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types

from openprose.diagnostics import Diagnostic, Related, Severity
from openprose.format import TextEdit
from openprose.ide import analyze_document
from openprose.ide import types as ide
from openprose.ide.semantic_tokens import semantic_tokens
from openprose.lsp import convert
from tests.corpus import location
from tests.support.characters import ASTRAL

E_ACUTE = "\u00e9"  # 1 code point, 1 UTF-16 unit, 2 UTF-8 bytes
LINES = [f"a{ASTRAL}b{E_ACUTE}c", "plain", ""]


def positions(encoding: str, lines: list[str] = LINES) -> convert.Positions:
    return convert.Positions(lambda n: lines[n] if 0 <= n < len(lines) else "", encoding)


# --------------------------------------------------------------------------- positions


@pytest.mark.parametrize(
    ("encoding", "columns"),
    [
        ("utf-16", [0, 1, 3, 4, 5, 6]),
        ("utf-8", [0, 1, 5, 6, 8, 9]),
        ("utf-32", [0, 1, 2, 3, 4, 5]),
    ],
)
def test_columns_in_each_encoding(encoding: str, columns: list[int]) -> None:
    p = positions(encoding)
    for code_point, unit in enumerate(columns):
        assert p.to_client((0, code_point)) == types.Position(line=0, character=unit)
        assert p.from_client(types.Position(line=0, character=unit)) == (0, code_point)


def test_a_column_inside_a_character_or_past_the_end_is_clamped() -> None:
    p = positions("utf-16")
    assert p.from_client(types.Position(line=0, character=2)) == (0, 2)  # inside the astral
    assert p.from_client(types.Position(line=1, character=99)) == (1, 5)


@given(st.text(alphabet=st.sampled_from(["a", E_ACUTE, ASTRAL, "\u4e2d"]), max_size=12))
def test_columns_round_trip(line: str) -> None:
    for encoding in ("utf-16", "utf-8", "utf-32"):
        p = positions(encoding, [line])
        for column in range(len(line) + 1):
            assert p.from_client(p.to_client((0, column))) == (0, column)


def test_units_of_a_span() -> None:
    assert positions("utf-16").units(0, 1, 2) == (1, 3)  # the astral and "b"
    assert positions("utf-8").units(0, 1, 2) == (1, 5)


# --------------------------------------------------------------------------- diagnostics


def test_a_diagnostic_in_the_clients_units() -> None:
    d = Diagnostic(
        "W031",
        "no retry",
        Severity.WARNING,
        (1, 2),
        (1, 4),
        (
            Related("here", (2, 0), (2, 5)),
            Related("there", (3, 1), (3, 2), path="/tmp/other.prose"),
        ),
    )
    found = convert.diagnostic(d, positions("utf-8"), "file:///tmp/doc.prose")
    assert found.range == types.Range(
        start=types.Position(line=0, character=5), end=types.Position(line=0, character=8)
    )
    assert found.severity == types.DiagnosticSeverity.Warning
    assert found.code == "W031" and found.source == "openprose"
    assert found.tags == [types.DiagnosticTag.Unnecessary]
    assert found.code_description is not None
    assert found.code_description.href.endswith("#w031-backoff-without-retry")
    here, there = found.related_information or []
    assert here.location.uri == "file:///tmp/doc.prose"
    assert here.location.range.end == types.Position(line=1, character=5)
    assert there.location.uri == Path("/tmp/other.prose").resolve().as_uri()


def test_severities_match() -> None:
    for severity in Severity:
        assert convert.SEVERITY[severity].value == severity.value


def test_links_can_be_moved_or_left_out() -> None:
    d = Diagnostic("E007", "m", Severity.ERROR, (1, 0), (1, 1))
    moved = convert.diagnostic(d, positions("utf-16"), "file:///x", "https://x.example/d")
    assert moved.code_description is not None
    assert moved.code_description.href == "https://x.example/d#e007-undefined-agent-reference"
    assert convert.diagnostic(d, positions("utf-16"), "file:///x", "").code_description is None


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
def test_a_diagnostic_sent_back_by_the_client_is_ours_again(encoding: str) -> None:
    d = Diagnostic("E007", "undefined", Severity.ERROR, (1, 1), (1, 3))
    p = positions(encoding)
    assert convert.from_client_diagnostic(convert.diagnostic(d, p, "file:///x"), p) == d
    other = types.Diagnostic(
        range=types.Range(
            start=types.Position(line=0, character=0), end=types.Position(line=0, character=1)
        ),
        message="spelling",
        source="speller",
        code="E007",
    )
    assert convert.from_client_diagnostic(other, p) is None


# --------------------------------------------------------------------------- semantic tokens


def test_semantic_tokens_are_relative_and_in_the_clients_units() -> None:
    tokens = [
        ide.SemanticToken(0, 0, 1, "agent", frozenset({"declaration"})),
        ide.SemanticToken(0, 2, 3, "string"),  # after the astral character
        ide.SemanticToken(1, 1, 2, "variable", frozenset({"readonly", "declaration"})),
        ide.SemanticToken(1, 3, 0, "variable"),  # empty: not sent
        # Unknown (outside the ide layer's types, as a newer ide module could send): not sent.
        ide.SemanticToken(1, 4, 1, "no such type"),  # type: ignore[arg-type]
    ]
    legend = convert.LEGEND_TYPES
    declaration = 1 << convert.LEGEND_MODIFIERS.index("declaration")
    readonly = 1 << convert.LEGEND_MODIFIERS.index("readonly")
    assert convert.semantic_tokens(tokens, positions("utf-16"), legend) == [
        *(0, 0, 1, legend.index("class"), declaration),
        *(0, 3, 3, legend.index("string"), 0),  # b, é, c: one unit each
        *(1, 1, 2, legend.index("variable"), declaration | readonly),
    ]


def corpus_programs() -> list[Path]:
    return location.files()[:80]


@pytest.mark.corpus
def test_every_token_type_and_modifier_the_ide_makes_is_in_the_legend() -> None:
    """A type missing from the mapping would be dropped silently, not coloured."""
    kinds: set[str] = set()
    for path in corpus_programs():
        for token in semantic_tokens(analyze_document(path.read_text("utf-8")), None):
            kinds.add(token.type)
            assert token.type in convert.TOKEN_TYPE, (path, token)
            assert token.modifiers <= set(convert.LEGEND_MODIFIERS), (path, token)
    assert len(kinds) >= 10  # the corpus exercises most of them
    assert set(convert.LEGEND_TYPES) == set(convert.TOKEN_TYPE.values())


# --------------------------------------------------------------------------- the others


def test_text_edits_and_locations() -> None:
    p = positions("utf-16")
    [edit] = convert.text_edits([TextEdit((0, 2), (0, 3), "B")], p)
    assert edit.range.start.character == 3 and edit.range.end.character == 4
    here = convert.location(ide.Location(ide.Range((0, 2), (0, 2))), "file:///x", lambda _: p)
    assert here.uri == "file:///x" and here.range.start.character == 3
    there = convert.location(
        ide.Location(ide.Range((1, 0), (1, 1)), "/tmp/y.prose"), "file:///x", lambda _: p
    )
    assert there.uri == Path("/tmp/y.prose").resolve().as_uri()


def test_completion_items() -> None:
    p = positions("utf-16")
    plain = convert.completion_item(ide.CompletionItem("writer", "agent", detail="agent"), p)
    assert plain.kind == types.CompletionItemKind.Class
    assert plain.insert_text == "writer" and plain.text_edit is None
    assert plain.insert_text_format == types.InsertTextFormat.PlainText
    replacing = convert.completion_item(
        ide.CompletionItem(
            "loop",
            "snippet",
            insert_text="loop:\n  $0",
            snippet=True,
            replace=ide.Range((0, 2), (0, 3)),
        ),
        p,
    )
    assert replacing.insert_text is None
    assert isinstance(replacing.text_edit, types.TextEdit)
    assert replacing.text_edit.new_text == "loop:\n  $0"
    assert replacing.text_edit.range.start.character == 3
    assert replacing.insert_text_format == types.InsertTextFormat.Snippet
    # A kind outside the ide layer's types falls back to Text.
    item = ide.CompletionItem("x", "no such kind")  # type: ignore[arg-type]
    unknown = convert.completion_item(item, p)
    assert unknown.kind == types.CompletionItemKind.Text


def test_symbols_and_selection_ranges() -> None:
    p = positions("utf-16")
    child = ide.Symbol("model", "property", ide.Range((1, 0), (1, 5)), ide.Range((1, 0), (1, 5)))
    agent = ide.Symbol(
        "", "agent", ide.Range((0, 0), (1, 5)), ide.Range((0, 2), (0, 3)), children=(child,)
    )
    found = convert.document_symbol(agent, p)
    assert found.name == "(unnamed)" and found.kind == types.SymbolKind.Class
    assert found.selection_range.start.character == 3
    assert [c.name for c in found.children or []] == ["model"]
    chain = convert.selection(
        ide.Selection((ide.Range((0, 2), (0, 3)), ide.Range((0, 0), (1, 0)))), p
    )
    assert chain.range.start.character == 3
    assert chain.parent is not None and chain.parent.range.end == types.Position(
        line=1, character=0
    )
    assert chain.parent.parent is None


# --------------------------------------------------------------------------- kinds


@pytest.mark.parametrize(
    ("kinds", "mapping"),
    [
        (ide.CompletionKind, convert.COMPLETION_KIND),
        (ide.SymbolKind, convert.SYMBOL_KIND),
        (ide.HighlightKind, convert.HIGHLIGHT_KIND),
        (ide.FoldingKind, convert.FOLDING_KIND),
        (ide.TokenType, convert.TOKEN_TYPE),
        (ide.TokenModifier, dict.fromkeys(convert.LEGEND_MODIFIERS)),
    ],
)
def test_every_ide_kind_has_its_protocol_kind(kinds: object, mapping: dict[str, object]) -> None:
    # A kind the ide layer may produce but the adapter does not map would reach the editor
    # as a fallback (Text, Object) or, for a semantic token, not at all.
    assert set(typing.get_args(kinds)) == set(mapping)


def test_a_publication_is_what_pygls_would_send_and_reuses_conversions() -> None:
    from pygls.protocol import default_converter

    unstructure = default_converter().unstructure
    positions = convert.Positions(lambda line: LINES[line] if line < len(LINES) else "", "utf-16")
    first = Diagnostic("E007", "agent `x` is not defined", Severity.ERROR, (1, 4), (1, 6))
    second = Diagnostic(
        "W019",
        "unused",
        Severity.WARNING,
        (2, 0),
        (2, 5),
        (Related("first defined here", (1, 0), (1, 1)),),
    )
    converted = convert.ConvertedDiagnostics()
    items = converted.convert([first, second], positions, "file:///a.prose", None)
    body = converted.publication("file:///a.prose", 3, unstructure)
    params = types.PublishDiagnosticsParams(uri="file:///a.prose", diagnostics=items, version=3)
    assert json.loads(body) == {
        "jsonrpc": "2.0",
        "method": types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        "params": unstructure(params),
    }
    # The same diagnostic objects again: the conversions are the same objects; a new one
    # is converted.
    third = Diagnostic("E044", "undefined", Severity.ERROR, (3, 0), (3, 1))
    again = converted.convert([first, third], positions, "file:///a.prose", None)
    assert again[0] is items[0]
    assert again[1].code == "E044"
    later = json.loads(converted.publication("file:///a.prose", 4, unstructure))
    assert [d["code"] for d in later["params"]["diagnostics"]] == ["E007", "E044"]
    assert later["params"]["version"] == 4


def test_an_ascii_document_converts_without_reading_its_lines() -> None:
    # On an ASCII document a column is the same in every encoding: a keystroke's
    # diagnostics are then converted from their values alone (reading each one's lines
    # back from the document took a few milliseconds per keystroke on 10,000 lines).
    asked: list[int] = []
    lines = ["agent x", "let y = 1", ""]

    def line_text(line: int) -> str:
        asked.append(line)
        return lines[line] if line < len(lines) else ""

    found = [
        Diagnostic("E007", "agent `x` is not defined", Severity.ERROR, (1, 4), (1, 6)),
        Diagnostic("W019", "unused", Severity.WARNING, (2, 0), (2, 5)),
    ]
    plain = convert.ConvertedDiagnostics().convert(
        found, convert.Positions(line_text, "utf-16"), "file:///a.prose", None
    )
    cache = convert.ConvertedDiagnostics()
    first = cache.convert(
        found, convert.Positions(line_text, "utf-16"), "file:///a.prose", None, ascii_text=True
    )
    assert first == plain
    asked.clear()
    again = cache.convert(
        found, convert.Positions(line_text, "utf-16"), "file:///a.prose", None, ascii_text=True
    )
    assert asked == []
    assert all(a is b for a, b in zip(again, first, strict=True))
