"""The contract of an imported program (its inputs and outputs) and the descriptions of its
inputs, for completion inside a call and for signature help."""

from __future__ import annotations

import threading
from pathlib import Path

from openprose.analysis.contracts import Contract, ContractLoader, Status
from openprose.files import read_text
from openprose.ide.analysis import Analysis
from openprose.syntax import tree as t


def program_contract(analysis: Analysis, alias: str) -> Contract | None:
    """The contract of the program imported as ``alias`` (None without a saved file)."""
    if analysis.path is None:
        return None
    uses = analysis.model.programs.get(alias)
    if not uses or uses[0].path is None:
        return None
    resolution = ContractLoader().resolve(analysis.path, uses[0].path.text)
    if resolution.status is not Status.FOUND:
        return None
    contract: Contract | None = resolution.contract
    return contract


_descriptions_lock = threading.Lock()


_descriptions: dict[Path, tuple[int, int, dict[str, str]]] = {}


def input_descriptions(contract: Contract) -> dict[str, str]:
    """The descriptions of a contract's inputs, read from its file (cached by version)."""
    from openprose.syntax import parse

    file = contract.path
    try:
        stat = file.stat()
        with _descriptions_lock:
            cached = _descriptions.get(file)
        if cached is not None and cached[:2] == (stat.st_mtime_ns, stat.st_size):
            return cached[2]
        module = parse(read_text(file))
    except (OSError, UnicodeDecodeError):
        return {}
    found: dict[str, str] = {}
    for node in t.iter_nodes(module):
        if isinstance(node, t.InputDeclaration) and node.name is not None:
            description = node.description
            if isinstance(description, t.String):
                found.setdefault(node.name.value, description.text)
    with _descriptions_lock:
        _descriptions[file] = (stat.st_mtime_ns, stat.st_size, found)
    return found
