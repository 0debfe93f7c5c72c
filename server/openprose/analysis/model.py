"""The semantic model of one program: its symbols, scopes and references.

The binder walks the tree in program order.  Agents, blocks, imported programs and
inputs are collected first (blocks are hoisted); variables are defined as their
statements are reached, so a reference before its definition is undefined.

Scoping follows the language reference: one flat namespace of variables for the whole
program (a name is defined once), except the variables a construct introduces for its
own body (loop and index variables, pipeline variables, block parameters, the ``catch
as`` error) which shadow outer names with a warning.  ``let`` inside a loop body lives
only for that iteration, and ``let`` inside a block body belongs to the block (blocks
have function-like scope), so neither is visible after its body.
"""

from __future__ import annotations

import enum
import operator
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, get_args

from parso.tree import ErrorNode as _ParsoErrorNode

from openprose.syntax import tree as t

# Bare words that are values, not variable references.
LITERALS = frozenset(("true", "false", "null", "none", "True", "False", "None"))


class Kind(enum.Enum):
    AGENT = "agent"
    BLOCK = "block"
    PROGRAM = "program"  # an imported program (``use``), by alias
    INPUT = "input"
    OUTPUT = "output"
    LET = "let"
    CONST = "const"
    BRANCH = "parallel result"  # ``name = ...`` inside ``parallel``
    LOOP = "loop variable"
    INDEX = "index variable"
    PIPELINE = "pipeline variable"
    ERROR = "error variable"
    PARAMETER = "parameter"

    @property
    def is_variable(self) -> bool:
        return self not in _NOT_VARIABLES

    @property
    def is_scoped(self) -> bool:
        """Introduced by a construct for its own body (may shadow with a warning)."""
        return self in _SCOPED

    @property
    def is_constant(self) -> bool:
        return self is not Kind.LET and self is not Kind.BRANCH and self is not Kind.OUTPUT


# A string's interpolations as ``syntax.strings`` finds them (the first dotted segment in the
# group), and its escapes, which are matched only so that ``\\{`` is skipped as it is there.
_INTERPOLATION = re.compile(
    r"\\(?:.|\Z)|\{([^\W\d]\w*(?:-\w+)*)(?:\.[^\W\d]\w*(?:-\w+)*)*\}",
    re.DOTALL,
)
_LINE_END = re.compile(r"\r\n?|\n")
_NO_ENDS: list[int] = []
_new = object.__new__

# Made once: looking members up on the enum class for each test was a hot spot of the
# binder and the names rules.
_NOT_VARIABLES = (Kind.AGENT, Kind.BLOCK, Kind.PROGRAM)
_SCOPED = (Kind.LOOP, Kind.INDEX, Kind.PIPELINE, Kind.ERROR, Kind.PARAMETER)


@dataclass(eq=False, slots=True)
class Symbol:
    name: str
    kind: Kind
    leaf: Any  # the defining name (or the leaf that stands for an implicit one)
    node: Any  # the defining statement or clause
    scope: Scope | None = None
    implicit: bool = False  # ``item`` in map/filter/pmap
    # A block's ``output``: the block's result, also visible to the whole program once the
    # block has run (``do authenticate()`` then ``access.token``).  Writing it again, or
    # naming a variable after it, rebinds the same value, so it never counts as a duplicate.
    exported: bool = False

    @property
    def start(self) -> tuple[int, int]:
        position: tuple[int, int] = self.leaf.start_pos
        return position


@dataclass(eq=False, slots=True)
class Scope:
    kind: str  # "program", "block", "loop", "pipeline", "catch"
    node: Any
    parent: Scope | None
    symbols: dict[str, Symbol] = field(default_factory=dict)

    def lookup(self, name: str) -> Symbol | None:
        scope: Scope | None = self
        while scope is not None:
            symbol = scope.symbols.get(name)
            if symbol is not None:
                return symbol
            scope = scope.parent
        return None


class Reference:
    """A use of a name: ``role`` says where (context, interpolation, collection...).

    Its range is kept relative to its leaf's line, so that it follows the leaf when an
    edit above moves it (an incremental analysis reuses references of unchanged items)."""

    __slots__ = ("_end", "_start", "hidden", "leaf", "name", "role", "scope", "symbol")

    def __init__(
        self,
        name: str,
        role: str,
        leaf: Any,
        symbol: Symbol | None,
        scope: Scope,
        start: tuple[int, int],
        end: tuple[int, int],
        hidden: Symbol | None = None,
    ) -> None:
        self.name = name
        self.role = role
        self.leaf = leaf
        self.symbol = symbol
        self.scope = scope
        line = leaf.line
        self._start = (start[0] - line, start[1])
        self._end = (end[0] - line, end[1])
        # For a name used after a body that hid it (``let`` in a loop), where it lived.
        self.hidden = hidden

    @property
    def start(self) -> tuple[int, int]:
        return self.leaf.line + self._start[0], self._start[1]

    @property
    def end(self) -> tuple[int, int]:
        return self.leaf.line + self._end[0], self._end[1]

    def __repr__(self) -> str:
        return f"Reference({self.name!r}, {self.role!r}, {self.start}-{self.end})"


@dataclass(eq=False)
class Model:
    module: Any
    program_scope: Scope
    agents: dict[str, list[t.AgentDefinition]] = field(default_factory=dict)
    blocks: dict[str, list[t.BlockDefinition]] = field(default_factory=dict)
    programs: dict[str, list[Any]] = field(default_factory=dict)  # alias -> use statements
    inputs: list[Symbol] = field(default_factory=list)
    outputs: list[Symbol] = field(default_factory=list)
    definitions: list[Symbol] = field(default_factory=list)  # variables, in program order
    references: list[Reference] = field(default_factory=list)
    agent_references: list[tuple[Any, Any]] = field(default_factory=list)  # (name, node)
    block_references: list[Any] = field(default_factory=list)  # DoInvocation nodes
    program_calls: list[Any] = field(default_factory=list)  # ProgramCall nodes
    scopes: list[Scope] = field(default_factory=list)

    def agent(self, name: str) -> t.AgentDefinition | None:
        found = self.agents.get(name)
        return found[0] if found else None

    def block(self, name: str) -> t.BlockDefinition | None:
        found = self.blocks.get(name)
        return found[0] if found else None


def statements_of(node: Any) -> list[Any]:
    if isinstance(node, t.Module):
        return node.statements()
    if isinstance(node, t.Suite):
        return node.statements()
    return []


def import_alias(use: t.UseStatement) -> str | None:
    """The name a ``use`` makes available: its alias, or the path's last segment."""
    if use.alias is not None:
        return use.alias.value
    path = use.path
    if path is None:
        return None
    text = path.text.strip().rstrip("/")
    name = text.rsplit("/", 1)[-1]
    if name.endswith(".prose"):
        name = name[: -len(".prose")]
    return name or None


