"""Inputs and outputs of imported programs ("ports"), and analyses of program files on disk.

Ports are reached through a call's keyword argument names (``research(topic: ...)``),
property access on a call's result (``result.findings``, ``{result.findings}``) and
destructuring (``let { findings } = research(...)``); their declarations live in the
imported file, which is read (and its analysis kept while it is unchanged) from disk.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openprose.analysis.contracts import Kind as PathKind
from openprose.analysis.contracts import Status
from openprose.files import read_text
from openprose.ide.analysis import Analysis, analyze_document, node_range, to_pos
from openprose.ide.caches import Caches, stamp_of
from openprose.ide.links import resolve_use
from openprose.ide.names import Port, index_of, interpolation_segment, program_of
from openprose.ide.types import Location, Range
from openprose.syntax import tree as t

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ImportedProgram:
    alias: str
    use: Any
    file: Path | None  # the file the contract was read from
    contract: Any  # Contract | None
    local: bool  # a local program file (editable), not a registry copy
    reason: str = ""  # why there is no contract


def imported_program(analysis: Analysis, alias: str) -> ImportedProgram | None:
    uses = analysis.model.programs.get(alias)
    if not uses:
        return None
    use = uses[0]
    resolution = resolve_use(analysis, use)
    if resolution is None:
        return ImportedProgram(alias, use, None, None, False, "its path is not valid")
    local = resolution.path.kind is PathKind.LOCAL
    if resolution.status is Status.FOUND and resolution.contract is not None:
        return ImportedProgram(alias, use, resolution.file, resolution.contract, local)
    if analysis.path is None:
        reason = "the document is not saved, so its imports are not read"
    elif resolution.status is Status.MISSING:
        why = resolution.reason
        reason = f"`{resolution.file}` " + ("does not exist" if why == "no such file" else why)
    elif resolution.status is Status.UNRESOLVED:
        reason = resolution.reason or f"`{resolution.path.text}` is not a program path"
    else:
        reason = resolution.reason or "it cannot be read offline"
    return ImportedProgram(alias, use, resolution.file, None, local, reason)


def port_location(analysis: Analysis, port: Port) -> Location | None:
    program = imported_program(analysis, port.program)
    if program is None or program.contract is None or program.file is None:
        return None
    declared = (
        program.contract.input(port.name)
        if port.kind == "input"
        else program.contract.output(port.name)
    )
    if declared is None:
        return None
    return Location(Range(to_pos(declared.start), to_pos(declared.end)), str(program.file))


def same_program_aliases(analysis: Analysis, alias: str) -> set[str]:
    """Every alias naming the same program file as ``alias`` (normally just ``alias``)."""
    aliases = {alias}
    program = imported_program(analysis, alias)
    if program is None or program.file is None or len(analysis.model.programs) < 2:
        return aliases
    for other in analysis.model.programs:
        if other != alias:
            found = imported_program(analysis, other)
            if found is not None and found.file == program.file:
                aliases.add(other)
    return aliases


def port_occurrences(analysis: Analysis, port: Port) -> list[tuple[Range, Any]]:
    """Where this document names a port: keyword arguments of the program's calls (inputs);
    property accesses on its results and destructured names (outputs).  Pairs of the
    name's range and, for destructured names, their variable's key (else None)."""
    aliases = same_program_aliases(analysis, port.program)
    model = analysis.model
    found: list[tuple[Range, Any]] = []
    if port.kind == "input":
        for call in model.program_calls:
            if call.name is None or call.name.value not in aliases or call.arguments is None:
                continue
            for argument in call.arguments.keyword_arguments():
                if argument.name.value == port.name:
                    found.append((node_range(argument.name), None))
        return found
    index = index_of(analysis)
    for key, symbols in index.symbols.items():
        result = program_of(symbols[0])
        if result is None or result[0] not in aliases:
            continue
        if result[1]:
            if symbols[0].name == port.name:
                for occurrence in index.by_key.get(key, ()):
                    found.append((occurrence.range, key))
            continue
        for occurrence in index.by_key.get(key, ()):
            if occurrence.role == "definition" or occurrence.role == "write":
                continue
            leaf = occurrence.leaf
            if isinstance(leaf, t.String):
                segment = interpolation_segment(occurrence)
                if segment is not None and segment[0] == port.name:
                    found.append((segment[1], None))
            elif isinstance(leaf.parent, t.Attribute) and leaf.parent.base is leaf:
                names = leaf.parent.attribute_names()
                if names and names[0].value == port.name:
                    found.append((node_range(names[0]), None))
    found.sort(key=lambda item: item[0].start)
    return found


def analysis_of_file(file: Path, caches: Caches) -> Analysis | None:
    """An analysis of a program file on disk, kept in ``caches`` while the file is unchanged
    (it shares them: its imports are read as the front end has them)."""
    try:
        stamp = stamp_of(file)
    except OSError:
        return None
    cached: Analysis | None = caches.files.get(file, stamp)
    if cached is not None:
        return cached
    try:
        text = read_text(file)  # not a FIFO's (it would block) nor a device's
    except (OSError, UnicodeDecodeError) as error:
        log.debug("skipped %s: %s", file, getattr(error, "strerror", None) or error)
        return None
    analysis = analyze_document(text, path=file, caches=caches)
    caches.files.put(file, stamp, analysis)
    return analysis
