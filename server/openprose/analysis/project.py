"""Where a checked document lives: the project root whose `.prose/` state the rules consult,
and the loader of the contracts of the programs it imports."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any


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