@dataclass(eq=False, slots=True)
class Trace:
    """What binding one top-level item (or one block body) did, so that it can be replayed
    instead of redone when everything it read from outside is unchanged.

    ``ops`` is its dialogue with the program scope, in order: ``("def", name, symbol)`` a
    definition there (the first of a name wins), ``("hide", name, symbol)`` a local that
    ended with its body, ``("get", name, symbol, hidden)`` a lookup that reached the program
    scope (and, when it found nothing, what ``hidden`` said), ``("peek", name, symbol)`` a
    direct read of the program scope's table.  Everything else it produced is its own.
    """

    ops: list[tuple[Any, ...]] = field(default_factory=list)
    definitions: list[Symbol] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    agent_references: list[tuple[Any, Any]] = field(default_factory=list)
    block_references: list[Any] = field(default_factory=list)
    program_calls: list[Any] = field(default_factory=list)
    outputs: list[Symbol] = field(default_factory=list)
    scopes: list[Scope] = field(default_factory=list)
    deferred: list[t.BlockDefinition] = field(default_factory=list)
    # Made from ``ops`` on first use (a trace is complete by then).
    _reads: frozenset[str] | None = field(default=None, repr=False)
    _writes: list[tuple[Any, ...]] | None = field(default=None, repr=False)

    def reads(self) -> frozenset[str]:
        """The names it looked up in the program scope."""
        if self._reads is None:
            self._reads = frozenset(op[1] for op in self.ops if op[0] in ("get", "peek"))
        return self._reads

    def writes(self) -> list[tuple[Any, ...]]:
        """Its definitions in the program scope and its hidden locals, in order."""
        if self._writes is None:
            self._writes = [op for op in self.ops if op[0] in ("def", "hide")]
        return self._writes

    def written(self) -> set[str]:
        return {op[1] for op in self.writes()}


@dataclass(eq=False, slots=True)
class StatementBinding:
    """The binder's record of one top-level statement: what it declares before the walk
    (agents, programs, inputs, blocks and their exported results), the trace of its walk,
    and the traces of the block bodies it holds."""

    statement: Any
    agents: list[tuple[str, t.AgentDefinition]] = field(default_factory=list)
    programs: list[tuple[str, Any]] = field(default_factory=list)
    inputs: list[Symbol] = field(default_factory=list)
    blocks: list[tuple[str, t.BlockDefinition]] = field(default_factory=list)
    exported: list[Symbol] = field(default_factory=list)
    branches: list[Symbol] = field(default_factory=list)
    walk: Trace | None = None
    bodies: dict[int, Trace] = field(default_factory=dict)
    # The unit that holds it now.
    unit: UnitBinding | None = field(default=None, repr=False)
    # Until its walk is made: the record of a statement it replaced with the same text
    # (the incremental parser reparses the statement before an edit too), whose symbols it
    # takes over, so that what looked them up is replayed rather than bound again.
    previous: StatementBinding | None = field(default=None, repr=False)


@dataclass(eq=False, slots=True)
class UnitBinding:
    """The records of a run of consecutive statements, and the same put end to end, so
    that an unchanged run is replayed in one pass (its statements one by one otherwise)."""

    records: list[StatementBinding]
    agents: list[tuple[str, t.AgentDefinition]] = field(default_factory=list)
    programs: list[tuple[str, Any]] = field(default_factory=list)
    inputs: list[Symbol] = field(default_factory=list)
    blocks: list[tuple[str, t.BlockDefinition]] = field(default_factory=list)
    exported: list[Symbol] = field(default_factory=list)
    branches: list[Symbol] = field(default_factory=list)
    # The walks of its statements end to end, when all were made or replayed in order;
    # with the statement that holds each block its walk deferred.
    walk: Trace | None = None
    owners: list[tuple[t.BlockDefinition, StatementBinding]] = field(default_factory=list)
    # Its variables sorted by position, as of the last binding that redid any of it (the
    # program's definitions are these lists one after the other: units do not overlap).
    definitions: list[Symbol] | None = None

    def __post_init__(self) -> None:
        for record in self.records:
            record.unit = self
            self.agents += record.agents
            self.programs += record.programs
            self.inputs += record.inputs
            self.blocks += record.blocks
            self.exported += record.exported
            self.branches += record.branches


@dataclass(eq=False, slots=True)
class Part:
    """What the model holds of some of the program's top-level statements."""

    definitions: list[Symbol]
    references: list[Reference]
    agent_references: list[tuple[Any, Any]]
    block_references: list[Any]


def part_of(binding: UnitBinding) -> Part:
    """The part of the model a unit's statements made (its definitions by position)."""
    part = Part(list(binding.definitions or ()), [], [], [])
    for record in binding.records:
        traces = [record.walk] if record.walk is not None else []
        traces += record.bodies.values()
        for trace in traces:
            part.references += trace.references
            part.agent_references += trace.agent_references
            part.block_references += trace.block_references
    return part


class Unit(Protocol):
    """Consecutive top-level items as the binder sees them: their statements, whether they
    are the same as when their record was made, and the record (None: none yet)."""

    statements: list[Any]
    binding: UnitBinding | None

    @property
    def unchanged(self) -> bool: ...


