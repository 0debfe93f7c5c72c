"""The variables a use of an undefined name may have meant: the reference a diagnostic
is about, and the names visible where it stands that are close to its own.

Nothing here makes an edit: the command line's hints ask for the names only, without the
quick fixes (and the formatter those import); ``undefined_variable`` makes the fixes.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter, itemgetter
from typing import Any

from openprose.analysis.model import Reference
from openprose.diagnostics import Diagnostic, Position
from openprose.ide.analysis import Analysis
from openprose.ide.fixes.did_you_mean import NameTable, Part, closest_in

__all__ = [
    "close_variables",
    "expect_references",
    "leaf_at",
    "near_variable_names",
    "reference_at",
]


def near_variable_names(analysis: Analysis, diagnostic: Diagnostic) -> list[str]:
    """The names the "did you mean" fixes of an undefined variable offer (what
    ``registry.near_names`` answers for its codes), without making the fixes."""
    if leaf_at(analysis.module, diagnostic.start) is None:
        return []
    reference = reference_at(analysis, diagnostic)
    if reference is None or reference.symbol is not None:
        return []
    found = close_variables(analysis, reference)
    return found[2] if found is not None else []


def close_variables(
    analysis: Analysis, reference: Reference
) -> tuple[Position, Position, list[str]] | None:
    """Where the undefined name of ``reference`` stands, and the visible variables close to
    it, closest first (None when its range is not the name on one line)."""
    name = reference.name
    start, end = reference.start, reference.end
    if start[0] != end[0]:
        return None
    line = analysis.lines[start[0] - 1]
    column = line.find(name, start[1], end[1])
    if column < 0:
        return None
    close = closest_in(name, _visible(analysis, reference))
    return (start[0], column), (start[0], column + len(name)), close


def leaf_at(module: Any, position: tuple[int, int]) -> Any:
    """The leaf starting at (or containing) a parso position, prefixes excluded."""
    try:
        leaf = module.get_leaf_for_position(position, include_prefixes=True)
    except (ValueError, IndexError):
        return None
    if leaf is not None and leaf.end_pos == position and leaf.start_pos != position:
        following = leaf.get_next_leaf()
        if following is not None and following.start_pos == position:
            leaf = following
    if leaf is None or not (leaf.start_pos <= position <= leaf.end_pos):
        return None
    return leaf


def reference_at(analysis: Analysis, diagnostic: Diagnostic) -> Reference | None:
    """The first reference (in model order) whose range is the diagnostic's."""
    for reference in _references_at(analysis, diagnostic.start):
        if reference.end == diagnostic.end:
            return reference
    return None


def _references_by_start(analysis: Analysis) -> dict[Position, list[Reference]]:
    """The references of the analysis's model by where they start, in model order, found
    once per analysis (the hints of `prose check` ask for one per diagnostic: a search of
    the whole list each time was quadratic on a big program)."""
    found: dict[Position, list[Reference]] | None = analysis.__dict__.get(_BY_START)
    if found is None:
        found = {}
        for reference in analysis.model.references:
            found.setdefault(reference.start, []).append(reference)
        analysis.__dict__[_BY_START] = found
    return found


def expect_references(analysis: Analysis, starts: Iterable[Position]) -> None:
    """Find the references starting at ``starts`` now, and only those: a command line asks
    for those of a few diagnostics, and a table of every reference of a big program took
    longer to make (and more memory) than the questions (a later question about another
    position makes the whole table)."""
    wanted = set(starts)
    found: dict[Position, list[Reference]] = {}
    references = analysis.model.references
    for reference, start in zip(references, map(_START, references), strict=True):
        if start in wanted:
            found.setdefault(start, []).append(reference)
    analysis.__dict__[_EXPECTED] = (wanted, found)


def _references_at(analysis: Analysis, start: Position) -> list[Reference]:
    """The references starting at ``start``, in model order."""
    expected: tuple[set[Position], dict[Position, list[Reference]]] | None = analysis.__dict__.get(
        _EXPECTED
    )
    if expected is not None and start in expected[0]:
        return expected[1].get(start, [])
    return _references_by_start(analysis).get(start, [])


_BY_START = "variables.references_by_start"
_EXPECTED = "variables.expected_references"


def _visible(analysis: Analysis, reference: Reference) -> list[Part]:
    """The names of the variables the binder could have found where ``reference`` stands
    (only those it may assign to, for an assignment)."""
    in_block = False
    scope: Any = reference.scope
    while scope is not None:
        in_block = in_block or scope.kind == "block"
        scope = scope.parent
    assigning = reference.role == "assignment"
    found: list[Part] = []
    before = reference.start
    scope = reference.scope
    while scope is not None:
        everywhere = in_block and scope.kind == "program"
        for (placed, constant), table in _variables_of(analysis, scope).items():
            if not (assigning and constant):
                found += table.before(before if placed and not everywhere else None)
        scope = scope.parent
    return found


def _variables_of(analysis: Analysis, scope: Any) -> dict[tuple[bool, bool], NameTable]:
    """A scope's variables by (whether they are seen only after where they are defined,
    whether they are constant): those seen from anywhere in it are a block's results and
    those a construct binds for its body.  Made once per analysis and scope (every "did you
    mean" of `prose check` asks: on a big program each went through thousands of
    variables)."""
    known: dict[int, dict[tuple[bool, bool], NameTable]] = analysis.__dict__.setdefault(
        _VARIABLES, {}
    )
    found = known.get(id(scope))
    if found is None:
        sorts: dict[tuple[bool, bool], list[Any]] = {}
        kinds: dict[Any, tuple[bool, bool, bool]] = {}  # asked once per kind, not per name
        for symbol in scope.symbols.values():
            kind = symbol.kind
            known_kind = kinds.get(kind)
            if known_kind is None:
                known_kind = kinds[kind] = (kind.is_variable, kind.is_scoped, kind.is_constant)
            variable, scoped, constant = known_kind
            if variable:
                placed = not (symbol.exported or scoped)
                sorts.setdefault((placed, constant), []).append(symbol)
        found = known[id(scope)] = {}
        for (placed, constant), symbols in sorts.items():
            names = map(_NAME, symbols)
            if placed:
                entries = sorted(zip(map(_START, symbols), names, strict=True), key=_FIRST)
            else:
                entries = [((0, 0), name) for name in names]
            found[placed, constant] = NameTable(entries)
    return found


_NAME = attrgetter("name")
_START = attrgetter("start")
_FIRST = itemgetter(0)
_VARIABLES = "variables.variables_by_scope"
