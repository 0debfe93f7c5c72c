"""The quick fix for a ``session:`` on an agent whose memory exists (W011): switch to
``resume:`` (safe), unless the agent's first run is that same statement.
"""

from __future__ import annotations

from typing import Any

from openprose.diagnostics import Diagnostic
from openprose.ide.fixes.edits import replace_node
from openprose.ide.fixes.fixer import Fix, Fixer, quickfix
from openprose.syntax import tree as t

__all__ = ["session_with_memory"]


def session_with_memory(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    session = leaf.parent
    if not isinstance(session, t.Session) or session.agent is not leaf or session.name is not None:
        return []
    keyword = session.keyword_leaf
    colon = session.children[1] if len(session.children) > 1 else None
    if keyword.value != "session" or not (isinstance(colon, t.Operator) and colon.value == ":"):
        return []
    edit = replace_node(keyword, "resume")
    if fixer.single and fixer.brings(edit, "E018"):
        # A block run twice: this `session:` is also the agent's first run, which has no
        # memory to resume.
        return []
    return [quickfix("Switch to `resume:`", [edit], "W011", preferred=True, safe=True)]
