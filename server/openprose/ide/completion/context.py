"""What is being completed where: the entry point reads the cursor's context (a line start,
after a colon or a keyword, inside brackets or a string) and asks for the items that fit."""

from __future__ import annotations

import re
from typing import Any

from openprose.analysis.model import Kind
from openprose.ide.analysis import Analysis
from openprose.ide.completion.contracts import input_descriptions, program_contract
from openprose.ide.completion.cursor import Cursor, line_indent, locate, open_bracket, segments
from openprose.ide.completion.items import (
    _EXPRESSION_SNIPPETS,
    _PIPELINE_SNIPPET,
    _PROPERTY_DOCS,
    _PROPERTY_SNIPPETS,
    _SNIPPETS,
    _STATEMENT_DETAILS,
    _VALUE_DOCS,
    _VALUES,
    _agents,
    _blocks,
    _Items,
    _pipe_operations,
    _programs,
    _snippet,
    _variable_item,
    _variables,
)
from openprose.ide.completion.paths import _use_paths
from openprose.ide.completion.scopes import visible_symbols
from openprose.ide.types import CompletionItem, Pos, Range
from openprose.syntax import tree as t
from openprose.syntax.vocabulary import (
    AGENT_PROPERTIES,
    EXPRESSION_KEYWORDS,
    JOIN_STRATEGIES,
    ON_FAIL_POLICIES,
    PERMISSIONS,
    RESERVED_WORDS,
    SESSION_PROPERTIES,
    STATEMENT_KEYWORDS,
    TOP_LEVEL_KEYWORDS,
)


def completion(analysis: Analysis, position: Pos) -> list[CompletionItem]:
    """The completion items at ``position`` (0-based line and code point)."""
    cursor = locate(analysis, position)
    if cursor is None:
        return []
    items = _Items(cursor.replace, cursor.word)
    string = cursor.in_string()
    if string is not None:
        _in_string(cursor, string, items)
    elif not cursor.in_comment_or_condition():
        _in_code(cursor, items)
    return items.items


def _in_code(cursor: Cursor, items: _Items) -> None:
    tokens = cursor.tokens
    if not tokens:
        _line_start(cursor, items)
        return
    bracket = open_bracket(tokens)
    if bracket is not None:
        _in_brackets(cursor, bracket, items)
        return
    last = tokens[-1]
    value = last.value
    if isinstance(last, t.Operator):
        if value == ":":
            _after_colon(cursor, items)
        elif value == "=":
            _expression(cursor, items)
        elif value == "->":
            for word in ("session", "resume"):
                items.add(word, "keyword", _STATEMENT_DETAILS[word], group=1)
            _snippet(items, "session: agent", 2)
        elif value == "|":
            _pipe_operations(items)
        elif value == "." and len(tokens) >= 2 and isinstance(tokens[-2], t.Name):
            _outputs(cursor, tokens[-2].value, items)
        if value != ")":
            return
    # The tokens of the statement after any `name =` or `->`.
    start = 0
    for i, tok in enumerate(tokens):
        if isinstance(tok, t.Operator) and tok.value in ("=", "->"):
            start = i + 1
    words = [tok.value for tok in tokens[start:]]
    if words == ["do"]:
        _blocks(cursor, items)
    elif words and words[0] == "parallel" and words[1:2] == ["for"]:
        _for_clause(cursor, words[1:], items)
    elif words and words[0] == "for":
        _for_clause(cursor, words, items)
    else:
        _trailing_keywords(tokens[start:], items)


def _for_clause(cursor: Cursor, words: list[str], items: _Items) -> None:
    if words[-1] == "in":
        _variables(cursor, items, group=1)
    elif len(words) == 2 or (len(words) == 4 and words[2] == ","):
        items.add("in", "keyword", "the collection to iterate", group=1)


def _trailing_keywords(tokens: list[Any], items: _Items) -> None:
    """``as``, ``until``, ``while``, ``for`` where they fit after what is written."""
    words = [tok.value for tok in tokens]
    last = tokens[-1]
    first = words[0]
    if words == ["loop"]:
        items.add("until", "keyword", "loop until a condition holds", group=1)
        items.add("while", "keyword", "loop while a condition holds", group=1)
        items.add("as", "keyword", "name the iteration counter", group=2)
    elif (first == "loop" and (isinstance(last, t.Discretion) or words[-1] == ")")) or (
        first == "repeat" and len(words) == 2
    ):
        items.add("as", "keyword", "name the iteration counter", group=1)
    elif words == ["catch"]:
        items.add("as", "keyword", "name the error", group=1)
    elif first == "use" and len(words) == 2 and isinstance(last, t.String):
        items.add("as", "keyword", "an alias for the program", group=1)
    elif words == ["parallel"]:
        items.add("for", "keyword", "parallel for each", group=1)


