"""Program order: which executions of a statement may, or must, happen before another.

A program runs top to bottom, except that a ``do`` runs its block's body where it is
invoked (once per invocation), a loop runs its body again (so a later statement of the body
may have run before an earlier one), the branches of an ``if`` or a ``choice`` exclude each
other, and the branches of a ``parallel`` run concurrently (neither is before the other).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from openprose.analysis.context import Context, NodeIndex
from openprose.syntax import tree as t

# Constructs whose body runs more than once.
LOOPS = (t.Repeat, t.ForEach, t.Loop, t.PipeStage)

# Bounds that keep pathological programs (blocks calling blocks many times) fast: a block
# runs inline at its first few invocations only.
MAX_RUNS = 2_000
MAX_INLINE = 8
MAX_CALLS = 4

Key = tuple[int, int]  # (block instance, node id): tells two executions of a node apart
Chain = list[tuple[Key, Any]]  # keyed ancestors, innermost first


@dataclass(eq=False)
class Run:
    """One execution of a statement in program order; a block's body runs once per ``do``
    that invokes it."""

    node: Any
    order: int
    key: Key
    chain: Chain


def runs(ctx: Context, kinds: tuple[type, ...], agents: Collection[str] | None = None) -> list[Run]:
    """Every execution of a node of these ``kinds`` in program order, with ``do``
    invocations inlined (with ``agents``, only those of sessions of these agents are
    returned: the others count toward the order and the bound all the same)."""
    found: list[Run] = []
    count = 0
    instances = [0]
    invoked: set[int] = set()
    calls: dict[int, int] = {}
    # A block's statements' events, walked once however many times the block is inlined.
    bodies: dict[int, list[tuple[bool, Any]]] = {}
    # Every root's events at once from the index, when it is one walk of the module.
    indexed = _indexed_events(ctx, kinds)
    # What a block's body plays meets each time the block is inlined: whether a run is one
    # asked for, the block an invocation runs and a block's statements, told once each.
    asked: dict[int, bool] = {}
    blocks = ctx.model.blocks
    block_of: dict[int, Any] = {}
    statements_of: dict[int, list[Any]] = {}

    def play(
        events: list[tuple[bool, Any]], instance: int, outer: Chain, active: tuple[int, ...]
    ) -> None:
        nonlocal count
        for is_run, node in events:
            if count >= MAX_RUNS:
                return
            if is_run:
                if agents is not None:
                    wanted = asked.get(id(node))
                    if wanted is None:
                        agent = agent_of(node)
                        wanted = asked[id(node)] = agent is not None and agent.value in agents
                else:
                    wanted = True
                if wanted:
                    found.append(
                        Run(node, count, (instance, id(node)), _chain(node, instance, outer))
                    )
                count += 1
                continue
            block = block_of.get(id(node), _UNSET)
            if block is _UNSET:
                # `ctx.model.block(node.name.value)` (an invocation event has a name).
                named = blocks.get(node.children[1].value)
                block = block_of[id(node)] = named[0] if named else None
            if (
                block is None
                or id(block) in active
                or len(active) >= MAX_INLINE
                or calls.get(id(block), 0) >= MAX_CALLS
            ):
                continue
            invoked.add(id(block))
            calls[id(block)] = calls.get(id(block), 0) + 1
            instances[0] += 1
            call = _chain(node, instance, outer)
            call.insert(0, ((instance, id(node)), node))
            body = statements_of.get(id(block))
            if body is None:
                body = statements_of[id(block)] = block.body_statements()
            for statement in body:
                # The instance as it is now: a statement before may have inlined a block.
                play(
                    _body_events(ctx, block, statement, kinds, bodies, indexed),
                    instances[0],
                    call,
                    (*active, id(block)),
                )

    # `play` calls itself, so it holds itself through its closure: a reference cycle that
    # would keep this check's runs and context alive until the cyclic collector ran (an
    # editor checks on every keystroke); it is broken on the way out, by pointing the
    # closure's name elsewhere.
    try:
        for group in _chunks(ctx):
            if count >= MAX_RUNS:
                # Nothing after the bound is played: the rest of the program is not even walked.
                return found
            if indexed is not None and agents is not None:
                # One walk of the module (nothing to keep for another analysis): what
                # `_wanted` finds of a group that inlines nothing, without its summary.
                events = [e for node in group for e in indexed.get(id(node), ())]
                if all(is_run for is_run, _ in events):
                    local = count
                    for _, node in events:
                        if local >= MAX_RUNS:
                            break
                        agent = agent_of(node)
                        if agent is not None and agent.value in agents:
                            found.append(Run(node, local, (0, id(node)), _chain(node, 0, [])))
                        local += 1
                    count = min(count + len(events), MAX_RUNS)
                    continue
                play(events, 0, [], ())
                continue
            events, summary = _memo_events(ctx, group, kinds, indexed)
            if agents is not None and not summary.inlines:
                # Nothing here runs a block: its runs are the same whatever comes before them
                # but their order (their chains stop at the module), so they are kept.
                if not summary.agents.isdisjoint(agents):
                    for local, node, chain in _wanted(ctx, group, events, kinds, agents):
                        if count + local >= MAX_RUNS:
                            break
                        found.append(Run(node, count + local, (0, id(node)), chain))
                count = min(count + summary.runs, MAX_RUNS)
                continue
            play(events, 0, [], ())
        # Blocks no `do` reaches still get checked, as if run at the end of the program.
        for block in ctx.nodes(t.BlockDefinition):
            if count >= MAX_RUNS:
                break
            if id(block) not in invoked:
                instances[0] += 1
                outer = _chain(block, 0, [])
                outer.insert(0, ((0, id(block)), block))
                for statement in block.body_statements():
                    play(
                        _body_events(ctx, block, statement, kinds, bodies, indexed),
                        instances[0],
                        outer,
                        (id(block),),
                    )
        return found
    finally:
        play = _played_out


def _played_out(
    events: list[tuple[bool, Any]], instance: int, outer: Chain, active: tuple[int, ...]
) -> None:
    """What ``runs``'s ``play`` stands for once its runs are found (nothing is played)."""


