"""Quick fixes for a property given twice (E009): remove the repeat when it says the same
(safe), else let the user choose which one goes.
"""

from __future__ import annotations

from typing import Any

from openprose.diagnostics import Diagnostic
from openprose.ide.fixes.fixer import Fix, Fixer, node_text, quickfix
from openprose.syntax import tree as t

__all__ = ["duplicate_property"]


def duplicate_property(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    prop = leaf.parent
    if not isinstance(prop, t.Property) or prop.name_leaf is not leaf:
        return []
    block = prop.parent
    if not isinstance(block, t.PropertyBlock):
        return []
    first = block.get(prop.name)
    if first is None or first is prop:
        return []
    same = _property_text(first) == _property_text(prop)
    name = prop.name
    if same:
        return [
            quickfix(
                f"Remove duplicate `{name}`",
                [fixer.delete_lines(prop)],
                "E009",
                preferred=True,
                safe=True,
            )
        ]
    return [
        quickfix(f"Remove this `{name}`", [fixer.delete_lines(prop)], "E009"),
        quickfix(f"Remove the first `{name}`", [fixer.delete_lines(first)], "E009"),
    ]


def _property_text(prop: t.Property) -> str:
    return " ".join(
        node_text(leaf)
        for leaf in t.iter_leaves(prop)
        if not isinstance(leaf, t.Newline) and node_text(leaf)
    )
