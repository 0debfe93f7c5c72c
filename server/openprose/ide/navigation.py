"""Go to definition, find references, document highlights and rename.

Everything works from an index built once per ``Analysis`` (cached on it): every
occurrence of every name, keyed by what it names, and the occurrences of each leaf, so a
request is a leaf lookup and a dict lookup, never a walk of the tree.  What a name names:

- an agent (``agent x:``, ``session: x``, ``resume: x``);
- a block (``block x(...):``, ``do x``);
- an imported program (``use "..." as x`` or the path's last segment, ``x(...)`` calls);
- a variable, keyed by the scope that holds it: ``let``, ``const``, ``input``, ``output``,
  parallel results, and the names a construct introduces for its body (block parameters,
  loop and index variables, pipeline variables, ``catch as`` errors), which are distinct
  from an outer variable of the same name;
- an undefined name (the uses of one undefined name highlight together).

An occurrence inside a string is the name part of a ``{name}`` or ``{name.prop}``
interpolation.  A ``use`` without an alias has the path's last segment as its declaration.

Inputs and outputs of imported programs ("ports") are reached through a call's keyword
argument names (``research(topic: ...)``), property access on a call's result
(``result.findings``, ``{result.findings}``) and destructuring
(``let { findings } = research(...)``); their declarations live in the imported file.

Rename across files: the names a caller shares with a *local* program it imports
(``use "./x.prose"``) are that program's inputs and outputs.  Renaming a keyword argument
name renames the input in the imported file (its declaration and every use there) and the
keyword arguments of every call to that program here; renaming ``result.findings`` (or a
destructured ``findings``) renames the output there and every access to it here.  The
other way round, renaming an input or output where it is declared renames it in the
callers among the program files the editor passes (the workspace's), found by their local
``use`` paths.  Other files are read from disk.  Registry programs (even a cached copy) are
never edited, so their inputs and outputs cannot be renamed.
"""

from __future__ import annotations

import gc
import logging
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprose.analysis.contracts import Kind as PathKind
from openprose.analysis.contracts import Status
from openprose.analysis.model import LITERALS, RESERVED_WORDS, Kind, Reference, Scope, Symbol
from openprose.files import read_text
from openprose.format import TextEdit
from openprose.ide.analysis import Analysis, analyze_document, node_range, to_pos
from openprose.ide.links import resolve_use
from openprose.ide.types import Highlight, Location, Pos, PrepareRename, Range, RenameError
from openprose.syntax import tree as t

Key = tuple[Any, ...]

log = logging.getLogger(__name__)

_IDENTIFIER = re.compile(r"[^\W\d]\w*(?:-\w+)*")
_INDEX = "_openprose_ide_navigation_index"


# --------------------------------------------------------------------------- the index


@dataclass(slots=True)
class Occurrence:
    """One occurrence of a name."""

    key: Key
    name: str
    range: Range  # the name itself
    span: Range  # where the cursor finds it (a whole `{name.prop}` interpolation)
    role: str  # definition, write, read, path (a `use` without alias: its path string)
    leaf: Any
    reference: Reference | None = None

    @property
    def writes(self) -> bool:
        return self.role in ("definition", "write", "path")


@dataclass(eq=False)
class Index:
    by_leaf: dict[int, list[Occurrence]] = field(default_factory=dict)
    by_key: dict[Key, list[Occurrence]] = field(default_factory=dict)
    symbols: dict[Key, list[Symbol]] = field(default_factory=dict)  # variables
    symbols_by_name: dict[str, list[Symbol]] = field(default_factory=dict)
    references_by_name: dict[str, list[Reference]] = field(default_factory=dict)
    hidden: dict[Key, Symbol] = field(default_factory=dict)  # undefined name -> hidden def

    def add(self, occurrence: Occurrence) -> None:
        self.by_leaf.setdefault(id(occurrence.leaf), []).append(occurrence)
        self.by_key.setdefault(occurrence.key, []).append(occurrence)


def var_key(symbol: Symbol) -> Key:
    return ("var", id(symbol.scope), symbol.name)


def index_of(analysis: Analysis) -> Index:
    """The occurrence index of a document, built once per analysis."""
    index = analysis.__dict__.get(_INDEX)
    if index is None:
        model = analysis.model
        # Tens of thousands of small objects that all survive: pause the cyclic collector
        # (as the parser does) rather than let it walk the whole tree several times.
        enabled = gc.isenabled()
        gc.disable()
        try:
            index = analysis.__dict__[_INDEX] = _build(model)
        finally:
            if enabled:
                gc.enable()
    return index


