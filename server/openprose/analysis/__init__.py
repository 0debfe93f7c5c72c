"""The analyzer: a semantic model of a program and every validation rule of the spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openprose.analysis.context import _ISSUES, _STRINGS, Context, NodeIndex
from openprose.analysis.model import Model, build_model
from openprose.analysis.project import project_roots_remembered, surroundings
from openprose.analysis.rules import all_rules
from openprose.diagnostics import Diagnostic
from openprose.syntax.tree import ErrorNode


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
    return _run(module, path, project_root, contracts).diagnostics_sorted()


def check(
    module: Any,
    path: Path | None = None,
    project_root: Path | None = None,
    contracts: Any = None,
) -> list[Diagnostic]:
    """Syntax and semantic diagnostics together, from one walk of the tree."""
    return diagnostics_of(_run(module, path, project_root, contracts))


def _run(module: Any, path: Path | None, project_root: Path | None, contracts: Any) -> Context:
    ctx = prepare(module, path, project_root, contracts)
    run_rules(ctx)
    return ctx


def prepare(
    module: Any,
    path: Path | str | None = None,
    project_root: Path | None = None,
    contracts: Any = None,
) -> Context:
    """A context with the semantic model built and no rule run yet (editor features use
    the model; ``diagnostics_of`` runs the rules on the same context later)."""
    index = NodeIndex(module)
    model = build_model(module, index.nodes)
    if path is not None and (project_root is None or contracts is None):
        # Found when a rule first needs them (most programs import nothing).
        return Context(module, model, index, path, project_root, contracts, around=True)
    return Context(module, model, index, path, project_root, contracts)


def run_rules(ctx: Context) -> None:
    if ctx.memo("rules.ran", lambda: False):
        return
    ctx._memo["rules.ran"] = True
    for rule in all_rules():
        rule(ctx)


def dismantle(ctx: Context) -> None:
    """Break the cycles of a context's tree and model (a node and its children point at
    each other, a scope and its symbols too, an issue and its node's leaf), for a caller
    that made the tree and reads neither again: they are freed as soon as the last
    reference goes, without the cyclic collector tracing them."""
    inside_errors = []
    for kind, nodes in ctx.index.by_class().items():
        if kind is not _STRINGS and kind is not _ISSUES:
            if issubclass(kind, ErrorNode):
                inside_errors += nodes
            else:
                for node in nodes:
                    node.children = []
    # An issue points at a leaf, whose parent holds the issue.
    for node in ctx.index.with_issues():
        node.issues = None
    # The index does not look inside error nodes (rare: walked here).
    while inside_errors:
        node = inside_errors.pop()
        children = node.children
        node.children = []
        node.issues = None
        inside_errors += [child for child in children if hasattr(child, "children")]
    for scope in ctx.model.scopes:
        scope.symbols = {}
    ctx._memo.clear()


def diagnostics_of(ctx: Context) -> list[Diagnostic]:
    """Syntax and semantic diagnostics of a prepared context (the rules run once)."""
    run_rules(ctx)
    return sorted([*ctx.syntax_diagnostics(), *ctx.diagnostics], key=Diagnostic.sort_key)


__all__ = [
    "Context",
    "Model",
    "analyze",
    "build_model",
    "check",
    "diagnostics_of",
    "dismantle",
    "prepare",
    "project_roots_remembered",
    "run_rules",
    "surroundings",
]
