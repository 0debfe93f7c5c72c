"""Find references: every occurrence of the name at the cursor, or every place this
document names an input or output of an imported program."""

from __future__ import annotations

from openprose.ide.analysis import Analysis
from openprose.ide.names import find, index_of
from openprose.ide.ports import port_location, port_occurrences
from openprose.ide.types import Location, Pos


def references(analysis: Analysis, position: Pos, include_declaration: bool) -> list[Location]:
    found = find(analysis, position)
    if found is None:
        return []
    if found.port is not None:
        locations = [Location(r) for r, _key in port_occurrences(analysis, found.port)]
        if include_declaration:
            declared = port_location(analysis, found.port)
            if declared is not None:
                locations.insert(0, declared)
        return locations
    occurrence = found.occurrence
    if occurrence is None:
        return []
    occurrences = index_of(analysis).by_key.get(occurrence.key, [])
    return [
        Location(o.range)
        for o in sorted(occurrences, key=lambda o: o.range.start)
        if include_declaration or o.role not in ("definition", "path")
    ]