class Binder:
    def __init__(
        self,
        module: Any,
        nodes: Callable[[type], list[Any]] | None = None,
        units: list[Any] | None = None,
        program_scope: Scope | None = None,
        records: dict[int, StatementBinding] | None = None,
        touched: set[str] | None = None,
        dropped: list[UnitBinding] | None = None,
        previous: dict[int, StatementBinding] | None = None,
    ) -> None:
        # ``nodes(cls)``: every node of a class in the module (the rules' shared index).
        self.nodes = nodes or (lambda cls: [n for n in t.iter_nodes(module) if isinstance(n, cls)])
        # An incremental analysis keeps its units (runs of the module's items), the records
        # of the statements it has seen unchanged (by id) and its program scope object from
        # one edit to the next.
        self.units: list[Any] = units if units is not None else []
        self.records = records if records is not None else {}
        # The bindings of the units of the last binding that are not units any more, and
        # whether their records were let go.
        self.dropped = dropped or []
        self.pruned = False
        # The records of statements replaced by new ones with the same text, by the new
        # statement's id.
        self.previous = previous or {}
        # While a statement that replaced one is walked: the symbols its predecessor's walk
        # defined, in order, which its own definitions take over.
        self._reuse: list[Symbol] | None = None
        self._new_bindings: list[UnitBinding] = []
        scope = program_scope if program_scope is not None else Scope("program", module, None)
        scope.node = module
        scope.symbols = {}
        self.model = Model(module, scope)
        self.model.scopes.append(self.model.program_scope)
        self._deferred_blocks: list[t.BlockDefinition] = []
        self._deferred_owner: dict[int, StatementBinding] = {}
        # Each unit's definitions in the order they were made; the units some part of which
        # was made again.
        self._made: dict[int, list[Symbol]] = {}
        self._redone: set[int] = set()
        # Names defined inside a body that ended (loop or block locals), by scope node,
        # to explain "undefined" references after that body.
        self._hidden: dict[str, Symbol] = {}
        self._inputs_by_node: dict[int, list[Symbol]] | None = None
        # The trace being made: set before each walk (none is read before one), with its
        # ops (None when nothing will read them: a binding with no records) and references.
        self._trace: Trace
        self._ops: list[tuple[Any, ...]] | None = None
        self._references: list[Reference]
        self._program = scope
        # The names whose definitions or hidden locals in the program scope may differ from
        # the last binding's, so far: an unchanged unit that looks up none of them finds
        # what it found, without checking its lookups one by one.
        # ``touched`` starts with what the caller knows changed (statements it dropped, a
        # binding closed midway).
        self.touched: set[str] = set(touched or ())
        # Traces replayed or made, for the statistics of an incremental analysis.
        self.replayed = 0
        self.rebound = 0
        # The units (by id) some part of whose binding was made again (their model changed).
        self.redone: set[int] = set()

    # ------------------------------------------------------------ entry

    def bind(self) -> Model:
        if not self.units:
            return self._bind_whole(self.model.module)
        for _ in self.steps():
            pass
        return self.model

    def steps(self) -> Iterator[None]:
        """Bind, pausing (yielding) after each unit and block body bound again, and after
        every ``_REPLAYS_PER_STEP`` replayed: a caller may stop in between (``abandoned``
        then leaves the records fit for the next binding)."""
        module = self.model.module
        if not self.units:
            self._bind_whole(module)
            return
        new_bindings = self._new_bindings
        for unit in self.units:
            binding = unit.binding
            if binding is None or not unit.unchanged:
                records = []
                for statement in unit.statements:
                    record = self.records.get(id(statement))
                    if record is None or record.statement is not statement:
                        record = self._declarations(statement)
                        self.touched |= record_names(record)
                        if self.previous:
                            _take_over(record, self.previous.get(id(statement)))
                    records.append(record)
                binding = unit.binding = UnitBinding(records)
                self._redone.add(id(binding))
                new_bindings.append(binding)
                yield
        # The records of the units given up, unless a new unit took them over; then those
        # of the new units (``records`` knows each statement seen, by id).
        for binding in self.dropped:
            for record in binding.records:
                key = id(record.statement)
                if record.unit is binding and self.records.get(key) is record:
                    del self.records[key]
                    self.touched |= record_names(record)
        self._adopt()
        self.pruned = True
        self._collect([unit.binding for unit in self.units])
        # A pause costs the caller a clock reading: replays, which take microseconds, pause
        # every so many.
        replays = 0
        for unit in self.units:
            if self._walk_unit(unit) or (replays := replays + 1) >= _REPLAYS_PER_STEP:
                replays = 0
                yield
        for block in self._deferred_blocks:
            if self._body_of(block) or (replays := replays + 1) >= _REPLAYS_PER_STEP:
                replays = 0
                yield
        self.redone = {id(unit) for unit in self.units if id(unit.binding) in self._redone}
        definitions = self.model.definitions
        for unit in self.units:
            binding = unit.binding
            if binding.definitions is None or id(binding) in self._redone:
                made = self._made.get(id(binding), [])
                made.sort(key=_LEAF_START)
                binding.definitions = made
            definitions.extend(binding.definitions)

    def _adopt(self) -> None:
        """Make the records of the new units known."""
        for binding in self._new_bindings:
            for record in binding.records:
                self.records[id(record.statement)] = record
        self._new_bindings = []

    def abandoned(self) -> list[Any]:
        """After stopping ``steps`` early: the units some part of which was made again (their
        sorted definitions are dropped, so that the next binding sorts them anew).  The new
        units' records are made known; when ``pruned`` is still False, the dropped units
        were not looked at: the caller gives them to the next binding."""
        self._adopt()
        units = [unit for unit in self.units if id(unit.binding) in self._redone]
        for unit in units:
            unit.binding.definitions = None
        return units

    def _bind_whole(self, module: Any) -> Model:
        """One pass over a module with no records (the command line's check)."""
        record = StatementBinding(module)
        children = module.children
        self._declare_top_level(record, children)
        self._declare_nested(record, self.nodes)
        # The record is collected as the one unit's (nothing keeps it).
        self._collect([record])
        # Nothing reads the traces of a binding with no records: one trace writes straight
        # into the model's lists (what ``_finish`` did after each, in the same order).
        model = self.model
        made = self._made[id(record)]
        deferred = self._deferred_blocks
        self._begin(
            Trace(
                [],
                made,
                model.references,
                model.agent_references,
                model.block_references,
                model.program_calls,
                model.outputs,
                model.scopes,
                deferred,
            ),
            traced=False,
        )
        self._walk(children, model.program_scope, in_parallel=False)
        # Blocks deferred while binding a body are appended, and bound in turn.
        for block in deferred:
            self._bind_block(block)
        made.sort(key=_LEAF_START)
        model.definitions = made
        return model

    def _begin(self, trace: Trace, traced: bool = True) -> Trace:
        """Make ``trace`` the one being made (its ops kept only when ``traced``)."""
        self._trace = trace
        self._ops = trace.ops if traced else None
        self._references = trace.references
        return trace

    # ------------------------------------------------------------ declarations

    def _declarations(self, statement: Any) -> StatementBinding:
        record = StatementBinding(statement)
        self._declare_top_level(record, [statement])
        from openprose.analysis.context import NodeIndex

        self._declare_nested(record, NodeIndex(statement).nodes)
        _compact(record, _DECLARED)
        return record

    def _declare_top_level(self, record: StatementBinding, statements: list[Any]) -> None:
        """Agents, programs and inputs: collected from the program's own statements (any
        other child is skipped)."""
        # By exact class: these have no subclasses (test_model_fast_paths checks).
        for statement in statements:
            kind = type(statement)
            if kind is t.AgentDefinition:
                leaf = _keyword_name(statement, "agent")
                name = leaf.value if leaf is not None else None
                if name:
                    record.agents.append((name, statement))
            elif kind is t.UseStatement:
                alias = import_alias(statement)
                if alias:
                    record.programs.append((alias, statement))
            elif kind is t.InputDeclaration:
                leaf = _keyword_name(statement, "input")
                if leaf is not None:
                    record.inputs.append(Symbol(leaf.value, Kind.INPUT, leaf, statement))

    def _declare_nested(self, record: StatementBinding, nodes: Callable[[type], list[Any]]) -> None:
        # Block definitions anywhere (nested ones are reported, and hoisted too).
        blocks = nodes(t.BlockDefinition)
        for block in blocks:
            leaf = _keyword_name(block, "block")
            name = leaf.value if leaf is not None else None
            if name:
                record.blocks.append((name, block))
        if not blocks:
            return  # no output or assignment is in a block definition
        # A block's outputs and named parallel results are its results, visible to the
        # program once it has run (`do research()` then `{docs}`).
        for node in nodes(t.OutputBinding):
            leaf = _output_name(node.children)
            if leaf is not None and _in_block_definition(node):
                record.exported.append(Symbol(leaf.value, Kind.OUTPUT, leaf, node, exported=True))
        for node in nodes(t.Assignment):
            target = node.target
            if (
                target is not None
                and isinstance(node.parent, t.Suite)
                and isinstance(node.parent.parent, t.Parallel)
                and _in_block_definition(node)
            ):
                record.branches.append(
                    Symbol(target.value, Kind.BRANCH, target, node, exported=True)
                )

    def _collect(self, bindings: Sequence[UnitBinding | StatementBinding]) -> None:
        """Agents, blocks (hoisted, anywhere), programs and inputs, before the walk."""
        model = self.model
        for binding in bindings:
            for name, agent in binding.agents:
                model.agents.setdefault(name, []).append(agent)
            for alias, use in binding.programs:
                model.programs.setdefault(alias, []).append(use)
            model.inputs.extend(binding.inputs)
        self._inputs_by_node = None
        for binding in bindings:
            for name, block in binding.blocks:
                model.blocks.setdefault(name, []).append(block)
        for binding in bindings:
            made = self._made[id(binding)] = []
            for symbol in binding.exported:
                self._define_program(symbol, made)
        for binding in bindings:
            made = self._made[id(binding)]
            for symbol in binding.branches:
                self._define_program(symbol, made)

    # ------------------------------------------------------------ replay

    def _walk_unit(self, unit: Any) -> bool:
        """Replay or bind the walk of a unit's statements; whether any was bound again."""
        binding = unit.binding
        joined = binding.walk
        if unit.unchanged and joined is not None and self._unchanged(joined):
            self._replay(joined)
            self.replayed += 1
            self._finish(joined, binding)
            for block, record in binding.owners:
                self._deferred_owner[id(block)] = record
            return False
        rebound = False
        traces = []
        owners = []
        program = self.model.program_scope
        for record in binding.records:
            trace = record.walk
            if trace is None or not self._unchanged(trace):
                if trace is not None:
                    self.touched |= trace.written()
                trace = self._begin(Trace())
                record.bodies = {}
                previous = record.previous
                if previous is not None and previous.walk is not None:
                    self._reuse = previous.walk.definitions[::-1]
                record.previous = None
                self._statement(record.statement, program, in_parallel=False)
                self._reuse = None
                record.walk = _compact(trace, _TRACED)
                self.touched |= trace.written()
                self.rebound += 1
                rebound = True
                self._redone.add(id(binding))
            else:
                self._replay(trace)
                self.replayed += 1
            self._finish(trace, binding)
            for block in trace.deferred:
                self._deferred_owner[id(block)] = record
                owners.append((block, record))
            traces.append(trace)
        binding.walk = _compact(_joined(traces), _TRACED)
        binding.owners = owners
        return rebound

    def _body_of(self, block: t.BlockDefinition) -> bool:
        """Replay or bind a block's body; whether it was bound again."""
        record = self._deferred_owner.get(id(block))
        binding = record.unit if record is not None else None
        trace = record.bodies.get(id(block)) if record is not None else None
        if trace is None or not self._unchanged(trace):
            if trace is not None:
                self.touched |= trace.written()
            trace = self._begin(Trace())
            self._bind_block(block)
            self.touched |= trace.written()
            if record is not None:
                record.bodies[id(block)] = _compact(trace, _TRACED)
            if binding is not None:
                self._redone.add(id(binding))
            self.rebound += 1
            rebound = True
        else:
            self._replay(trace)
            self.replayed += 1
            rebound = False
        self._finish(trace, binding)
        if record is not None:
            for nested in trace.deferred:
                self._deferred_owner[id(nested)] = record
        return rebound

    def _unchanged(self, trace: Trace) -> bool:
        """Whether every lookup of ``trace`` would find what it found: at once when it looks
        up no name whose program-scope meaning may have changed, one by one otherwise."""
        touched = self.touched
        if not touched or touched.isdisjoint(trace.reads()):
            return True
        return self._still_valid(trace)

    def _still_valid(self, trace: Trace) -> bool:
        """Whether every read of ``trace`` from the program scope would give what it gave,
        its own definitions (made on the way) included."""
        symbols = self.model.program_scope.symbols
        hidden = self._hidden
        own: dict[str, Symbol] = {}
        own_hidden: dict[str, Symbol] = {}
        for op in trace.ops:
            kind = op[0]
            name = op[1]
            if kind == "get":
                found = symbols[name] if name in symbols else own.get(name)
                if found is not op[2]:
                    return False
                if found is None:
                    was = hidden[name] if name in hidden else own_hidden.get(name)
                    if was is not op[3]:
                        return False
            elif kind == "def":
                if name not in symbols and name not in own:
                    own[name] = op[2]
            elif kind == "hide":
                if name not in hidden and name not in own_hidden:
                    own_hidden[name] = op[2]
            else:  # "peek"
                found = symbols[name] if name in symbols else own.get(name)
                if found is not op[2]:
                    return False
        return True

    def _replay(self, trace: Trace) -> None:
        program = self.model.program_scope
        symbols = program.symbols
        hidden = self._hidden
        for op in trace.writes():
            kind = op[0]
            if kind == "def":
                symbol = op[2]
                symbol.scope = program
                if op[1] not in symbols:
                    symbols[op[1]] = symbol
            elif kind == "hide":
                hidden.setdefault(op[1], op[2])

    def _finish(self, trace: Trace, owner: UnitBinding | None) -> None:
        model = self.model
        if owner is not None:
            self._made[id(owner)].extend(trace.definitions)
        else:
            model.definitions.extend(trace.definitions)
        model.references.extend(trace.references)
        model.agent_references.extend(trace.agent_references)
        model.block_references.extend(trace.block_references)
        model.program_calls.extend(trace.program_calls)
        model.outputs.extend(trace.outputs)
        model.scopes.extend(trace.scopes)
        self._deferred_blocks.extend(trace.deferred)

    # ------------------------------------------------------------ definitions

    def _define_program(self, symbol: Symbol, definitions: list[Symbol]) -> None:
        program = self.model.program_scope
        symbol.scope = program
        if symbol.name not in program.symbols:
            program.symbols[symbol.name] = symbol
        if symbol.kind.is_variable:
            definitions.append(symbol)

    def define(self, scope: Scope, symbol: Symbol) -> None:
        # A catch block scopes only its error variable: a `let` in it is visible after it,
        # like one in a `try` or `if` body.
        # (``Kind.is_scoped`` and ``is_variable`` read without their properties.)
        while scope.kind == "catch" and symbol.kind not in _SCOPED and scope.parent is not None:
            scope = scope.parent
        if self._reuse:
            symbol = self._taken_over(symbol)
        name = symbol.name
        if scope is self._program and self._ops is not None:
            self._ops.append(("def", name, symbol))
        symbol.scope = scope
        symbols = scope.symbols
        if name not in symbols:
            symbols[name] = symbol
        if symbol.kind not in _NOT_VARIABLES:
            self._trace.definitions.append(symbol)

    def _taken_over(self, symbol: Symbol) -> Symbol:
        """The predecessor's symbol in the same place of the same text, made to stand for
        ``symbol`` (the walk of the same text defines the same names in the same order;
        at the first difference, the rest are new)."""
        assert self._reuse is not None
        old = self._reuse.pop()
        if not _same_definition(old, symbol):
            self._reuse = None
            return symbol
        old.leaf, old.node = symbol.leaf, symbol.node
        return old

    def _enter(self, kind: str, node: Any, parent: Scope) -> Scope:
        scope = Scope(kind, node, parent)
        self._trace.scopes.append(scope)
        return scope

    def _leave(self, scope: Scope) -> None:
        hidden = self._hidden
        ops = self._ops
        for name, symbol in scope.symbols.items():
            if symbol.kind not in _SCOPED:
                # Traced even when the name is hidden already: a replay must be able to
                # hide it when what hid it first is gone.
                if name not in hidden:
                    hidden[name] = symbol
                if ops is not None:
                    ops.append(("hide", name, symbol))

    # ------------------------------------------------------------ walking

    def _walk(self, children: list[Any], scope: Scope, in_parallel: bool) -> None:
        """Bind the statements among a module's or a suite's ``children``, in order."""
        # The children are read as they are (``statements()`` built a list with a test of
        # twenty classes per child), and the class's entry says whether it is a statement.
        table = _WALK_ENTRIES
        for node in children:
            entry = table[type(node)]
            if entry is not None:
                handler, role = entry
                handler(self, node, scope, in_parallel if role is None else role)

    def _statement(self, node: Any, scope: Scope, in_parallel: bool) -> None:
        # Dispatch on the node's class through a table filled from the ordered cases below
        # (the first case the class is a subclass of wins, as a chain of isinstance tests
        # would): the walk visits every statement, and the chain was most of its time.
        kind = type(node)
        handler = _STATEMENT_HANDLERS.get(kind)
        if handler is None:
            handler = _STATEMENT_HANDLERS[kind] = _statement_handler(kind)
        handler(self, node, scope, in_parallel)

    def _let(self, node: t.LetBinding, scope: Scope, in_parallel: bool) -> None:
        children = node.children
        # ``let name = value``: the value and target read where the parser puts them
        # (``_after_equals``); any other shape through the accessors.
        value = _after_equals(children, 2)
        if value is _UNSEEN:
            value = node.value
        _EXPRESSION_HANDLERS[type(value)](self, value, scope, "value")
        kind = Kind.CONST if type(node) is t.ConstBinding else Kind.LET
        target = children[1] if len(children) > 1 else None
        if type(target) is t.Name:
            self.define(scope, Symbol(target.value, kind, target, node))
            return
        for name in node.target_names():
            self.define(scope, Symbol(name.value, kind, name, node))

    def _assignment(self, node: t.Assignment, scope: Scope, in_parallel: bool) -> None:
        children = node.children
        value = _after_equals(children, 1)
        if value is _UNSEEN:
            value = node.value
        _EXPRESSION_HANDLERS[type(value)](self, value, scope, "value")
        target = children[0]
        if type(target) is not t.Name:
            return
        if in_parallel:
            if _inside_block(scope):
                exported = self.model.program_scope.symbols.get(target.value)
                if self._ops is not None:
                    self._ops.append(("peek", target.value, exported))
                if exported is not None and exported.node is node:
                    return  # already defined (exported) while collecting
            self.define(scope, Symbol(target.value, Kind.BRANCH, target, node))
        else:
            self._reference(target.value, "assignment", target, scope)

    def _output(self, node: t.OutputBinding, scope: Scope, in_parallel: bool) -> None:
        children = node.children
        value = _after_equals(children, 2)  # ``output name = value``, as ``_let``
        if value is _UNSEEN:
            value = node.value
        _EXPRESSION_HANDLERS[type(value)](self, value, scope, "value")
        leaf = _output_name(children)
        if leaf is not None and not _inside_block(scope):
            symbol = Symbol(leaf.value, Kind.OUTPUT, leaf, node)
            self._trace.outputs.append(symbol)
            self.define(scope, symbol)

    def _input(self, node: t.InputDeclaration, scope: Scope, in_parallel: bool) -> None:
        declared = self._declared_inputs().get(id(node), [])
        if not declared and node.name is not None:
            # An input further down the program is a question asked at run time.
            declared = [Symbol(node.name.value, Kind.INPUT, node.name, node)]
        for symbol in declared:
            self.define(scope, symbol)

    def _declared_inputs(self) -> dict[int, list[Symbol]]:
        """The collected inputs by their declaration's id (a search of the list per input
        declaration was quadratic in their number)."""
        if self._inputs_by_node is None:
            self._inputs_by_node = {}
            for symbol in self.model.inputs:
                self._inputs_by_node.setdefault(id(symbol.node), []).append(symbol)
        return self._inputs_by_node

    def _defer_block(self, node: t.BlockDefinition, scope: Scope, in_parallel: bool) -> None:
        self._trace.deferred.append(node)

    def _nothing(self, node: Any, scope: Scope, in_parallel: bool) -> None:
        # Agent prompts are templates for the sessions that use the agent; errors, imports,
        # unsupported statements and throws bind nothing.
        return

    def _try(self, node: t.TryStatement, scope: Scope, in_parallel: bool) -> None:
        self._walk(_body(node), scope, False)
        # ``catch_clauses()`` then ``finally_clause``, met in one pass over the children.
        final = None
        for child in node.children:
            kind = type(child)
            if kind is t.CatchClause:
                self._catch(child, scope)
            elif kind is t.FinallyClause and final is None:
                final = child
        if final is not None:
            self._walk(_body(final), scope, False)

    def _orphan_catch(self, node: t.CatchClause, scope: Scope, in_parallel: bool) -> None:
        self._catch(node, scope)  # an orphan: still bind its body

    def _if(self, node: t.IfStatement, scope: Scope, in_parallel: bool) -> None:
        children = node.children
        self._condition(children, scope)
        self._walk(_body(node), scope, False)
        # ``elif_clauses()`` then ``else_clause``, met in one pass over the children.
        otherwise = None
        for child in children:
            kind = type(child)
            if kind is t.ElifClause:
                self._condition(child.children, scope)
                self._walk(_body(child), scope, False)
            elif kind is t.ElseClause and otherwise is None:
                otherwise = child
        if otherwise is not None:
            self._walk(_body(otherwise), scope, False)

    def _condition(self, children: list[Any], scope: Scope) -> None:
        """An ``if``'s or ``elif``'s condition (``_expression_after_first``): the second
        child when it is a value."""
        if len(children) > 1:
            condition = children[1]
            kind = type(condition)
            if kind in _VALUES:
                _EXPRESSION_HANDLERS[kind](self, condition, scope, "value")

    def _choice(self, node: t.ChoiceStatement, scope: Scope, in_parallel: bool) -> None:
        self._expression(node.criteria, scope)
        for option in node.options():
            self._walk(_body(option), scope, False)

    def _orphan_clause(self, node: Any, scope: Scope, in_parallel: bool) -> None:
        self._walk(_body(node), scope, False)

    def _catch(self, clause: t.CatchClause, scope: Scope) -> None:
        inner = self._enter("catch", clause, scope)
        if clause.error_name is not None:
            self.define(
                inner, Symbol(clause.error_name.value, Kind.ERROR, clause.error_name, clause)
            )
        self._walk(_body(clause), inner, False)
        self._leave(inner)

    def _bind_block(self, block: t.BlockDefinition) -> None:
        scope = self._enter("block", block, self._program)
        for param in _parameters(block):
            self.define(scope, Symbol(param.value, Kind.PARAMETER, param, block))
        self._walk(_body(block), scope, False)
        self._leave(scope)

    # ------------------------------------------------------------ expressions

    def _expression(self, node: Any, scope: Scope, role: str = "value") -> None:
        # None's class takes ``_no_expression``.  The walk's most frequent callers
        # subscript the table themselves.
        _EXPRESSION_HANDLERS[type(node)](self, node, scope, role)

    def _name(self, node: t.Name, scope: Scope, role: str) -> None:
        # ``_reference`` for a name leaf: one line, so its end is its column plus its length.
        name = node.value
        if name not in LITERALS:
            column = node.column
            self._add_reference(name, role, node, scope, (0, column), (0, column + len(name)))

    def _string(self, node: t.String, scope: Scope, role: str) -> None:
        self._interpolations(node, scope)

    def _session(self, node: t.Session, scope: Scope, role: str) -> None:
        # ``node.agent``, ``node.prompt`` and ``node.properties()`` read from the children in
        # one pass (sessions are most statements).
        children = node.children
        count = len(children)
        # ``_session_parts`` for the two usual shapes, inline: ``session: agent`` and a block,
        # ``session "prompt"`` and a line end.
        agent: Any
        block: Any
        if type(children[0]) is not t.Keyword:
            agent, block = _session_parts(children)
        elif count == 3 and type(children[1]) is t.String and type(children[2]) is t.Newline:
            agent = block = None
        elif (
            count == 4
            and type(children[3]) is t.PropertyBlock
            and type(children[2]) is t.Name
            and type(children[1]) is t.Operator
            and children[1].value == ":"
        ):
            agent, block = children[2], children[3]
        else:
            agent, block = _session_parts(children)
        if agent is not None:
            self._trace.agent_references.append((agent, node))
        if block is not None:
            for prop in block.children:
                if type(prop) is t.Property:
                    # ``_property`` for the usual ``name: value`` of a string or a name.
                    parts = prop.children
                    if len(parts) > 2 and type(parts[0]) is t.Name and type(parts[1]) is t.Operator:
                        value = parts[2]
                        kind = type(value)
                        if kind is t.String:
                            if "{" in value.value:
                                self._interpolations(value, scope)
                            continue
                        if kind is t.Name:
                            if parts[0].value == "context":
                                self._name(value, scope, "context")
                            continue
                    self._property(prop, scope)
        # Most prompts have no braces: left without a call.
        prompt = children[1] if len(children) > 1 else None
        if type(prompt) is t.String and "{" in prompt.value:
            self._interpolations(prompt, scope)

    def _resume(self, node: t.Resume, scope: Scope, role: str) -> None:
        self._session_like(node, scope, node.agent)

    def _do_block(self, node: t.DoBlock, scope: Scope, role: str) -> None:
        self._walk(_body(node), scope, False)

    def _do_invocation(self, node: t.DoInvocation, scope: Scope, role: str) -> None:
        self._trace.block_references.append(node)
        arguments = _do_arguments(node)
        if arguments is not None:
            # ``arguments.items()``: the keyword arguments and the values.
            for item in arguments.children:
                kind = type(item)
                if kind is t.KeywordArgument or kind in _VALUES:
                    _EXPRESSION_HANDLERS[kind](self, item, scope, "value")

    def _parallel(self, node: t.Parallel, scope: Scope, role: str) -> None:
        for child in node.children:  # ``node.modifiers``: its first Arguments child
            if type(child) is t.Arguments:
                for item in child.children:  # its keyword arguments, among ``items()``
                    if type(item) is t.KeywordArgument:
                        self._expression(item.value, scope)
                break
        self._walk(_body(node), scope, True)

    def _repeat(self, node: t.Repeat, scope: Scope, role: str) -> None:
        self._expression(node.count, scope)
        self._loop_body(node, scope, (node.index, Kind.INDEX))

    def _for_each(self, node: t.ForEach, scope: Scope, role: str) -> None:
        self._expression(node.collection, scope, "collection")
        self._loop_body(node, scope, (node.item, Kind.LOOP), (node.index, Kind.INDEX))

    def _loop(self, node: t.Loop, scope: Scope, role: str) -> None:
        self._expression(node.condition, scope)
        self._loop_body(node, scope, (node.index, Kind.INDEX))

    def _pipeline(self, node: t.Pipeline, scope: Scope, role: str) -> None:
        self._expression(node.source, scope, "collection")
        for stage in node.stages():
            self._stage(stage, scope)

    def _arrows(self, node: t.ArrowSequence, scope: Scope, role: str) -> None:
        for step in node.steps():
            self._expression(step, scope)

    def _program_call(self, node: t.ProgramCall, scope: Scope, role: str) -> None:
        self._trace.program_calls.append(node)
        arguments = node.arguments
        if arguments is not None:
            for item in arguments.children:  # ``arguments.items()``, as above
                kind = type(item)
                if kind is t.KeywordArgument:
                    self._expression(item.value, scope)
                elif kind in _VALUES:
                    self._expression(item, scope)

    def _attribute(self, node: t.Attribute, scope: Scope, role: str) -> None:
        self._expression(node.base, scope, role)

    def _subscript(self, node: t.Subscript, scope: Scope, role: str) -> None:
        self._expression(node.children[0], scope, role)
        for child in node.children[1:]:
            if not isinstance(child, t.Operator):
                self._expression(child, scope)

    def _array(self, node: t.ArrayLiteral, scope: Scope, role: str) -> None:
        for element in node.children:  # ``node.elements()``
            kind = type(element)
            if kind in _VALUES:
                _EXPRESSION_HANDLERS[kind](self, element, scope, role)

    def _object(self, node: t.ObjectLiteral, scope: Scope, role: str) -> None:
        for entry in node.children:  # ``node.entries()``
            kind = type(entry)
            if kind is t.ObjectEntry:
                self._expression(entry.value, scope, role)
            elif kind in _VALUES:
                _EXPRESSION_HANDLERS[kind](self, entry, scope, role)

    def _operands(self, node: Any, scope: Scope, role: str) -> None:
        for child in node.children:
            if not isinstance(child, t.Operator | t.Keyword):
                self._expression(child, scope)

    def _not(self, node: t.NotExpression, scope: Scope, role: str) -> None:
        for child in node.children[1:]:
            self._expression(child, scope)

    def _try_expression(self, node: t.TryStatement, scope: Scope, role: str) -> None:
        self._statement(node, scope, False)

    def _no_expression(self, node: Any, scope: Scope, role: str) -> None:
        return

    def _session_like(self, node: Any, scope: Scope, agent: Any) -> None:
        if agent is not None:
            self._trace.agent_references.append((agent, node))
        self._properties(node, scope)

    def _properties(self, node: Any, scope: Scope) -> None:
        """``node.properties()``, each bound."""
        block = node.property_block
        if block is not None:
            for prop in block.children:
                if type(prop) is t.Property:
                    self._property(prop, scope)

    def _property(self, prop: t.Property, scope: Scope) -> None:
        """``context:`` names variables; other values are words (``model: opus``,
        ``bash: allow``), so only their strings' interpolations are references."""
        value = _property_value(prop)
        if prop.name == "context":
            if value is not None:
                self._expression(value, scope, "context")
            elif prop.block is not None:
                for inner in prop.block.properties():
                    self._expression(inner.value, scope, "context")
            return
        if value is None:
            if prop.block is not None:
                for inner in prop.block.properties():
                    self._property(inner, scope)
        elif type(value) is t.String:
            if "{" in value.value:  # most values are one leaf without braces: no walk
                self._interpolations(value, scope)
        elif hasattr(value, "children"):
            for node in t.iter_leaves(value):
                if isinstance(node, t.String):
                    self._interpolations(node, scope)
        # Any other leaf (a word, a number) holds no interpolation.

    def _loop_body(self, node: Any, scope: Scope, *bound: tuple[Any, Kind]) -> None:
        """A loop's body in a scope of its own, holding the names the loop binds (those
        written: each a name leaf or None) in order."""
        inner = self._enter("loop", node, scope)
        for leaf, kind in bound:
            if leaf is not None:
                self.define(inner, Symbol(leaf.value, kind, leaf, node))
        self._walk(_body(node), inner, False)
        self._leave(inner)

    def _stage(self, stage: t.PipeStage, scope: Scope) -> None:
        inner = self._enter("pipeline", stage, scope)
        op = stage.operation
        params = stage.parameter_list
        if params is not None:
            for name in params.names():
                self.define(inner, Symbol(name.value, Kind.PIPELINE, name, stage))
        elif op is not None and op.value != "reduce":
            # map, filter, pmap; and an unknown operator (E039), so that its `item` is not
            # reported again as undefined.
            self.define(inner, Symbol("item", Kind.PIPELINE, op, stage, implicit=True))
        self._walk(_body(stage), inner, False)
        self._leave(inner)

    def _interpolations(self, string: t.String, scope: Scope) -> None:
        # The interpolations of ``string.parts()``, found without making the other parts, and
        # their positions from the leaf's when the value is one line (``offset_position``'s
        # line-end search and the parts' objects were most of the time of a prompt).
        value = string.value
        if "{" not in value:
            return
        triple = value.startswith('"""')
        role = "placeholder" if triple else "interpolation"
        quote = 3 if triple else 1
        # Scanned to the end of the value, closing quotes included: no match starts in
        # them, and none in the body reaches them (a terminated string's body ends with
        # its escapes paired), so this finds the matches ``string.body`` holds.
        column = string.column
        if "\r" in value:
            # The index of the last character of each line end (as ``offset_position``
            # finds them, CRLF and lone CR included).
            ends = [m.end() - 1 for m in _LINE_END.finditer(value)]
        elif "\n" in value:
            self._interpolations_by_line(string, scope, role, quote)
            return
        else:
            ends = _NO_ENDS
        # An interpolation, ``{`` to ``}``, holds no line end: it ends on its first line.
        for match in _INTERPOLATION.finditer(value, quote):
            name = match.group(1)
            if name is None:
                continue  # an escape: ``\{`` is a literal brace
            start, stop = match.span()
            lines = bisect_left(ends, start)
            if lines:
                first = start - ends[lines - 1] - 1
                position, after = (lines, first), (lines, first + stop - start)
            else:
                position, after = (0, column + start), (0, column + stop)
            self._add_reference(name, role, string, scope, position, after)

    def _interpolations_by_line(
        self, string: t.String, scope: Scope, role: str, quote: int
    ) -> None:
        """``_interpolations`` of a value whose line ends are all LF: the lines and the
        last line start before each interpolation, counted from the previous one."""
        value = string.value
        column = string.column
        lines = 0
        line_start = -1  # the index of the LF before the current line (-1: the first line)
        counted = 0
        for match in _INTERPOLATION.finditer(value, quote):
            name = match.group(1)
            if name is None:
                continue
            start, stop = match.span()
            lf = value.rfind("\n", counted, start)
            if lf >= 0:
                lines += value.count("\n", counted, start)
                line_start = lf
            counted = start
            if lines:
                first = start - line_start - 1
                position, after = (lines, first), (lines, first + stop - start)
            else:
                position, after = (0, column + start), (0, column + stop)
            self._add_reference(name, role, string, scope, position, after)

    def _reference(self, name: str, role: str, leaf: Any, scope: Scope) -> None:
        if name in LITERALS:
            return
        column = leaf.column
        value = leaf.value
        if "\n" in value or "\r" in value:  # never a name; kept exact for any leaf
            line = leaf.line
            end = leaf.end_pos
            self._add_reference(name, role, leaf, scope, (0, column), (end[0] - line, end[1]))
        else:
            self._add_reference(name, role, leaf, scope, (0, column), (0, column + len(value)))

    def _add_reference(
        self,
        name: str,
        role: str,
        leaf: Any,
        scope: Scope,
        start: tuple[int, int],
        end: tuple[int, int],
    ) -> None:
        """A reference to ``name`` at ``start``-``end``, relative to ``leaf``'s line."""
        # The symbol ``name`` means in ``scope``, and (when none) the local of an ended body
        # it may have meant; a search that reaches the program scope is traced.
        program = self._program
        current: Scope | None = scope
        while current is not program and current is not None:
            symbol = current.symbols.get(name)
            if symbol is not None:
                hidden = None
                break
            current = current.parent
        else:
            symbol = program.symbols.get(name)
            hidden = self._hidden.get(name) if symbol is None else None
            if self._ops is not None:
                self._ops.append(("get", name, symbol, hidden))
        reference = _new(Reference)
        reference.name = name
        reference.role = role
        reference.leaf = leaf
        reference.symbol = symbol
        reference.scope = scope
        reference._start = start
        reference._end = end
        reference.hidden = hidden
        self._references.append(reference)


