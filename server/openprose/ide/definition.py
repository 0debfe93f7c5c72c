"""Go to definition: the declarations of the name at the cursor, in this file or, for an
input or output of an imported program, in that program's file."""

from __future__ import annotations

from openprose.ide.analysis import Analysis, node_range
from openprose.ide.names import Key, destructured_port, find, index_of
from openprose.ide.ports import port_location
from openprose.ide.types import Location, Pos, Range


def definition(analysis: Analysis, position: Pos) -> list[Location]:
    found = find(analysis, position)
    if found is None:
        return []
    if found.port is not None:
        location = port_location(analysis, found.port)
        if location is not None:
            return [location]
        if found.occurrence is None:
            return []
    occurrence = found.occurrence
    if occurrence is None:
        return []
    port = destructured_port(analysis, occurrence)
    if port is not None:
        location = port_location(analysis, port)
        if location is not None:
            return [location]
    return [Location(r) for r in _declarations(analysis, occurrence.key)]


def _declarations(analysis: Analysis, key: Key) -> list[Range]:
    index = index_of(analysis)
    if key[0] == "var":
        ranges = []
        for symbol in index.symbols.get(key, ()):
            ranges.append(node_range(symbol.leaf))
        return ranges
    if key[0] == "undefined":
        hidden = index.hidden.get(key)
        return [node_range(hidden.leaf)] if hidden is not None else []
    return [o.range for o in index.by_key.get(key, ()) if o.role in ("definition", "path")]
