"""Document highlights: the occurrences of the name at the cursor in this document, marked
as writes (definitions, assignments) or reads."""

from __future__ import annotations

from openprose.ide.analysis import Analysis
from openprose.ide.names import find, index_of
from openprose.ide.ports import port_occurrences
from openprose.ide.types import Highlight, Pos


def highlights(analysis: Analysis, position: Pos) -> list[Highlight]:
    found = find(analysis, position)
    if found is None:
        return []
    if found.port is not None:
        return [Highlight(r, "read") for r, _key in port_occurrences(analysis, found.port)]
    occurrence = found.occurrence
    if occurrence is None:
        return []
    occurrences = index_of(analysis).by_key.get(occurrence.key, [])
    return [
        Highlight(o.range, "write" if o.writes else "read")
        for o in sorted(occurrences, key=lambda o: o.range.start)
    ]