def _build(model: Any) -> Index:
    index = Index()

    def name_occurrence(key: Key, leaf: Any, role: str) -> None:
        if leaf is not None:
            span = _name_range(leaf)
            index.add(Occurrence(key, leaf.value, span, span, role, leaf))

    for name, agents in model.agents.items():
        for agent in agents:
            name_occurrence(("agent", name), agent.name_leaf, "definition")
    for leaf, _node in model.agent_references:
        name_occurrence(("agent", leaf.value), leaf, "read")
    for name, blocks in model.blocks.items():
        for block in blocks:
            name_occurrence(("block", name), block.name_leaf, "definition")
    for node in model.block_references:
        if node.name is not None:
            name_occurrence(("block", node.name.value), node.name, "read")
    for alias, uses in model.programs.items():
        for use in uses:
            if use.alias is not None:
                name_occurrence(("program", alias), use.alias, "definition")
            elif use.path is not None:
                segment = _alias_segment(use.path, alias)
                span = node_range(use.path)
                key = ("program", alias)
                index.add(Occurrence(key, alias, segment or span, span, "path", use.path))
    for call in model.program_calls:
        if call.name is not None:
            name_occurrence(("program", call.name.value), call.name, "read")
    for symbol in model.definitions:
        key = var_key(symbol)
        index.symbols.setdefault(key, []).append(symbol)
        index.symbols_by_name.setdefault(symbol.name, []).append(symbol)
        if not symbol.implicit:
            name_occurrence(key, symbol.leaf, "definition")
    for reference in model.references:
        index.references_by_name.setdefault(reference.name, []).append(reference)
        if reference.symbol is not None:
            key = var_key(reference.symbol)
        else:
            key = ("undefined", reference.name)
            if reference.hidden is not None:
                index.hidden.setdefault(key, reference.hidden)
        role = "write" if reference.role == "assignment" else "read"
        leaf = reference.leaf
        if isinstance(leaf, t.String):
            start = to_pos(reference.start)
            name_start = (start[0], start[1] + 1)
            name_range = Range(name_start, (start[0], start[1] + 1 + len(reference.name)))
            span = Range(start, to_pos(reference.end))
        else:
            name_range = span = _name_range(leaf)
        index.add(Occurrence(key, reference.name, name_range, span, role, leaf, reference))
    return index


def _name_range(leaf: Any) -> Range:
    """The range of a name leaf (one line: cheaper than ``node_range``)."""
    line = leaf.line - 1
    column = leaf.column
    return Range((line, column), (line, column + len(leaf.value)))


def _alias_segment(leaf: Any, alias: str) -> Range | None:
    """Where the implicit alias stands inside a one-line use path (`"@acme/research"`)."""
    value = leaf.value
    if "\n" in value or "\r" in value:
        return None
    at = value.rfind(alias)
    if at < 0:
        return None
    line, column = to_pos(leaf.start_pos)
    return Range((line, column + at), (line, column + at + len(alias)))


# --------------------------------------------------------------------------- what is where


_WORDS = (t.Name, t.Keyword)


def leaf_at(analysis: Analysis, position: Pos) -> Any:
    """The leaf the cursor is on: a name or keyword touching it (on either side), else
    the string, condition or other token containing it; None in whitespace and comments."""
    line, character = position
    if line < 0 or character < 0:
        return None
    try:
        leaf = analysis.leaf_at(position)
    except (ValueError, IndexError):
        return None
    if leaf is None:
        return None
    target = (line + 1, character)
    candidates = [leaf]
    if leaf.end_pos == target:
        following = leaf.get_next_leaf()
        if following is not None:
            candidates.append(following)
    if leaf.start_pos >= target:
        previous = leaf.get_previous_leaf()
        if previous is not None:
            candidates.append(previous)
    for candidate in candidates:
        if isinstance(candidate, _WORDS) and candidate.start_pos <= target <= candidate.end_pos:
            return candidate
    for candidate in candidates:
        if candidate.start_pos <= target < candidate.end_pos and not isinstance(
            candidate, t.Newline | t.EndMarker
        ):
            return candidate
    return None


