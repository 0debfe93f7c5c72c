"""Constructs outside the grammar that real programs use, and invalid interpolations.

The parser accepts these so that one habit from another language does not take a whole
program down; here each gets a warning that says what to write instead: the legacy
``import ... from`` (W027), ``{ key: value }`` objects (W028), conditions that are not
``**discretion**`` conditions (W029), arithmetic, indexing, comparisons and boolean
operators used as values (W030), and ``output value`` without a name (W033).  A
``session`` with its properties indented under it but no ``:`` (E074) parses as a session
whose prompt is a property; the reference writes ``session:``, so it is an error.

E070 (String Literals, Interpolation Rules) reports braces in a single-line string that
clearly try to interpolate a *defined* variable but do not form ``{name}`` or
``{name.property}``: ``{x + 1}``, ``{text.upper()}``, ``{ x }``, ``{{x}}``, an unclosed
``{x``, and ``x}`` with no opening brace.  Any other brace text (JSON, ``{}``,
``{judgment conclusion}``, ``{prediction 1}`` when ``prediction`` names nothing) is
literal text.  Multi-line (triple-quoted) prompts are instructions for the model, whose
``{items[0].id}`` or ``{ name }`` templates describe what to write: only their
``{name}`` interpolations are read, the rest is text (as W034 treats placeholders).
"""

from __future__ import annotations

import re
from collections.abc import Set
from typing import Any

from openprose.analysis.context import Context
from openprose.analysis.rules.control import expression_after_keyword, listed
from openprose.analysis.rules.names import definitions_by_name
from openprose.analysis.rules.properties import sessions_without_colon
from openprose.syntax import tree as t
from openprose.syntax.tree import offset_position

_OPERATORS = (t.Comparison, t.BooleanExpression, t.NotExpression)
_OUTSIDE = (t.BinaryExpression, t.Subscript, *_OPERATORS)
# What covers the expressions inside it (made once, not at each ancestor).
_COVERING = (*_OUTSIDE, t.UnsupportedStatement)

_NAME = r"[^\W\d]\w*(?:-\w+)*"
_PATH = re.compile(rf"{_NAME}(?:\.{_NAME})*")
_LEADING_NAME = re.compile(_NAME)
_TRAILING_PATH = re.compile(rf"(?<![\w.-])({_NAME})(?:\.{_NAME})*$")
# What follows a variable in braces that reads as code: a call, an index, an operator.
_CODE_CHARACTERS = frozenset("+-*/%()[]<>=!|&?.")
_BRACE = re.compile(r"[{}]")
# A string body whose only braces are those of valid interpolations.
# (Escapes are skipped as `string_parts` skips them: a backslash and the character after it.)
_ONLY_INTERPOLATIONS = re.compile(
    rf"[^{{}}\\]*(?:(?:\\.|\{{{_NAME}(?:\.{_NAME})*\}})[^{{}}\\]*)*", re.DOTALL
)
# The constructs that have a condition (a tuple: the order of the queries is fixed).
_CONDITIONS = (t.IfStatement, t.ChoiceStatement, t.Loop, t.ElifClause)
_DOUBLED = re.compile(rf"\{{\{{\s*({_NAME})(?:\.{_NAME})*\s*\}}\}}")


def check(ctx: Context) -> None:
    check_local(ctx)