def _chunks(ctx: Context) -> Iterator[list[Any]]:
    """The index's groups cut into runs of at most ``_CHUNK`` items: a whole program is one
    group, and runs stop counting at ``MAX_RUNS``, so the items after that need no walk.  A
    chunk without ``do`` is played as its group would play it (see ``runs``), so cutting
    changes no run."""
    index = ctx.index
    if type(index) is NodeIndex and not isinstance(index.module, list):
        # The module's items are its one group: taken as they come, not listed first.
        chunk: list[Any] = []
        for child in index.module.children:
            if hasattr(child, "children"):
                chunk.append(child)
                if len(chunk) == _CHUNK:
                    yield chunk
                    chunk = []
        if chunk:
            yield chunk
        return
    for group in index.groups():
        if len(group) <= _CHUNK:
            yield group
            continue
        for start in range(0, len(group), _CHUNK):
            yield group[start : start + _CHUNK]


# As many items as the runs of an incremental analysis hold at most: its groups stay whole.
_CHUNK = 64


def _memo_events(
    ctx: Context, group: list[Any], kinds: tuple[type, ...], indexed: _Indexed | None
) -> tuple[list[tuple[bool, Any]], _Summary]:
    if indexed is not None:
        return _group_events(group, kinds, indexed)  # one walk of the module: no memo
    return ctx.index.item_memo(group[0], ("flow", kinds), lambda: _group_events(group, kinds))


def _wanted(
    ctx: Context,
    group: list[Any],
    events: list[tuple[bool, Any]],
    kinds: tuple[type, ...],
    agents: Collection[str],
) -> list[tuple[int, Any, Chain]]:
    """The runs of ``agents``' sessions among a group's events (which inline nothing): their
    place among the group's runs, their node and their chain."""
    wanted = frozenset(agents)

    def compute() -> list[tuple[int, Any, Chain]]:
        runs = [node for is_run, node in events if is_run]
        return [
            (k, node, _chain(node, 0, []))
            for k, node in enumerate(runs)
            if (agent := agent_of(node)) is not None and agent.value in wanted
        ]

    return ctx.index.item_memo(group[0], ("flow.wanted", kinds, wanted), compute)


@dataclass(frozen=True)
class _Summary:
    runs: int
    inlines: bool
    agents: frozenset[str]


def _group_events(
    group: list[Any], kinds: tuple[type, ...], indexed: _Indexed | None = None
) -> tuple[list[tuple[bool, Any]], _Summary]:
    """The events of consecutive top-level items, and what they hold."""
    if indexed is not None:
        events = [e for node in group for e in indexed.get(id(node), ())]
    else:
        events = [e for node in group if hasattr(node, "children") for e in _events(node, kinds)]
    names = frozenset(
        agent.value for is_run, node in events if is_run and (agent := agent_of(node)) is not None
    )
    runs = sum(1 for is_run, _ in events if is_run)
    return events, _Summary(runs, runs < len(events), names)


