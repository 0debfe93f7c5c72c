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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

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
        return self not in (Kind.AGENT, Kind.BLOCK, Kind.PROGRAM)

    @property
    def is_scoped(self) -> bool:
        """Introduced by a construct for its own body (may shadow with a warning)."""
        return self in (Kind.LOOP, Kind.INDEX, Kind.PIPELINE, Kind.ERROR, Kind.PARAMETER)

    @property
    def is_constant(self) -> bool:
        return self is not Kind.LET and self is not Kind.BRANCH and self is not Kind.OUTPUT


@dataclass(eq=False)
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


@dataclass(eq=False)
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


@dataclass(eq=False)
class Reference:
    """A use of a name: ``role`` says where (context, interpolation, collection...)."""

    name: str
    role: str
    leaf: Any
    symbol: Symbol | None
    scope: Scope
    start: tuple[int, int]
    end: tuple[int, int]
    # For a name used after a body that hid it (``let`` in a loop), where it lived.
    hidden: Symbol | None = None


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


class Binder:
    def __init__(self, module: Any, nodes: Callable[[type], list[Any]] | None = None) -> None:
        # ``nodes(cls)``: every node of a class in the module (the rules' shared index).
        self.nodes = nodes or (lambda cls: [n for n in t.iter_nodes(module) if isinstance(n, cls)])
        self.model = Model(module, Scope("program", module, None))
        self.model.scopes.append(self.model.program_scope)
        self._deferred_blocks: list[t.BlockDefinition] = []
        # Names defined inside a body that ended (loop or block locals), by scope node,
        # to explain "undefined" references after that body.
        self._hidden: dict[str, Symbol] = {}

    # ------------------------------------------------------------ entry

    def bind(self) -> Model:
        module = self.model.module
        self._collect(module.statements())
        self._walk(module.statements(), self.model.program_scope, in_parallel=False)
        for block in self._deferred_blocks:
            self._bind_block(block)
        self.model.definitions.sort(key=lambda s: s.start)
        return self.model

    def _collect(self, statements: list[Any]) -> None:
        """Agents, blocks (hoisted, anywhere), programs and inputs."""
        for statement in statements:
            if isinstance(statement, t.AgentDefinition) and statement.name:
                self.model.agents.setdefault(statement.name, []).append(statement)
            elif isinstance(statement, t.UseStatement):
                alias = import_alias(statement)
                if alias:
                    self.model.programs.setdefault(alias, []).append(statement)
            elif isinstance(statement, t.InputDeclaration) and statement.name is not None:
                symbol = Symbol(statement.name.value, Kind.INPUT, statement.name, statement)
                self.model.inputs.append(symbol)
        # Block definitions anywhere (nested ones are reported, and hoisted too).
        for block in self.nodes(t.BlockDefinition):
            if block.name:
                self.model.blocks.setdefault(block.name, []).append(block)
        # A block's outputs and named parallel results are its results, visible to the
        # program once it has run (`do research()` then `{docs}`).
        for node in self.nodes(t.OutputBinding):
            if node.name is not None and _in_block_definition(node):
                symbol = Symbol(node.name.value, Kind.OUTPUT, node.name, node, exported=True)
                self.define(self.model.program_scope, symbol)
        for node in self.nodes(t.Assignment):
            target = node.target
            if (
                target is not None
                and isinstance(node.parent, t.Suite)
                and isinstance(node.parent.parent, t.Parallel)
                and _in_block_definition(node)
            ):
                symbol = Symbol(target.value, Kind.BRANCH, target, node, exported=True)
                self.define(self.model.program_scope, symbol)

    # ------------------------------------------------------------ definitions

    def define(self, scope: Scope, symbol: Symbol) -> None:
        # A catch block scopes only its error variable: a `let` in it is visible after it,
        # like one in a `try` or `if` body.
        while scope.kind == "catch" and not symbol.kind.is_scoped and scope.parent is not None:
            scope = scope.parent
        symbol.scope = scope
        if symbol.name not in scope.symbols:
            scope.symbols[symbol.name] = symbol
        if symbol.kind.is_variable:
            self.model.definitions.append(symbol)

    def _enter(self, kind: str, node: Any, parent: Scope) -> Scope:
        scope = Scope(kind, node, parent)
        self.model.scopes.append(scope)
        return scope

    def _leave(self, scope: Scope) -> None:
        for name, symbol in scope.symbols.items():
            if not symbol.kind.is_scoped:
                self._hidden.setdefault(name, symbol)

    # ------------------------------------------------------------ walking

    def _walk(self, statements: list[Any], scope: Scope, in_parallel: bool) -> None:
        for statement in statements:
            self._statement(statement, scope, in_parallel)

    def _statement(self, node: Any, scope: Scope, in_parallel: bool) -> None:
        if isinstance(node, t.ErrorNode):
            return
        if isinstance(node, t.LetBinding):  # and ConstBinding
            self._expression(node.value, scope)
            kind = Kind.CONST if isinstance(node, t.ConstBinding) else Kind.LET
            for name in node.target_names():
                self.define(scope, Symbol(name.value, kind, name, node))
            return
        if isinstance(node, t.Assignment):
            self._expression(node.value, scope)
            target = node.target
            if target is None:
                return
            if in_parallel:
                if _inside_block(scope):
                    exported = self.model.program_scope.symbols.get(target.value)
                    if exported is not None and exported.node is node:
                        return  # already defined (exported) while collecting
                self.define(scope, Symbol(target.value, Kind.BRANCH, target, node))
            else:
                self._reference(target.value, "assignment", target, scope)
            return
        if isinstance(node, t.OutputBinding):
            self._expression(node.value, scope)
            if node.name is not None and not _inside_block(scope):
                symbol = Symbol(node.name.value, Kind.OUTPUT, node.name, node)
                self.model.outputs.append(symbol)
                self.define(scope, symbol)
            return
        if isinstance(node, t.InputDeclaration):
            declared = [symbol for symbol in self.model.inputs if symbol.node is node]
            if not declared and node.name is not None:
                # An input further down the program is a question asked at run time.
                declared = [Symbol(node.name.value, Kind.INPUT, node.name, node)]
            for symbol in declared:
                self.define(scope, symbol)
            return
        if isinstance(node, t.BlockDefinition):
            self._deferred_blocks.append(node)
            return
        if isinstance(node, t.AgentDefinition):
            # Agent prompts are templates for the sessions that use the agent.
            return
        if isinstance(node, t.UseStatement | t.ImportStatement | t.UnsupportedStatement):
            return
        if isinstance(node, t.TryStatement):
            self._walk(node.body_statements(), scope, False)
            for catch in node.catch_clauses():
                self._catch(catch, scope)
            if node.finally_clause is not None:
                self._walk(node.finally_clause.body_statements(), scope, False)
            return
        if isinstance(node, t.CatchClause):  # an orphan: still bind its body
            self._catch(node, scope)
            return
        if isinstance(node, t.IfStatement):
            self._expression(node.condition, scope)
            self._walk(node.body_statements(), scope, False)
            for clause in node.elif_clauses():
                self._expression(clause.condition, scope)
                self._walk(clause.body_statements(), scope, False)
            if node.else_clause is not None:
                self._walk(node.else_clause.body_statements(), scope, False)
            return
        if isinstance(node, t.ChoiceStatement):
            self._expression(node.criteria, scope)
            for option in node.options():
                self._walk(option.body_statements(), scope, False)
            return
        if isinstance(node, t.ElifClause | t.ElseClause | t.OptionClause | t.FinallyClause):
            self._walk(node.body_statements(), scope, False)
            return
        if isinstance(node, t.ThrowStatement):
            return
        self._expression(node, scope)

    def _catch(self, clause: t.CatchClause, scope: Scope) -> None:
        inner = self._enter("catch", clause, scope)
        if clause.error_name is not None:
            self.define(
                inner, Symbol(clause.error_name.value, Kind.ERROR, clause.error_name, clause)
            )
        self._walk(clause.body_statements(), inner, False)
        self._leave(inner)

    def _bind_block(self, block: t.BlockDefinition) -> None:
        scope = self._enter("block", block, self.model.program_scope)
        for param in block.parameters():
            self.define(scope, Symbol(param.value, Kind.PARAMETER, param, block))
        self._walk(block.body_statements(), scope, False)
        self._leave(scope)

    # ------------------------------------------------------------ expressions

    def _expression(self, node: Any, scope: Scope, role: str = "value") -> None:
        if node is None:
            return
        if isinstance(node, t.Name):
            self._reference(node.value, role, node, scope)
        elif isinstance(node, t.String):
            self._interpolations(node, scope)
        elif isinstance(node, t.Session):
            self._session_like(node, scope, node.agent)
            if node.prompt is not None:
                self._interpolations(node.prompt, scope)
        elif isinstance(node, t.Resume):
            self._session_like(node, scope, node.agent)
        elif isinstance(node, t.DoBlock):
            self._walk(node.body_statements(), scope, False)
        elif isinstance(node, t.DoInvocation):
            self.model.block_references.append(node)
            if node.arguments is not None:
                for item in node.arguments.items():
                    self._expression(item, scope)
        elif isinstance(node, t.Parallel):
            if node.modifiers is not None:
                for item in node.modifiers.items():
                    if isinstance(item, t.KeywordArgument):
                        self._expression(item.value, scope)
            self._walk(node.body_statements(), scope, True)
        elif isinstance(node, t.Repeat):
            self._expression(node.count, scope)
            self._loop_body(node, scope, (node.index, Kind.INDEX))
        elif isinstance(node, t.ForEach):
            self._expression(node.collection, scope, "collection")
            self._loop_body(node, scope, (node.item, Kind.LOOP), (node.index, Kind.INDEX))
        elif isinstance(node, t.Loop):
            self._expression(node.condition, scope)
            self._loop_body(node, scope, (node.index, Kind.INDEX))
        elif isinstance(node, t.Pipeline):
            self._expression(node.source, scope, "collection")
            for stage in node.stages():
                self._stage(stage, scope)
        elif isinstance(node, t.ArrowSequence):
            for step in node.steps():
                self._expression(step, scope)
        elif isinstance(node, t.ProgramCall):
            self.model.program_calls.append(node)
            if node.arguments is not None:
                for item in node.arguments.items():
                    value = item.value if isinstance(item, t.KeywordArgument) else item
                    self._expression(value, scope)
        elif isinstance(node, t.Attribute):
            self._expression(node.base, scope, role)
        elif isinstance(node, t.Subscript):
            self._expression(node.children[0], scope, role)
            for child in node.children[1:]:
                if not isinstance(child, t.Operator):
                    self._expression(child, scope)
        elif isinstance(node, t.ArrayLiteral):
            for element in node.elements():
                self._expression(element, scope, role)
        elif isinstance(node, t.ObjectLiteral):
            for entry in node.entries():
                value = entry.value if isinstance(entry, t.ObjectEntry) else entry
                self._expression(value, scope, role)
        elif isinstance(node, t.Comparison | t.BooleanExpression | t.BinaryExpression):
            for child in node.children:
                if not isinstance(child, t.Operator | t.Keyword):
                    self._expression(child, scope)
        elif isinstance(node, t.NotExpression):
            for child in node.children[1:]:
                self._expression(child, scope)
        elif isinstance(node, t.TryStatement):
            self._statement(node, scope, False)

    def _session_like(self, node: Any, scope: Scope, agent: Any) -> None:
        if agent is not None:
            self.model.agent_references.append((agent, node))
        for prop in node.properties():
            self._property(prop, scope)

    def _property(self, prop: t.Property, scope: Scope) -> None:
        """``context:`` names variables; other values are words (``model: opus``,
        ``bash: allow``), so only their strings' interpolations are references."""
        value = prop.value
        if prop.name == "context":
            if value is not None:
                self._expression(value, scope, "context")
            elif prop.block is not None:
                for inner in prop.block.properties():
                    self._expression(inner.value, scope, "context")
            return
        if value is not None:
            for node in t.iter_leaves(value):
                if isinstance(node, t.String):
                    self._interpolations(node, scope)
        elif prop.block is not None:
            for inner in prop.block.properties():
                self._property(inner, scope)

    def _loop_body(self, node: Any, scope: Scope, *bound: tuple[Any, Kind]) -> None:
        """A loop's body in a scope of its own, holding the names the loop binds (those
        written: each a name leaf or None) in order."""
        inner = self._enter("loop", node, scope)
        for leaf, kind in bound:
            if leaf is not None:
                self.define(inner, Symbol(leaf.value, kind, leaf, node))
        self._walk(node.body_statements(), inner, False)
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
        self._walk(stage.body_statements(), inner, False)
        self._leave(inner)

    def _interpolations(self, string: t.String, scope: Scope) -> None:
        if "{" not in string.value:
            return
        for part in string.parts():
            if part.kind == "interpolation":
                name = part.name
                assert name is not None
                # Multi-line prompts use `{placeholder}` text for the model; an undefined
                # name there is reported as a placeholder, not an undefined variable.
                role = "placeholder" if string.is_triple else "interpolation"
                self._add_reference(name, role, string, scope, part.start, part.end)

    def _reference(self, name: str, role: str, leaf: Any, scope: Scope) -> None:
        if name in LITERALS:
            return
        self._add_reference(name, role, leaf, scope, leaf.start_pos, leaf.end_pos)

    def _add_reference(
        self, name: str, role: str, leaf: Any, scope: Scope, start: Any, end: Any
    ) -> None:
        symbol = scope.lookup(name)
        reference = Reference(name, role, leaf, symbol, scope, start, end)
        if symbol is None:
            reference.hidden = self._hidden.get(name)
        self.model.references.append(reference)


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


def build_model(module: Any, nodes: Callable[[type], list[Any]] | None = None) -> Model:
    return Binder(module, nodes).bind()
