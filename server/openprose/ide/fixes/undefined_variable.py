"""Quick fixes for an undefined variable (E043, E044, E045, E061, and W034 for a prompt's
placeholder): a "did you mean" when a visible variable's name is close; else define it, with
an ``input`` at the top of the program (with its other inputs, else after its imports), or a
``let`` on the line before the statement that uses it, at that statement's indentation.

No definition is offered when defining the name would clash with something the program
already has under that name (a variable defined elsewhere, an agent, a block, an imported
program): the use is then misplaced or mistyped, not missing.
"""

from __future__ import annotations

import re
from typing import Any

from openprose.analysis.model import Reference
from openprose.diagnostics import Diagnostic
from openprose.format import TextEdit
from openprose.ide.analysis import Analysis
from openprose.ide.fixes.edits import text_edit
from openprose.ide.fixes.fixer import Fix, Fixer, changes_to, quickfix
from openprose.ide.fixes.variables import close_variables
from openprose.syntax import tree as t
from openprose.syntax.vocabulary import RESERVED_WORDS

__all__ = ["define_variable", "undefined_variable"]

_NAME = re.compile(r"[^\W\d][\w-]*")
# What may stand before a program's inputs (the inputs go after the last of these that
# are imports or inputs).
_HEADER = (t.UseStatement, t.ImportStatement, t.InputDeclaration, t.AgentDefinition)


def undefined_variable(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    reference = fixer.reference(diagnostic)
    if reference is None or reference.symbol is not None:
        return []
    fixes = _did_you_mean_variable(fixer, diagnostic, reference)
    # With a close name the use is a typo; a placeholder in a prompt is most often text.
    if not fixes and diagnostic.code != "W034":
        for title, edits in define_variable(fixer.analysis, reference, fixer.newline):
            fixes.append(quickfix(title, edits, diagnostic.code))
    return fixes


def _did_you_mean_variable(fixer: Fixer, diagnostic: Diagnostic, reference: Reference) -> list[Fix]:
    found = close_variables(fixer.analysis, reference)
    if found is None:
        return []
    at, until, close = found
    # A `{placeholder}` in a multi-line prompt may well be meant as text: never automatic.
    sure = diagnostic.code != "W034"
    return changes_to(diagnostic.code, close, lambda other: text_edit(at, until, other), sure)


def define_variable(
    analysis: Analysis, reference: Reference, newline: str
) -> list[tuple[str, list[TextEdit]]]:
    """(title, edits) of each way to define the name ``reference`` uses."""
    name = reference.name
    if reference.role == "assignment" or not _definable(analysis, name):
        return []
    fixes: list[tuple[str, list[TextEdit]]] = []
    declared = _input(analysis, name, newline)
    if declared is not None:
        fixes.append((f"Create input `{name}`", [declared]))
    bound = _let(analysis, reference, name, newline)
    if bound is not None:
        fixes.append((f"Create `let {name}` before this statement", [bound]))
    return fixes


def _definable(analysis: Analysis, name: str) -> bool:
    model = analysis.model
    if not _NAME.fullmatch(name) or name in RESERVED_WORDS:
        return False
    if name in model.agents or name in model.blocks or name in model.programs:
        return False
    return not any(symbol.name == name for symbol in model.definitions)


# --------------------------------------------------------------------------- input


def _input(analysis: Analysis, name: str, nl: str) -> TextEdit | None:
    line = f'input {name}: "The {name}: describe what the caller provides"'
    statements = analysis.module.statements()
    header: list[Any] = []
    for statement in statements:
        if not isinstance(statement, _HEADER):
            break
        header.append(statement)
    inputs = [s for s in header if isinstance(s, t.InputDeclaration)]
    if inputs:
        at, first = _after(analysis, inputs[-1], nl)
        return TextEdit(at, at, first + line + nl)
    imports = [s for s in header if isinstance(s, t.UseStatement | t.ImportStatement)]
    lines = analysis.lines
    if imports:
        at, first = _after(analysis, imports[-1], nl)
        follows = at[0] < len(lines) and lines[at[0]].strip()
        return TextEdit(at, at, first + nl + line + nl + (nl if follows else ""))
    if not statements:
        return None
    row = _above_comments(analysis, statements[0], keep_header=True)
    before = nl if row > 0 and lines[row - 1].strip() else ""
    at = _line_start(analysis, row)
    return TextEdit(at, at, before + line + nl + nl)


def _after(analysis: Analysis, node: Any, nl: str) -> tuple[tuple[int, int], str]:
    """Where whole lines go after ``node``, and the line break to write first when the
    node ends the file without one."""
    last = node.get_last_leaf()
    end = node.end_pos
    if isinstance(last, t.Newline) and last.value:
        return (end[0] - 1, end[1]), ""
    return (end[0] - 1, end[1]), nl


# --------------------------------------------------------------------------- let


def _let(analysis: Analysis, reference: Reference, name: str, nl: str) -> TextEdit | None:
    statement = _statement_of(reference.leaf)
    if statement is None:
        return None
    row, column = statement.start_pos[0] - 1, statement.start_pos[1]
    lines = analysis.lines
    indent = lines[row][:column].lstrip("\ufeff")
    if indent.strip():
        return None  # not first on its line
    row = _above_comments(analysis, statement, keep_header=isinstance(statement.parent, t.Module))
    text = f'{indent}let {name} = session "Produce the {name}: describe the task here"{nl}'
    at = _line_start(analysis, row)
    return TextEdit(at, at, text)


def _line_start(analysis: Analysis, row: int) -> tuple[int, int]:
    """Where text inserted before line ``row`` goes: after a byte order mark."""
    return (row, 1) if row == 0 and analysis.text.startswith("\ufeff") else (row, 0)


def _statement_of(leaf: Any) -> Any:
    """The statement holding ``leaf`` in a body (or the program) where a ``let`` before it
    is seen by it: out of a ``parallel``, whose statements are branches run side by side."""
    node = leaf
    while True:
        while node.parent is not None and not isinstance(node.parent, t.Suite | t.Module):
            if isinstance(node.parent, t.ErrorNode):
                return None
            node = node.parent
        parent = node.parent
        if parent is None:
            return None
        if isinstance(parent, t.Suite) and isinstance(parent.parent, t.Parallel):
            node = parent.parent
            continue
        return node


def _above_comments(analysis: Analysis, statement: Any, keep_header: bool) -> int:
    """The 0-based line above the comment lines right over ``statement`` (at its
    indentation), which describe it; a comment block opening the file stays first."""
    lines = analysis.lines
    start: tuple[int, int] = statement.start_pos
    row = start[0] - 1
    indent = lines[row][: statement.start_pos[1]].lstrip("\ufeff")
    above = row
    while above > 0:
        text = lines[above - 1].lstrip("\ufeff")
        if not (text.startswith(indent) and text[len(indent) :].startswith("#")):
            break
        above -= 1
    if above == 0 and keep_header:
        return row
    return above
