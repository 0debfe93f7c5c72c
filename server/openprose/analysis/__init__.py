"""The analyzer: a semantic model of a program and every validation rule of the spec."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from openprose.analysis.context import _ISSUES, _STRINGS, Context, NodeIndex
from openprose.analysis.model import Model, build_model
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
    path: Path | None = None,
    project_root: Path | None = None,
    contracts: Any = None,
) -> Context:
    """A context with the semantic model built and no rule run yet (editor features use
    the model; ``diagnostics_of`` runs the rules on the same context later)."""
    project_root, contracts = surroundings(path, project_root, contracts)
    index = NodeIndex(module)
    return Context(module, build_model(module, index.nodes), index, path, project_root, contracts)


def surroundings(
    path: Path | None, project_root: Path | None, contracts: Any
) -> tuple[Path | None, Any]:
    """The project root whose `.prose/` state the rules consult, and the loader of imported
    programs' contracts, for a document at ``path`` (None: not on disk)."""
    if path is not None:
        from openprose.analysis.contracts import ContractLoader

        if project_root is not None:
            root = project_root
        else:
            root, has_state = _project_root(path)
            if has_state:
                # Agent memory is checked against the project's `.prose/` state when it exists.
                project_root = root
        if contracts is None:
            contracts = ContractLoader(root)
    return project_root, contracts


def _project_root(file: Path) -> tuple[Path, bool]:
    """``contracts.project_root_of(file)``, and whether that directory holds ``.prose/``.

    The same search with string paths: building a ``Path`` per candidate, then looking for
    ``.prose/`` in the root found once more, took most of the time of checking a small file.
    """
    remembered = _REMEMBERED_ROOTS.get()
    if remembered is not None:
        # By the directory's name: hashing a new ``Path`` cost more than the lookup.
        name = os.path.dirname(file)
        found = remembered.get(name)
        if found is None:
            found = remembered[name] = _search_root(file.parent)
        return found
    return _search_root(file.parent)


def _search_root(directory: Path) -> tuple[Path, bool]:
    for candidate in (directory, *directory.parents):
        if os.path.isdir(os.path.join(candidate, ".prose")):
            return candidate, True
    return directory, False


# The project roots found so far, by directory, while a batch of files is checked at one
# moment (``project_roots_remembered``); None otherwise: an editor's analyses look again
# each time, since a `.prose/` directory may be made while it runs.
_REMEMBERED_ROOTS: ContextVar[dict[str, tuple[Path, bool]] | None] = ContextVar(
    "remembered_project_roots", default=None
)


@contextmanager
def project_roots_remembered() -> Iterator[None]:
    """Within this block, each directory's project root is searched for once: for a command
    checking many files of a few directories (the search climbs to the file system's root
    for every file, most of the time of checking a small one)."""
    token = _REMEMBERED_ROOTS.set({})
    try:
        yield
    finally:
        _REMEMBERED_ROOTS.reset(token)


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
