"""Durable run state: the journal of steps and the spec's four state backends.

``open_catalog`` picks a backend by name; every backend implements ``base.Catalog`` and
``base.RunStore``.  The backends that need a driver or a server import it only when chosen.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from openprose.vm.state.base import BACKENDS, Catalog, RunInfo, RunStore, StateError

__all__ = ["BACKENDS", "Catalog", "RunInfo", "RunStore", "StateError", "open_catalog"]


def open_catalog(
    state: str,
    runs_root: Path,
    *,
    project_root: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Catalog:
    """The runs of one backend.  ``runs_root`` is the project's ``.prose/runs``;
    ``project_root`` (default: two levels above it) holds ``.prose/.env`` for postgres."""
    if state == "filesystem":
        from openprose.vm.state.filesystem import FilesystemCatalog

        return FilesystemCatalog(runs_root)
    if state == "sqlite":
        from openprose.vm.state.sqlite import SqliteCatalog

        return SqliteCatalog(runs_root)
    if state == "postgres":
        from openprose.vm.state.postgres import PostgresCatalog

        root = project_root if project_root is not None else runs_root.parent.parent
        return PostgresCatalog.from_environment(root, environ)
    if state == "in-context":
        from openprose.vm.state.in_context import InContextCatalog

        return InContextCatalog()
    raise StateError(f"unknown state backend {state!r} (one of {', '.join(BACKENDS)})")
