"""The one function every front end (CLI, language server, VM) uses to check a document.

Keeping a single entry point means a new rule shows up everywhere at once: the parser's
syntax diagnostics and the analyzer's semantic rules, then the project's configuration
(rule selection, severity overrides) and the document's suppression comments.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprose.diagnostics import Diagnostic
from openprose.syntax import parse
from openprose.syntax.parser import gc_paused

if TYPE_CHECKING:
    from openprose.config import Config


def check_text(
    text: str,
    path: str | None = None,
    config: Config | None = None,
    *,
    process_ends: bool = False,
) -> list[Diagnostic]:
    """Every diagnostic for ``text``, sorted by position.

    ``path`` names the document on disk (None for unsaved text); the analyzer uses it to
    resolve ``use`` of local programs relative to the importing file. ``config`` selects
    rules and overrides severities (None: every rule at its default severity); the caller
    finds it, usually with ``openprose.config.ConfigFinder``. Suppression comments in the
    text always apply.  ``process_ends``: the process ends right after (``prose check``'s
    last file), so the tree and model are kept as they are until then, neither taken apart
    nor freed (freeing a big program's tree took a fifth of checking it).
    """
    from openprose.analysis import dismantle, prepare, run_rules

    # The tree and the model are alive until the end: a collection in between only scans
    # them, and on a big file it ran often enough to take a third of the time.
    with gc_paused():
        module = parse(text)
        # The path as given: a ``Path`` is made of it only if a rule needs one.
        ctx = prepare(module, path or None)
        run_rules(ctx)
        # Unsorted: ``finish`` sorts what is left after selection and suppression.
        found = finish([*ctx.syntax_diagnostics(), *ctx.diagnostics], module, config, text)
        if process_ends:
            _KEPT_UNTIL_EXIT.append(ctx)
        else:
            # Nothing else holds this tree: its cycles are broken here, so that it is freed
            # when this returns rather than traced by the cyclic collector (an eighth of
            # checking many small files).
            dismantle(ctx)
        return found


_KEPT_UNTIL_EXIT: list[Any] = []


def check_module(
    module: Any, path: str | None = None, config: Config | None = None, text: str | None = None
) -> list[Diagnostic]:
    """Every diagnostic for an already parsed module (the language server keeps its trees
    up to date incrementally, so it checks the tree rather than the text).  ``text``, when
    the caller has it, lets suppression scanning be skipped for files without any."""
    from openprose.analysis import check

    diagnostics = check(module, Path(path) if path else None)
    return finish(diagnostics, module, config, text)


def finish(
    diagnostics: list[Diagnostic], module: Any, config: Config | None, text: str | None
) -> list[Diagnostic]:
    """Selection, then severity overrides, then suppression comments (README, "Configuration").
    Suppression comments that have no effect are reported too (W036), under the same
    selection."""
    suppressions = None
    if text is None or "prose:" in text:
        from openprose.suppressions import find_suppressions

        suppressions = find_suppressions(module)
        diagnostics = diagnostics + suppressions.problems
    if config is not None:
        diagnostics = config.apply(diagnostics)
    if suppressions is not None:
        from openprose.suppressions import apply_suppressions

        diagnostics = apply_suppressions(diagnostics, suppressions)
    return sorted(diagnostics, key=Diagnostic.sort_key)
