"""Names and scopes: the flat namespace, definitions, references, agents and blocks.

Spec sections: Variables & Context, the Flat Namespace Requirement, Agent Definitions
(duplicates), Composition Blocks (references, duplicates, conflicts), Fixed and Unbounded
Loops, Pipelines and Error Handling (variables that shadow), Session and Resume
(undefined agents), Strings (undefined interpolation variables), Inputs and Outputs
(duplicates and conflicts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openprose.analysis.context import Context
from openprose.analysis.model import Kind, Reference, Symbol, exclusive
from openprose.analysis.rules.structure import container_keyword, nested_agents
from openprose.syntax import tree as t
from openprose.syntax.vocabulary import RESERVED_WORDS

_UNDEFINED = {
    "interpolation": ("E044", "undefined variable `{name}` in interpolation"),
    "placeholder": (
        "W034",
        "`{{{name}}}` names no variable, so it stays as text; write `\\{{{name}}}` if that is "
        "intended, or define `{name}`",
    ),
    "context": ("E045", "undefined variable `{name}` in context"),
    "collection": ("E061", "undefined collection variable `{name}`"),
}

_SHADOW = {
    Kind.LOOP: ("W017", "loop variable `{name}` shadows an outer variable"),
    Kind.INDEX: ("W017", "loop variable `{name}` shadows an outer variable"),
    Kind.PIPELINE: ("W020", "pipeline variable `{name}` shadows an outer variable"),
    Kind.PARAMETER: ("W015", "parameter `{name}` shadows an outer variable"),
    Kind.ERROR: ("W021", "error variable `{name}` shadows an outer variable"),
}


# Every check here looks at the definitions, references, agents and blocks the context's
# index holds (``ctx.part``: the whole program, or one run of it), and at the rest of the
# program only by name (the definitions of a name, what the program scope binds it to, the
# agent, block or program it names): an incremental analysis checks each run on its own.


def check(ctx: Context) -> None:
    check_local(ctx)


def check_local(ctx: Context) -> None:
    found = ctx.index.by_class()
    # (Each asked only when the program has some: a small file has neither.)
    agents = _agents(ctx) if t.AgentDefinition in found else []
    blocks = _blocks(ctx) if t.BlockDefinition in found else []
    _agents_and_blocks(ctx, agents, blocks)
    _variables(ctx)
    _references(ctx)
    if agents or blocks:
        _reserved_words(ctx, agents, blocks)


def definitions_by_name(ctx: Context) -> Mapping[str, list[Symbol]]:
    """Every variable of the program by name, in program order."""
    found: dict[str, list[Symbol]] = {}
    get = found.get
    for symbol in ctx.model.definitions:
        name = symbol.name
        namesakes = get(name)
        if namesakes is None:
            found[name] = [symbol]  # not `setdefault`, which makes a list for every symbol
        else:
            namesakes.append(symbol)
    return found


def nested_by_name(ctx: Context) -> Mapping[str, t.AgentDefinition]:
    """The first agent definition of each name that is not a statement of the program."""
    return {n.name: n for n in reversed(nested_agents(ctx)) if n.name}


# A definition with its name leaf and its name (each asked once: the leaf is looked for).
Named = tuple[Any, t.Name, str]


def _agents(ctx: Context) -> list[Named]:
    """The agents the context holds that the program collects (duplicates included)."""
    found: list[Named] = []
    nodes = ctx.index.by_class().get(t.AgentDefinition)
    if not nodes:
        return found
    collected = ctx.model.agents
    for node in nodes:
        leaf = _name_leaf(node, "agent")
        if leaf is None or not leaf.value:
            continue
        name = leaf.value
        # (Nodes compare by identity: `in` is `any(node is a ...)`, without a generator.)
        if node in collected.get(name, ()):
            found.append((node, leaf, name))
    return found


def _blocks(ctx: Context) -> list[Named]:
    found: list[Named] = []
    for node in ctx.index.by_class().get(t.BlockDefinition, ()):
        leaf = _name_leaf(node, "block")
        if leaf is not None and leaf.value:
            found.append((node, leaf, leaf.value))
    return found


def _name_leaf(node: t.AgentDefinition | t.BlockDefinition, keyword: str) -> t.Name | None:
    """``node.name_leaf`` of an agent or block definition (``keyword``: its keyword), told
    at once when the keyword comes first, as it does but in recovered headers."""
    children = node.children
    first = children[0]
    if type(first) is t.Keyword and first.value == keyword:
        name = children[1] if len(children) > 1 else None
        return name if type(name) is t.Name else None
    return node.name_leaf


def _agents_and_blocks(ctx: Context, agents: list[Named], blocks: list[Named]) -> None:
    model = ctx.model
    for duplicate, leaf, name in agents:
        first = model.agents[name][0]
        if duplicate is not first:
            ctx.report(
                "E006",
                f"agent `{name}` is already defined",
                leaf,
                related=(("first defined here", first.name_leaf),),
            )
    for block, leaf, name in blocks:
        first_block = model.blocks[name][0]
        if block is not first_block:
            ctx.report(
                "E052",
                f"block `{name}` is already defined",
                leaf,
                related=(("first defined here", first_block.name_leaf),),
            )
        agent = model.agent(name)
        if agent is not None and block is first_block:
            ctx.report(
                "E053",
                f"block name `{name}` conflicts with agent name",
                leaf,
                related=(("the agent is defined here", agent.name_leaf),),
            )
        if not isinstance(block.parent, t.Module):
            ctx.report(
                "E069",
                f"block `{name}` must be defined at the top level of the program, "
                "not inside another statement",
                leaf,
            )
    part = ctx.part
    nested: Mapping[str, t.AgentDefinition] | None = None  # asked for at an undefined agent
    defined = model.agents
    for leaf, _node in part.agent_references:
        if not defined.get(leaf.value):  # `model.agent(leaf.value) is None`, without its call
            if nested is None:
                nested = ctx.program_fact(nested_by_name)
            inner = nested.get(leaf.value)
            if inner is None:
                ctx.report("E007", f"agent `{leaf.value}` is not defined", leaf)
                continue
            ctx.report(
                "E007",
                f"agent `{leaf.value}` is not defined: its definition inside "
                f"`{container_keyword(inner)}` is never collected; move it to the top level",
                leaf,
                related=(("defined inside another statement here", inner.name_leaf),),
            )
    for invocation in part.block_references:
        name = invocation.name
        if name is not None and model.block(name.value) is None:
            message = f"block `{name.value}` is not defined"
            if name.value in model.programs:
                message += (
                    f"; `{name.value}` is an imported program: call it as `{name.value}(...)`"
                )
            ctx.report("E051", message, name)


def _variables(ctx: Context) -> None:
    """Duplicates in the flat namespace, conflicts with agents, and shadowing."""
    model = ctx.model
    program_scope = model.program_scope
    program_names = program_scope.symbols
    # Asked for at the first definition that needs it (a small file may have none).
    by_name: Mapping[str, list[Symbol]] | None = None
    agents = model.agents
    output = Kind.OUTPUT
    # The usual kind, told at once (`in` compares an enum member with each scoped kind).
    let = Kind.LET
    reserved = RESERVED_WORDS
    for symbol in ctx.part.definitions:
        name = symbol.name
        kind = symbol.kind
        # The name first: a definition's name is its leaf's text (the leaf of most, in memory
        # far from the symbol, is not reached).
        if name in reserved and not symbol.implicit:
            leaf = symbol.leaf
            if leaf is not None and leaf.value in reserved:
                _reserved_word(ctx, leaf)
        if kind is not let and kind in _SCOPED_KINDS:  # `kind.is_scoped`
            # `_shadowing` asked only when an outer scope holds the name (a scoped variable
            # is two fifths of a program's definitions, and seldom shadows one).
            scope = symbol.scope
            outer = scope.parent if scope is not None else None
            while outer is not None:
                if name in outer.symbols:
                    _shadowing(ctx, symbol, program_names)
                    break
                outer = outer.parent
            continue
        found = agents.get(name)  # `model.agent(name)`
        if found:
            ctx.report(
                "E049",
                f"variable name `{name}` conflicts with agent name",
                symbol.leaf,
                related=(("the agent is defined here", found[0].name_leaf),),
            )
        if symbol.exported or (kind is output and _reexport(symbol)):
            continue
        if symbol.scope is program_scope:
            # `_scoped_namesake(symbol)` of the usual variable: one scope to look in.
            scoped = program_names.get(name)
            if scoped is not None and scoped.kind not in _SCOPED_KINDS:
                scoped = None
        else:
            scoped = _scoped_namesake(symbol)
        if scoped is not None:
            what = scoped.kind.value
            ctx.report(
                "E019",
                f"variable `{name}` is already defined as a {what} here",
                symbol.leaf,
                related=((f"the {what} is defined here", scoped.leaf),),
            )
            continue
        if by_name is None:
            by_name = ctx.program_fact(definitions_by_name)
        namesakes = by_name[name]
        if namesakes[0] is symbol:
            continue  # the first of its name (the usual case)
        # Each block body is a namespace of its own (blocks have function-like scope).
        namespace = _namespace(symbol)
        earlier = []
        for other in namesakes:
            if other is symbol:
                break
            if _counted(other) and _namespace(other) == namespace:
                earlier.append(other)
        previous = next((p for p in earlier if _collides(p, symbol)), None)
        if previous is not None:
            _duplicate(ctx, symbol, previous)


def _scoped_namesake(symbol: Symbol) -> Symbol | None:
    """The loop, pipeline, parameter or error variable a variable's name already means."""
    scoped = symbol.scope.lookup(symbol.name) if symbol.scope is not None else None
    return scoped if scoped is not None and scoped.kind in _SCOPED_KINDS else None


