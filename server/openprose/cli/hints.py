"""The "did you mean" names under a diagnostic in ``prose check``'s human format.

Where the language server has a quick fix putting in a near name (an undefined agent or
variable, an unknown property or modifier), the hint names the same ones
(``ide.fixes.registry.near_names``), so the shell and the editor never disagree.  An
undefined block and a misspelt statement keyword have no fix; their hints use the same
measure of closeness (``close_names``) on the program's blocks and the keywords the
completion offers at the start of a statement.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from openprose.diagnostics import Diagnostic

if TYPE_CHECKING:
    from openprose.ide.analysis import Analysis

# The codes whose quick fixes put in a near name.  Only these, and the two below, are worth
# analysing the text again for.
_FIXED_BY_NAME = frozenset({"E007", "W005", "E043", "E044", "E045", "E061", "W034"})
# Those of an undefined variable: their names are found without making the fixes (and
# loading every fix and the formatter they import).
_UNDEFINED_VARIABLE = frozenset({"E043", "E044", "E045", "E061", "W034"})
_UNDEFINED_BLOCK = "E051"
_NOT_A_STATEMENT = "E005"


class NearNames:
    """The near names for the diagnostics of one text; the text is analysed on the first
    question that needs it, not before."""

    def __init__(
        self,
        text: str,
        path: str | None,
        analysis: Analysis | None = None,
        diagnostics: Iterable[Diagnostic] = (),
    ) -> None:
        self._text = text
        self._path = path
        # The one the diagnostics came from, when the caller kept it: analysing a big file
        # again for its hints took as long as checking it.
        self._analysis = analysis
        # Those that will be asked about, when known: their references are found together.
        self._diagnostics = diagnostics

    def __call__(self, diagnostic: Diagnostic) -> list[str]:
        code = diagnostic.code
        if "did you mean" in diagnostic.message:
            return []
        if code not in _FIXED_BY_NAME and code not in (_UNDEFINED_BLOCK, _NOT_A_STATEMENT):
            return []
        from openprose.ide.fixes.did_you_mean import close_names

        analysis = self._analyse()
        if code == _UNDEFINED_BLOCK:
            word = _word_at(analysis, diagnostic)
            return close_names(word, analysis.model.blocks) if word else []
        if code == _NOT_A_STATEMENT:
            return _keywords(analysis, diagnostic)
        if code in _UNDEFINED_VARIABLE:
            from openprose.ide.fixes.variables import near_variable_names

            return near_variable_names(analysis, diagnostic)
        from openprose.ide.fixes.registry import near_names

        return near_names(analysis, diagnostic)

    def _analyse(self) -> Analysis:
        if self._analysis is None:
            from openprose.ide.analysis import analyze_document

            self._analysis = analyze_document(self._text, path=self._path)
        if self._diagnostics:
            from openprose.ide.fixes.variables import expect_references

            starts = (d.start for d in self._diagnostics if d.code in _FIXED_BY_NAME)
            expect_references(self._analysis, starts)
            self._diagnostics = ()
        return self._analysis


def _word_at(analysis: Analysis, diagnostic: Diagnostic) -> str:
    """The name the diagnostic's range covers ("" when it spans lines or is no name)."""
    (line, start), (end_line, end) = diagnostic.start, diagnostic.end
    if line != end_line or not 1 <= line <= len(analysis.lines):
        return ""
    word = analysis.lines[line - 1][start:end]
    return word if word.isidentifier() else ""


def _keywords(analysis: Analysis, diagnostic: Diagnostic) -> list[str]:
    """For a statement that starts with a plain name (``sesion "..."``): the statement
    keywords close to it."""
    from openprose.ide.fixes.did_you_mean import close_names
    from openprose.syntax import tree as t
    from openprose.syntax.vocabulary import STATEMENT_KEYWORDS

    try:
        leaf = analysis.module.get_leaf_for_position(diagnostic.start)
    except (ValueError, IndexError):
        return []
    if leaf is not None and leaf.start_pos != diagnostic.start:
        leaf = leaf.get_next_leaf()  # the line break that ends where the statement starts
    if not isinstance(leaf, t.Name) or leaf.start_pos != diagnostic.start:
        return []
    return close_names(leaf.value, STATEMENT_KEYWORDS)