def check_local(ctx: Context) -> None:
    # Each class asked of the index on its own, as it keeps them (a query of several sorts
    # them together, some 3 ms in a 100,000-line program, and they are looked at one class
    # at a time anyway), and without a query (a small file holds none of most of them).
    found = ctx.index.by_class()
    get = found.get
    for node in get(t.ImportStatement, ()):
        _legacy_import(ctx, node)
    for node in get(t.OutputBinding, ()):
        _unnamed_output(ctx, node)
    if t.Session in found:
        for node in sessions_without_colon(ctx):
            _session_without_colon(ctx, node)
    in_condition: set[int] = set()  # ids of nodes reported as W029 (and their subtrees)
    # The if statements, choices and loops (the control rules ask for the same), and the elif
    # clauses: the order they are met in changes nothing (each reports at its own condition).
    for kind in _CONDITIONS:
        for node in get(kind, ()):
            # `node.criteria` or `node.condition` (a loop's follows its `until` or `while`).
            condition = node.condition if kind is t.Loop else expression_after_keyword(node)
            if condition is not None and not isinstance(condition, (t.Operator, t.Keyword)):
                _condition(ctx, condition, in_condition)
    objects = get(t.ObjectLiteral)
    if objects:
        _objects(ctx, objects)
    # Whether one is reported depends on its ancestors and on W029 only: any order will do.
    for outside in _OUTSIDE:
        for node in get(outside, ()):
            _expression(ctx, node, in_condition)
    _interpolations(ctx)


# --------------------------------------------------------------------------- walking


