"""Structural dumps of trees, for comparing an incremental result with a full parse."""

from __future__ import annotations

from typing import Any

from openprose.syntax.issues import iter_issues


def structure(node: Any) -> Any:
    """A nested tuple describing every node and leaf: types, values, prefixes, positions."""
    children = getattr(node, "children", None)
    if children is None:
        return (type(node).__name__, node.value, node.prefix, node.start_pos)
    return (type(node).__name__, tuple(structure(c) for c in children))


def issues(node: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (i.code, i.message, i.start, i.end, tuple((r[0], r[1].start_pos) for r in i.related))
        for i in iter_issues(node)
    )


def signature(node: Any) -> tuple[Any, Any]:
    """Everything observable about a parsed tree."""
    return structure(node), issues(node)


def check_parents(node: Any) -> None:
    """Raise if any child's ``parent`` is not the node holding it."""
    for child in getattr(node, "children", ()):
        if child.parent is not node:
            raise AssertionError(f"{child!r} has parent {child.parent!r}, expected {node!r}")
        check_parents(child)