def _body_events(
    ctx: Context,
    block: Any,
    statement: Any,
    kinds: tuple[type, ...],
    bodies: dict[int, list[tuple[bool, Any]]],
    indexed: _Indexed | None,
) -> list[tuple[bool, Any]]:
    if indexed is not None:
        return indexed.get(id(statement), [])
    found = bodies.get(id(statement))
    if found is None:
        found = bodies[id(statement)] = ctx.index.item_memo(
            t.top_level(block), ("flow", kinds, id(statement)), lambda: _events(statement, kinds)
        )
    return found


def _events(root: Any, kinds: tuple[type, ...]) -> list[tuple[bool, Any]]:
    """What running ``root`` meets, in order: (True, node) a node of ``kinds`` that runs,
    (False, invocation) a ``do`` whose block runs there (after its arguments).  Nothing
    inside an error or a block definition runs where it is written."""
    events: list[tuple[bool, Any]] = []
    # What each class of node is, told once per class (the walk meets every node).
    flags = _FLAGS.get(kinds)
    if flags is None:
        flags = _FLAGS[kinds] = {}
    # Nodes to visit; a 1-tuple holds an invocation to inline.
    stack: list[Any] = [root]
    pop = stack.pop
    push = stack.append
    inner = _NODE_CLASSES
    while stack:
        node = pop()
        cls = type(node)
        if cls is tuple:
            events.append((False, node[0]))
            continue
        flag = flags.get(cls)
        if flag is None:
            flag = flags[cls] = _flag(cls, kinds)
        if flag & _SKIP:
            continue
        if flag & _RUNS:
            events.append((True, node))
        if flag & _INVOCATION and node.name is not None:
            push((node,))
        for child in reversed(node.children):
            has_children = inner.get(type(child))
            if has_children is None:
                has_children = inner[type(child)] = hasattr(child, "children")
            if has_children:
                push(child)
    return events


# The events of each root (a top-level item, a statement of a block's body) by its id.
_Indexed = dict[int, list[tuple[bool, Any]]]


def _indexed_events(ctx: Context, kinds: tuple[type, ...]) -> _Indexed | None:
    """What ``_events`` meets running each top-level item and each statement of a block's
    body, by the root's id (a root met nowhere meets nothing), found from the index: each
    session, resume and invocation climbs to the root it runs in, instead of a walk of every
    node (they are few of a program's nodes).  None when the index is not one walk of a
    module, or ``kinds`` are not among the classes this knows the walk's order of."""
    index = ctx.index
    if (
        type(index) is not NodeIndex
        or type(index.module) is not t.Module
        or not _INDEXED_KINDS.issuperset(kinds)
    ):
        return None
    found = index.by_class()
    nodes = [node for kind in kinds for node in found.get(kind, ())]
    nodes += [node for node in found.get(t.DoInvocation, ()) if node.name is not None]
    placed: dict[int, list[tuple[Any, list[Any]]]] = {}
    mixed: set[int] = set()  # the roots holding nodes of several classes
    bodies: dict[int, Any] = {}
    module = t.Module
    skipped = _SKIPPED
    statements = _STATEMENTS
    for node in nodes:
        above: list[Any] = []  # its ancestors below the module or the nearest block
        holder = node.parent
        while holder is not None:
            kind = type(holder)
            if kind is module:
                break
            skip = skipped.get(kind)
            if skip is None:
                skip = skipped[kind] = issubclass(kind, t.ErrorNode | t.BlockDefinition)
            if skip:
                break
            above.append(holder)
            holder = holder.parent
        if type(holder) is module:
            root = above[-1] if above else node  # the top-level item
        elif isinstance(holder, t.BlockDefinition) and len(above) > 0:
            # In a statement of the block's body (the walk of the block's item skips it).
            body = bodies.get(id(holder), _UNSET)
            if body is _UNSET:
                body = bodies[id(holder)] = holder.body
            root = above[-2] if len(above) > 1 else node
            if above[-1] is not body:
                continue  # in the block's header: no statement runs it
            statement = statements.get(type(root))
            if statement is None:
                # `isinstance` of the union tries each of its thirty classes: told once.
                statement = statements[type(root)] = isinstance(root, t.Statement)
            if not statement:
                continue
        else:
            continue  # in nothing that runs (an error node, or no module)
        entries = placed.get(id(root))
        if entries is None:
            entries = placed[id(root)] = []
        elif type(entries[0][0]) is not type(node):
            mixed.add(id(root))
        entries.append((node, above))
    indexed: _Indexed = {}
    invocation = t.DoInvocation
    for key, entries in placed.items():
        if key in mixed:
            # In the walk's order: by position, and an ancestor (nearer the root) before the
            # nodes it holds that start where it does (the nodes of one class come in the
            # walk's order already: most roots hold sessions only).
            entries.sort(key=_walk_order)
        events: list[tuple[bool, Any]] = []
        pending: list[Any] = []  # invocations whose arguments are being met
        for node, above in entries:
            if pending:
                holding = {id(a) for a in above}
                while pending and id(pending[-1]) not in holding:
                    events.append((False, pending.pop()))  # after its arguments
            if type(node) is invocation:
                pending.append(node)
            else:
                events.append((True, node))
        while pending:
            events.append((False, pending.pop()))
        indexed[key] = events
    return indexed


