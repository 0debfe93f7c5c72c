"""The one function every front end (CLI, language server, VM) uses to check a document.

Keeping a single entry point means a new rule shows up everywhere at once: today it is the
parser's syntax diagnostics; the analyzer's semantic rules will be added here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openprose.diagnostics import Diagnostic
from openprose.syntax import parse, syntax_diagnostics


def check_text(text: str, path: str | None = None) -> list[Diagnostic]:
    """Every diagnostic for ``text``, sorted by position.

    ``path`` names the document on disk (None for unsaved text); the analyzer will use it to
    resolve ``use`` of local programs relative to the importing file.
    """
    return check_module(parse(text), path)


def check_module(module: Any, path: str | None = None) -> list[Diagnostic]:
    """Every diagnostic for an already parsed module (the language server keeps its trees
    up to date incrementally, so it checks the tree rather than the text)."""
    from openprose.analysis import analyze

    diagnostics = syntax_diagnostics(module)
    diagnostics += analyze(module, Path(path) if path else None)
    return sorted(diagnostics, key=Diagnostic.sort_key)