# `Kind.is_scoped` without the property call: every definition asks.  A tuple, as an enum
# member's hash is computed in Python (a set lookup cost more than comparing five).
_SCOPED_KINDS = tuple(kind for kind in Kind if kind.is_scoped)


def _counted(symbol: Symbol) -> bool:
    """Whether a variable counts in the flat namespace: what a construct scopes, a block's
    exported result and a re-export do not; nor one that already names a scoped one."""
    if symbol.kind.is_scoped or symbol.exported or _reexport(symbol):
        return False
    return _scoped_namesake(symbol) is None


def _namespace(symbol: Symbol) -> int:
    node = symbol.node.parent
    while node is not None:
        if isinstance(node, t.BlockDefinition):
            return id(node)
        node = node.parent
    return 0


def _reexport(symbol: Symbol) -> bool:
    """``output review = review`` publishes a variable under its own name."""
    if symbol.kind is not Kind.OUTPUT:
        return False
    node = symbol.node
    if type(node) is not t.OutputBinding:
        return isinstance(node.value, t.Name) and node.value.value == symbol.name
    # `node.value` (asked twice, each a look for the `=` and the union's `isinstance`) in
    # one look at its children: what follows the first `=`, else what follows `output`.
    children = node.children
    value = children[1] if len(children) > 1 else None
    for i in range(1, len(children)):
        child = children[i]
        if type(child) is t.Operator and child.value == "=":
            value = children[i + 1] if i + 1 < len(children) else None
            break
    return type(value) is t.Name and value.value == symbol.name


