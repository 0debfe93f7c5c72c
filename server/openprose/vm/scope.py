"""Variable scopes and block frames.

Lookups walk the scope chain; a block invocation's scope hangs under the caller's, which is
the resolution order of spec/state/filesystem.md (current execution, its parent, ...,
root).  Loop bodies, pipeline stages and parallel branches get child scopes: their own
``let`` bindings stay inside, while an assignment updates the scope that holds the name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Frame:
    block: str
    execution_id: int
    depth: int
    parent_id: int | None
    result: Any = None
    has_result: bool = False
    outputs: dict[str, Any] = field(default_factory=dict)


_MISSING = object()


class Scope:
    __slots__ = ("consts", "frame", "parent", "values")

    def __init__(self, parent: Scope | None = None, frame: Frame | None = None) -> None:
        self.values: dict[str, Any] = {}
        self.consts: set[str] = set()
        self.parent = parent
        self.frame: Frame | None = (
            frame if frame is not None else (parent.frame if parent else None)
        )

    def child(self, frame: Frame | None = None) -> Scope:
        return Scope(self, frame)

    def holder(self, name: str) -> Scope | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.values:
                return scope
            scope = scope.parent
        return None

    def get(self, name: str, default: Any = _MISSING) -> Any:
        holder = self.holder(name)
        if holder is None:
            if default is _MISSING:
                raise KeyError(name)
            return default
        return holder.values[name]

    def has(self, name: str) -> bool:
        return self.holder(name) is not None
