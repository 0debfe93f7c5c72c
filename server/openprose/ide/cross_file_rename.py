"""Rename across files.

The names a caller shares with a *local* program it imports (``use "./x.prose"``) are that
program's inputs and outputs.  Renaming a keyword argument name renames the input in the
imported file (its declaration and every use there) and the keyword arguments of every call
to that program here; renaming ``result.findings`` (or a destructured ``findings``) renames
the output there and every access to it here.  The other way round, renaming an input or
output where it is declared renames it in the callers among the program files the editor
passes (the workspace's), found by their local ``use`` paths.  Other files are read from
disk.  Registry programs (even a cached copy) are never edited, so their inputs and outputs
cannot be renamed.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from openprose.analysis.model import Kind, Symbol
from openprose.format import TextEdit
from openprose.ide.analysis import Analysis
from openprose.ide.names import Key, Port, index_of, var_key
from openprose.ide.ports import (
    analysis_of_file,
    imported_program,
    port_occurrences,
    same_program_aliases,
)
from openprose.ide.rename_edits import occurrence_edits, variable_collision
from openprose.ide.types import Range, RenameError


def rename_port(
    analysis: Analysis, port: Port, new_name: str
) -> dict[str | None, list[TextEdit]] | RenameError:
    program = imported_program(analysis, port.program)
    if program is None or program.file is None:
        return RenameError(f"the program `{port.program}` cannot be read")
    if analysis.path is not None and _same_file(program.file, analysis.path):
        return RenameError(f"`{port.program}` is this program itself")
    other = analysis_of_file(program.file, analysis.caches)
    if other is None:
        return RenameError(f"`{program.file}` cannot be read")
    declared = other.model.inputs if port.kind == "input" else other.model.outputs
    symbol = next((s for s in declared if s.name == port.name), None)
    if symbol is None or symbol.scope is None:
        return RenameError(f"`{port.name}` is not an {port.kind} of `{port.program}`")
    where = program.file.name
    collision = variable_collision(other, symbol.scope, new_name)
    if collision is not None:
        return RenameError(f"in `{where}`: {collision.message}")
    edits_there = occurrence_edits(other, var_key(symbol), new_name)
    here = _caller_edits(analysis, port, new_name)
    if isinstance(here, RenameError):
        return here
    return {None: here, str(program.file): edits_there}


def _caller_edits(analysis: Analysis, port: Port, new_name: str) -> list[TextEdit] | RenameError:
    """The edits renaming ``port`` where ``analysis`` (a program importing it) names it."""
    here: list[TextEdit] = []
    renamed_keys: set[Key] = set()
    for found_range, key in port_occurrences(analysis, port):
        if key is not None:
            renamed_keys.add(key)
        here.append(TextEdit(found_range.start, found_range.end, new_name))
    if port.kind == "input":
        aliases = same_program_aliases(analysis, port.program)
        for call in analysis.model.program_calls:
            if call.name is None or call.name.value not in aliases or call.arguments is None:
                continue
            names = {a.name.value for a in call.arguments.keyword_arguments()}
            if port.name in names and new_name in names:
                line = call.start_pos[0]
                return RenameError(f"the call on line {line} already passes `{new_name}`")
    index = index_of(analysis)
    for key in renamed_keys:
        symbols = index.symbols.get(key, [])
        if symbols and symbols[0].scope is not None:
            collision = variable_collision(analysis, symbols[0].scope, new_name)
            if collision is not None:
                return collision
    here.sort(key=lambda e: e.start)
    return here


def importer_edits(
    analysis: Analysis, symbol: Symbol, new_name: str, importers: Iterable[str | Path]
) -> dict[str | None, list[TextEdit]] | RenameError:
    """Renaming an input or output of this program: the edits in the saved programs among
    ``importers`` that import it by a local path and name it."""
    if analysis.path is None:
        return {}
    kind = "input" if symbol.kind is Kind.INPUT else "output"
    found: dict[str | None, list[TextEdit]] = {}
    for candidate in importers:
        file = Path(candidate)
        if _same_file(file, analysis.path):
            continue
        caller = analysis_of_file(file, analysis.caches)
        if caller is None:
            continue
        for alias in caller.model.programs:
            program = imported_program(caller, alias)
            if program is None or program.file is None:
                continue
            if not _same_file(program.file, analysis.path):
                continue
            port = Port(kind, alias, symbol.name, Range((0, 0), (0, 0)))
            edits = _caller_edits(caller, port, new_name)
            if isinstance(edits, RenameError):
                return RenameError(f"in `{file.name}`: {edits.message}")
            if edits:
                found.setdefault(str(file), []).extend(edits)
    for path, edits in found.items():
        # Two aliases of the same program give the same edits once each.
        found[path] = sorted(set(edits), key=lambda e: e.start)
    return found


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:  # pragma: no cover - defensive
        return a == b
