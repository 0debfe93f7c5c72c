"""What every rule gets: the tree, the semantic model, where the file lives, and a way to
report a diagnostic with an exact range."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprose.analysis.model import Model
from openprose.codes import severity_of
from openprose.diagnostics import Diagnostic, Position, Related


def span(node: Any) -> tuple[Position, Position]:
    """The range of a node or leaf, prefixes excluded."""
    return node.start_pos, node.end_pos


@dataclass
class Context:
    module: Any
    model: Model
    path: Path | None = None
    # The directory holding the project's `.prose/` state (None: not known).
    project_root: Path | None = None
    # Loads the contract of a program a `use` statement names (None: no cross-file).
    contracts: Any = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    _index: dict[type, list[Any]] | None = field(default=None, repr=False)

    def nodes(self, *classes: type) -> list[Any]:
        """Every node of these classes in the module, in source order, outside error nodes
        (one shared walk of the tree for all the rules)."""
        if self._index is None:
            self._index = _index_nodes(self.module)
        if len(classes) == 1:
            return self._index.get(classes[0], [])
        found = [n for cls in classes for n in self._index.get(cls, [])]
        found.sort(key=lambda n: n.start_pos)
        return found

    def report(
        self,
        code: str,
        message: str,
        at: Any,
        end: Any = None,
        related: tuple[tuple[str, Any], ...] = (),
    ) -> None:
        """Report ``code`` over ``at`` (a node or leaf, or a (start, end) pair of positions)
        through ``end``; ``related`` pairs a message with a node or leaf."""
        start, stop = _range(at)
        if end is not None:
            stop = _range(end)[1]
        self.diagnostics.append(
            Diagnostic(
                code,
                message,
                severity_of(code),
                start,
                stop,
                tuple(Related(text, *_range(node)) for text, node in related),
            )
        )


def _range(at: Any) -> tuple[Position, Position]:
    if isinstance(at, tuple):
        return at[0], at[1]
    return span(at)


def _index_nodes(module: Any) -> dict[type, list[Any]]:
    from openprose.syntax import tree as t

    index: dict[type, list[Any]] = {}
    stack = [module]
    while stack:
        node = stack.pop()
        index.setdefault(type(node), []).append(node)
        if isinstance(node, t.ErrorNode):
            continue
        children = node.children
        for i in range(len(children) - 1, -1, -1):
            child = children[i]
            if hasattr(child, "children"):
                stack.append(child)
    return index
