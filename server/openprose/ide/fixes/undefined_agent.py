"""Quick fixes for an undefined agent (E007): a "did you mean" when a defined agent's name is
close, moving out an agent of that name defined inside another statement, or a new agent
next to the other agents.
"""

from __future__ import annotations

from typing import Any

from openprose.diagnostics import Diagnostic
from openprose.format import TextEdit
from openprose.ide.fixes.edits import replace_node
from openprose.ide.fixes.fixer import Fix, Fixer, quickfix, suggestions
from openprose.ide.fixes.nested_agent import move_to_top_level
from openprose.syntax import tree as t

__all__ = ["undefined_agent"]


def undefined_agent(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    model = fixer.analysis.model
    uses = [
        (ref, node)
        for ref, node in model.agent_references
        if ref.value == getattr(leaf, "value", None) and model.agent(ref.value) is None
    ]
    if not isinstance(leaf, t.Name) or not any(ref is leaf for ref, _ in uses):
        return []
    name = leaf.value
    fixes = suggestions("E007", name, model.agents, lambda other: replace_node(leaf, other))
    nested = [
        a
        for a in fixer.analysis.context.nodes(t.AgentDefinition)
        if a.name == name and not isinstance(a.parent, t.Module)
    ]
    if nested:
        # Defined, but inside another statement (W037): moving it out is the fix, and a
        # second definition at the top level would only hide it.
        edits = move_to_top_level(fixer.analysis, nested[0], fixer.newline)
        if edits:
            title = f"Move agent `{name}` to the top level"
            fixes.append(quickfix(title, edits, "E007", preferred=not fixes))
        return fixes
    first_ref, first_node = min(uses, key=lambda use: use[0].start_pos)
    top = t.top_level(first_ref)
    if top.parent is None:
        return fixes
    if any(isinstance(node, t.Resume) for _, node in uses):
        # `resume:` needs a persistent agent; a first use that resumes continues memory
        # from earlier runs, kept with the project.
        persist = "true" if isinstance(first_node, t.Session) else "project"
    else:
        persist = None
    nl, unit = fixer.newline, fixer.indent
    lines = [
        f"agent {name}:",
        f"{unit}model: sonnet",
        *([f"{unit}persist: {persist}"] if persist else []),
        f'{unit}prompt: "You are the {name} agent: describe its role and expertise here"',
    ]
    stub = nl.join(lines) + nl + nl
    # Next to the agents defined before that statement, if any, else right before it.
    statements = fixer.module.statements()
    index = next(i for i, s in enumerate(statements) if s is top)
    for i in range(index - 1, -1, -1):
        if isinstance(statements[i], t.AgentDefinition):
            top = statements[i + 1]
            break
    line = _insertion_line(fixer, top)
    text_lines = fixer.analysis.lines
    if line > 0 and text_lines[line - 1].strip():
        stub = nl + stub
    at = (line, 1) if line == 0 and fixer.analysis.text.startswith("\ufeff") else (line, 0)
    fixes.append(
        quickfix(
            f"Create agent `{name}`",
            [TextEdit(at, at, stub)],
            "E007",
            preferred=not fixes,
        )
    )
    return fixes


def _insertion_line(fixer: Fixer, statement: Any) -> int:
    """The 0-based line to insert a definition before ``statement``: above the comment
    lines right over it, unless those open the file (a header stays first)."""
    lines = fixer.analysis.lines
    start: tuple[int, int] = statement.start_pos
    line = start[0] - 1
    above = line
    while above > 0 and lines[above - 1].lstrip("\ufeff").startswith("#"):
        above -= 1
    if above == 0:
        return line
    return above