_Handler = Callable[[Binder, Any, Scope, Any], None]

# The cases of a statement and of an expression, in the order they are tried: a class takes
# the first it is a subclass of (ConstBinding is a LetBinding; ErrorStatement an ErrorNode).
_STATEMENT_CASES: tuple[tuple[type | tuple[type, ...], _Handler], ...] = (
    (t.ErrorNode, Binder._nothing),
    (t.LetBinding, Binder._let),
    (t.Assignment, Binder._assignment),
    (t.OutputBinding, Binder._output),
    (t.InputDeclaration, Binder._input),
    (t.BlockDefinition, Binder._defer_block),
    (t.AgentDefinition, Binder._nothing),
    ((t.UseStatement, t.ImportStatement, t.UnsupportedStatement), Binder._nothing),
    (t.TryStatement, Binder._try),
    (t.CatchClause, Binder._orphan_catch),
    (t.IfStatement, Binder._if),
    (t.ChoiceStatement, Binder._choice),
    ((t.ElifClause, t.ElseClause, t.OptionClause, t.FinallyClause), Binder._orphan_clause),
    (t.ThrowStatement, Binder._nothing),
)

_EXPRESSION_CASES: tuple[tuple[type | tuple[type, ...], _Handler], ...] = (
    (t.Name, Binder._name),
    (t.String, Binder._string),
    (t.Session, Binder._session),
    (t.Resume, Binder._resume),
    (t.DoBlock, Binder._do_block),
    (t.DoInvocation, Binder._do_invocation),
    (t.Parallel, Binder._parallel),
    (t.Repeat, Binder._repeat),
    (t.ForEach, Binder._for_each),
    (t.Loop, Binder._loop),
    (t.Pipeline, Binder._pipeline),
    (t.ArrowSequence, Binder._arrows),
    (t.ProgramCall, Binder._program_call),
    (t.Attribute, Binder._attribute),
    (t.Subscript, Binder._subscript),
    (t.ArrayLiteral, Binder._array),
    (t.ObjectLiteral, Binder._object),
    ((t.Comparison, t.BooleanExpression, t.BinaryExpression), Binder._operands),
    (t.NotExpression, Binder._not),
    (t.TryStatement, Binder._try_expression),
)

