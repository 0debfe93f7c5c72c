"""What a fix provider works with: the ``Fixer`` (the document, and the lines, indentation,
references and names a fix needs), the ``Fix`` it returns, and the helpers that build one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Final

from openprose.analysis.model import Reference
from openprose.diagnostics import Diagnostic
from openprose.format import TextEdit
from openprose.ide.analysis import Analysis, to_pos
from openprose.ide.fixes.did_you_mean import close_matches
from openprose.ide.fixes.edits import apply_edits
from openprose.ide.fixes.variables import leaf_at, reference_at
from openprose.ide.types import CodeAction, Pos
from openprose.syntax import tree as t

__all__ = [
    "QUICKFIX",
    "Fix",
    "Fixer",
    "Handler",
    "ancestor",
    "changes_to",
    "node_text",
    "quickfix",
    "suggestions",
]


QUICKFIX: Final = "quickfix"


@dataclass(frozen=True, slots=True)
class Fix:
    action: CodeAction
    safe: bool = False  # may be applied without asking (by fix_all)
    suggestion: str | None = None  # the near name a "did you mean" fix puts in


def node_text(node: Any) -> str:
    return str(node.get_code(include_prefix=False)).strip()


def ancestor(node: Any, cls: type | tuple[type, ...]) -> Any:
    while node is not None and not isinstance(node, cls):
        node = node.parent
    return node


def quickfix(
    title: str, edits: Iterable[TextEdit], code: str, preferred: bool = False, safe: bool = False
) -> Fix:
    action = CodeAction(title, QUICKFIX, tuple(edits), (code,), preferred)
    return Fix(action, safe)


def suggestions(
    code: str,
    word: str,
    candidates: Iterable[str],
    edit: Callable[[str], TextEdit],
    sure: bool = True,
) -> list[Fix]:
    """A "Change to `x`" for each name close to ``word``: preferred when exactly one is
    close, and then safe too unless not ``sure``."""
    return changes_to(code, close_matches(word, candidates), edit, sure)


def changes_to(
    code: str, close: list[str], edit: Callable[[str], TextEdit], sure: bool = True
) -> list[Fix]:
    """``suggestions`` for the close names found already."""
    single = len(close) == 1
    return [
        replace(
            quickfix(f"Change to `{name}`", [edit(name)], code, single, single and sure),
            suggestion=name,
        )
        for name in close
    ]


class Fixer:
    """A document as fix providers see it: its analysis, and what their edits need to match
    it (line breaks, indentation, the reference at a diagnostic, the names in use)."""

    def __init__(self, analysis: Analysis, single: bool = True) -> None:
        self.analysis = analysis
        # Fixes asked for one by one (not by fix_all, which checks its whole result): the
        # few that cannot be judged from the tree are checked by checking the fixed text.
        self.single = single
        self.module = analysis.module
        self._newline: str | None = None
        self._indent: str | None = None

    def leaf(self, position: tuple[int, int]) -> Any:
        """The leaf starting at (or containing) a parso position, prefixes excluded."""
        return leaf_at(self.module, position)

    @property
    def newline(self) -> str:
        if self._newline is None:
            found = next(
                (
                    str(leaf.value)
                    for leaf in t.iter_leaves(self.module)
                    if isinstance(leaf, t.Newline) and leaf.value
                ),
                None,
            )
            if found is None:
                match = re.search(r"\r\n|\r|\n", self.analysis.text)
                found = match.group() if match else "\n"
            self._newline = found
        return self._newline

    @property
    def indent(self) -> str:
        """One level of indentation, as the document writes it (two spaces by default)."""
        if self._indent is None:
            self._indent = "  "
            for statement in self.module.statements():
                block = next(
                    (c for c in statement.children if isinstance(c, t.Suite | t.PropertyBlock)),
                    None,
                )
                inner = block.children[1:] if block is not None else []
                if inner and not isinstance(inner[0], t.ErrorNode | t.Newline):
                    unit = self.line_indent(inner[0])
                    if unit and self.line_indent(statement) == "":
                        self._indent = unit
                        break
        return self._indent

    def line_indent(self, node: Any) -> str:
        """The whitespace before ``node`` on its line ("" when it is not first on it)."""
        line, column = node.start_pos
        lines = self.analysis.lines
        if line - 1 >= len(lines):
            return ""
        before = lines[line - 1][:column].lstrip("\ufeff")
        return before if not before.strip() else ""

    def line_after(self, node: Any) -> tuple[Pos, str]:
        """Where to insert whole lines after ``node``, and a line break to put first (when
        the node ends the file without one)."""
        last = node.get_last_leaf()
        if isinstance(last, t.Newline) and last.value:
            return to_pos(node.end_pos), ""
        return to_pos(node.end_pos), self.newline

    def delete_lines(self, node: Any) -> TextEdit:
        """Delete the lines of a statement or property (its comments above stay)."""
        line = node.start_pos[0] - 1
        last = node.get_last_leaf()
        end = to_pos(node.end_pos)
        if isinstance(last, t.Newline) and last.value:
            return TextEdit((line, 0), end, "")
        # The file's last line, without a line break: take the one before it instead.
        if line > 0:
            return TextEdit((line - 1, len(self.analysis.lines[line - 1])), end, "")
        return TextEdit((line, 0), end, "")

    def reference(self, diagnostic: Diagnostic) -> Reference | None:
        return reference_at(self.analysis, diagnostic)

    def brings(self, edit: TextEdit, code: str) -> bool:
        """Whether applying ``edit`` brings more ``code`` diagnostics."""
        from openprose.checking import check_text

        path = str(self.analysis.path) if self.analysis.path is not None else None
        after = check_text(apply_edits(self.analysis.text, [edit]), path)
        count = sum(d.code == code for d in after)
        return count > sum(d.code == code for d in self.analysis.diagnostics)

    def used_names(self) -> set[str]:
        model = self.analysis.model
        names = {s.name for s in model.definitions}
        names |= set(model.agents) | set(model.blocks) | set(model.programs)
        return names


Handler = Callable[[Fixer, Diagnostic, Any], list[Fix]]