@dataclass(frozen=True, slots=True)
class Port:
    """An input or output of an imported program, as named at the cursor."""

    kind: str  # input, output
    program: str  # the alias
    name: str
    range: Range  # the name at the cursor


@dataclass(frozen=True, slots=True)
class Found:
    leaf: Any
    occurrence: Occurrence | None = None
    port: Port | None = None


def find(analysis: Analysis, position: Pos) -> Found | None:
    """What the cursor is on: an occurrence of a name, a port of an imported program, or
    just a leaf (a keyword, a property name, string text...)."""
    leaf = leaf_at(analysis, position)
    if leaf is None:
        return None
    index = index_of(analysis)
    occurrences = index.by_leaf.get(id(leaf), ())
    occurrence = next((o for o in occurrences if o.span.contains(position)), None)
    if isinstance(leaf, t.String):
        if occurrence is not None and not occurrence.range.contains(position):
            port = _interpolated_port(analysis, occurrence, position)
            if port is not None:
                return Found(leaf, None, port)
        return Found(leaf, occurrence)
    port = _name_port(analysis, leaf) if isinstance(leaf, t.Name) else None
    return Found(leaf, occurrence, port)


def _name_port(analysis: Analysis, leaf: Any) -> Port | None:
    parent = leaf.parent
    if (
        isinstance(parent, t.KeywordArgument)
        and parent.children[0] is leaf
        and isinstance(parent.parent, t.Arguments)
        and isinstance(parent.parent.parent, t.ProgramCall)
    ):
        call = parent.parent.parent
        if call.name is not None:
            return Port("input", call.name.value, leaf.value, node_range(leaf))
        return None
    if isinstance(parent, t.Attribute):
        names = parent.attribute_names()
        base = parent.base
        if names and names[0] is leaf and isinstance(base, t.Name):
            program = _program_of_base(analysis, base)
            if program is not None:
                return Port("output", program, leaf.value, node_range(leaf))
    return None


def destructured_port(analysis: Analysis, occurrence: Occurrence) -> Port | None:
    """For the definition of ``findings`` in ``let { findings } = research(...)``, the
    output of the program it receives."""
    if occurrence.role != "definition" or occurrence.key[0] != "var":
        return None
    symbols = index_of(analysis).symbols.get(occurrence.key, [])
    symbol = next((s for s in symbols if s.leaf is occurrence.leaf), None)
    found = program_of(symbol) if symbol is not None else None
    if found is None or not found[1]:
        return None
    return Port("output", found[0], occurrence.name, occurrence.range)


def _program_of_base(analysis: Analysis, base: Any) -> str | None:
    for occurrence in index_of(analysis).by_leaf.get(id(base), ()):
        reference = occurrence.reference
        if reference is not None and reference.symbol is not None:
            found = program_of(reference.symbol)
            if found is not None and not found[1]:
                return found[0]
    return None


def _interpolated_port(analysis: Analysis, occurrence: Occurrence, position: Pos) -> Port | None:
    """``{result.findings}`` with the cursor on ``findings``."""
    reference = occurrence.reference
    if reference is None or reference.symbol is None:
        return None
    segment = _interpolation_segment(occurrence)
    if segment is None or not segment[1].contains(position):
        return None
    found = program_of(reference.symbol)
    if found is None or found[1]:
        return None
    return Port("output", found[0], segment[0], segment[1])


def _interpolation_segment(occurrence: Occurrence) -> tuple[str, Range] | None:
    """The first property of an interpolation, ``findings`` in ``{result.findings}``."""
    line, column = occurrence.span.start
    end_column = occurrence.span.end[1]
    width = end_column - column
    text = _interpolation_text(occurrence)
    if text is None or len(text) != width:
        return None
    path = text[1:-1].split(".")
    if len(path) < 2:
        return None
    start = column + 1 + len(path[0]) + 1
    return path[1], Range((line, start), (line, start + len(path[1])))


def _interpolation_text(occurrence: Occurrence) -> str | None:
    reference = occurrence.reference
    leaf = occurrence.leaf
    if reference is None or not isinstance(leaf, t.String):
        return None
    for part in leaf.parts():
        if part.kind == "interpolation" and part.start == reference.start:
            return str(part.raw)
    return None