_STATEMENT_HANDLERS: dict[type, _Handler] = {}


def _expression_handler(kind: type) -> _Handler:
    for case, handler in _EXPRESSION_CASES:
        if issubclass(kind, case):
            return handler
    return Binder._no_expression


_Made = TypeVar("_Made")


class _ByClass(dict[type, _Made]):
    """A table by class, its entry for a class made on first sight (``make``)."""

    def __init__(self, make: Callable[[type], _Made]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, kind: type) -> _Made:
        made = self[kind] = self.make(kind)
        return made


# By subscription: the walk calls a handler for every expression (``_expression``'s call,
# and a ``get`` with its test, were a tenth of the binder).
_EXPRESSION_HANDLERS: _ByClass[_Handler] = _ByClass(_expression_handler)


def _statement_handler(kind: type) -> _Handler:
    for case, handler in _STATEMENT_CASES:
        if issubclass(kind, case):
            return handler
    expression = _expression_handler(kind)

    # Any other statement is an expression (a session, a loop...), in the role of a value.
    def as_expression(binder: Binder, node: Any, scope: Scope, in_parallel: bool) -> None:
        expression(binder, node, scope, "value")

    return as_expression


# A statement block's entry for a class: its handler and the role to pass it (None: the
# handler is a statement's, given ``in_parallel``), or None for a child that is no statement
# (a newline, the end marker), which ``statements()`` left out.
_WalkEntry = tuple[_Handler, str | None] | None
_UNSEEN: Any = object()