def _collides(previous: Symbol, symbol: Symbol) -> bool:
    if exclusive(previous.node, symbol.node) is not None:
        # At most one of the two runs, so only one binding is ever written: the
        # collision the flat namespace exists to prevent cannot happen.  (The reference
        # lists same-named variables in if/elif/else branches as a collision, but real
        # programs bind one result per branch, `if ...: let plan = A else: let plan = B`.)
        return False
    if previous.kind is Kind.OUTPUT and symbol.kind is Kind.OUTPUT:
        # Setting the result in a branch (before a `throw`, or as an early answer) and
        # again later is how programs finish early: only flag two unconditional outputs.
        return previous.node.parent is symbol.node.parent
    return True


def _duplicate(ctx: Context, symbol: Symbol, previous: Symbol) -> None:
    name = symbol.name
    related = (("first defined here", previous.leaf),)
    if symbol.kind is Kind.INPUT and previous.kind is Kind.INPUT:
        ctx.report("E021", f"input `{name}` is already declared", symbol.leaf, related=related)
    elif symbol.kind is Kind.OUTPUT and previous.kind is Kind.OUTPUT:
        ctx.report("E024", f"output `{name}` is already declared", symbol.leaf, related=related)
    elif symbol.kind is Kind.OUTPUT:
        ctx.report(
            "E047",
            f"output name `{name}` conflicts with variable `{name}`",
            symbol.leaf,
            related=related,
        )
    else:
        ctx.report(
            "E019",
            f"variable `{name}` is already defined (variable names are unique in a program)",
            symbol.leaf,
            related=related,
        )


