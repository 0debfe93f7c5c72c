"""Quick fixes for an unknown property or modifier (W005): a "did you mean" among the names
the owner takes and is not given yet, removing the property, and naming a bare loop limit.
"""

from __future__ import annotations

from typing import Any

from openprose.diagnostics import Diagnostic
from openprose.ide.fixes.did_you_mean import close_matches
from openprose.ide.fixes.edits import replace_node, text_edit
from openprose.ide.fixes.fixer import Fix, Fixer, ancestor, node_text, quickfix, suggestions
from openprose.syntax import tree as t
from openprose.syntax.vocabulary import (
    AGENT_PROPERTIES,
    LOOP_MODIFIERS,
    PARALLEL_MODIFIERS,
    SESSION_PROPERTIES,
)

__all__ = ["unknown_property"]


def unknown_property(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    parent = leaf.parent
    if isinstance(parent, t.KeywordArgument) and parent.name is leaf:
        return _unknown_modifier(parent)
    if ancestor(leaf, t.Arguments) is not None:
        return _positional_modifier(leaf, diagnostic)
    if not isinstance(parent, t.Property) or parent.name_leaf is not leaf:
        return []
    block = parent.parent
    if not isinstance(block, t.PropertyBlock):
        return []
    owner = block.parent
    if isinstance(owner, t.AgentDefinition):
        known: tuple[str, ...] = AGENT_PROPERTIES
    elif isinstance(owner, t.Session | t.Resume):
        known = SESSION_PROPERTIES
    else:
        return []
    name = leaf.value
    present = {p.name for p in block.properties()}
    fixes: list[Fix] = []
    if name not in AGENT_PROPERTIES + SESSION_PROPERTIES:
        fixes = suggestions(
            "W005",
            name,
            [k for k in known if k not in present],
            lambda other: replace_node(leaf, other),
        )
    if not (isinstance(owner, t.AgentDefinition) and len(block.properties()) == 1):
        fixes.append(quickfix(f"Remove property `{name}`", [fixer.delete_lines(parent)], "W005"))
    return fixes


def _unknown_modifier(item: t.KeywordArgument) -> list[Fix]:
    arguments = item.parent
    owner = arguments.parent if isinstance(arguments, t.Arguments) else None
    name = item.name.value
    present = (
        {k.name.value for k in arguments.keyword_arguments() if k is not item}
        if isinstance(arguments, t.Arguments)
        else set()
    )
    if isinstance(owner, t.Loop):
        if "max" in present:
            return []
        close = close_matches(name, LOOP_MODIFIERS)
        return [
            quickfix(
                "Change to `max`",
                [replace_node(item.name, "max")],
                "W005",
                preferred=bool(close),
                safe=bool(close),
            )
        ]
    if isinstance(owner, t.Parallel):
        return suggestions(
            "W005",
            name,
            [m for m in PARALLEL_MODIFIERS if m not in present],
            lambda other: replace_node(item.name, other),
        )
    return []


def _positional_modifier(leaf: Any, diagnostic: Diagnostic) -> list[Fix]:
    """``loop (5):``: the limit needs its name."""
    item = leaf
    while item.parent is not None and not isinstance(item.parent, t.Arguments):
        item = item.parent
    arguments = item.parent
    if not isinstance(arguments, t.Arguments) or not isinstance(arguments.parent, t.Loop):
        return []
    if item.start_pos != diagnostic.start or any(
        k.name.value == "max" for k in arguments.keyword_arguments()
    ):
        return []
    if not isinstance(item, t.Number | t.Name | t.Attribute) or len(arguments.positional()) > 1:
        return []
    edit = text_edit(item.start_pos, item.start_pos, "max: ")
    return [quickfix(f"Change to `(max: {node_text(item)})`", [edit], "W005", True, True)]
