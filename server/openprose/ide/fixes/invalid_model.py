"""Quick fixes for an invalid model (E008): every model, the closest first."""

from __future__ import annotations

from typing import Any

from openprose.diagnostics import Diagnostic
from openprose.ide.fixes.did_you_mean import close_matches
from openprose.ide.fixes.edits import replace_node
from openprose.ide.fixes.fixer import Fix, Fixer, ancestor, node_text, quickfix
from openprose.syntax import tree as t
from openprose.syntax.vocabulary import MODELS

__all__ = ["invalid_model"]


def invalid_model(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    prop = ancestor(leaf, t.Property)
    if prop is None or prop.name != "model" or prop.value is None:
        return []
    value = prop.value
    if value.start_pos != diagnostic.start:
        return []
    word = node_text(value).strip('"').strip()
    close = close_matches(word, MODELS, n=len(MODELS))
    order = close + [m for m in MODELS if m not in close]
    single = len(close) == 1
    return [
        quickfix(
            f"Change model to `{model}`",
            [replace_node(value, model)],
            "E008",
            preferred=bool(close) and model == close[0],
            safe=single and model == close[0],
        )
        for model in order
    ]
