"""Control flow: parallel modifiers, loop counts and limits, conditions, choices, blocks
and context arrays.

Spec sections: Parallel Blocks (join strategies, failure policies, count), Fixed Loops
(repeat counts), Unbounded Loops (max iterations, unbounded loops, discretion
conditions), Choice Blocks and Conditional Statements (empty criteria or conditions,
duplicate labels, empty bodies), Error Handling (empty throw message), Composition
Blocks (argument counts, empty block names: E054 is reported by the parser) and
Variables & Context (context array elements).

Judgement calls:

* A count or limit written as a variable (``repeat cycles:``, ``(max: limit)``,
  ``count: n``) is a value known at run time: accepted here (an undefined name is
  already E043).  Any other non-number (a string, a condition) is "not an integer".
* ``count`` must be a whole number of at least 1: ``count: 0`` and ``count: 1.5`` are
  both E058.  A non-integer repeat count or loop limit is E060/E063 (even when negative);
  an integer one below 1 is E059/E062.
* A discretion condition is "very short" (W019) when it has fewer than three characters
  or no letter or digit at all: ``**x**``, ``**ok**``, ``**??**``.  One real word such
  as ``**done**`` is a fine condition.
* Unknown modifiers (``parallel (join: "first")``, ``loop (limit: 3)``) are W005 with a
  message that names the modifiers the construct takes.
"""

from __future__ import annotations

from typing import Any

from openprose.analysis.context import Context
from openprose.syntax import tree as t
from openprose.syntax.vocabulary import JOIN_STRATEGIES, ON_FAIL_POLICIES

SHORT_CONDITION = 3  # characters: a condition shorter than this may be ambiguous


def check(ctx: Context) -> None:
    check_local(ctx)


def check_local(ctx: Context) -> None:
    # Each class as the index keeps it (one query of the seven would sort them together,
    # some 6 ms in a 100,000-line program), without a query (a small file holds none of most
    # of them): the order they are checked in changes nothing, each reporting at its own node.
    found = ctx.index.by_class()
    for kind, check_node in _CHECKS.items():
        nodes = found.get(kind)
        if nodes:
            for node in nodes:
                check_node(ctx, node)
    properties = found.get(t.Property)
    if not properties:
        return
    operator = t.Operator
    name = t.Name
    for node in properties:
        children = node.children
        if children[0].value == "context":  # `node.name`, asked of every property
            # `context: variable`, the usual context (a third of a program's properties),
            # told here without a call.
            if len(children) > 2 and type(children[1]) is operator and type(children[2]) is name:
                continue
            _context(ctx, node)


# --------------------------------------------------------------------------- walking


def in_error(node: Any) -> bool:
    return t.ancestor(node, t.ErrorNode) is not None


def header(node: Any) -> tuple[Any, Any]:
    """A clause's header: its keyword through its ``:`` (or the last header token)."""
    first = node.children[0]
    last = first
    for child in node.children[1:]:
        if isinstance(child, t.Newline | t.Suite | t.PropertyBlock | t.ErrorNode):
            break
        if isinstance(child, t.ElifClause | t.ElseClause | t.CatchClause | t.FinallyClause):
            break
        last = child
        if isinstance(child, t.Operator) and child.value == ":":
            break
    return first, last


def number(leaf: Any) -> int | float | None:
    """The value of a number literal (None for ``5m`` and other suffixed numbers)."""
    if not isinstance(leaf, t.Number):
        return None
    try:
        return int(leaf.value)
    except ValueError:
        pass
    try:
        return float(leaf.value)
    except ValueError:
        return None


def is_variable(node: Any) -> bool:
    return isinstance(node, (t.Name, t.Attribute))