def _walk_order(entry: tuple[Any, list[Any]]) -> tuple[tuple[int, int], int]:
    return entry[0].start_pos, len(entry[1])


# Classes of runs whose nodes are never one another's ancestors starting at the same place,
# nor empty (each starts with its keyword), so that their order by position (and depth) is
# the walk's.
_INDEXED_KINDS = frozenset((t.Session, t.Resume))
_SKIPPED: dict[type, bool] = {}
_STATEMENTS: dict[type, bool] = {}
_UNSET = object()

_SKIP, _RUNS, _INVOCATION = 1, 2, 4
_FLAGS: dict[tuple[type, ...], dict[type, int]] = {}
# Whether a class of child is a node (leaves are most children: a dict beats hasattr).
_NODE_CLASSES: dict[type, bool] = {}


def _flag(cls: type, kinds: tuple[type, ...]) -> int:
    if issubclass(cls, t.ErrorNode | t.BlockDefinition):
        return _SKIP
    flag = _RUNS if issubclass(cls, kinds) else 0
    if issubclass(cls, t.DoInvocation):
        flag |= _INVOCATION
    return flag


def agent_of(node: Any) -> Any:
    """``node.agent`` (None for a node without one), for a session or resume in one look at
    its children: the name after its first operator (a session's must be its `:`)."""
    kind = type(node)
    if kind is not t.Session and kind is not t.Resume:
        return getattr(node, "agent", None)
    children = node.children
    operator = t.Operator
    for i, child in enumerate(children):
        if type(child) is operator:
            if kind is t.Session and child.value != ":":
                return None
            after = children[i + 1] if i + 1 < len(children) else None
            return after if type(after) is t.Name else None
    return None


def possibly_before(a: Run, b: Run) -> bool:
    """Whether ``a`` may have run when ``b`` starts (a loop runs its body again)."""
    meet = _meet(a, b)
    if meet is None:
        return a.order < b.order
    common, child_a, child_b, above = meet
    if any(isinstance(n, LOOPS) for n in above):
        return True
    return a.order < b.order and not _branches(common, child_a, child_b)


def definitely_before(a: Run, b: Run) -> bool:
    """Whether ``a`` runs before ``b`` (not in another branch, not concurrently)."""
    if a.order >= b.order:
        return False
    meet = _meet(a, b)
    if meet is None:
        return True
    common, child_a, child_b, _ = meet
    if _branches(common, child_a, child_b):
        return False
    concurrent = isinstance(common, t.Suite) and isinstance(common.parent, t.Parallel)
    return not (concurrent and child_a != child_b)


def _chain(node: Any, instance: int, outer: Chain) -> Chain:
    """The keyed ancestors of ``node``, continuing at the call site past a block."""
    chain: Chain = []
    current = node.parent
    while current is not None:
        if isinstance(current, t.BlockDefinition) and outer:
            return chain + outer
        chain.append(((instance, id(current)), current))
        current = current.parent
    return chain


def _meet(a: Run, b: Run) -> tuple[Any, Any, Any, list[Any]] | None:
    """The closest common ancestor of two runs, the child of it on each side, and it with
    its ancestors."""
    positions = {key: i for i, (key, _) in enumerate(a.chain)}
    for j, (key, node) in enumerate(b.chain):
        i = positions.get(key)
        if i is not None:
            child_a = a.chain[i - 1][0] if i else a.key
            child_b = b.chain[j - 1][0] if j else b.key
            return node, child_a, child_b, [n for _, n in b.chain[j:]]
    return None


def _branches(common: Any, child_a: Any, child_b: Any) -> bool:
    """Whether the two sides sit in different branches of an ``if`` or ``choice``."""
    if child_a == child_b:
        return False
    if isinstance(common, t.IfStatement):
        return True
    return isinstance(common, t.Suite) and isinstance(common.parent, t.ChoiceStatement)
