"""The plain results of the editor features (no protocol types)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the formatter (and with it the parser) is not needed to name these types
    from openprose.format import TextEdit

# 0-based (line, character), characters counted in code points.
Pos = tuple[int, int]

# The kinds are the editor features' own words; lsp/convert.py maps each to the protocol's.
CompletionKind = Literal[
    "agent",
    "block",
    "variable",
    "parameter",
    "property",
    "value",
    "keyword",
    "snippet",
    "program",
    "input",
    "file",
    "folder",
]
SymbolKind = Literal[
    "agent",
    "block",
    "variable",
    "constant",
    "input",
    "output",
    "program",
    "property",
    "session",
    "statement",  # control flow
    "option",
    "parameter",
]
HighlightKind = Literal["text", "read", "write"]
FoldingKind = Literal["comment", "region"]
TokenType = Literal[
    "agent",
    "block",
    "variable",
    "parameter",
    "property",
    "keyword",
    "string",
    "interpolation",
    "discretion",
    "comment",
    "number",
    "operator",
    "program",
]
TokenModifier = Literal["declaration", "readonly"]
CodeActionKind = Literal["quickfix", "source.fixAll"]
InlayHintKind = Literal["parameter"]


@dataclass(frozen=True, slots=True)
class Range:
    start: Pos
    end: Pos

    def contains(self, position: Pos) -> bool:
        return self.start <= position <= self.end


@dataclass(frozen=True, slots=True)
class Location:
    """A range in a document: ``path`` None means the document asked about."""

    range: Range
    path: str | None = None


@dataclass(frozen=True, slots=True)
class CompletionItem:
    label: str
    kind: CompletionKind
    detail: str = ""
    documentation: str = ""  # markdown
    insert_text: str | None = None  # None: the label
    snippet: bool = False  # insert_text uses $1, ${1:placeholder}, $0
    sort_text: str | None = None
    replace: Range | None = None  # the text the item replaces (None: the word at the cursor)


@dataclass(frozen=True, slots=True)
class Hover:
    contents: str  # markdown
    range: Range


@dataclass(frozen=True, slots=True)
class Highlight:
    range: Range
    kind: HighlightKind = "text"


@dataclass(frozen=True, slots=True)
class PrepareRename:
    range: Range
    placeholder: str


@dataclass(frozen=True, slots=True)
class RenameError:
    message: str


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    kind: SymbolKind
    range: Range
    selection_range: Range
    detail: str = ""
    children: tuple[Symbol, ...] = ()


@dataclass(frozen=True, slots=True)
class Folding:
    start_line: int
    end_line: int
    kind: FoldingKind | None = None  # None: code


@dataclass(frozen=True, slots=True)
class Selection:
    """A range and the ranges enclosing it, innermost first."""

    ranges: tuple[Range, ...]


@dataclass(frozen=True, slots=True)
class SemanticToken:
    line: int
    start: int  # character (code point) in the line
    length: int  # in code points; never spans lines
    type: TokenType
    modifiers: frozenset[TokenModifier] = frozenset()


@dataclass(frozen=True, slots=True)
class CodeAction:
    title: str
    kind: CodeActionKind
    edits: tuple[TextEdit, ...]
    diagnostic_codes: tuple[str, ...] = ()
    preferred: bool = False


@dataclass(frozen=True, slots=True)
class SignatureHelp:
    label: str  # `block review(topic, depth)` or `research(topic, depth)`
    parameters: tuple[str, ...]
    active_parameter: int
    documentation: str = ""


@dataclass(frozen=True, slots=True)
class InlayHint:
    position: Pos
    label: str  # e.g. "topic:"
    kind: InlayHintKind = "parameter"


@dataclass(frozen=True, slots=True)
class DocumentLink:
    range: Range
    target: str  # an absolute file path
    tooltip: str = ""


@dataclass(frozen=True, slots=True)
class CodeLens:
    range: Range
    title: str
    command: str
    arguments: tuple[str, ...] = field(default=())
