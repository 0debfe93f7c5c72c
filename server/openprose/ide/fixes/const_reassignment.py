"""The quick fix for a reassigned ``const`` (E048): make it a ``let`` (safe)."""

from __future__ import annotations

from typing import Any

from openprose.analysis.model import Kind
from openprose.diagnostics import Diagnostic
from openprose.ide.fixes.edits import replace_node
from openprose.ide.fixes.fixer import Fix, Fixer, quickfix
from openprose.syntax import tree as t

__all__ = ["const_reassignment"]


def const_reassignment(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    reference = fixer.reference(diagnostic)
    if reference is None or reference.symbol is None or reference.symbol.kind is not Kind.CONST:
        return []
    node = reference.symbol.node
    if not isinstance(node, t.ConstBinding):
        return []
    keyword = node.children[0]
    if not isinstance(keyword, t.Keyword) or keyword.value != "const":
        return []
    return [
        quickfix(
            f"Make `{reference.name}` a `let`",
            [replace_node(keyword, "let")],
            "E048",
            preferred=True,
            safe=True,
        )
    ]
