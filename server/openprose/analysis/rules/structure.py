"""Where statements may stand, and block calls that can never finish.

Spec sections: Use Statements (processed before anything else, so only at the top
level), Agents (collected from the top level before the first statement runs, so one
defined inside another statement is never defined) and Composition Blocks (blocks calling
blocks).
"""

from __future__ import annotations

from typing import Any

from openprose.analysis.context import Context
from openprose.syntax import tree as t

# Constructs that decide whether the statements under them run.
_CONDITIONAL = (
    t.IfStatement,
    t.ElifClause,
    t.ElseClause,
    t.ChoiceStatement,
    t.OptionClause,
    t.Loop,
    t.Repeat,
    t.ForEach,
    t.Pipeline,
    t.TryStatement,
    t.CatchClause,
)

# Whether a class of node is one of them, told once a class.
_CONDITIONAL_CLASSES: dict[type, bool] = {}


def check(ctx: Context) -> None:
    check_local(ctx)
    check_program(ctx)


def check_local(ctx: Context) -> None:
    found = ctx.index.by_class()
    # (Each asked only when the program has some: most have neither imports nor agents.)
    if t.UseStatement in found or t.ImportStatement in found:
        _imports_at_top_level(ctx)
    if t.AgentDefinition in found:
        _agents_at_top_level(ctx)


def check_program(ctx: Context) -> None:
    _unconditional_recursion(ctx)


def _imports_at_top_level(ctx: Context) -> None:
    found = ctx.index.by_class()
    for kind in (t.UseStatement, t.ImportStatement):
        for node in found.get(kind, ()):
            if not isinstance(node.parent, t.Module):
                ctx.report(
                    "E073",
                    "imports must be at the top level of the program, not inside another statement",
                    node.children[0],
                )


def _agents_at_top_level(ctx: Context) -> None:
    for node in nested_agents(ctx):
        name = node.name_leaf
        if name is None:
            continue  # `agent:` without a name: the parser reports it
        ctx.report(
            "W037",
            f"agent `{name.value}` is defined inside `{container_keyword(node)}`, but agents "
            "are collected from the top level when the program starts, so this definition "
            "is never used: move it to the top level of the program",
            name,
        )


def nested_agents(ctx: Context) -> list[t.AgentDefinition]:
    """Agent definitions that are not statements of the program itself."""
    agents = ctx.index.by_class().get(t.AgentDefinition)
    if not agents:
        return []  # most programs: no memo needed
    return ctx.memo(
        "structure.nested_agents",
        lambda: [n for n in agents if not isinstance(n.parent, t.Module)],
    )


def container_keyword(node: Any) -> str:
    """The keyword of the statement whose body holds ``node`` (`block`, `loop`, `if`...)."""
    owner = node.parent.parent if isinstance(node.parent, t.Suite) else node.parent
    first = owner.get_first_leaf() if owner is not None else None
    return str(first.value) if first is not None else "another statement"


def _unconditional_recursion(ctx: Context) -> None:
    """Blocks that call each other (or themselves) on every path never finish."""
    blocks = ctx.model.blocks
    if not blocks:
        return
    if ctx.nodes(t.ErrorNode):
        # The index leaves out the insides of error nodes, where a walk of a block still
        # finds calls: each block is walked.
        calls = {
            name: [
                (invocation.name.value, invocation)
                for invocation in _unconditional_calls(found[0])
                if invocation.name.value in blocks
            ]
            for name, found in blocks.items()
        }
    else:
        calls = _calls_from_index(ctx)
    reported: set[str] = set()
    for start in calls:
        cycle = _cycle_from(start, calls)
        if cycle is None or start in reported:
            continue
        reported.update(cycle)
        first = ctx.model.blocks[start][0]
        path = " -> ".join([*cycle, cycle[0]])
        ctx.report(
            "W035",
            f"block `{start}` always calls itself again ({path}) with no condition that "
            "stops it: put the recursive call under `if **...**:` with a base case",
            first.name_leaf,
        )


def _calls_from_index(ctx: Context) -> dict[str, list[tuple[str, Any]]]:
    """What walking each block with ``_unconditional_calls`` finds, from the index's
    invocations (in source order, as a walk meets them): each climbs to the blocks holding
    it, noting whether a conditional construct stands in between."""
    blocks = ctx.model.blocks
    calls: dict[str, list[tuple[str, Any]]] = {name: [] for name in blocks}
    first = {id(found[0]): name for name, found in blocks.items()}
    known = _CONDITIONAL_CLASSES
    for invocation in ctx.nodes(t.DoInvocation):  # the control rules ask the same
        name = invocation.name
        if name is None or name.value not in blocks:
            continue
        ancestor = invocation.parent
        while ancestor is not None:
            holder = first.get(id(ancestor))
            if holder is not None:
                calls[holder].append((name.value, invocation))
            # `isinstance(ancestor, _CONDITIONAL)`, which tries its eleven classes in turn,
            # told once a class.
            kind = type(ancestor)
            conditional = known.get(kind)
            if conditional is None:
                conditional = known[kind] = isinstance(ancestor, _CONDITIONAL)
            if conditional:
                break  # every block above holds the call under a condition
            ancestor = ancestor.parent
    return calls


def _unconditional_calls(block: t.BlockDefinition) -> list[Any]:
    found = []
    for node in t.iter_nodes(block):
        if isinstance(node, t.DoInvocation) and node.name is not None:
            ancestor = node.parent
            conditional = False
            while ancestor is not None and ancestor is not block:
                if isinstance(ancestor, _CONDITIONAL):
                    conditional = True
                    break
                ancestor = ancestor.parent
            if not conditional:
                found.append(node)
    return found


def _cycle_from(start: str, calls: dict[str, list[tuple[str, Any]]]) -> list[str] | None:
    """A cycle of unconditional calls through ``start``, as a list of block names."""
    stack = [(start, [start])]
    seen: set[str] = set()
    while stack:
        name, path = stack.pop()
        for callee, _ in calls.get(name, []):
            if callee == start:
                return path
            if callee not in seen:
                seen.add(callee)
                stack.append((callee, [*path, callee]))
    return None