def _walk_entry(kind: type) -> _WalkEntry:
    if not issubclass(kind, t.Statement):
        return None
    for case, handler in _STATEMENT_CASES:
        if issubclass(kind, case):
            return handler, None
    # Any other statement is an expression (a session, a loop...), in the role of a value.
    return _expression_handler(kind), "value"


_WALK_ENTRIES: _ByClass[_WalkEntry] = _ByClass(_walk_entry)


def _value_classes() -> frozenset[type]:
    """The classes of the nodes and leaves that are values (an ``Expression``, not junk),
    as the accessors test them: the union's members and their subclasses."""
    found: set[type] = set()
    pending = list(get_args(t.Expression))
    while pending:
        cls = pending.pop()
        if cls not in found:
            found.add(cls)
            pending.extend(cls.__subclasses__())
    return frozenset(cls for cls in found if not issubclass(cls, _ParsoErrorNode))


_VALUES = _value_classes()


def _keyword_name(node: Any, word: str) -> Any:
    """``_name_after(_keyword(word))`` (an agent's, block's or input's name leaf): the name
    after the keyword, read at once when the keyword is the first child, as it stands."""
    children = node.children
    first = children[0]
    if type(first) is t.Keyword and first.value == word:
        following = children[1] if len(children) > 1 else None
        return following if type(following) is t.Name else None
    return node._name_after(node._keyword(word))


