"""Semantic tokens: what each name is, plus keywords, strings, conditions and comments.

One walk over the leaves, in source order.  Names are classified by the semantic model
(definitions and resolved references: variable, parameter, with ``declaration`` where
they are defined and ``readonly`` for constants, inputs, loop, index and pipeline
variables and parameters) and by where they stand in the tree (agent and block names,
property names, ``use`` aliases, called programs).  Strings are split around their
``{name}`` interpolations; comments come from the leaf prefixes.  A token never spans
lines: multi-line strings and conditions are split per line.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any

from openprose.analysis.model import Kind
from openprose.ide.folding import LINE_BREAK, leaf_end, prefix_comments
from openprose.ide.types import Range, SemanticToken, TokenModifier, TokenType
from openprose.syntax import tree as t

if TYPE_CHECKING:
    from openprose.ide.analysis import Analysis

_NONE: frozenset[TokenModifier] = frozenset()
_DECLARATION: frozenset[TokenModifier] = frozenset(("declaration",))
_READONLY: frozenset[TokenModifier] = frozenset(("readonly",))
_BOTH: frozenset[TokenModifier] = frozenset(("declaration", "readonly"))

# Operators worth a colour of their own (not punctuation like `:`, `,` or brackets).
_OPERATORS = frozenset(("->", "|", "=", "==", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/", "!"))

_Class = tuple[TokenType, frozenset[TokenModifier]]


def _names(model: Any) -> dict[int, _Class]:
    """Name leaves the model knows: definitions and references, by ``id``."""
    names: dict[int, _Class] = {}
    for reference in model.references:
        leaf = reference.leaf
        if type(leaf) is not t.Name:
            continue  # an interpolation: the string leaf
        symbol = reference.symbol
        if symbol is None:
            names[id(leaf)] = ("variable", _NONE)
        elif symbol.kind is Kind.PARAMETER:
            names[id(leaf)] = ("parameter", _READONLY)
        elif symbol.kind is Kind.AGENT:
            names[id(leaf)] = ("agent", _NONE)
        elif symbol.kind is Kind.BLOCK:
            names[id(leaf)] = ("block", _NONE)
        elif symbol.kind is Kind.PROGRAM:
            names[id(leaf)] = ("program", _NONE)
        else:
            names[id(leaf)] = ("variable", _READONLY if symbol.kind.is_constant else _NONE)
    for name, _node in model.agent_references:
        if type(name) is t.Name:
            names[id(name)] = ("agent", _NONE)
    for symbol in model.definitions:
        leaf = symbol.leaf
        if symbol.implicit or type(leaf) is not t.Name:
            continue
        if symbol.kind is Kind.PARAMETER:
            names[id(leaf)] = ("parameter", _BOTH)
        else:
            names[id(leaf)] = ("variable", _BOTH if symbol.kind.is_constant else _DECLARATION)
    return names


def _structural(leaf: Any) -> _Class | None:
    """What a name is from where it stands (for names the model does not track)."""
    parent = leaf.parent
    kind = type(parent)
    first = parent.children[0] is leaf
    if kind is t.Property or kind is t.ObjectEntry:
        return ("property", _NONE) if first else None
    if kind is t.KeywordArgument:
        if not first:
            return None
        call = parent.parent.parent if parent.parent is not None else None
        return ("parameter", _NONE) if type(call) is t.ProgramCall else ("property", _NONE)
    if kind is t.Attribute:
        return None if first else ("property", _NONE)
    if kind is t.AgentDefinition:
        return ("agent", _DECLARATION) if leaf is parent.name_leaf else None
    if kind is t.BlockDefinition:
        return ("block", _DECLARATION) if leaf is parent.name_leaf else None
    if kind is t.UseStatement:
        return ("program", _DECLARATION) if leaf is parent.alias else None
    if kind is t.DoInvocation:
        return ("block", _NONE) if leaf is parent.name else None
    if kind is t.ProgramCall:
        return ("program", _NONE) if first else None
    if kind is t.Session:
        if leaf is parent.name:
            return "variable", _DECLARATION
        return ("agent", _NONE) if leaf is parent.agent else None
    if kind is t.Resume:
        return ("agent", _NONE) if leaf is parent.agent else None
    return None


def _last_line(node: Any) -> int:
    """The 0-based line where a node or leaf ends (at most one too far)."""
    if hasattr(node, "children"):
        if not node.children:
            return -1
        node = node.get_last_leaf()
    return leaf_end(node)[0] - 1


def _first_line(node: Any) -> int:
    """The 0-based line where a node's or leaf's prefix (its comments) starts."""
    leaf = node.get_first_leaf() if hasattr(node, "children") and node.children else node
    if not hasattr(leaf, "prefix"):
        return 1 << 30
    prefix = leaf.prefix
    line: int = leaf.line
    if "\n" not in prefix and "\r" not in prefix:
        return line - 1
    return line - 1 - len(LINE_BREAK.findall(prefix))


class _Emitter:
    def __init__(self, window: Range | None) -> None:
        self.tokens: list[SemanticToken] = []
        self.window = window

    def add(
        self,
        line: int,
        start: int,
        length: int,
        kind: TokenType,
        modifiers: frozenset[TokenModifier],
    ) -> None:
        if length <= 0:
            return
        window = self.window
        if window is not None and not (
            (line, start + length) > window.start and (line, start) < window.end
        ):
            return
        self.tokens.append(SemanticToken(line, start, length, kind, modifiers))

    def spans(
        self,
        leaf: Any,
        pieces: list[tuple[int, int, TokenType]],
    ) -> None:
        """Tokens for ``(start offset, end offset, type)`` pieces of ``leaf.value``,
        split at the line breaks inside it."""
        value = leaf.value
        line = leaf.line - 1
        column = leaf.column
        if "\n" not in value and "\r" not in value:
            for start, end, kind in pieces:
                self.add(line, column + start, end - start, kind, _NONE)
            return
        # Offsets where each line of the value starts, and where it ends (its break).
        starts = [0]
        ends = []
        for match in LINE_BREAK.finditer(value):
            ends.append(match.start())
            starts.append(match.end())
        ends.append(len(value))
        for start, end, kind in pieces:
            i = bisect_right(starts, start) - 1
            while i < len(starts) and starts[i] < end:
                a = max(start, starts[i])
                b = min(end, ends[i])
                if b > a:
                    self.add(
                        line + i, (column if i == 0 else 0) + a - starts[i], b - a, kind, _NONE
                    )
                i += 1


def semantic_tokens(analysis: Analysis, range: Range | None = None) -> list[SemanticToken]:
    names = _names(analysis.model)
    emitter = _Emitter(range)
    add = emitter.add
    first_line = range.start[0] if range is not None else 0
    last_line = range.end[0] if range is not None else -1

    previous: Any = None
    stack: list[Any] = [analysis.module]
    pop = stack.pop
    Name, Keyword, String, Discretion, Number, Operator = (
        t.Name,
        t.Keyword,
        t.String,
        t.Discretion,
        t.Number,
        t.Operator,
    )
    while stack:
        node = pop()
        children = getattr(node, "children", None)
        if children is not None:
            if range is None:
                stack.extend(reversed(children))
                continue
            # Only the children that reach into the range (they are in source order).
            lo = bisect_left(children, first_line, key=_last_line)
            hi = bisect_right(children, last_line, key=_first_line, lo=lo)
            stack.extend(reversed(children[lo:hi]))
            continue
        leaf = node
        if "#" in leaf.prefix:
            if range is not None:  # statements were skipped: `previous` may be stale
                previous = leaf.get_previous_leaf()
            for line, column, text, _own in prefix_comments(leaf, previous):
                add(line, column, len(text), "comment", _NONE)
        previous = leaf
        kind = type(leaf)
        if kind is Name:
            found = names.get(id(leaf)) or _structural(leaf)
            if found is not None:
                add(leaf.line - 1, leaf.column, len(leaf.value), found[0], found[1])
        elif kind is Keyword:
            add(leaf.line - 1, leaf.column, len(leaf.value), "keyword", _NONE)
        elif kind is String:
            value = leaf.value
            if "{" in value:
                pieces: list[tuple[int, int, TokenType]] = []
                position = 0
                for part in leaf.parts():
                    if part.kind == "interpolation":
                        pieces.append((position, part.start_offset, "string"))
                        pieces.append((part.start_offset, part.end_offset, "interpolation"))
                        position = part.end_offset
                pieces.append((position, len(value), "string"))
            else:
                pieces = [(0, len(value), "string")]
            emitter.spans(leaf, pieces)
        elif kind is Discretion:
            emitter.spans(leaf, [(0, len(leaf.value), "discretion")])
        elif kind is Number:
            add(leaf.line - 1, leaf.column, len(leaf.value), "number", _NONE)
        elif kind is Operator and leaf.value in _OPERATORS:
            add(leaf.line - 1, leaf.column, len(leaf.value), "operator", _NONE)

    tokens = emitter.tokens
    tokens.sort(key=lambda token: (token.line, token.start))
    return tokens