_SUITE_OWNERS = (
    t.BlockDefinition,
    t.DoBlock,
    t.Parallel,
    t.Repeat,
    t.ForEach,
    t.Loop,
    t.PipeStage,
    t.TryStatement,
    t.CatchClause,
    t.FinallyClause,
    t.OptionClause,
    t.IfStatement,
    t.ElifClause,
    t.ElseClause,
)


_BINDINGS = (t.LetBinding, t.Assignment, t.OutputBinding)


def _owner(node: Any) -> tuple[str, Any] | None:
    """What a construct holding indented lines holds: properties or statements."""
    if isinstance(node, _BINDINGS):
        value = node.value
        if isinstance(value, t.Pipeline):
            stages = value.stages()
            return _owner(stages[-1]) if stages else None
        return _owner(value) if value is not None else None
    if isinstance(node, t.AgentDefinition):
        return "agent", node
    if isinstance(node, t.Session | t.Resume):
        return "session", node
    if isinstance(node, t.Property):
        return ("permissions", node) if node.name == "permissions" else None
    if isinstance(node, t.ChoiceStatement):
        return "choice", node
    if isinstance(node, _SUITE_OWNERS):
        return "suite", node
    return None


def _line_start(cursor: Cursor, items: _Items) -> None:
    """A word at the start of a line: properties or statements, by the enclosing block."""
    analysis = cursor.analysis
    indent = line_indent(analysis, cursor.line)
    owner: tuple[str, Any] | None = None
    sibling = None  # the statement above at the same indentation
    node = cursor.previous.parent if cursor.previous is not None else None
    while node is not None and not isinstance(node, t.Module):
        node_indent = line_indent(analysis, node.start_pos[0] - 1)
        if node_indent < indent:
            owner = _owner(node)
            if owner is not None:
                break
        elif (
            node_indent == indent
            and sibling is None
            and not isinstance(node, t.Suite)
            and isinstance(node.parent, t.Module | t.Suite | t.IfStatement | t.TryStatement)
        ):
            sibling = node
        node = node.parent
    kind = owner[0] if owner is not None else "top"
    if kind in ("agent", "session", "permissions"):
        assert owner is not None
        _property_names(cursor, kind, owner[1], items)
        return
    if kind == "choice":
        items.add("option", "keyword", "an option of the choice", group=1)
        items.add(
            'option "label":',
            "snippet",
            "option with a body",
            insert='option "${1:label}":\n  $0',
            snippet=True,
            group=2,
        )
        return
    _clauses(cursor, sibling, items)
    top = kind == "top"
    for word in STATEMENT_KEYWORDS:
        if top or word not in TOP_LEVEL_KEYWORDS:
            items.add(word, "keyword", _STATEMENT_DETAILS[word], group=1)
    for label, body, detail, top_only in _SNIPPETS:
        if top or not top_only:
            items.add(label, "snippet", detail, insert=body, snippet=True, group=2)
    _programs(cursor, items, group=3)
    # Reassigning a `let` is a statement too.
    for symbol in visible_symbols(cursor, cursor.word):
        if symbol.kind is Kind.LET:
            _variable_item(cursor, symbol, items, group=4)


def _clauses(cursor: Cursor, sibling: Any, items: _Items) -> None:
    """``elif``/``else`` after an ``if`` body, ``catch``/``finally`` after a ``try`` body."""
    if isinstance(sibling, t.ElifClause | t.ElseClause):
        sibling = sibling.parent
    if isinstance(sibling, t.CatchClause | t.FinallyClause):
        sibling = sibling.parent
    target = cursor.target
    if isinstance(sibling, t.IfStatement):
        other = sibling.else_clause
        if other is None or other.start_pos > target:
            items.add("elif", "keyword", "another condition", group=0)
        if other is None:
            items.add("else", "keyword", "when no condition holds", group=0)
    elif isinstance(sibling, t.TryStatement):
        final = sibling.finally_clause
        if not sibling.catch_clauses() and (final is None or final.start_pos > target):
            items.add("catch", "keyword", "handle a failure of the try body", group=0)
        if final is None:
            items.add("finally", "keyword", "run whether or not the body failed", group=0)