def _output_name(children: list[Any]) -> Any:
    """``OutputBinding.name``: the second child, a name when an `=` follows it."""
    if len(children) > 2:
        name, equals = children[1], children[2]
        if type(name) is t.Name and type(equals) is t.Operator and equals.value == "=":
            return name
    return None


def _session_parts(children: list[Any]) -> tuple[Any, Any]:
    """A session's ``agent`` and ``property_block``: told by position in the usual shapes
    (``session: agent`` and a block; ``session "prompt"`` and a line end or a block), read
    in one pass over its children otherwise."""
    count = len(children)
    if count > 1 and type(children[0]) is t.Keyword:
        second = children[1]
        last = children[-1]
        if count == 4 and type(second) is t.Operator:
            third = children[2]
            agent = third if second.value == ":" and type(third) is t.Name else None
            if type(third) is t.PropertyBlock:
                return agent, third
            return agent, last if type(last) is t.PropertyBlock else None
        if count <= 3 and type(second) is t.String:
            return None, last if type(last) is t.PropertyBlock else None
    agent = block = None
    seen_operator = False
    for i, child in enumerate(children):
        kind = type(child)
        if kind is t.Operator:
            if not seen_operator:  # the first operator: the agent follows a `:`
                seen_operator = True
                if child.value == ":" and i + 1 < len(children):
                    following = children[i + 1]
                    if type(following) is t.Name:
                        agent = following
        elif kind is t.PropertyBlock and block is None:
            block = child
    return agent, block