def listed(node: Any, other: type | None = None) -> list[Any]:
    """The values between the brackets of ``node`` (and its children of the class
    ``other``): ``ArrayLiteral.elements()``, or with ``KeywordArgument``
    ``Arguments.items()``, with ``ObjectEntry`` ``ObjectLiteral.entries()``."""
    # Most children are operators or leaf values: told apart by their class, as telling
    # that an operator is no expression means trying each class of the union in turn.
    found = []
    expressions = _EXPRESSION_CLASSES
    for child in node.children:
        kind = type(child)
        if kind is t.Operator:
            continue
        if kind in _VALUE_LEAVES:
            found.append(child)
            continue
        # An expression that is no error node, told once a class (`isinstance` of the
        # union tries each of its classes in turn).
        expression = expressions.get(kind)
        if expression is None:
            expression = expressions[kind] = not isinstance(child, t.ErrorNode) and isinstance(
                child, t.Expression
            )
        if expression or (
            other is not None and isinstance(child, other) and not isinstance(child, t.ErrorNode)
        ):
            found.append(child)
    return found


_EXPRESSION_CLASSES: dict[type, bool] = {}


def expression_after_keyword(node: Any) -> Any:
    """``node._expression_after_first()``: the condition of an if statement or an elif
    clause, the criteria of a choice (the union's `isinstance`, tried at each node, told once
    a class)."""
    children = node.children
    if len(children) < 2:
        return None
    child = children[1]
    kind = type(child)
    expression = _EXPRESSION_CLASSES.get(kind)
    if expression is None:
        expression = _EXPRESSION_CLASSES[kind] = not isinstance(child, t.ErrorNode) and isinstance(
            child, t.Expression
        )
    return child if expression else None


def statements(body: Any) -> list[Any]:
    """``body.statements()`` of a suite (its first child, a newline, is no statement)."""
    found = []
    known = _STATEMENT_CLASSES
    for child in body.children:
        kind = type(child)
        statement = known.get(kind)
        if statement is None:
            # `isinstance` of the union tries each of its thirty classes: told once a class.
            statement = known[kind] = isinstance(child, t.Statement)
        if statement:
            found.append(child)
    return found


_STATEMENT_CLASSES: dict[type, bool] = {t.Newline: False}


def text_of(string: t.String) -> str:
    """``string.text``, without decoding a plain one-line string (most are)."""
    value = string.value
    if "\\" not in value and len(value) > 1 and value[-1] == '"' and value[1:3] != '""':
        return value[1:-1]
    return string.text


def terminated(string: t.String) -> bool:
    """``string.is_terminated``, told at once for a one-line string without a backslash."""
    value = string.value
    if "\\" not in value and value[1:3] != '""':
        return len(value) > 1 and value[-1] == '"'
    return string.is_terminated


_VALUE_LEAVES = frozenset((t.Name, t.String, t.Number, t.Discretion))


# --------------------------------------------------------------------------- parallel


