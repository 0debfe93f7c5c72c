"""Document links: the path of each ``use`` that names a program file on disk.

Paths are resolved with the analyzer's rules (``openprose.analysis.contracts``): a local
path (``./x.prose``, ``../lib/x``, a bare ``helper``) relative to this document's file,
a registry path (``@handle/slug``) to the project's cached copy when there is one
(``.prose/imports/...`` or the latest run's).  Nothing is fetched, and a document that
is not saved (no path) gets no links, since relative paths mean nothing without it.

``resolve_use`` is shared with hover and navigation: what a ``use`` statement resolves to.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openprose.analysis.contracts import ContractLoader, Kind, Resolution
from openprose.ide.analysis import Analysis, to_pos
from openprose.ide.types import DocumentLink, Range
from openprose.syntax import tree as t

_LOADER = "_openprose_ide_loader"


def loader_of(analysis: Analysis) -> ContractLoader:
    """One contract loader per analysis (it remembers project roots per directory)."""
    loader = analysis.__dict__.get(_LOADER)
    if loader is None:
        loader = analysis.__dict__[_LOADER] = analysis.caches.loader()
    return loader


def resolve_use(analysis: Analysis, use: Any) -> Resolution | None:
    """What a ``use`` statement names (None when its path is missing or unterminated)."""
    leaf = use.path if isinstance(use, t.UseStatement) else None
    if leaf is None or not leaf.is_terminated:
        return None
    try:
        return loader_of(analysis).resolve(analysis.path, leaf.text)
    except (OSError, ValueError):  # pragma: no cover - defensive: odd paths on odd systems
        return None


def linked_file(resolution: Resolution | None) -> Path | None:
    """The existing program file a resolution points at, if any."""
    if resolution is None or resolution.path.kind not in (Kind.LOCAL, Kind.REGISTRY):
        return None
    file = resolution.file
    if file is None:
        return None
    try:
        return file if file.is_file() else None
    except OSError:  # pragma: no cover - defensive
        return None


def path_contents_range(leaf: Any) -> Range:
    """The range of a one-line string's contents, quotes excluded."""
    line, column = to_pos(leaf.start_pos)
    q = leaf.quote_length
    end_quote = q if leaf.is_terminated else 0
    return Range((line, column + q), (line, column + len(leaf.value) - end_quote))


def document_links(analysis: Analysis) -> list[DocumentLink]:
    if analysis.path is None:
        return []
    links: list[DocumentLink] = []
    for use in analysis.context.nodes(t.UseStatement):
        leaf = use.path
        if leaf is None or not leaf.is_terminated or "\n" in leaf.value or "\r" in leaf.value:
            continue
        resolution = resolve_use(analysis, use)
        file = linked_file(resolution)
        if file is None or resolution is None:
            continue
        if resolution.path.kind is Kind.REGISTRY:
            tooltip = f"Cached copy of {resolution.path.shown}: {file}"
        else:
            tooltip = f"Open {file}"
        links.append(DocumentLink(path_contents_range(leaf), str(file), tooltip))
    return links