def _parameters(block: t.BlockDefinition) -> list[Any]:
    """``block.parameters()``: the names in its first ``Parameters`` child."""
    for child in block.children:
        if type(child) is t.Parameters:
            return [name for name in child.children if type(name) is t.Name]
    return _NO_CHILDREN


def _do_arguments(node: t.DoInvocation) -> Any:
    """``node.arguments``, third after ``do name`` where the parser puts it."""
    children = node.children
    if (
        len(children) > 2
        and type(children[2]) is t.Arguments
        and type(children[0]) is t.Keyword
        and type(children[1]) is t.Name
    ):
        return children[2]
    return node.arguments


def _property_value(prop: t.Property) -> Any:
    """``prop.value``, read where the parser puts it (third, after the name and the `:`)."""
    children = prop.children
    if (
        len(children) > 2
        and type(children[1]) is t.Operator
        and type(children[0]) is not t.Operator
    ):
        value = children[2]
        return value if type(value) in _VALUES else None
    return prop.value


def _after_equals(children: list[Any], at: int) -> Any:
    """``_value_after_equals`` when the ``=`` is the child at ``at`` and no child before it
    is an operator (``let x = ...``, ``x = ...``): the value or None; ``_UNSEEN`` for any
    other shape, which the accessor reads."""
    if len(children) <= at:
        return _UNSEEN
    equals = children[at]
    if type(equals) is not t.Operator or equals.value != "=":
        return _UNSEEN
    for child in children[:at]:
        if type(child) is t.Operator:
            return _UNSEEN
    value = children[at + 1] if at + 1 < len(children) else None
    return value if type(value) in _VALUES else None


def _body(node: Any) -> list[Any]:
    """The children of a construct's body (``body_statements()`` unfiltered: ``_walk``
    skips what is not a statement); empty when it has none."""
    last = node.children[-1]
    if type(last) is t.Suite:  # where a body is, unless clauses follow it
        children: list[Any] = last.children
        return children
    body = node.body
    return body.children if body is not None else _NO_CHILDREN


_NO_CHILDREN: list[Any] = []


def record_names(record: StatementBinding) -> set[str]:
    """The names a statement's record defines or hides in the program scope."""
    names = {symbol.name for symbol in record.exported}
    names.update(symbol.name for symbol in record.branches)
    for trace in [record.walk, *record.bodies.values()]:
        if trace is not None:
            names |= trace.written()
    return names


# Replayed units and bodies between two pauses of ``Binder.steps``.
_REPLAYS_PER_STEP = 32

# A finished record or trace is only read: its empty lists are replaced by one empty tuple
# (an incremental analysis keeps one record and one or two traces per statement, mostly
# empty lists: two megabytes on 10,000 lines).  Appending to one would fail loudly.
_EMPTY: Any = ()
_TRACED = (
    "ops",
    "definitions",
    "references",
    "agent_references",
    "block_references",
    "program_calls",
    "outputs",
    "scopes",
    "deferred",
)
_DECLARED = ("agents", "programs", "inputs", "blocks", "exported", "branches")
_Compacted = TypeVar("_Compacted")


def _compact(finished: _Compacted, fields: tuple[str, ...]) -> _Compacted:
    for name in fields:
        if not getattr(finished, name):
            setattr(finished, name, _EMPTY)
    return finished


def _same_definition(old: Symbol, new: Symbol) -> bool:
    return (
        old.name == new.name
        and old.kind is new.kind
        and old.implicit == new.implicit
        and old.exported == new.exported
    )


def _take_over(record: StatementBinding, previous: StatementBinding | None) -> None:
    """Let ``record`` (of a statement with the same text as ``previous``'s) keep the
    symbols ``previous`` declared before the walk, pointed at its own nodes, and take
    over the rest as its walk defines them."""
    if previous is None:
        return
    for mine, theirs in (
        (record.inputs, previous.inputs),
        (record.exported, previous.exported),
        (record.branches, previous.branches),
    ):
        for k, (new, old) in enumerate(zip(mine, theirs, strict=False)):
            if not _same_definition(old, new):
                break
            old.leaf, old.node = new.leaf, new.node
            mine[k] = old
    record.previous = previous


def _joined(traces: list[Trace]) -> Trace:
    """Traces one after the other, as one."""
    if len(traces) == 1:
        return traces[0]
    joined = Trace()
    for trace in traces:
        joined.ops += trace.ops
        joined.definitions += trace.definitions
        joined.references += trace.references
        joined.agent_references += trace.agent_references
        joined.block_references += trace.block_references
        joined.program_calls += trace.program_calls
        joined.outputs += trace.outputs
        joined.scopes += trace.scopes
        joined.deferred += trace.deferred
    return joined


# ``_start`` in C, for sorting: a leaf's ``start_pos`` is its anchor's line and its column
# (every leaf class of the tree reads it so).
_LEAF_START = operator.attrgetter("leaf.anchor.line", "leaf.column")


def _inside_block(scope: Scope) -> bool:
    current: Scope | None = scope
    while current is not None:
        if current.kind == "block":
            return True
        current = current.parent
    return False


def exclusive(a: Any, b: Any) -> Any:
    """The ``if`` or ``choice`` statement in whose different branches two nodes sit (so at
    most one of them runs), or None."""
    ancestors_a: dict[int, Any] = {}
    child: Any = a
    node = a.parent
    while node is not None:
        ancestors_a[id(node)] = child
        child, node = node, node.parent
    child = b
    node = b.parent
    while node is not None:
        if id(node) in ancestors_a:
            if ancestors_a[id(node)] is child:
                return None
            if isinstance(node, t.IfStatement):
                return node
            if isinstance(node, t.Suite) and isinstance(node.parent, t.ChoiceStatement):
                return node.parent
            return None
        child, node = node, node.parent
    return None


def _in_block_definition(node: Any) -> bool:
    return t.ancestor(node, t.BlockDefinition) is not None


def build_model(
    module: Any,
    nodes: Callable[[type], list[Any]] | None = None,
    units: list[Any] | None = None,
    program_scope: Scope | None = None,
    records: dict[int, StatementBinding] | None = None,
) -> Model:
    """The semantic model of ``module``.  With ``units`` (its children, each with the record
    of its last binding), items unchanged since are replayed from their records when what
    they read is unchanged too: the model is the same as a binding from scratch."""
    return Binder(module, nodes, units, program_scope, records).bind()