def _code(node: Any, limit: int = 40) -> str:
    text = " ".join(node.get_code(include_prefix=False).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _statement_end(node: Any) -> Any:
    """The last leaf of a one-line statement, its newline excluded."""
    last = node.children[0]
    for child in node.children:
        if isinstance(child, t.Newline | t.ErrorNode):
            break
        last = child
    return last


# --------------------------------------------------------------------------- statements


def _legacy_import(ctx: Context, node: t.ImportStatement) -> None:
    ctx.report(
        "W027",
        '`import "name" from "source"` is the legacy syntax: write `use "@handle/slug"` '
        "(programs and skills are both imported with `use`)",
        node.children[0],
        _statement_end(node),
    )


def _unnamed_output(ctx: Context, node: t.OutputBinding) -> None:
    children = node.children
    # `node.name is not None` (a name right before `=`), told without the accessor's calls.
    if (
        len(children) > 2
        and type(children[1]) is t.Name
        and type(children[2]) is t.Operator
        and children[2].value == "="
    ):
        return
    if any(isinstance(c, t.Operator) and c.value == "=" for c in node.children):
        return  # `output = value`: the parser reports the empty name (E023)
    ctx.report(
        "W033",
        "`output` needs a name: write `output name = ...`",
        node.children[0],
    )


def _session_without_colon(ctx: Context, node: t.Session) -> None:
    children = node.children
    if len(children) < 2 or not isinstance(children[1], t.PropertyBlock):
        return
    if node.get_property("prompt") is None:
        return  # no prompt at all: the parser's E003 says what the session lacks
    ctx.report(
        "E074",
        "a session's properties need `:` after `session`: write `session:` followed by "
        'the indented properties, or `session "prompt"`',
        node.keyword_leaf,
    )


# --------------------------------------------------------------------------- conditions


def _has_discretion(node: Any) -> bool:
    if isinstance(node, t.Discretion):
        return True
    return any(isinstance(leaf, t.Discretion) for leaf in t.iter_leaves(node))


def _condition(ctx: Context, node: Any, reported: set[int]) -> None:
    if isinstance(node, t.Discretion):
        return
    if _has_discretion(node):
        # A mix: `**a** or depth <= 0`: only the operands without a discretion are wrong.
        if isinstance(node, t.BooleanExpression):
            for child in node.children:
                if not isinstance(child, t.Keyword):
                    _condition(ctx, child, reported)
        elif isinstance(node, t.NotExpression) and len(node.children) > 1:
            _condition(ctx, node.children[1], reported)
        return
    reported.add(id(node))
    code = _code(node)
    ctx.report(
        "W029",
        f"`{code}` is not a discretion condition: write the condition as "
        f"`**{code}**` (conditions are text the AI evaluates)",
        node,
    )


# --------------------------------------------------------------------------- expressions


def _objects(ctx: Context, objects: list[t.ObjectLiteral]) -> None:
    for node in objects:
        if _shorthand(node):
            continue
        outer = node.parent
        while outer is not None and not isinstance(outer, t.ObjectLiteral):
            outer = outer.parent
        if outer is not None and not _shorthand(outer):
            continue  # reported with the object that holds it
        ctx.report(
            "W028",
            "an object literal with `key: value` entries is outside the grammar: bind each "
            "value to a variable and pass them as `{ a, b }`, or describe the structure "
            "in a prompt",
            node,
        )


def _shorthand(node: t.ObjectLiteral) -> bool:
    """``node.is_shorthand``: every entry a name."""
    plain = _PLAIN
    for child in node.children:
        if type(child) not in plain:
            break
    else:
        return True  # `{ a, b }`, the usual object: names between operators
    return all(type(entry) is t.Name for entry in listed(node, t.ObjectEntry))


# The children of an object whose entries are all names (what `listed` keeps of them).
_PLAIN = frozenset((t.Name, t.Operator))


def _expression(ctx: Context, node: Any, in_condition: set[int]) -> None:
    if _covered(node, in_condition):
        return
    if isinstance(node, _OPERATORS) and _is_condition(node):
        return  # a condition: W029 (or a discretion combination)
    if isinstance(node, t.BinaryExpression):
        message = (
            f"`{_code(node)}` is outside the grammar (there is no arithmetic): "
            "ask a session for the value, or accumulate a list with `reduce`"
        )
    elif isinstance(node, t.Subscript):
        message = (
            f"`{_code(node)}` is outside the grammar (there is no indexing): pass the "
            "whole value as context and say in the prompt which element to use"
        )
    else:
        message = (
            f"`{_code(node)}` is outside the grammar (values are not compared or "
            "combined): use it as a condition, `if **...**:`, or ask a session"
        )
    ctx.report("W030", message, node)


def _covered(node: Any, reported: set[int]) -> bool:
    """Inside an expression already reported (W029 or W030) or an unsupported statement."""
    if id(node) in reported:
        return True
    covering = _COVERING_CLASSES
    parent = node.parent
    while parent is not None:
        if id(parent) in reported:
            return True
        # `isinstance(parent, _COVERING)`, which tries its six classes in turn at every
        # ancestor, told once a class.
        kind = type(parent)
        covers = covering.get(kind)
        if covers is None:
            covers = covering[kind] = isinstance(parent, _COVERING)
        if covers:
            return True
        parent = parent.parent
    return False


_COVERING_CLASSES: dict[type, bool] = {}


def _is_condition(node: Any) -> bool:
    """Whether ``node`` is (part of) the condition of an if, elif, loop or choice."""
    child = node
    parent = node.parent
    while isinstance(parent, t.BooleanExpression | t.NotExpression):
        child, parent = parent, parent.parent
    if isinstance(parent, t.ChoiceStatement):
        return parent.criteria is child
    if isinstance(parent, t.IfStatement | t.ElifClause | t.Loop):
        return parent.condition is child
    return False


# --------------------------------------------------------------------------- interpolation


def _interpolations(ctx: Context) -> None:
    # The defined names are asked for at the first string that needs them: in most programs
    # every brace is in a valid interpolation.
    defined: Set[str] | None = None
    only_interpolations = _ONLY_INTERPOLATIONS.fullmatch
    for leaf in ctx.index.strings():  # (`ctx.strings()`, a call less)
        value = leaf.value
        # (A triple-quoted string, long as a rule, is told before it is scanned for braces.)
        if value[:3] == '"""' or ("{" not in value and "}" not in value):
            continue
        # `terminated(leaf)` without the call: a one-line string holding a brace is not `""`.
        closed = leaf.is_terminated if "\\" in value else len(value) > 1 and value[-1] == '"'
        if closed and only_interpolations(value, 1, len(value) - 1):
            # Every brace (outside escapes) in a valid `{name}`: nothing to report.
            continue
        if defined is None:
            defined = ctx.program_fact(defined_names)
        if not defined:
            return
        _string(ctx, leaf, defined)


def defined_names(ctx: Context) -> Set[str]:
    """The names the program defines anywhere (variables and inputs)."""
    # The names of `names.definitions_by_name`, which the names rules ask for too: one look
    # at every definition of the program serves both.
    by_name = ctx.program_fact(definitions_by_name)
    return frozenset(by_name) | {s.name for s in ctx.model.inputs}


def _masked_body(leaf: t.String) -> str:
    """The string's body with escapes blanked out (same length, so offsets hold)."""
    body = leaf.body
    if "\\" not in body:
        return body  # every escape starts with a backslash: nothing to blank out
    chars = list(body)
    q = leaf.quote_length
    for part in leaf.parts():
        if part.kind == "escape":
            for i in range(part.start_offset - q, part.end_offset - q):
                chars[i] = "\0"
    return "".join(chars)


def _string(ctx: Context, leaf: t.String, defined: Set[str]) -> None:
    body = _masked_body(leaf)
    q = leaf.quote_length

    def report(start: int, end: int, message: str) -> None:
        at = (offset_position(leaf, q + start), offset_position(leaf, q + end))
        ctx.report("E070", message, at)

    # Where the first `{` is (escaped or not): a `}` before it has no opening brace.
    first_brace = leaf.body.find("{")
    i = 0
    while True:
        # Only braces matter: jump to the next one.
        brace = _BRACE.search(body, i)
        if brace is None:
            return
        i = brace.start()
        char = body[i]
        if char == "}" and not 0 <= first_brace < i:
            match = _TRAILING_PATH.search(body, max(0, i - 200), i)
            if match and match.group(1) in defined:
                path = body[match.start() : i]
                report(
                    match.start(),
                    i + 1,
                    f"`}}` without an opening brace: write `{{{path}}}` to interpolate "
                    f"`{match.group(1)}` (or `\\}}` for a literal brace)",
                )
            i += 1
            continue
        if char != "{":
            i += 1
            continue
        doubled = _DOUBLED.match(body, i)
        if doubled and doubled.group(1) in defined:
            inner = "".join(doubled.group()[2:-2].split())
            report(
                i,
                doubled.end(),
                f"nested braces are not supported: write `{{{inner}}}` (or `\\{{{{{inner}}}\\}}` "
                "for braces around the value)",
            )
            i = doubled.end()
            continue
        close = body.find("}", i + 1)
        if close < 0:
            _unclosed(body, i, defined, report)
            return
        content = body[i + 1 : close]
        if "{" in content:
            i += 1
            continue
        _braces(content, i, close, defined, report)
        i = close + 1


def _unclosed(body: str, i: int, defined: Set[str], report: Any) -> None:
    match = _PATH.match(body, i + 1)
    if match and match.group().split(".")[0] in defined:
        report(
            i,
            match.end(),
            f"`{{` is never closed: write `{{{match.group()}}}` to interpolate it "
            "(or `\\{` for a literal brace)",
        )


def _braces(content: str, start: int, close: int, defined: Set[str], report: Any) -> None:
    if _PATH.fullmatch(content):
        return  # a valid interpolation
    stripped = content.strip()
    if _PATH.fullmatch(stripped) and stripped.split(".")[0] in defined:
        report(
            start,
            close + 1,
            f"spaces inside the braces: write `{{{stripped}}}` to interpolate `{stripped}`",
        )
        return
    match = _LEADING_NAME.match(content)
    if match is None:
        return
    path = _PATH.match(content)
    assert path is not None
    if match.group() not in defined:
        return
    rest = content[path.end() :].lstrip()
    if not rest or rest[0] not in _CODE_CHARACTERS:
        return  # `{judgment conclusion}`: words in braces are text, not code
    suggestion = path.group()
    if rest[0] == "(" and "." in suggestion:
        suggestion = suggestion.rsplit(".", 1)[0]  # a method call: suggest its object
    report(
        start,
        close + 1,
        f"invalid interpolation `{{{content}}}`: only a variable or its properties can be "
        f"interpolated, such as `{{{suggestion}}}`; compute anything else in a session",
    )
