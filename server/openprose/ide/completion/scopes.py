"""The variables visible at the cursor: those of the scopes enclosing it (found by
indentation, as the line being typed rarely parses) defined before it, and the matching of a
partial word against a label."""

from __future__ import annotations

from typing import Any

from openprose.analysis.model import Kind, Scope, Symbol
from openprose.ide.completion.cursor import Cursor, line_indent
from openprose.ide.types import CompletionKind

_BINDING_KINDS = frozenset((Kind.LET, Kind.CONST, Kind.OUTPUT, Kind.BRANCH))


# A variable of a scope, ready for filtering: (start, name, symbol, binding).
_Entry = tuple[tuple[int, int], str, Symbol, bool]


class ModelData:
    """What requests on one model share: scopes by construct, each scope's variables in
    program order, and the variables' descriptions (kept in ``caches.completion``)."""

    def __init__(self, model: Any) -> None:
        self.scopes: dict[int, Scope] = {id(scope.node): scope for scope in model.scopes}
        self.entries: dict[int, tuple[list[_Entry], list[_Entry]]] = {}
        self.symbols: dict[int, tuple[CompletionKind, str, str]] = {}

    def scope_entries(self, scope: Scope) -> tuple[list[_Entry], list[_Entry]]:
        """A scope's variables sorted by position, and its exported ones (seen anywhere)."""
        found = self.entries.get(id(scope))
        if found is None:
            ordered: list[_Entry] = []
            exported: list[_Entry] = []
            for name, symbol in scope.symbols.items():
                if not symbol.kind.is_variable:
                    continue
                entry = (symbol.start, name, symbol, symbol.kind in _BINDING_KINDS)
                (exported if symbol.exported else ordered).append(entry)
            ordered.sort(key=lambda e: e[0])
            found = self.entries[id(scope)] = (ordered, exported)
        return found


def model_data(analysis: Any) -> ModelData:
    """What the requests on ``analysis``'s model share (kept in its caches)."""
    data: ModelData = analysis.caches.completion.get(analysis.model)
    return data


def enclosing_scope(cursor: Cursor) -> Scope:
    """The innermost scope whose construct encloses the cursor's line (by indentation)."""
    model = cursor.analysis.model
    index = model_data(cursor.analysis).scopes
    indent = cursor.indent
    anchor = cursor.anchor
    node = anchor.parent if anchor is not None else None
    while node is not None:
        scope = index.get(id(node))
        if (
            scope is not None
            and scope.kind != "program"
            and line_indent(cursor.analysis, node.start_pos[0] - 1) < indent
        ):
            return scope
        node = node.parent
    program: Scope = model.program_scope
    return program


def visible_symbols(cursor: Cursor, word: str = "") -> list[Symbol]:
    """The variables in scope at the cursor, defined before it (or exported by a block);
    with ``word``, only those whose name holds its letters in order."""
    target = cursor.target
    cache = model_data(cursor.analysis)
    # The statements holding the cursor: `let x = <here>` does not see `x` yet.
    enclosing: set[int] = set()
    node = cursor.anchor
    while node is not None:
        enclosing.add(id(node))
        node = node.parent
    needle = word.lower()
    seen: set[str] = set()
    found: list[Symbol] = []
    scope: Scope | None = enclosing_scope(cursor)
    while scope is not None:
        ordered, exported = cache.scope_entries(scope)
        for entries, check_start in ((ordered, True), (exported, False)):
            for start, name, symbol, binding in entries:
                if check_start and start >= target:
                    break
                if name in seen:
                    continue
                if binding and id(symbol.node) in enclosing:
                    continue
                if needle and not matches(needle, name):
                    continue
                seen.add(name)
                found.append(symbol)
        scope = scope.parent
    return found


def matches(needle: str, label: str) -> bool:
    """Whether the (lower-case) letters of ``needle`` appear in ``label`` in order."""
    label = label.lower()
    if needle in label:
        return True
    position = 0
    for char in needle:
        position = label.find(char, position) + 1
        if position == 0:
            return False
    return True