def _parallel(ctx: Context, node: t.Parallel) -> None:
    modifiers = node.modifiers
    if modifiers is None:
        return
    strategy: t.String | None = None
    count: t.KeywordArgument | None = None
    invalid = False  # an invalid join strategy: the count cannot be judged
    for item in listed(modifiers, t.KeywordArgument):
        if isinstance(item, t.KeywordArgument):
            name = item.name.value
            if name == "on-fail":
                _on_fail(ctx, item)
            elif name == "count":
                count = item
            else:
                message = (
                    f"unknown parallel modifier `{name}`: a parallel block takes a join "
                    'strategy ("all", "first" or "any"), `on-fail:` and `count:`'
                )
                if name in ("join", "strategy"):
                    message += '; write the strategy as a plain string: `parallel ("first"):`'
                ctx.report("W005", message, item.name)
            continue
        if isinstance(item, t.String) and not terminated(item):
            invalid = True  # the parser reported the unterminated string
            continue
        if isinstance(item, t.String) and text_of(item) in JOIN_STRATEGIES:
            if strategy is not None:
                ctx.report(
                    "E055",
                    "a parallel block takes one join strategy",
                    item,
                    related=(("the join strategy is set here", strategy),),
                )
            else:
                strategy = item
            continue
        if isinstance(item, t.String):
            message = f'invalid join strategy "{text_of(item)}": must be "all", "first" or "any"'
        elif isinstance(item, t.Name) and item.value in JOIN_STRATEGIES:
            message = f'the join strategy is a string: write `("{item.value}")`'
        elif isinstance(item, t.Number):
            # A count written without its name: `parallel ("any", 2)`.
            invalid = True
            n = number(item)
            if not isinstance(n, int) or n < 1:
                ctx.report(
                    "E058",
                    "count must be a whole number of at least 1 (written `count: N`)",
                    item,
                )
                continue
            message = (
                'invalid join strategy: must be "all", "first" or "any"; '
                f"write a count as `count: {item.value}`"
            )
        else:
            message = 'invalid join strategy: must be "all", "first" or "any"'
        ctx.report("E055", message, item)
        invalid = True
    first = strategy is not None and text_of(strategy) == "first"
    if not first and (count is None or invalid):
        return  # the number of branches is not needed
    body = node.body
    branches = len(statements(body)) if body is not None else 0
    if first and branches == 1:
        assert strategy is not None
        ctx.report(
            "W032",
            'a "first" join with a single branch: a race needs at least two branches',
            strategy,
        )
    if count is not None and not invalid:
        _count(ctx, count, strategy, branches if body is not None else None)


def _on_fail(ctx: Context, item: t.KeywordArgument) -> None:
    value = item.value
    if value is None or (isinstance(value, t.String) and not terminated(value)):
        return  # the parser reported the missing value or the unterminated string
    if isinstance(value, t.String) and text_of(value) in ON_FAIL_POLICIES:
        return
    if isinstance(value, t.Name) and value.value in ON_FAIL_POLICIES:
        message = f'the on-fail policy is a string: write `on-fail: "{value.value}"`'
    else:
        shown = f' "{text_of(value)}"' if isinstance(value, t.String) else ""
        message = f'invalid on-fail policy{shown}: must be "fail-fast", "continue" or "ignore"'
    ctx.report("E056", message, value)


def _count(
    ctx: Context, item: t.KeywordArgument, strategy: t.String | None, branches: int | None
) -> None:
    if strategy is None or text_of(strategy) != "any":
        related = (("the join strategy is set here", strategy),) if strategy is not None else ()
        ctx.report(
            "E057",
            'count is only valid with the "any" strategy: write `parallel ("any", count: N):`',
            item,
            related=related,
        )
        return
    value = item.value
    if value is None or is_variable(value):
        return
    n = number(value)
    if not isinstance(n, int) or n < 1:
        ctx.report("E058", "count must be a whole number of at least 1", value)
    elif branches is not None and n > branches:
        ctx.report(
            "W016",
            f"count {n} exceeds the number of parallel branches ({branches})",
            value,
        )


# --------------------------------------------------------------------------- loops


def _repeat(ctx: Context, node: t.Repeat) -> None:
    count = node.count
    if count is None or is_variable(count):
        return
    n = number(count)
    if not isinstance(n, int):
        hint = ""
        if isinstance(count, t.String) and count.text.strip().isdigit():
            hint = f": write `repeat {count.text.strip()}:`"
        ctx.report("E060", "repeat count must be an integer" + hint, count)
    elif n <= 0:
        ctx.report("E059", "repeat count must be positive", count)


def _loop(ctx: Context, node: t.Loop) -> None:
    has_max = False
    modifiers = node.modifiers
    if modifiers is not None:
        for item in listed(modifiers, t.KeywordArgument):
            if isinstance(item, t.KeywordArgument) and item.name.value == "max":
                has_max = True
                _max(ctx, item)
            elif isinstance(item, t.KeywordArgument):
                ctx.report(
                    "W005",
                    f"unknown loop modifier `{item.name.value}`: a loop takes only `(max: N)`",
                    item.name,
                )
            else:
                ctx.report(
                    "W005",
                    "a loop modifier needs a name: write the limit as `(max: N)`",
                    item,
                )
    if node.kind is None and not has_max:
        ctx.report(
            "W018",
            "unbounded loop without max iterations: add a condition "
            "(`loop until **...**:`) or a limit (`loop (max: N):`)",
            node.children[0],
        )
    if node.kind is not None and node.condition is not None:
        _discretions(ctx, node.condition, "discretion condition cannot be empty")