def program_of(symbol: Symbol) -> tuple[str, bool] | None:
    """The imported program whose call gives a variable its value: (alias, destructured).

    ``let r = research(...)`` gives ``("research", False)``; a name of the pattern in
    ``let { findings } = research(...)`` gives ``("research", True)``.
    """
    node = symbol.node
    value: Any = None
    destructured = False
    if isinstance(node, t.LetBinding):
        target = node.target
        if target is symbol.leaf:
            value = node.value
        elif isinstance(target, t.ObjectLiteral) and symbol.leaf.parent is target:
            value = node.value
            destructured = True
    elif (isinstance(node, t.OutputBinding) and node.name is symbol.leaf) or (
        isinstance(node, t.Assignment) and node.target is symbol.leaf
    ):
        value = node.value
    if isinstance(value, t.ProgramCall) and value.name is not None:
        return value.name.value, destructured
    return None


# --------------------------------------------------------------------------- ports


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


def _same_program_aliases(analysis: Analysis, alias: str) -> set[str]:
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
    aliases = _same_program_aliases(analysis, port.program)
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
                segment = _interpolation_segment(occurrence)
                if segment is not None and segment[0] == port.name:
                    found.append((segment[1], None))
            elif isinstance(leaf.parent, t.Attribute) and leaf.parent.base is leaf:
                names = leaf.parent.attribute_names()
                if names and names[0].value == port.name:
                    found.append((node_range(names[0]), None))
    found.sort(key=lambda item: item[0].start)
    return found


# --------------------------------------------------------------------------- definition


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


# --------------------------------------------------------------------------- references


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


# --------------------------------------------------------------------------- rename


def prepare_rename(analysis: Analysis, position: Pos) -> PrepareRename | RenameError | None:
    found = find(analysis, position)
    if found is None:
        return None
    result = _renamable(analysis, found)
    if isinstance(result, RenameError) or result is None:
        return result
    name, where = result
    return PrepareRename(where, name)


def _renamable(analysis: Analysis, found: Found) -> tuple[str, Range] | RenameError | None:
    leaf = found.leaf
    port = found.port
    if port is not None:
        error = _port_error(analysis, port)
        if error is not None:
            return error
        return port.name, port.range
    occurrence = found.occurrence
    if occurrence is not None:
        key = occurrence.key
        if key[0] == "undefined":
            return RenameError(f"`{occurrence.name}` is not defined in this program")
        if key[0] == "var":
            symbols = index_of(analysis).symbols.get(key, [])
            implicit = next((s for s in symbols if s.implicit), None)
            if implicit is not None:
                stage = implicit.leaf.value
                return RenameError(
                    f"`{occurrence.name}` is the implicit element variable of `{stage}`: "
                    "its name is fixed"
                )
        return occurrence.name, occurrence.range
    if isinstance(leaf, t.Keyword):
        return RenameError(f"`{leaf.value}` is a keyword, not a name that can be renamed")
    if isinstance(leaf, t.String):
        return RenameError("string text cannot be renamed (only `{name}` interpolations)")
    if isinstance(leaf, t.Discretion):
        return RenameError("a `**...**` condition is text for the model, not a name")
    if isinstance(leaf, t.Number):
        return RenameError("a number cannot be renamed")
    if isinstance(leaf, t.Name):
        return RenameError(_name_error(leaf))
    return None


def _name_error(leaf: Any) -> str:
    parent = leaf.parent
    word = leaf.value
    if isinstance(parent, t.Property) and parent.children[0] is leaf:
        return f"`{word}` is a property name: its meaning is fixed by the language"
    if isinstance(parent, t.KeywordArgument) and parent.children[0] is leaf:
        owner = parent.parent.parent if parent.parent is not None else None
        if isinstance(owner, t.Parallel | t.Loop):
            return f"`{word}` is a modifier name: its meaning is fixed by the language"
        return f"`{word}` names an argument, not something this program defines"
    if isinstance(parent, t.Property):
        return f"`{word}` is a property value, not a name this program defines"
    if word in LITERALS:
        return f"`{word}` is a literal value"
    if isinstance(parent, t.Session) and parent.name is leaf:
        return f"`{word}` is a session label, not a symbol"
    if isinstance(parent, t.Attribute):
        return f"`{word}` is a property of a value whose fields this program does not declare"
    return f"`{word}` does not name anything this program defines"


