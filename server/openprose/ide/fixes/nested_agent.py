"""The quick fix for an agent defined inside another statement (W037): move it, with the
comment lines right above it, to the top level of the program.

Offered only when the move is a plain cut and paste with one level of indentation less:
every line of the definition starts with its indentation, no string in it spans lines
(dedenting would change its text), the body it leaves keeps a statement, and no other
definition takes the name at the top level.
"""

from __future__ import annotations

from typing import Any

from openprose.diagnostics import Diagnostic
from openprose.format import TextEdit
from openprose.ide.analysis import Analysis
from openprose.ide.fixes.fixer import Fix, Fixer, quickfix
from openprose.syntax import tree as t

__all__ = ["move_to_top_level", "nested_agent"]


def nested_agent(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    agent = leaf.parent
    if not isinstance(agent, t.AgentDefinition) or agent.name_leaf is not leaf:
        return []
    edits = move_to_top_level(fixer.analysis, agent, fixer.newline)
    if not edits:
        return []
    # Not safe: the sessions that name the agent start using it.
    return [quickfix(f"Move agent `{agent.name}` to the top level", edits, "W037", True)]


def move_to_top_level(analysis: Analysis, agent: t.AgentDefinition, nl: str) -> list[TextEdit]:
    """The edits that move ``agent`` to the top level (none when that is not plain)."""
    name = agent.name
    suite = agent.parent
    if name is None or not isinstance(suite, t.Suite) or not _free(analysis, name):
        return []
    if not [s for s in suite.statements() if s is not agent and not isinstance(s, t.ErrorNode)]:
        return []  # the body would be left empty
    if any(isinstance(leaf, t.String) and "\n" in leaf.value for leaf in t.iter_leaves(agent)):
        return []
    lines = analysis.lines
    first, column = agent.start_pos[0] - 1, agent.start_pos[1]
    indent = lines[first][:column]
    if not indent or indent.strip():
        return []
    last_leaf = agent.get_last_leaf()
    ends_line = isinstance(last_leaf, t.Newline) and bool(last_leaf.value)
    last = agent.end_pos[0] - (2 if ends_line else 1)
    while first > 0 and _is_comment(lines[first - 1], indent):
        first -= 1
    moved = []
    for text in lines[first : last + 1]:
        if text.strip() and not text.startswith(indent):
            return []
        moved.append(text[len(indent) :] if text.strip() else "")
    top = _top_statement(agent)
    if top is None:
        return []
    row = _insertion_line(analysis, _next_to_agents(analysis, top))
    block = nl.join(moved) + nl + nl
    if row > 0 and lines[row - 1].strip():
        block = nl + block
    if ends_line:
        cut = TextEdit((first, 0), (last + 1, 0), "")
    else:  # the file's last line: take the line break before it instead
        cut = TextEdit((first - 1, len(lines[first - 1])), (last, len(lines[last])), "")
    at = (row, 1) if row == 0 and analysis.text.startswith("\ufeff") else (row, 0)
    return [TextEdit(at, at, block), cut]


def _free(analysis: Analysis, name: str) -> bool:
    """Whether the top level has no other definition named ``name``."""
    model = analysis.model
    if model.agent(name) is not None or name in model.blocks or name in model.programs:
        return False
    return not any(symbol.name == name for symbol in model.definitions)


def _is_comment(text: str, indent: str) -> bool:
    return text.startswith(indent) and text[len(indent) :].startswith("#")


def _top_statement(node: Any) -> Any:
    top = t.top_level(node)
    return top if top.parent is not None else None


def _next_to_agents(analysis: Analysis, top: Any) -> Any:
    """The statement to insert before: the one after the last top-level agent that comes
    before ``top``, if any, else ``top`` itself."""
    statements = analysis.module.statements()
    index = next(i for i, s in enumerate(statements) if s is top)
    for i in range(index - 1, -1, -1):
        if isinstance(statements[i], t.AgentDefinition):
            return statements[i + 1]
    return top


def _insertion_line(analysis: Analysis, statement: Any) -> int:
    """Above the comment lines right over a top-level statement, unless they open the
    file (a header stays first)."""
    lines = analysis.lines
    start: tuple[int, int] = statement.start_pos
    row = start[0] - 1
    above = row
    while above > 0 and lines[above - 1].lstrip("\ufeff").startswith("#"):
        above -= 1
    return row if above == 0 else above