def _max(ctx: Context, item: t.KeywordArgument) -> None:
    value = item.value
    if value is None or is_variable(value):
        return
    n = number(value)
    if not isinstance(n, int):
        ctx.report("E063", "max iterations must be an integer", value)
    elif n <= 0:
        ctx.report("E062", "max iterations must be positive", value)


# --------------------------------------------------------------------------- conditions


def _discretions(ctx: Context, condition: Any, empty_message: str) -> None:
    """E064 and W019 for every ``**...**`` of a condition."""
    # Most conditions are one discretion: no walk.
    leaves = (condition,) if type(condition) is t.Discretion else t.iter_leaves(condition)
    for leaf in leaves:
        if not isinstance(leaf, t.Discretion):
            continue
        value = leaf.value
        if not value.startswith("***") and len(value) >= 4 and value.endswith("**"):
            text = value[2:-2].strip()  # `leaf.condition` of a terminated `**...**`
        elif not leaf.is_terminated:
            continue
        else:
            text = leaf.condition
        if not text:
            ctx.report(
                "E064",
                f"{empty_message}: write it between the markers, such as `**the tests pass**`",
                leaf,
            )
        elif len(text) < SHORT_CONDITION or not any(c.isalnum() for c in text):
            ctx.report(
                "W019",
                f"discretion condition `{text}` may be ambiguous: describe what should be "
                "true, such as `**the tests pass**`",
                leaf,
            )


def _if(ctx: Context, node: t.IfStatement) -> None:
    message = "if/elif condition cannot be empty"
    condition = expression_after_keyword(node)  # `node.condition`
    if condition is not None:
        _discretions(ctx, condition, message)
    # `node.body`, `node.elif_clauses()` and `node.else_clause` in one look at its children.
    body = elses = None
    elifs = []
    for child in node.children:
        kind = type(child)
        if kind is t.Suite:
            if body is None:
                body = child
        elif kind is t.ElifClause:
            elifs.append(child)
        elif kind is t.ElseClause and elses is None:
            elses = child
    if body is None:
        _empty_body(ctx, node, "if")
    for clause in elifs:
        condition = expression_after_keyword(clause)  # `clause.condition`
        if condition is not None:
            _discretions(ctx, condition, message)
        _empty_body(ctx, clause, "elif")
    if elses is not None:
        _empty_body(ctx, elses, "else")


def _empty_body(ctx: Context, node: Any, word: str) -> None:
    if node.body is not None:
        return
    first, last = header(node)
    ctx.report(
        "W026",
        f"condition has empty body: `{word}` has no statements; indent some under it or remove it",
        first,
        last,
    )


def _choice(ctx: Context, node: t.ChoiceStatement) -> None:
    criteria = expression_after_keyword(node)  # `node.criteria`
    if criteria is not None:
        _discretions(ctx, criteria, "choice criteria cannot be empty")
    seen: dict[str, t.String] = {}
    body = node.body
    options = [] if body is None else statements(body)
    for option in options:
        if type(option) is not t.OptionClause:  # `node.options()`
            continue
        label = option.label
        if label is not None and terminated(label):
            key = text_of(label).strip()
            first = seen.get(key)
            if first is not None:
                ctx.report(
                    "W024",
                    f'duplicate option label "{key}"',
                    label,
                    related=(("first used here", first),),
                )
            else:
                seen[key] = label
        if option.body is None:
            first_leaf, last = header(option)
            ctx.report(
                "W025",
                "option has empty body: indent the statements to run for this option "
                "under it, or remove it",
                first_leaf,
                last,
            )


