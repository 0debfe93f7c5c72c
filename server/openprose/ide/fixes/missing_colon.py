"""Quick fixes that add a missing `:`: after a ``session`` with indented properties (E074),
and after the keyword of ``session name`` or ``resume name`` (E004 at the name; E003 for
``session name`` followed by more on its line).
"""

from __future__ import annotations

from typing import Any

from openprose.diagnostics import Diagnostic
from openprose.ide.analysis import to_pos
from openprose.ide.fixes.edits import text_edit
from openprose.ide.fixes.fixer import Fix, Fixer, quickfix
from openprose.syntax import tree as t

__all__ = ["agent_without_colon", "session_without_colon"]


def session_without_colon(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    session = leaf.parent
    if not isinstance(session, t.Session) or session.children[0] is not leaf:
        return []
    if len(session.children) < 2 or not isinstance(session.children[1], t.PropertyBlock):
        return []
    edit = text_edit(leaf.end_pos, leaf.end_pos, ":")
    return [quickfix("Add `:` after `session`", [edit], "E074", preferred=True, safe=True)]


def agent_without_colon(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    node: Any = leaf.parent
    if diagnostic.code == "E004":
        # The parser reports `session c` / `resume c` at the name.
        if not isinstance(node, t.Session | t.Resume) or len(node.children) < 2:
            return []
        if node.children[1] is not leaf:
            return []
        if to_pos(leaf.start_pos) != to_pos(diagnostic.start):
            return []
        leaf = node.children[0]
    elif not isinstance(node, t.Session):
        return []
    if node.children[0] is not leaf:
        return []
    name = leaf.get_next_leaf()
    if not isinstance(name, t.Name) or name.start_pos[0] != leaf.start_pos[0]:
        return []
    after = name.get_next_leaf()
    if isinstance(after, t.Operator) and after.value == ":" and after.start_pos[0] == name.line:
        return []  # `session name: agent`, something else
    edit = text_edit(leaf.end_pos, leaf.end_pos, ":")
    known = fixer.analysis.model.agent(name.value) is not None
    title = f"Change to `{leaf.value}: {name.value}`"
    return [quickfix(title, [edit], diagnostic.code, preferred=True, safe=known)]
