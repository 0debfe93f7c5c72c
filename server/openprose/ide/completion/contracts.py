"""The contract of an imported program (its inputs and outputs) and the descriptions of its
inputs, for completion inside a call and for signature help."""

from __future__ import annotations

from openprose.analysis.contracts import Contract, Status
from openprose.files import read_text
from openprose.ide.analysis import Analysis
from openprose.ide.caches import stamp_of
from openprose.syntax import tree as t


def program_contract(analysis: Analysis, alias: str) -> Contract | None:
    """The contract of the program imported as ``alias`` (None without a saved file)."""
    if analysis.path is None:
        return None
    uses = analysis.model.programs.get(alias)
    if not uses or uses[0].path is None:
        return None
    resolution = analysis.caches.loader().resolve(analysis.path, uses[0].path.text)
    if resolution.status is not Status.FOUND:
        return None
    contract: Contract | None = resolution.contract
    return contract


def input_descriptions(analysis: Analysis, contract: Contract) -> dict[str, str]:
    """The descriptions of a contract's inputs, read from its file (kept per version of the
    file in ``analysis.caches``)."""
    from openprose.syntax import parse

    file = contract.path
    cache = analysis.caches.descriptions
    try:
        stamp = stamp_of(file)
        cached = cache.get(file, stamp)
        if cached is not None:
            return cached
        module = parse(read_text(file))
    except (OSError, UnicodeDecodeError):
        return {}
    found: dict[str, str] = {}
    for node in t.iter_nodes(module):
        if isinstance(node, t.InputDeclaration) and node.name is not None:
            description = node.description
            if isinstance(description, t.String):
                found.setdefault(node.name.value, description.text)
    cache.put(file, stamp, found)
    return found
