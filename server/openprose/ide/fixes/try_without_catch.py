"""The quick fix for a ``try`` without ``catch`` or ``finally`` (E037): add a ``catch`` that
reports what failed.
"""

from __future__ import annotations

from typing import Any

from openprose.diagnostics import Diagnostic
from openprose.format import TextEdit
from openprose.ide.fixes.fixer import Fix, Fixer, quickfix
from openprose.syntax import tree as t

__all__ = ["try_without_catch"]


def try_without_catch(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    node = leaf.parent
    if not isinstance(node, t.TryStatement) or node.children[0] is not leaf:
        return []
    if node.catch_clauses() or node.finally_clause is not None:
        return []
    indent = fixer.line_indent(node)
    if node.start_pos[1] and not indent:
        return []  # not first on its line
    statements = [s for s in node.body_statements() if not isinstance(s, t.ErrorNode)]
    inner = fixer.line_indent(statements[0]) if statements else ""
    if not inner.startswith(indent) or len(inner) <= len(indent):
        inner = indent + fixer.indent
    deeper = inner + inner[len(indent) :]
    used = fixer.used_names()
    error = next(
        name
        for name in ("err", "error", "failure", *(f"err{i}" for i in range(2, 99)), "e")
        if name not in used
    )
    nl = fixer.newline
    position, first = fixer.line_after(node)
    handler = (
        f"{first}{indent}catch as {error}:{nl}"
        f'{inner}session "Report what failed and what was left undone"{nl}'
        f"{deeper}context: {error}{nl}"
    )
    return [
        quickfix("Add `catch:`", [TextEdit(position, position, handler)], "E037", preferred=True)
    ]
