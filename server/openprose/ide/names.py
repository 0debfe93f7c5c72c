"""The name index shared by go to definition, references, highlights, rename and hover.

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

``find`` says what the cursor is on: an occurrence, or a ``Port`` (an input or output of an
imported program, see ``ide/ports.py``) named by a keyword argument, a property access on a
call's result or an interpolation of one.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Any

from openprose.analysis.model import Reference, Symbol
from openprose.ide.analysis import Analysis, node_range, to_pos
from openprose.ide.types import Pos, Range
from openprose.syntax import tree as t

Key = tuple[Any, ...]


_INDEX = "_openprose_ide_navigation_index"


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
    segment = interpolation_segment(occurrence)
    if segment is None or not segment[1].contains(position):
        return None
    found = program_of(reference.symbol)
    if found is None or found[1]:
        return None
    return Port("output", found[0], segment[0], segment[1])


def interpolation_segment(occurrence: Occurrence) -> tuple[str, Range] | None:
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