def _shadowing(ctx: Context, symbol: Symbol, program_names: dict[str, Symbol]) -> None:
    scope = symbol.scope
    outer = scope.parent.lookup(symbol.name) if scope is not None and scope.parent else None
    if outer is None or not outer.kind.is_variable or outer.exported:
        return
    if (
        symbol.kind is not Kind.PARAMETER
        and outer.start > symbol.start
        and (outer.kind is not Kind.INPUT)
    ):
        return  # defined later, so not visible yet where this one is introduced
    code, message = _SHADOW[symbol.kind]
    anchor = symbol.leaf
    ctx.report(
        code,
        message.format(name=symbol.name),
        anchor,
        related=(("the outer variable is defined here", outer.leaf),),
    )


def _references(ctx: Context) -> None:
    for reference in ctx.part.references:
        if reference.symbol is None:
            if reference.role == "context" and _persistent_agent(ctx, reference.name):
                continue  # a persistent agent's memory passed as context
            definitions = ctx.program_fact(definitions_by_name)
            _undefined(ctx, reference, definitions.get(reference.name, []))
        elif reference.role == "assignment":
            _reassignment(ctx, reference)


def _persistent_agent(ctx: Context, name: str) -> bool:
    agent = ctx.model.agent(name)
    return agent is not None and agent.get_property("persist") is not None


def _undefined(ctx: Context, reference: Reference, definitions: list[Symbol]) -> None:
    name = reference.name
    at = (reference.start, reference.end)
    if reference.role == "assignment":
        ctx.report(
            "E043",
            f"cannot assign to undefined variable `{name}`: declare it with `let {name} = ...`",
            at,
        )
        return
    code, message = _UNDEFINED.get(reference.role, ("E043", "undefined variable `{name}`"))
    message = message.format(name=name)
    related: tuple[tuple[str, Any], ...] = ()
    later = [d for d in definitions if d.start > reference.start and not d.kind.is_scoped]
    if reference.hidden is not None:
        where = {"loop": "a loop body", "block": "a block", "catch": "a catch block"}
        hidden_scope = reference.hidden.scope
        body = where.get(hidden_scope.kind if hidden_scope else "", "another body")
        message += f": it is defined inside {body} and is not visible here"
        if body == "a loop body":
            message += " (accumulate across iterations with `reduce`)"
        related = (("defined here", reference.hidden.leaf),)
    elif later:
        message += ": it is used before it is defined"
        related = (("defined here", later[0].leaf),)
    ctx.report(code, message, at, related=related)


def _reassignment(ctx: Context, reference: Reference) -> None:
    symbol = reference.symbol
    assert symbol is not None
    if not symbol.kind.is_constant:
        return
    what = "const" if symbol.kind is Kind.CONST else symbol.kind.value
    ctx.report(
        "E048",
        f"cannot reassign {what} `{reference.name}`"
        + ("" if symbol.kind is Kind.CONST else f": {what}s are constant"),
        (reference.start, reference.end),
        related=(("defined here", symbol.leaf),),
    )


def _reserved_words(ctx: Context, agents: list[Named], blocks: list[Named]) -> None:
    """E068 for agents and blocks (``_variables`` asks it of each variable it goes over)."""
    for _, leaf, _ in (*agents, *blocks):
        _reserved_word(ctx, leaf)


def _reserved_word(ctx: Context, leaf: Any) -> None:
    if leaf is not None and leaf.value in RESERVED_WORDS:
        ctx.report(
            "E068",
            f"`{leaf.value}` is a reserved word and cannot be used as a name",
            leaf,
        )
