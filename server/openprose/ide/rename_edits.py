"""What a rename shares between this document and the files it reaches: the edits renaming
every occurrence of a name, and whether a new variable name collides with one visible from it."""

from __future__ import annotations

from openprose.analysis.model import Scope
from openprose.format import TextEdit
from openprose.ide.analysis import Analysis, to_pos
from openprose.ide.names import Key, index_of
from openprose.ide.types import RenameError


def occurrence_edits(analysis: Analysis, key: Key, new_name: str) -> list[TextEdit]:
    edits = []
    for occurrence in index_of(analysis).by_key.get(key, ()):
        if occurrence.role == "path":
            end = to_pos(occurrence.leaf.end_pos)
            edits.append(TextEdit(end, end, f" as {new_name}"))
        else:
            edits.append(TextEdit(occurrence.range.start, occurrence.range.end, new_name))
    edits.sort(key=lambda e: e.start)
    return edits


def _within(scope: Scope | None, ancestor: Scope) -> bool:
    while scope is not None:
        if scope is ancestor:
            return True
        scope = scope.parent
    return False


def variable_collision(analysis: Analysis, scope: Scope, new_name: str) -> RenameError | None:
    """A variable of ``scope`` may not take a name defined where it is visible (in its
    scope, an enclosing or an enclosed one: the program has one flat namespace), nor a
    name used inside its scope (that use would start naming it), nor an agent's name."""
    index = index_of(analysis)
    model = analysis.model
    if new_name in model.agents:
        return RenameError(f"`{new_name}` already names an agent")
    for other in index.symbols_by_name.get(new_name, ()):
        if other.scope is None:
            continue
        if _within(other.scope, scope) or _within(scope, other.scope):
            line = other.leaf.start_pos[0]
            what = "an implicit variable" if other.implicit else f"a {other.kind.value}"
            return RenameError(f"`{new_name}` is already {what} (line {line})")
    for reference in index.references_by_name.get(new_name, ()):
        if _within(reference.scope, scope):
            line = reference.start[0]
            return RenameError(
                f"`{new_name}` is already used on line {line}, which would then name the "
                "renamed variable"
            )
    return None