def _port_error(analysis: Analysis, port: Port) -> RenameError | None:
    program = imported_program(analysis, port.program)
    what = f"`{port.name}` is an {port.kind} of the imported program `{port.program}`"
    if program is None:
        return RenameError(f"{what}, which is not imported")
    if not program.local:
        return RenameError(f"{what}, a registry program that cannot be edited from here")
    if program.contract is None:
        return RenameError(f"{what}, whose file cannot be read: {program.reason}")
    declared = (
        program.contract.input(port.name)
        if port.kind == "input"
        else program.contract.output(port.name)
    )
    if declared is None:
        return RenameError(f"`{port.name}` is not an {port.kind} of `{port.program}`")
    return None


def rename(
    analysis: Analysis, position: Pos, new_name: str, importers: Iterable[str | Path] = ()
) -> dict[str | None, list[TextEdit]] | RenameError:
    """The edits of a rename, keyed by file (None: this document).  ``importers`` are the
    program files that may import this one (the workspace's): renaming an input or output
    renames it in those that do, too."""
    found = find(analysis, position)
    if found is None:
        return RenameError("nothing to rename here")
    result = _renamable(analysis, found)
    if result is None:
        return RenameError("nothing to rename here")
    if isinstance(result, RenameError):
        return result
    old, _where = result
    error = _invalid_name(new_name)
    if error is not None:
        return error
    if new_name == old:
        return {None: []}
    if found.port is not None:
        return _rename_port(analysis, found.port, new_name)
    occurrence = found.occurrence
    assert occurrence is not None
    key = occurrence.key
    if key[0] == "var":
        symbols = index_of(analysis).symbols.get(key, [])
        program = program_of(symbols[0]) if symbols else None
        if program is not None and program[1]:
            port = Port("output", program[0], old, occurrence.range)
            error = _port_error(analysis, port)
            if error is not None:
                return RenameError(
                    f"`{old}` must keep the name of the output of `{program[0]}` it "
                    f"receives: {error.message}"
                )
            return _rename_port(analysis, port, new_name)
    collision = _collision(analysis, key, new_name)
    if collision is not None:
        return collision
    edits: dict[str | None, list[TextEdit]] = {None: _edits(analysis, key, new_name)}
    if key[0] == "var":
        symbols = index_of(analysis).symbols.get(key, [])
        if symbols and symbols[0].kind in (Kind.INPUT, Kind.OUTPUT):
            elsewhere = _importer_edits(analysis, symbols[0], new_name, importers)
            if isinstance(elsewhere, RenameError):
                return elsewhere
            edits.update(elsewhere)
    return edits


def _invalid_name(name: str) -> RenameError | None:
    if not _IDENTIFIER.fullmatch(name):
        return RenameError(
            f"`{name}` is not a valid name: use letters, digits, `_` and inner `-`, "
            "starting with a letter or `_`"
        )
    if name in RESERVED_WORDS:
        return RenameError(f"`{name}` is a reserved word")
    if name in LITERALS:
        return RenameError(f"`{name}` is a literal value")
    return None


def _edits(analysis: Analysis, key: Key, new_name: str) -> list[TextEdit]:
    edits = []
    for occurrence in index_of(analysis).by_key.get(key, ()):
        if occurrence.role == "path":
            end = to_pos(occurrence.leaf.end_pos)
            edits.append(TextEdit(end, end, f" as {new_name}"))
        else:
            edits.append(TextEdit(occurrence.range.start, occurrence.range.end, new_name))
    edits.sort(key=lambda e: e.start)
    return edits


def _collision(analysis: Analysis, key: Key, new_name: str) -> RenameError | None:
    model = analysis.model
    kind = key[0]
    if kind == "agent":
        if new_name in model.agents:
            return RenameError(f"an agent named `{new_name}` already exists")
        if new_name in model.blocks:
            return RenameError(f"`{new_name}` already names a block")
        if _variable_named(analysis, new_name):
            return RenameError(f"`{new_name}` already names a variable")
        return None
    if kind == "block":
        if new_name in model.blocks:
            return RenameError(f"a block named `{new_name}` already exists")
        if new_name in model.agents:
            return RenameError(f"`{new_name}` already names an agent")
        return None
    if kind == "program":
        if new_name in model.programs:
            return RenameError(f"`{new_name}` already names an imported program")
        if new_name in model.blocks or new_name in model.agents:
            return RenameError(f"`{new_name}` already names a block or an agent")
        return None
    symbols = index_of(analysis).symbols.get(key, [])
    if not symbols or symbols[0].scope is None:
        return RenameError("nothing to rename here")
    return _variable_collision(analysis, symbols[0].scope, new_name)


