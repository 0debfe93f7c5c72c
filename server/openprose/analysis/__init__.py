"""The analyzer: a semantic model of a program and every validation rule of the spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openprose.analysis.context import Context
from openprose.analysis.model import Model, build_model
from openprose.analysis.rules import all_rules
from openprose.diagnostics import Diagnostic


def analyze(
    module: Any,
    path: Path | None = None,
    project_root: Path | None = None,
    contracts: Any = None,
) -> list[Diagnostic]:
    """The semantic diagnostics of a parsed module (syntax diagnostics excluded).

    ``contracts`` loads the contracts of imported programs; by default, for a document on
    disk, a ``ContractLoader`` reading local programs and the project's import cache.
    """
    if contracts is None and path is not None:
        from openprose.analysis.contracts import ContractLoader

        contracts = ContractLoader(project_root)
    ctx = Context(module, build_model(module), path, project_root, contracts)
    for rule in all_rules():
        rule(ctx)
    return sorted(ctx.diagnostics, key=Diagnostic.sort_key)


__all__ = ["Context", "Model", "analyze", "build_model"]
