"""The fix-all engine: one ``source.fixAll`` action applying the safe fixes of a document
together (``prose check --fix`` applies it too; ``unsafe`` adds the preferred fixes).  The
fixes never overlap, and the result is checked: each fixed diagnostic gone, nothing new,
no comment lost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Final

from openprose.config import Config
from openprose.diagnostics import Diagnostic
from openprose.format import TextEdit
from openprose.ide.analysis import Analysis
from openprose.ide.fixes.edits import apply_edits
from openprose.ide.fixes.fixer import Fix, Fixer
from openprose.ide.fixes.registry import diagnostics_under, fixes_for
from openprose.ide.types import CodeAction

__all__ = ["FIX_ALL", "fix_all"]


FIX_ALL: Final = "source.fixAll"


def fix_all(
    analysis: Analysis, config: Config | None = None, unsafe: bool = False
) -> list[CodeAction]:
    """One ``source.fixAll`` action applying every safe fix of the diagnostics reported
    under ``config`` (none when there is nothing to fix).  The fixes never overlap, and the
    result is checked: a fix that would leave its diagnostic in place or bring a new one is
    left out.  ``unsafe`` (the command line's --unsafe-fixes) also takes the preferred fix
    of a diagnostic without a safe one: what the editor's "Auto Fix" would apply, a likely
    intent rather than a sure one."""
    # The server asks for "fix all" with every code action request (each cursor move): the
    # answer for a text is kept (in ``analysis.caches``), since checking the fixed text costs
    # a full check.  The same text under another rule selection has other fixes, so the
    # selection is part of the key.
    key = (analysis.text, str(analysis.path), _config_key(config), unsafe)
    answers = analysis.caches.fix_all
    cached: tuple[CodeAction, ...] | None = answers.get(key)
    if cached is not None:
        return list(cached)
    result = _fix_all(analysis, config, unsafe)
    answers.put(key, tuple(result))
    return result


def _config_key(config: Config | None) -> frozenset[str] | None:
    """What of a configuration decides the fixes: the enabled codes (severities do not)."""
    return None if config is None else config.enabled


_Chosen = tuple[Diagnostic, "Fix"]
# Checks of the fixed text allowed when the fixes interfere (each is a full check).
_MAX_CHECKS = 16


def _fix_all(analysis: Analysis, config: Config | None, unsafe: bool) -> list[CodeAction]:
    fixer = Fixer(analysis, single=False)
    chosen: list[_Chosen] = []
    taken: list[TextEdit] = []
    for diagnostic in diagnostics_under(analysis, config):
        fixes = fixes_for(fixer, diagnostic)
        fix = next((f for f in fixes if f.safe), None)
        if fix is None and unsafe:
            fix = next((f for f in fixes if f.action.preferred), None)
        if fix is None:
            continue
        edits = [e for e in fix.action.edits if e not in taken]
        if any(_overlap(e, other) for e in edits for other in taken):
            continue
        taken.extend(edits)
        chosen.append((diagnostic, fix))
    chosen = _verified(analysis, chosen, config) if chosen else []
    if not chosen:
        return []
    edits = _merge(fix.action.edits for _, fix in chosen)
    codes = sorted({code for _, fix in chosen for code in fix.action.diagnostic_codes})
    count = len(chosen)
    title = f"Fix {count} problem{'s' if count != 1 else ''} that can be fixed safely"
    return [CodeAction(title, FIX_ALL, tuple(edits), tuple(codes), preferred=False)]


def _verified(analysis: Analysis, chosen: list[_Chosen], config: Config | None) -> list[_Chosen]:
    """The fixes whose result is clean: each fixed diagnostic gone, nothing new.  When the
    whole set is not clean, groups of fixes are added while the result stays clean, halving
    a group that is not (within a budget of checks; what is left over is left out)."""
    from openprose.checking import check_module
    from openprose.format import _comments as comments_of
    from openprose.syntax import parse

    path = str(analysis.path) if analysis.path is not None else None
    before = Counter(d.code for d in diagnostics_under(analysis, config))
    comments = comments_of(analysis.module)
    checks = [0]

    def clean(fixes: list[_Chosen]) -> bool:
        checks[0] += 1
        text = apply_edits(analysis.text, _merge(fix.action.edits for _, fix in fixes))
        module = parse(text)
        if comments_of(module) != comments:
            return False  # a fix that deletes a line must not take its comment with it
        after = Counter(d.code for d in check_module(module, path, config, text))
        fixed = Counter(d.code for d, _ in fixes)
        return all(after[code] <= before[code] - fixed[code] for code in after | fixed)

    if clean(chosen):
        return chosen
    kept: list[_Chosen] = []
    pending = [chosen[: len(chosen) // 2], chosen[len(chosen) // 2 :]]
    while pending and checks[0] < _MAX_CHECKS:
        group = pending.pop(0)
        if not group:
            continue
        if clean([*kept, *group]):
            kept.extend(group)
        elif len(group) > 1:
            half = len(group) // 2
            pending[:0] = [group[:half], group[half:]]
    return kept


def _overlap(a: TextEdit, b: TextEdit) -> bool:
    """Whether two edits touch the same text (two insertions at one point do too)."""
    return a.start == b.start or (a.start < b.end and b.start < a.end)


def _merge(groups: Iterable[Iterable[TextEdit]]) -> list[TextEdit]:
    merged: list[TextEdit] = []
    for group in groups:
        for edit in group:
            if edit not in merged:
                merged.append(edit)
    return sorted(merged, key=lambda e: (e.start, e.end))