def _variable_named(analysis: Analysis, name: str) -> bool:
    return bool(index_of(analysis).symbols_by_name.get(name))


def _within(scope: Scope | None, ancestor: Scope) -> bool:
    while scope is not None:
        if scope is ancestor:
            return True
        scope = scope.parent
    return False


def _variable_collision(analysis: Analysis, scope: Scope, new_name: str) -> RenameError | None:
    """A variable of ``scope`` may not take a name defined where it is visible (in its
    scope, an enclosing or an enclosed one: the program has one flat namespace), nor a
    name used inside its scope (that use would start naming it), nor an agent's name."""
    index = index_of(analysis)
    model = analysis.model
    if new_name in model.agents:
        return RenameError(f"`{new_name}` already names an agent")
    for other in index.symbols_by_name.get(new_name, ()):
        if other.scope is None:
            continue
        if _within(other.scope, scope) or _within(scope, other.scope):
            line = other.leaf.start_pos[0]
            what = "an implicit variable" if other.implicit else f"a {other.kind.value}"
            return RenameError(f"`{new_name}` is already {what} (line {line})")
    for reference in index.references_by_name.get(new_name, ()):
        if _within(reference.scope, scope):
            line = reference.start[0]
            return RenameError(
                f"`{new_name}` is already used on line {line}, which would then name the "
                "renamed variable"
            )
    return None


# --------------------------------------------------------------------------- cross-file


_files_lock = threading.Lock()
# Absolute path -> (modification time, size, analysis) of imported files read from disk.
_files: dict[Path, tuple[int, int, Analysis]] = {}
_FILES_KEPT = 32


def analysis_of_file(file: Path) -> Analysis | None:
    """An analysis of a program file on disk, reused while the file is unchanged."""
    try:
        stat = file.stat()
    except OSError:
        return None
    with _files_lock:
        cached = _files.get(file)
    if cached is not None and cached[0] == stat.st_mtime_ns and cached[1] == stat.st_size:
        return cached[2]
    try:
        text = read_text(file)  # not a FIFO's (it would block) nor a device's
    except (OSError, UnicodeDecodeError) as error:
        log.debug("skipped %s: %s", file, getattr(error, "strerror", None) or error)
        return None
    analysis = analyze_document(text, path=file)
    with _files_lock:
        if len(_files) >= _FILES_KEPT:
            _files.pop(next(iter(_files)))
        _files[file] = (stat.st_mtime_ns, stat.st_size, analysis)
    return analysis


def _rename_port(
    analysis: Analysis, port: Port, new_name: str
) -> dict[str | None, list[TextEdit]] | RenameError:
    program = imported_program(analysis, port.program)
    if program is None or program.file is None:
        return RenameError(f"the program `{port.program}` cannot be read")
    if analysis.path is not None and _same_file(program.file, analysis.path):
        return RenameError(f"`{port.program}` is this program itself")
    other = analysis_of_file(program.file)
    if other is None:
        return RenameError(f"`{program.file}` cannot be read")
    declared = other.model.inputs if port.kind == "input" else other.model.outputs
    symbol = next((s for s in declared if s.name == port.name), None)
    if symbol is None or symbol.scope is None:
        return RenameError(f"`{port.name}` is not an {port.kind} of `{port.program}`")
    where = program.file.name
    collision = _variable_collision(other, symbol.scope, new_name)
    if collision is not None:
        return RenameError(f"in `{where}`: {collision.message}")
    edits_there = _edits(other, var_key(symbol), new_name)
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
        aliases = _same_program_aliases(analysis, port.program)
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
            collision = _variable_collision(analysis, symbols[0].scope, new_name)
            if collision is not None:
                return collision
    here.sort(key=lambda e: e.start)
    return here


def _importer_edits(
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
        caller = analysis_of_file(file)
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


__all__ = [
    "Found",
    "Occurrence",
    "Port",
    "definition",
    "find",
    "highlights",
    "imported_program",
    "index_of",
    "leaf_at",
    "prepare_rename",
    "references",
    "rename",
]
