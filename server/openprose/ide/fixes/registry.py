"""The fix registry: the provider of each fixed code (one module per code or family of
codes, named after what it fixes), and the quick fixes of the diagnostics at a range.
"""

from __future__ import annotations

from openprose.config import Config
from openprose.diagnostics import Diagnostic
from openprose.format import TextEdit
from openprose.ide.analysis import Analysis, to_pos
from openprose.ide.fixes.const_reassignment import const_reassignment
from openprose.ide.fixes.duplicate_property import duplicate_property
from openprose.ide.fixes.fixer import Fix, Fixer, Handler
from openprose.ide.fixes.invalid_model import invalid_model
from openprose.ide.fixes.legacy_import import legacy_import
from openprose.ide.fixes.missing_colon import agent_without_colon, session_without_colon
from openprose.ide.fixes.nested_agent import nested_agent
from openprose.ide.fixes.session_with_memory import session_with_memory
from openprose.ide.fixes.try_without_catch import try_without_catch
from openprose.ide.fixes.unbounded_loop import unbounded_loop
from openprose.ide.fixes.undefined_agent import undefined_agent
from openprose.ide.fixes.undefined_variable import undefined_variable
from openprose.ide.fixes.unknown_property import unknown_property
from openprose.ide.fixes.useless_suppression import useless_suppression
from openprose.ide.types import CodeAction, Range

__all__ = ["HANDLERS", "code_actions", "diagnostics_under", "fixes_for", "near_names"]


_UNDEFINED_VARIABLE = ("E043", "E044", "E045", "E061", "W034")


HANDLERS: dict[str, Handler] = {
    "E003": agent_without_colon,
    "E004": agent_without_colon,
    "E007": undefined_agent,
    "E008": invalid_model,
    "E009": duplicate_property,
    "E037": try_without_catch,
    "E048": const_reassignment,
    "E074": session_without_colon,
    "W005": unknown_property,
    "W011": session_with_memory,
    "W018": unbounded_loop,
    "W027": legacy_import,
    "W037": nested_agent,
    **{code: undefined_variable for code in _UNDEFINED_VARIABLE},
}


def fixes_for(fixer: Fixer, diagnostic: Diagnostic) -> list[Fix]:
    """The fixes of ``diagnostic``, from the provider registered for its code."""
    if diagnostic.code == "W036":  # in a comment: there is no leaf to start from
        return useless_suppression(fixer, diagnostic)
    handler = HANDLERS.get(diagnostic.code)
    if handler is None:
        return []
    leaf = fixer.leaf(diagnostic.start)
    if leaf is None:
        return []
    return handler(fixer, diagnostic, leaf)


def code_actions(
    analysis: Analysis,
    range: Range,
    diagnostics: list[Diagnostic] | None = None,
    config: Config | None = None,
) -> list[CodeAction]:
    """Quick fixes for the diagnostics that touch ``range``: those the client shows when
    given, else the document's own under ``config`` (a code the project ignores is not
    reported, so it gets no fix either)."""
    if diagnostics is None:
        diagnostics = diagnostics_under(analysis, config)
    fixer = Fixer(analysis)
    actions: list[CodeAction] = []
    seen: set[tuple[str, tuple[TextEdit, ...]]] = set()
    for diagnostic in diagnostics:
        if not _touches(diagnostic, range):
            continue
        for fix in fixes_for(fixer, diagnostic):
            key = (fix.action.title, fix.action.edits)
            if key not in seen:
                seen.add(key)
                actions.append(fix.action)
    return actions


def near_names(analysis: Analysis, diagnostic: Diagnostic) -> list[str]:
    """The names the "did you mean" fixes of ``diagnostic`` offer, closest first (the
    command line shows them as hints)."""
    fixes = fixes_for(Fixer(analysis, single=False), diagnostic)
    return [fix.suggestion for fix in fixes if fix.suggestion is not None]


def diagnostics_under(analysis: Analysis, config: Config | None) -> list[Diagnostic]:
    return analysis.diagnostics if config is None else analysis.diagnostics_with(config)


def _touches(diagnostic: Diagnostic, range: Range) -> bool:
    start, end = to_pos(diagnostic.start), to_pos(diagnostic.end)
    low, high = sorted((range.start, range.end))
    return start <= high and low <= end
