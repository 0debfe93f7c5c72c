"""The "did you mean" names under a diagnostic in ``prose check``'s human format: those the
language server's quick fixes offer (``ide.code_actions.near_names``), so the shell and
the editor never disagree on what was meant."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openprose.diagnostics import Diagnostic

if TYPE_CHECKING:
    from openprose.ide.analysis import Analysis

# The codes whose quick fixes put in a near name: an undefined agent or variable, an
# unknown property or modifier.  Only these are worth analysing the text again for.
_NAMED = frozenset({"E007", "W005", "E043", "E044", "E045", "E061", "W034"})


class NearNames:
    """The near names for the diagnostics of one text; the text is analysed on the first
    question that needs it, not before."""

    def __init__(self, text: str, path: str | None) -> None:
        self._text = text
        self._path = path
        self._analysis: Analysis | None = None

    def __call__(self, diagnostic: Diagnostic) -> list[str]:
        if diagnostic.code not in _NAMED or "did you mean" in diagnostic.message:
            return []
        from openprose.ide.code_actions import near_names

        if self._analysis is None:
            from openprose.ide.analysis import analyze_document

            self._analysis = analyze_document(self._text, path=self._path)
        return near_names(self._analysis, diagnostic)