def _property_names(cursor: Cursor, kind: str, owner: Any, items: _Items) -> None:
    if kind == "agent":
        names, detail = AGENT_PROPERTIES, "agent property"
    elif kind == "session":
        names, detail = SESSION_PROPERTIES, "session property"
    else:
        names, detail = PERMISSIONS, "permission"
    block = owner.block if isinstance(owner, t.Property) else owner.property_block
    present = set()
    if block is not None:
        for prop in block.properties():
            if prop.start_pos[0] - 1 != cursor.line:
                present.add(prop.name)
    # Only the name when the line already has its colon (`mo|del: opus`).
    has_colon = cursor.text[cursor.word_end :].lstrip().startswith(":")
    for name in names:
        if name in present:
            continue
        if has_colon:
            items.add(name, "property", detail, _PROPERTY_DOCS.get(name, ""), group=0)
        else:
            items.add(
                name,
                "property",
                detail,
                _PROPERTY_DOCS.get(name, ""),
                insert=_PROPERTY_SNIPPETS.get(name, f"{name}: $1"),
                snippet=True,
                group=0,
            )


def _after_colon(cursor: Cursor, items: _Items) -> None:
    tokens = cursor.tokens
    if len(tokens) < 2:
        return
    before = tokens[-2]
    if before.value in ("session", "resume") and not isinstance(before, t.String):
        _agents(cursor, items, resume=before.value == "resume")
        return
    if len(tokens) >= 3 and tokens[-3].value == "session" and isinstance(before, t.Name):
        _agents(cursor, items, resume=False)  # `session name: agent`
        return
    if len(tokens) == 2 and isinstance(before, t.Name) and before.value not in RESERVED_WORDS:
        _property_value(cursor, before.value, items)


def _property_value(cursor: Cursor, name: str, items: _Items) -> None:
    if name == "context":
        _variables(cursor, items, group=1)
        return
    for value in _VALUES.get(name, ()):
        items.add(value, "value", name, _VALUE_DOCS.get(value, ""), group=0)


def _expression(cursor: Cursor, items: _Items) -> None:
    """A value after ``=``: a variable (a pipeline's source), a call, a session..."""
    _variables(cursor, items, group=1)
    _programs(cursor, items, group=2)
    for word in EXPRESSION_KEYWORDS:
        items.add(word, "keyword", _STATEMENT_DETAILS[word], group=3)
    for label in _EXPRESSION_SNIPPETS:
        _snippet(items, label, 4)
    label, body, detail = _PIPELINE_SNIPPET
    items.add(label, "snippet", detail, insert=body, snippet=True, group=4)


def _in_brackets(cursor: Cursor, index: int, items: _Items) -> None:
    tokens = cursor.tokens
    opener = tokens[index].value
    inner = tokens[index + 1 :]
    segment = segments(inner)[-1]
    before = tokens[index - 1] if index > 0 else None
    head = tokens[index - 2].value if index > 1 else None
    if opener == "(":
        if before is None:
            return
        name = before.value
        if name == "parallel":
            _parallel_modifiers(inner, segment, items)
        elif name == "loop" or isinstance(before, t.Discretion):
            if not segment and not any(tok.value == "max" for tok in inner):
                items.add("max:", "property", "the most iterations", insert="max: ", group=0)
        elif head == "do" and isinstance(before, t.Name):
            if not segment:
                _variables(cursor, items, group=1)
        elif head in ("block", "|") or name == "reduce":
            return  # naming parameters
        elif isinstance(before, t.Name) and name in cursor.analysis.model.programs:
            _program_arguments(cursor, name, inner, segment, items)
        return
    # `[` and `{`: arrays of variables, context lists, object context.
    if segment:
        return
    if opener == "{" and index == 1 and tokens[0].value in ("let", "const"):
        return  # destructuring: names being defined
    if (
        len(tokens) > 1
        and tokens[1].value == ":"
        and isinstance(tokens[0], t.Name)
        and tokens[0].value != "context"
    ):
        return  # `skills: [...]`, `read: [...]`
    listed = {tok.value for tok in inner if isinstance(tok, t.Name)}
    for symbol in visible_symbols(cursor, cursor.word):
        if symbol.name not in listed:
            _variable_item(cursor, symbol, items, group=1)


