"""The one function every front end (CLI, language server, VM) uses to check a document.

Keeping a single entry point means a new rule shows up everywhere at once: today it is the
parser's syntax diagnostics; the analyzer's semantic rules will be added here.
"""

from __future__ import annotations

from openprose.diagnostics import Diagnostic
from openprose.syntax import parse, syntax_diagnostics


def check_text(text: str, path: str | None = None) -> list[Diagnostic]:
    """Every diagnostic for ``text``, sorted by position.

    ``path`` names the document on disk (None for unsaved text); the analyzer will use it to
    resolve ``use`` of local programs relative to the importing file.
    """
    module = parse(text)
    diagnostics = syntax_diagnostics(module)
    return sorted(diagnostics, key=Diagnostic.sort_key)