# --------------------------------------------------------------------------- others


def _throw(ctx: Context, node: t.ThrowStatement) -> None:
    message = node.message
    if message is not None and terminated(message) and not text_of(message).strip():
        ctx.report(
            "W022",
            'throw message is empty: describe the error (`throw "reason"`), or write '
            "a bare `throw` to rethrow inside `catch`",
            message,
        )


def _arguments(ctx: Context, node: t.DoInvocation) -> None:
    children = node.children
    name = children[1] if len(children) > 1 else None  # `node.name`
    if type(name) is not t.Name:
        return
    found = ctx.model.blocks.get(name.value)  # `ctx.model.block(name.value)`
    if not found:
        return
    block = found[0]
    # (A block at the top level, as most are, is in no error node: no climb.)
    if type(block.parent) is not t.Module and in_error(block):
        return
    expected = len(block.parameters())
    arguments = node.arguments
    got = len(listed(arguments, t.KeywordArgument)) if arguments is not None else 0
    if got == expected:
        return
    params = "parameter" if expected == 1 else "parameters"
    args = "argument" if got == 1 else "arguments"
    related: tuple[tuple[str, Any], ...] = ()
    if block.name_leaf is not None:
        related = (("the block is defined here", block.name_leaf),)
    ctx.report(
        "W014",
        f"block `{name.value}` expects {expected} {params} but got {got} {args}",
        arguments if arguments is not None else name,
        related=related,
    )


def _context(ctx: Context, prop: t.Property) -> None:
    children = prop.children
    # `prop.value`: in the usual `context: value`, what follows the first operator.
    usual = len(children) > 2 and type(children[1]) is t.Operator
    value: Any = children[2] if usual else prop.value
    if type(value) is t.Name:
        return  # a variable: the usual context
    if type(value) in _LISTS:
        # `[a, b]` or `{ a, b }`, the usual list: names (and entries) between operators,
        # nothing to report, told without listing them.
        plain = _PLAIN_LISTED[type(value)]
        for child in value.children:
            if type(child) not in plain:
                break
        else:
            return
    if isinstance(value, t.ArrayLiteral):
        for element in listed(value):
            if not _reference(element):
                ctx.report(
                    "E050",
                    "context array elements must be variable references: pass a variable "
                    "(bind the value with `let name = ...` first), or write `[]` for no context",
                    element,
                )
    elif isinstance(value, t.ObjectLiteral):
        for entry in listed(value, t.ObjectEntry):
            if not isinstance(entry, t.ObjectEntry) and not _reference(entry):
                ctx.report(
                    "E050",
                    "context object entries must be variable names: write `{ a, b }`",
                    entry,
                )


_LISTS = frozenset((t.ArrayLiteral, t.ObjectLiteral))
# The classes of a context list's children that need no report (what `listed` keeps of them
# is a reference or an object entry).
_PLAIN_LISTED: dict[type, frozenset[type]] = {
    t.ArrayLiteral: frozenset((t.Name, t.Operator)),
    t.ObjectLiteral: frozenset((t.Name, t.Operator, t.ObjectEntry)),
}


def _reference(node: Any) -> bool:
    # A subscript (`a[0]`) refers to a variable too; grammar.py reports it as W030.
    return isinstance(node, (t.Name, t.Attribute, t.Subscript))


# The constructs the control rules check, each with its check (the grammar rules ask for the
# if statements, choices and loops too, to look at their conditions, and the structure rules
# for the do invocations).
_CHECKS: dict[type, Any] = {
    t.Parallel: _parallel,
    t.Repeat: _repeat,
    t.Loop: _loop,
    t.IfStatement: _if,
    t.ChoiceStatement: _choice,
    t.ThrowStatement: _throw,
    t.DoInvocation: _arguments,
}