def _parallel_modifiers(inner: list[Any], segment: list[Any], items: _Items) -> None:
    if not segment:
        keys = {tok.value for tok in inner if isinstance(tok, t.Name)}
        has_strategy = any(
            (isinstance(tok, t.String) and tok.text in JOIN_STRATEGIES)
            or (isinstance(tok, t.Name) and tok.value in JOIN_STRATEGIES)
            for tok in inner
        )
        if not has_strategy:
            for strategy in JOIN_STRATEGIES:
                items.add(
                    f'"{strategy}"',
                    "value",
                    "join strategy",
                    _VALUE_DOCS[strategy],
                    group=0,
                )
        if "on-fail" not in keys:
            items.add(
                "on-fail:",
                "property",
                "what a failing branch does",
                "`fail-fast`, `continue` or `ignore`.",
                insert="on-fail: ",
                group=1,
            )
        if "count" not in keys:
            items.add(
                "count:",
                "property",
                'how many branches "any" waits for',
                insert="count: ",
                group=1,
            )
    elif len(segment) == 2 and segment[0].value == "on-fail" and segment[1].value == ":":
        for policy in ON_FAIL_POLICIES:
            items.add(f'"{policy}"', "value", "on-fail", _VALUE_DOCS[policy], group=0)


def _program_arguments(
    cursor: Cursor, alias: str, inner: list[Any], segment: list[Any], items: _Items
) -> None:
    if len(segment) == 2 and isinstance(segment[0], t.Name) and segment[1].value == ":":
        _variables(cursor, items, group=1)
        return
    if segment:
        return
    contract = program_contract(cursor.analysis, alias)
    if contract is None:
        return
    given = {
        tok.value
        for i, tok in enumerate(inner[:-1])
        if isinstance(tok, t.Name) and inner[i + 1].value == ":"
    }
    descriptions = input_descriptions(cursor.analysis, contract)
    for port in contract.inputs:
        if port.name in given:
            continue
        detail = f"input of {alias}" + ("" if port.required else " (optional)")
        items.add(
            f"{port.name}:",
            "input",
            detail,
            descriptions.get(port.name, ""),
            insert=f"{port.name}: ",
            group=0,
        )


def _outputs(cursor: Cursor, base: str, items: _Items) -> None:
    """After ``result.``: the outputs of the program call ``result`` holds."""
    symbol = next((s for s in visible_symbols(cursor) if s.name == base), None)
    if symbol is None or symbol.kind not in (Kind.LET, Kind.CONST, Kind.OUTPUT):
        return
    value = symbol.node.value
    if not isinstance(value, t.ProgramCall) or value.name is None:
        return
    contract = program_contract(cursor.analysis, value.name.value)
    if contract is None:
        return
    for port in contract.outputs:
        items.add(port.name, "variable", f"output of {value.name.value}", group=0)


_PARTIAL_NAME = re.compile(r"(?:[^\W\d][\w-]*)?")


def _in_string(cursor: Cursor, string: t.String, items: _Items) -> None:
    parent = string.parent
    one_line = string.start_pos[0] == string.end_pos[0]
    whole = Range(
        (string.start_pos[0] - 1, string.start_pos[1]),
        (string.end_pos[0] - 1, string.end_pos[1]),
    )
    if one_line and isinstance(parent, t.Arguments) and isinstance(parent.parent, t.Parallel):
        for strategy in JOIN_STRATEGIES:
            label = f'"{strategy}"'
            items.add(label, "value", "join strategy", _VALUE_DOCS[strategy], replace=whole)
        return
    if (
        one_line
        and isinstance(parent, t.KeywordArgument)
        and parent.name.value == "on-fail"
        and isinstance(parent.parent, t.Arguments)
        and isinstance(parent.parent.parent, t.Parallel)
    ):
        for policy in ON_FAIL_POLICIES:
            label = f'"{policy}"'
            items.add(label, "value", "on-fail", _VALUE_DOCS[policy], replace=whole)
        return
    if one_line and isinstance(parent, t.UseStatement) and parent.path is string:
        _use_paths(cursor, string, items)
        return
    # An interpolation being typed: `{` then part of a name, on the cursor's line.
    start = 0
    if string.start_pos[0] - 1 == cursor.line:
        start = string.start_pos[1] + string.quote_length
    text = cursor.text[start : cursor.character]
    brace = text.rfind("{")
    if brace < 0:
        return
    partial = text[brace + 1 :]
    backslashes = len(text[:brace]) - len(text[:brace].rstrip("\\"))
    if backslashes % 2:
        return  # `\{` is a literal brace
    if "." in partial:
        base, _, rest = partial.partition(".")
        if _PARTIAL_NAME.fullmatch(base) and _PARTIAL_NAME.fullmatch(rest):
            _outputs(cursor, base, items)
        return
    if not _PARTIAL_NAME.fullmatch(partial):
        return
    closed = cursor.text[cursor.word_end : cursor.word_end + 1] == "}"
    for symbol in visible_symbols(cursor, cursor.word):
        _variable_item(cursor, symbol, items, group=0, suffix="" if closed else "}")
