"""The quick fix for a ``loop`` without a limit (W018): add ``max: 10``, or name a bare limit
(safe).
"""

from __future__ import annotations

from typing import Any

from openprose.diagnostics import Diagnostic
from openprose.ide.fixes.edits import text_edit
from openprose.ide.fixes.fixer import Fix, Fixer, node_text, quickfix
from openprose.syntax import tree as t

__all__ = ["unbounded_loop"]


_LOOP_LIMIT = 10


def unbounded_loop(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    node = leaf.parent
    if not isinstance(node, t.Loop) or node.children[0] is not leaf or node.kind is not None:
        return []
    modifiers = node.modifiers
    limit = f"max: {_LOOP_LIMIT}"
    if modifiers is None:
        edit = text_edit(leaf.end_pos, leaf.end_pos, f" ({limit})")
        return [quickfix(f"Add `({limit})`", [edit], "W018", preferred=True, safe=True)]
    if any(k.name.value == "max" for k in modifiers.keyword_arguments()):
        return []
    items = modifiers.items()
    opening = modifiers.children[0]
    if not (isinstance(opening, t.Operator) and opening.value == "("):
        return []
    if len(items) == 1 and isinstance(items[0], t.Number | t.Name):
        # `loop (5):` is a limit without its name.
        edit = text_edit(items[0].start_pos, items[0].start_pos, "max: ")
        return [quickfix(f"Change to `(max: {node_text(items[0])})`", [edit], "W018", True, True)]
    text = limit + (", " if items else "")
    edit = text_edit(opening.end_pos, opening.end_pos, text)
    return [quickfix(f"Add `{limit}`", [edit], "W018", preferred=True, safe=True)]
