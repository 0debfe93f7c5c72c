"""A hand-written recursive-descent parser for OpenProse that never raises.

It reads logical lines from the tokenizer and builds the lossless tree of
``openprose.syntax.tree``.  Blocks are found by comparing indentation strings
(prefix relations rather than widths, so tabs mixed with spaces are detected
instead of guessed).  Every problem becomes a ``SyntaxIssue`` on the item (statement
or property) being parsed; the parser recovers at the next line, so one mistake
never takes the statements around it down.

Parsing a block only depends on the block's own lines and on the indentation of the
header and of the block, which is what lets ``Document`` reparse a few statements
in the middle of a file and splice them into the old tree.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, cast

from openprose.syntax import tree as t
from openprose.syntax.strings import invalid_escapes
from openprose.syntax.tokenizer import LogicalLine, Tokenizer

# Kinds of indented blocks.
STATEMENTS = 0
PROPERTIES = 1
OPTIONS = 2

# Relations of a line's indentation to an open block.
_SAME, _DEEPER, _BAD_DEDENT, _MIXED, _OUT = range(5)

PIPE_OPERATIONS = ("map", "filter", "pmap", "reduce")
MAX_NESTING = 64
COMPARISON_OPERATORS = frozenset(("==", "!=", "<", ">", "<=", ">="))
ARITHMETIC_OPERATORS = frozenset("+-*/")
UNSUPPORTED_HINTS = {
    "return": "`return` is not an OpenProse statement: a block has no early exit; "
    "bind results with `output name = ...` and branch with `if **...**:` / `else:`",
    "break": "`break` is not an OpenProse statement: end a loop with "
    "`loop until **condition**:` or a `(max: N)` limit",
    "continue": "`continue` is not an OpenProse statement: "
    "skip work inside an iteration with `if **...**:`",
    "assert": "`assert` is not an OpenProse statement: write `if **the check fails**:` "
    'followed by `throw "message"`',
    "pass": "`pass` is not an OpenProse statement: a block needs at least one real statement",
}
_ORPHAN_MESSAGES = {
    "elif": "`elif` without a matching `if`: it must follow an `if` block at the same indentation",
    "else": "`else` without a matching `if`: it must follow an `if` or `elif` block "
    "at the same indentation",
    "catch": "`catch` without a matching `try`: it must follow a `try:` block "
    "at the same indentation",
    "finally": "`finally` without a matching `try`: it must follow a `try:` or `catch:` block "
    "at the same indentation",
    "option": "`option` outside a `choice` block: write `choice **criteria**:` and indent "
    'the `option "label":` clauses under it',
}


def relation(indent: str, block: str, parent: str | None) -> int:
    """How a line indented with ``indent`` stands to a block indented with ``block``
    whose header is indented with ``parent`` (None at the top level)."""
    if indent == block:
        return _SAME
    if indent.startswith(block):
        return _DEEPER
    if block.startswith(indent):
        if parent is None or parent.startswith(indent):
            return _OUT
        if indent.startswith(parent):
            return _BAD_DEDENT
        return _OUT
    # Neither is a prefix of the other: tabs and spaces mixed.
    if parent is None or (indent.startswith(parent) and indent != parent):
        return _MIXED
    return _OUT


def deeper(indent: str, than: str) -> bool:
    return len(indent) > len(than) and indent.startswith(than)


def describe(leaf: Any) -> str:
    """How to name a token in a message."""
    if isinstance(leaf, t.Newline):
        return "end of line"
    if isinstance(leaf, t.String):
        return "a string"
    if isinstance(leaf, t.Discretion):
        return "a `**...**` condition"
    value = leaf.value
    if len(value) > 30:
        value = value[:27] + "..."
    return f"`{value}`"


class Parser:
    def __init__(self, text: str, pos: int = 0, line: int = 1, limit: int | None = None) -> None:
        self.tokenizer = Tokenizer(text, pos, line, limit)
        self._pending: LogicalLine | None = None
        self.line: LogicalLine = self.tokenizer.next_line()
        self.toks = self.line.tokens
        self.i = 0
        self.n = len(self.toks)
        # Set when the current line belongs to whoever claims it next (a new item,
        # a continuation clause); expression parsing then sees an end of line.
        self.barrier = False
        self.issues: list[t.SyntaxIssue] = []
        # The last leaf of the previous logical line (for the stray `"""` hint).
        self.prev_last: Any = None
        # Incremental reparsing: called with the prefix line of each new item of the
        # block being reparsed (not of nested blocks); True stops the block there.
        self.stop_at: Callable[[int], bool] | None = None
        self.stopped = False
        self.calls_allowed = True
        # Blocks (the module included), brackets and `not`s open so far: what lies past
        # MAX_NESTING levels is read flatly as one error, so deep nesting can never
        # exhaust Python's stack.
        self.nesting = 0

    # ------------------------------------------------------------ token access

    def _advance(self) -> None:
        if self.toks:
            self.prev_last = self.toks[-1]
        if self._pending is not None:
            self.line = self._pending
            self._pending = None
        else:
            self.line = self.tokenizer.next_line()
        self.toks = self.line.tokens
        self.i = 0
        self.n = len(self.toks)
        self.barrier = True

    def _peek_line(self) -> LogicalLine:
        if self._pending is None:
            self._pending = self.tokenizer.next_line()
        return self._pending

    def cur(self) -> Any:
        if self.barrier or self.i >= self.n:
            return None
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Any:
        if self.barrier or self.i + k >= self.n:
            return None
        return self.toks[self.i + k]

    def at_op(self, value: str) -> bool:
        tok = self.cur()
        return tok is not None and tok.value == value and isinstance(tok, t.Operator)

    def at_word(self, value: str) -> bool:
        tok = self.cur()
        return tok is not None and tok.value == value and isinstance(tok, t.Name)

    def at_eol(self) -> bool:
        return self.barrier or self.i >= self.n

    def take(self) -> Any:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def take_keyword(self) -> t.Keyword:
        tok = self.toks[self.i]
        self.i += 1
        tok.__class__ = t.Keyword  # same slots: a soft keyword becomes a Keyword leaf
        return tok

    def last_leaf(self) -> Any:
        """The last leaf consumed on the current line (for zero-width issues)."""
        return self.toks[self.i - 1] if self.i else None

    # ------------------------------------------------------------ issues

    def issue(self, code: str, message: str, start: Any, end: Any = None) -> None:
        self.issues.append(
            t.SyntaxIssue(code, message, start.get_first_leaf(), (end or start).get_last_leaf())
        )

    def missing(self, code: str, message: str, after: Any) -> None:
        leaf = after.get_last_leaf()
        if isinstance(leaf, t.String | t.Discretion) and not leaf.is_terminated:
            return  # an unclosed string or condition ran on: that is the one error
        self.issues.append(t.SyntaxIssue.after(code, message, leaf))

    def check_string(self, leaf: t.String) -> None:
        if not leaf.is_terminated:
            if leaf.is_triple:
                message = 'unterminated string: the `"""` opened here is never closed'
            else:
                message = (
                    'unterminated string: add a closing `"` on the same line '
                    '(use `"""` for text that spans lines)'
                )
            self.issues.append(t.SyntaxIssue("E001", message, leaf, leaf, 0, len(leaf.value)))
        for start, end, raw in invalid_escapes(leaf):
            self.issues.append(
                t.SyntaxIssue(
                    "E002",
                    f"unknown escape sequence `{raw}`: valid escapes are "
                    '`\\\\`, `\\"`, `\\n`, `\\t`, `\\{` and `\\}`',
                    leaf,
                    leaf,
                    start,
                    end,
                )
            )

    def check_discretion(self, leaf: t.Discretion) -> None:
        if not leaf.is_terminated:
            if leaf.is_multiline:
                message = "unterminated condition: the `***` opened here is never closed"
            else:
                message = (
                    "unterminated condition: close it with `**` on the same line "
                    "(use `***` for a condition that spans lines)"
                )
            self.issues.append(t.SyntaxIssue("E029", message, leaf, leaf, 0, len(leaf.value)))

    def junk(
        self,
        children: list[Any],
        message: str | None = None,
        until: Callable[[Any], bool] | None = None,
    ) -> None:
        """Wrap tokens up to the end of the line (or ``until``) in an ErrorNode."""
        start = self.i
        while self.i < self.n and not self.barrier:
            if until is not None and until(self.toks[self.i]):
                break
            self.i += 1
        if self.i == start:
            return
        leaves = self.toks[start : self.i]
        node = t.ErrorNode(leaves)
        children.append(node)
        if message is None:
            message = f"unexpected {describe(leaves[0])}"
            if isinstance(leaves[0], t.ErrorToken):
                message = self._bad_character(leaves[0].value)
                code = "E042"
            else:
                code = "E004"
        else:
            code = "E004"
        self.issue(code, message, leaves[0], leaves[-1])

    @staticmethod
    def _bad_character(char: str) -> str:
        hint = ""
        if char == "'":
            hint = ": strings use double quotes"
        elif char in "\u00a0\u2028\u2029\u200b\ufeff":
            hint = ": an invisible character, probably pasted"
        elif char == ";":
            hint = ": statements end at the end of the line"
        return f"invalid character {char!r} (U+{ord(char):04X}){hint}"

    # ------------------------------------------------------------ blocks and items

    def parse_module(self) -> t.Module:
        items = self.parse_items(STATEMENTS, None, "")
        marker = self.line.endmarker
        if marker is None:  # pragma: no cover - the top level only ends at end of file
            raise AssertionError("top-level block ended before end of file")
        return t.Module([*items, marker])

    def parse_items(self, kind: int, parent: str | None, block: str) -> list[Any]:
        """Items of a block indented with ``block`` under a header indented ``parent``."""
        if self.nesting > MAX_NESTING and parent is not None:
            return [self.too_deep_block(parent)]
        self.nesting += 1
        try:
            return self._parse_items(kind, parent, block)
        finally:
            self.nesting -= 1

    def too_deep_block(self, parent: str) -> t.ErrorBlock:
        """Every line indented deeper than ``parent``, kept flat as one error."""
        leaves: list[Any] = []
        while not self.line.eof and deeper(self.line.indent, parent):
            leaves.extend(self.toks)
            if self.line.newline is not None:
                leaves.append(self.line.newline)
            self._advance()
        self.barrier = True
        node = t.ErrorBlock(leaves)
        node.issues = [too_deep(leaves[0], "this block")]
        return node

    def _parse_items(self, kind: int, parent: str | None, block: str) -> list[Any]:
        items: list[Any] = []
        stop_at, self.stop_at = self.stop_at, None  # nested blocks never stop early
        while not self.line.eof:
            if stop_at is not None and items and stop_at(self.line.prefix_line):
                self.stopped = True
                break
            rel = relation(self.line.indent, block, parent)
            if rel in (_SAME, _MIXED):
                item = self.parse_item(kind, rel == _MIXED)
            elif rel == _DEEPER:
                item = self.parse_error_block(kind, block, "E031")
            elif rel == _BAD_DEDENT:
                assert parent is not None
                item = self.parse_error_block(kind, parent, "E032")
            else:
                break
            items.append(item)
        self.stop_at = stop_at
        self.barrier = True
        return items

    def parse_item(self, kind: int, mixed: bool = False) -> Any:
        saved = self.issues
        self.issues = issues = cast(list[t.SyntaxIssue], [])
        self.barrier = False
        first = self.toks[0] if self.toks else None
        if mixed and first is not None:
            self.issue(
                "E034",
                "inconsistent indentation: this line mixes tabs and spaces "
                "differently from the lines around it",
                first,
            )
        if kind == PROPERTIES:
            node = self.parse_property()
        elif kind == OPTIONS and isinstance(first, t.Name) and first.value == "option":
            node = self.parse_clause(t.OptionClause, self.line.indent)
        else:
            node = self.parse_statement()
            if kind == OPTIONS and not isinstance(node, (*_CLAUSES, t.ErrorNode)):
                self.issue(
                    "E005",
                    'only `option "label":` clauses can appear inside a `choice` block',
                    node.get_first_leaf(),
                )
        if issues:
            node.issues = [*issues, *(node.issues or [])]
        self.issues = saved
        return node

    def parse_error_block(self, kind: int, parent: str, code: str) -> t.ErrorBlock:
        """Consecutive lines at an indentation where no block is open."""
        saved = self.issues
        self.issues = []
        indent = self.line.indent
        first_leaf = self.toks[0] if self.toks else None
        before = self.prev_last
        items: list[Any] = []
        if code == "E031":
            # Everything indented deeper than the open block, reported once.
            items = self.parse_items(kind, parent, indent)
        else:
            while not self.line.eof and self.line.indent == indent:
                items.append(self.parse_item(kind))
        self.barrier = True
        self.issues = saved
        node = t.ErrorBlock(items)
        anchor = first_leaf or node.get_first_leaf()
        if code == "E031":
            message = "unexpected indentation: this line is indented deeper than its block"
            hint = self._stray_triple_quote_hint(before)
            if hint is not None:
                node.issues = [hint]
                return node
        else:
            message = "unindent does not match any outer indentation level"
        node.issues = [t.SyntaxIssue(code, message, anchor, anchor)]
        return node

    @staticmethod
    def _stray_triple_quote_hint(prev: Any) -> t.SyntaxIssue | None:
        """A `\"\"\"` inside a `\"\"\"` prompt ends the prompt early; the text after it then
        shows up as unexpectedly indented code.  Point at the real culprit."""
        if not isinstance(prev, t.String) or not prev.is_triple or not prev.is_terminated:
            return None
        value = prev.value
        closing_line_start = max(value.rfind("\n"), value.rfind("\r")) + 1
        if closing_line_start == 0 or not value[closing_line_start:-3].strip():
            return None  # the closing quotes stand alone on their line: intended
        end = len(value)
        issue = t.SyntaxIssue(
            "E031",
            'this `"""` closes the multi-line string early, so the indented text after it '
            'is read as code; write `\\"""` to put `"""` inside a string',
            prev,
            prev,
            end - 3,
            end,
        )
        issue.related = (("the string starts here", prev, 0, 3),)
        return issue

    def parse_block(self, kind: int, header_indent: str, required: bool) -> Any:
        """At the end of a header line: the indented block under it, or None (nothing
        consumed).  Optional blocks are only taken when the next line is deeper and,
        for properties, does not continue a pipeline.
        """
        if self.barrier:
            return None  # a construct inside the header already took the lines below it
        nxt = self._peek_line()
        if (
            not nxt.eof
            and deeper(nxt.indent, header_indent)
            and (
                required
                or not (
                    nxt.tokens
                    and nxt.tokens[0].value == "|"
                    and isinstance(nxt.tokens[0], t.Operator)
                )
            )
        ):
            newline = self.line.newline
            self._advance()
            items = self.parse_items(kind, header_indent, self.line.indent)
            block_cls = t.PropertyBlock if kind == PROPERTIES else t.Suite
            return block_cls([newline, *items])
        return None

    def header_block(
        self, children: list[Any], kind: int, what: str, indent: str, may_be_empty: bool = False
    ) -> Any:
        """After a header's ``:``: junk to end of line, then the required block.

        ``may_be_empty``: for ``if``/``elif``/``else``/``option`` an empty body is a
        warning of the analyzer (W025/W026), not a syntax error.
        """
        self.junk(children)
        block = self.parse_block(kind, indent, True)
        if block is not None:
            children.append(block)
            return block
        if not may_be_empty:
            anchor = children[0]
            self.missing(
                "E033",
                f"expected an indented block after `{what}`",
                children[-1] if children else anchor,
            )
        self.finish(children)
        return None

    def finish(self, children: list[Any]) -> None:
        """End a statement on its line: junk, then its newline."""
        if self.barrier:
            return
        self.junk(children)
        newline = self.line.newline
        if newline is not None:
            children.append(newline)
        self._advance()

    def finish_node(self, node: Any) -> Any:
        if self.barrier:
            return node
        extra: list[Any] = []
        self.finish(extra)
        for leaf in extra:
            leaf.parent = node
        node.children.extend(extra)
        return node

    def expect_colon(self, children: list[Any], what: str) -> bool:
        if self.at_op(":"):
            children.append(self.take())
            return True
        if self.at_eol():
            header = "".join(c.get_code() for c in children).strip()
            if len(header) > 40 or "\n" in header:
                header = what
            self.missing("E004", f"expected `:` after `{header}`", children[-1])
            return False
        # Junk up to a colon on this line, if there is one.
        self.junk(children, until=lambda tok: tok.value == ":" and isinstance(tok, t.Operator))
        if self.at_op(":"):
            children.append(self.take())
            return True
        return False

    def name_or_missing(self, children: list[Any], code: str, message: str) -> t.Name | None:
        tok = self.cur()
        if isinstance(tok, t.Name):
            children.append(self.take())
            return tok
        self.missing(code, message, children[-1])
        return None

    # ------------------------------------------------------------ statements

    def parse_statement(self) -> Any:
        tok = self.cur()
        if isinstance(tok, t.Name):
            nxt = self.peek()
            is_assign = isinstance(nxt, t.Operator) and nxt.value == "="
            handler = _STATEMENTS.get(tok.value)
            if handler is not None and not (is_assign and tok.value not in _BINDERS):
                return handler(self)
            if is_assign:
                return self.parse_assignment()
            handler = _EXPRESSIONS.get(tok.value)
            if (
                handler is not None
                or (isinstance(nxt, t.Operator) and nxt.value in "(|")
                or (nxt is None and self._pipe_continues(after=1))
            ):
                # A call, or a pipeline run for its effects: `items | map: ...`, with the
                # stages on the same line or on the indented lines below.
                return self.parse_expression_statement()
        return self.parse_error_statement()

    def parse_error_statement(self, message: str | None = None) -> t.ErrorStatement:
        """The rest of the line (and anything indented under it) as one error."""
        first = self.toks[self.i] if self.i < self.n else None
        last = self.toks[-1] if self.toks else None
        children: list[Any] = list(self.toks[self.i :])
        self.i = self.n
        if message is None:
            message = self._not_a_statement(first)
        code = "E042" if isinstance(first, t.ErrorToken) else "E005"
        newline = self.line.newline
        indent = self.line.indent
        self._advance()
        if newline is not None:
            if not self.line.eof and deeper(self.line.indent, indent):
                saved = self.issues
                self.issues = []
                items = self.parse_items(STATEMENTS, indent, self.line.indent)
                self.issues = saved
                children.append(t.Suite([newline, *items]))
            else:
                children.append(newline)
        node = t.ErrorStatement(children)
        if first is not None and last is not None:
            self.issue(code, message, first, last)
        else:
            self.issue(code, message, node.get_first_leaf())
        return node

    def _not_a_statement(self, first: Any) -> str:
        if first is None:
            return "expected a statement"
        if isinstance(first, t.ErrorToken):
            return self._bad_character(first.value)
        if isinstance(first, t.String):
            return 'a string on its own is not a statement: write `session "..."` to run it'
        if isinstance(first, t.Name):
            return (
                f"`{first.value}` does not start a statement: expected a keyword such as "
                "`session`, `let` or `agent`, or an assignment `name = ...`"
            )
        return f"unexpected {describe(first)}: expected a statement"

    def parse_expression_statement(self) -> Any:
        start = self.i
        # A statement is a session, block, loop or call: `session "a" and b` is junk
        # after a statement, not a boolean expression.
        node = self.parse_expression(operators=False)
        if node is None or isinstance(node, t.ProseLeaf):
            self.i = start  # a bare name or literal is not a statement
            return self.parse_error_statement()
        return self.finish_node(node)

    def parse_assignment(self) -> t.Assignment:
        children: list[Any] = [self.take(), self.take()]
        self._value(children, "=")
        self.finish(children)
        return t.Assignment(children)

    def _value(self, children: list[Any], after: str) -> Any:
        value = self.parse_expression()
        if value is None:
            self.missing("E004", f"expected a value after `{after}`", children[-1])
        else:
            children.append(value)
        return value

    def parse_let(self) -> t.LetBinding:
        kw = self.take_keyword()
        children: list[Any] = [kw]
        if self.at_op("{"):
            children.append(self.parse_object())
        else:
            self.name_or_missing(children, "E004", f"expected a variable name after `{kw.value}`")
        if self.at_op("="):
            children.append(self.take())
            self._value(children, "=")
        else:
            self.missing("E004", 'expected "=" after the variable name', children[-1])
        self.finish(children)
        cls = t.ConstBinding if kw.value == "const" else t.LetBinding
        return cls(children)

    def parse_output(self) -> t.OutputBinding:
        """``output name = value``, or ``output value`` (a block's result)."""
        kw = self.take_keyword()
        children: list[Any] = [kw]
        tok = self.cur()
        nxt = self.peek()
        if isinstance(tok, t.Name) and isinstance(nxt, t.Operator) and nxt.value == "=":
            children.append(self.take())
            children.append(self.take())
            self._value(children, "=")
        elif isinstance(tok, t.Operator) and tok.value == "=":
            self.missing("E023", "output name cannot be empty: write `output name = ...`", kw)
            children.append(self.take())
            self._value(children, "=")
        else:
            self._value(children, "output")
        self.finish(children)
        return t.OutputBinding(children)

    def parse_input(self) -> t.InputDeclaration:
        children: list[Any] = [self.take_keyword()]
        self.name_or_missing(
            children, "E020", 'input name cannot be empty: write `input name: "description"`'
        )
        if self.expect_colon(children, "input name"):
            self._value(children, ":")
        self.finish(children)
        return t.InputDeclaration(children)

    def parse_use(self) -> t.UseStatement:
        children: list[Any] = [self.take_keyword()]
        tok = self.cur()
        if isinstance(tok, t.String):
            self.check_string(tok)
            children.append(self.take())
        else:
            self.missing(
                "E004",
                'expected a program path after `use`, such as `use "@handle/slug"`',
                children[-1],
            )
        if self.at_word("as"):
            children.append(self.take_keyword())
            self.name_or_missing(children, "E004", "expected an alias name after `as`")
        self.finish(children)
        return t.UseStatement(children)

    def parse_import(self) -> t.ImportStatement:
        children: list[Any] = [self.take_keyword()]
        tok = self.cur()
        if isinstance(tok, t.String):
            self.check_string(tok)
            children.append(self.take())
        else:
            self.missing("E004", "expected a quoted name after `import`", children[-1])
        if self.at_word("from"):
            children.append(self.take_keyword())
            tok = self.cur()
            if isinstance(tok, t.String):
                self.check_string(tok)
                children.append(self.take())
            else:
                self.missing("E004", 'expected a quoted source after "from"', children[-1])
        else:
            self.missing("E004", 'expected `from "source"` after the imported name', children[-1])
        self.finish(children)
        return t.ImportStatement(children)

    def parse_agent(self) -> t.AgentDefinition:
        indent = self.line.indent
        children: list[Any] = [self.take_keyword()]
        self.name_or_missing(children, "E004", "expected an agent name after `agent`")
        self.expect_colon(children, "agent name")
        self.header_block(children, PROPERTIES, "agent", indent)
        return t.AgentDefinition(children)

    def parse_block_definition(self) -> t.BlockDefinition:
        indent = self.line.indent
        children: list[Any] = [self.take_keyword()]
        self.name_or_missing(
            children, "E054", "block definition must have a name: write `block name:`"
        )
        if self.at_op("("):
            children.append(self.parse_parameters())
        self.expect_colon(children, "block name")
        self.header_block(children, STATEMENTS, "block", indent)
        return t.BlockDefinition(children)

    def parse_parameters(self) -> t.Parameters:
        return t.Parameters(self._bracketed("(", ")", self._parameter))

    def _parameter(self) -> Any:
        tok = self.cur()
        if isinstance(tok, t.Name):
            return self.take()
        return None

    def parse_try(self) -> t.TryStatement:
        indent = self.line.indent
        kw = self.take_keyword()
        children: list[Any] = [kw]
        self.expect_colon(children, "try")
        self.header_block(children, STATEMENTS, "try:", indent)
        seen_catch = seen_finally = False
        while self._continuation(indent, ("catch", "finally")):
            word = self.toks[0].value
            if word == "catch":
                clause: Any = self.parse_clause(t.CatchClause, indent)
                if seen_finally:
                    self._clause_issue(clause, "`catch` must come before `finally`")
                elif seen_catch:
                    self._clause_issue(clause, "a `try` can have only one `catch` clause")
                seen_catch = True
            else:
                clause = self.parse_clause(t.FinallyClause, indent)
                if seen_finally:
                    self._clause_issue(clause, "a `try` can have only one `finally` clause")
                seen_finally = True
            children.append(clause)
        if not (seen_catch or seen_finally):
            self.issue("E037", 'try block must have at least "catch:" or "finally:"', kw)
        return t.TryStatement(children)

    def _clause_issue(self, clause: Any, message: str) -> None:
        clause.issues = [*(clause.issues or []), t.SyntaxIssue("E036", message, clause.children[0])]

    def _continuation(self, indent: str, words: tuple[str, ...]) -> bool:
        """Whether the current line continues the statement at ``indent`` with a clause."""
        line = self.line
        if line.eof or line.indent != indent or not line.tokens:
            return False
        first = line.tokens[0]
        return isinstance(first, t.Name) and first.value in words

    def parse_clause(self, cls: type[Any], indent: str) -> Any:
        """``catch [as e]:``, ``finally:``, ``elif cond:``, ``else:`` or ``option "x":``."""
        saved = self.issues
        self.issues = issues = cast(list[t.SyntaxIssue], [])
        self.barrier = False
        kw = self.take_keyword()
        children: list[Any] = [kw]
        word = kw.value
        if cls is t.CatchClause and self.at_word("as"):
            children.append(self.take_keyword())
            self.name_or_missing(children, "E004", "expected an error variable name after `as`")
        elif cls is t.ElifClause:
            self._condition(children, word)
        elif cls is t.OptionClause:
            tok = self.cur()
            if isinstance(tok, t.String):
                self.check_string(tok)
                children.append(self.take())
            else:
                self.missing("E004", "expected a quoted label after `option`", kw)
        self.expect_colon(children, word)
        empty_ok = cls in (t.ElifClause, t.ElseClause, t.OptionClause)
        self.header_block(children, STATEMENTS, f"{word}:", indent, may_be_empty=empty_ok)
        node = cls(children)
        node.issues = issues or None
        self.issues = saved
        return node

    def _condition(self, children: list[Any], after: str) -> Any:
        cond = self.parse_condition()
        if cond is None:
            self.missing(
                "E004",
                f"expected a condition such as `**the tests pass**` after `{after}`",
                children[-1],
            )
        else:
            children.append(cond)
        return cond

    def parse_if(self) -> t.IfStatement:
        indent = self.line.indent
        children: list[Any] = [self.take_keyword()]
        self._condition(children, "if")
        self.expect_colon(children, "condition")
        self.header_block(children, STATEMENTS, "if", indent, may_be_empty=True)
        seen_else = False
        while self._continuation(indent, ("elif", "else")):
            word = self.toks[0].value
            if word == "elif":
                clause: Any = self.parse_clause(t.ElifClause, indent)
                if seen_else:
                    self._clause_issue(clause, "`elif` cannot follow `else`")
            else:
                clause = self.parse_clause(t.ElseClause, indent)
                if seen_else:
                    self._clause_issue(clause, "only one else clause allowed")
                seen_else = True
            children.append(clause)
        return t.IfStatement(children)

    def parse_choice(self) -> t.ChoiceStatement:
        indent = self.line.indent
        kw = self.take_keyword()
        children: list[Any] = [kw]
        self._condition(children, "choice")
        self.expect_colon(children, "criteria")
        block = self.header_block(children, OPTIONS, "choice", indent)
        node = t.ChoiceStatement(children)
        if block is not None and not node.options():
            self.issue("E038", "choice block must have at least one option", kw)
        return node

    def parse_orphan(self) -> Any:
        indent = self.line.indent
        word = self.toks[0].value
        cls = {
            "elif": t.ElifClause,
            "else": t.ElseClause,
            "catch": t.CatchClause,
            "finally": t.FinallyClause,
            "option": t.OptionClause,
        }[word]
        node = self.parse_clause(cls, indent)
        node.issues = [
            t.SyntaxIssue("E035", _ORPHAN_MESSAGES[word], node.children[0]),
            *(node.issues or []),
        ]
        return node

    def parse_throw(self) -> t.ThrowStatement:
        children: list[Any] = [self.take_keyword()]
        tok = self.cur()
        if isinstance(tok, t.String):
            self.check_string(tok)
            children.append(self.take())
        elif tok is not None:
            self.junk(children, '`throw` takes an optional message string: write `throw "message"`')
        self.finish(children)
        return t.ThrowStatement(children)

    def parse_unsupported(self) -> t.UnsupportedStatement:
        indent = self.line.indent
        kw = self.take_keyword()
        children: list[Any] = [kw]
        if kw.value == "assert":
            cond = self.parse_condition()
            if cond is not None:
                children.append(cond)
        if self.at_op(":"):
            children.append(self.take())
            self.junk(children)
            block = self.parse_block(STATEMENTS, indent, True)
            if block is not None:
                children.append(block)
            else:
                self.finish(children)
        else:
            self.finish(children)
        node = t.UnsupportedStatement(children)
        self.issue("E041", UNSUPPORTED_HINTS[kw.value], kw)
        return node

    # ------------------------------------------------------------ properties

    def parse_property(self) -> Any:
        tok = self.cur()
        nxt = self.peek()
        if not (isinstance(tok, t.Name) and isinstance(nxt, t.Operator) and nxt.value == ":"):
            message = 'expected a property such as `prompt: "..."`'
            if isinstance(tok, t.Name) and tok.value in _STATEMENTS:
                message += "; statements cannot be nested here"
            return self.parse_error_statement(message)
        indent = self.line.indent
        children: list[Any] = [self.take(), self.take()]
        if self.at_eol():
            block = self.parse_block(PROPERTIES, indent, True)
            if block is not None:
                children.append(block)
                return t.Property(children)
            self.missing("E004", f"expected a value after `{tok.value}:`", children[-1])
        else:
            self._value(children, f"{tok.value}:")
        self.finish(children)
        return t.Property(children)

    def property_block(self, children: list[Any]) -> None:
        """An optional block of properties under a session or resume line.

        Taken only when the first indented line looks like a property (``name:``):
        an indented statement, an ``->`` or ``|`` continuation, or text left over
        after a stray triple quote is something else, and reported once as such.
        """
        if self.barrier or self.i < self.n:
            return
        nxt = self._peek_line()
        tokens = nxt.tokens
        if (
            len(tokens) >= 2
            and isinstance(tokens[0], t.Name)
            and tokens[1].value == ":"
            and isinstance(tokens[1], t.Operator)
        ):
            block = self.parse_block(PROPERTIES, self.line.indent, False)
            if block is not None:
                children.append(block)

    # ------------------------------------------------------------ expressions

    def parse_expression(self, operators: bool = True) -> Any:
        node = self.parse_arrow(operators)
        if node is None:
            return None
        if self.at_op("|") or self._pipe_continues():
            return self.parse_pipeline(node)
        return node

    def _pipe_continues(self, after: int = 0) -> bool:
        """Whether the next line continues a pipeline (``after`` tokens still to read)."""
        if self.barrier or self.i + after < self.n:
            return False
        nxt = self._peek_line()
        return (
            not nxt.eof
            and bool(nxt.tokens)
            and nxt.tokens[0].value == "|"
            and isinstance(nxt.tokens[0], t.Operator)
            and deeper(nxt.indent, self.line.indent)
        )

    def parse_pipeline(self, source: Any) -> t.Pipeline:
        children: list[Any] = [source]
        statement_indent = self.line.indent
        while True:
            if self.at_op("|"):
                children.append(self.parse_stage())
                continue
            if self._pipe_continues():
                newline = self.line.newline
                children.append(newline)
                self._advance()
                self.barrier = False
                continue
            if (
                self.barrier
                and not self.line.eof
                and self.line.tokens
                and self.line.tokens[0].value == "|"
                and isinstance(self.line.tokens[0], t.Operator)
                and (
                    self.line.indent == statement_indent
                    or deeper(self.line.indent, statement_indent)
                )
            ):
                self.barrier = False  # a stage continued after the previous stage's body
                continue
            break
        return t.Pipeline(children)

    def parse_stage(self) -> t.PipeStage:
        indent = self.line.indent
        children: list[Any] = [self.take()]
        tok = self.cur()
        op = None
        if isinstance(tok, t.Name):
            op = self.take_keyword() if tok.value in PIPE_OPERATIONS else self.take()
            children.append(op)
            if op.value not in PIPE_OPERATIONS:
                self.issue("E039", "expected pipe operator (map, filter, reduce, pmap)", op)
        else:
            self.missing(
                "E039", "expected pipe operator (map, filter, reduce, pmap) after `|`", children[0]
            )
        params = None
        if self.at_op("("):
            params = self.parse_parameters()
            children.append(params)
        if op is not None and op.value in PIPE_OPERATIONS:
            count = len(params.names()) if params is not None else 0
            if op.value == "reduce" and count != 2:
                anchor = params if params is not None else op
                self.issue(
                    "E040",
                    "expected accumulator and item variables: write `reduce(total, item):`",
                    anchor,
                )
            elif op.value != "reduce" and params is not None:
                self.issue(
                    "E040",
                    f"`{op.value}` takes no parameters: the current element is "
                    "the implicit variable `item`",
                    params,
                )
        self.expect_colon(children, op.value if op is not None else "|")
        self.header_block(children, STATEMENTS, f"| {op.value if op else ''}:", indent)
        return t.PipeStage(children)

    def parse_arrow(self, operators: bool = True) -> Any:
        """A value, or ``a -> b -> ...`` (a line may also start with ``-> b``)."""
        indent = self.line.indent
        operand = self._or_test if operators else self.parse_primary
        first = operand()
        if first is None:
            return None
        children = [first]
        while True:
            if not self.at_op("->") and not self._arrow_continues(indent, children):
                break
            arrow = self.take()
            children.append(arrow)
            if self.at_eol() and not self.barrier:
                # `session "a" ->` at the end of a line continues on the next one.
                nxt = self._peek_line()
                if not nxt.eof and (nxt.indent == indent or deeper(nxt.indent, indent)):
                    children.append(self.line.newline)
                    self._advance()
                    self.barrier = False
            step = operand()
            if step is None:
                self.missing("E004", "expected a session after `->`", arrow)
                break
            children.append(step)
        return children[0] if len(children) == 1 else t.ArrowSequence(children)

    def _arrow_continues(self, indent: str, children: list[Any]) -> bool:
        """A following line that starts with ``->`` continues the sequence."""
        if self.barrier:
            line = self.line
        elif self.i >= self.n:
            line = self._peek_line()
        else:
            return False
        if line.eof or not line.tokens:
            return False
        first = line.tokens[0]
        if not (first.value == "->" and isinstance(first, t.Operator)):
            return False
        if not (line.indent == indent or deeper(line.indent, indent)):
            return False
        if not self.barrier:
            children.append(self.line.newline)
            self._advance()
        self.barrier = False
        return True

    def parse_primary(self) -> Any:
        tok = self.cur()
        if tok is None:
            return None
        cls = type(tok)
        if cls is t.Name:
            handler = _EXPRESSIONS.get(tok.value)
            if handler is not None:
                return handler(self)
            node: Any = self.take()
            if self.at_op("(") and self.calls_allowed:
                node = t.ProgramCall([node, self.parse_arguments()])
            while self.at_op(".") or self.at_op("["):
                if self.at_op("."):
                    node = self._attribute(node)
                else:
                    node = t.Subscript([node, *self._bracketed("[", "]", self.parse_arrow)])
            return node
        if cls is t.String:
            self.check_string(tok)
            return self.take()
        if cls is t.Number:
            return self.take()
        if cls is t.Discretion:
            self.check_discretion(tok)
            return self.take()
        if cls is t.Operator:
            if tok.value == "[":
                return self.parse_array()
            if tok.value == "{":
                return self.parse_object()
        return None

    def _attribute(self, base: Any) -> t.Attribute:
        children = [base]
        while self.at_op("."):
            dot = self.take()
            children.append(dot)
            tok = self.cur()
            if isinstance(tok, t.Name):
                children.append(self.take())
            else:
                self.missing("E004", "expected a property name after `.`", dot)
                break
        return t.Attribute(children)

    def parse_condition(self) -> Any:
        """A ``**...**`` condition, or (outside the grammar) a boolean expression."""
        return self._or_test()

    def _or_test(self) -> Any:
        return self._boolean_chain("or", self._and_test)

    def _and_test(self) -> Any:
        return self._boolean_chain("and", self._not_test)

    def _boolean_chain(self, word: str, operand: Callable[[], Any]) -> Any:
        """``operand (word operand)*`` as a BooleanExpression (or the lone operand)."""
        left = operand()
        if left is None or not self.at_word(word):
            return left
        children = [left]
        while self.at_word(word):
            children.append(self.take_keyword())
            right = operand()
            if right is None:
                self.missing("E004", f"expected a condition after `{word}`", children[-1])
                break
            children.append(right)
        return t.BooleanExpression(children)

    def _not_test(self) -> Any:
        if self.at_word("not"):
            if self.nesting > MAX_NESTING:
                return self._too_deep_not()
            kw = self.take_keyword()
            self.nesting += 1
            try:
                operand = self._not_test()
            finally:
                self.nesting -= 1
            if operand is None:
                self.missing("E004", "expected a condition after `not`", kw)
                return t.NotExpression([kw])
            return t.NotExpression([kw, operand])
        left = self.parse_sum()
        if left is None:
            return None
        ops = self._comparison_operator()
        if not ops:
            return left
        right = self.parse_sum()
        if right is None:
            self.missing("E004", f"expected a value after `{ops[-1].value}`", ops[-1])
            return t.Comparison([left, *ops])
        return t.Comparison([left, *ops, right])

    def _too_deep_not(self) -> t.ErrorNode:
        """A run of `not` past the nesting limit and what it applies to, as one error."""
        children: list[Any] = []
        while self.at_word("not"):
            children.append(self.take_keyword())
        saved, self.issues = self.issues, []
        operand = self._not_test()  # no `not` left to recurse on
        self.issues = saved
        if operand is not None:
            children.append(operand)
        self.issues.append(too_deep(children[0], "the condition after this `not`"))
        return t.ErrorNode(children)

    def _comparison_operator(self) -> list[Any]:
        tok = self.cur()
        if isinstance(tok, t.Operator) and tok.value in COMPARISON_OPERATORS:
            return [self.take()]
        if isinstance(tok, t.Name):
            nxt = self.peek()
            if tok.value == "is":
                ops = [self.take_keyword()]
                if isinstance(nxt, t.Name) and nxt.value == "not":
                    ops.append(self.take_keyword())
                return ops
            if tok.value == "in":
                return [self.take_keyword()]
            if tok.value == "not" and isinstance(nxt, t.Name) and nxt.value == "in":
                return [self.take_keyword(), self.take_keyword()]
        return []

    def parse_sum(self) -> Any:
        """Operands joined by ``+ - * /`` (outside the grammar, used by real programs)."""
        left = self.parse_primary()
        if left is None:
            return None
        tok = self.cur()
        if not (isinstance(tok, t.Operator) and tok.value in ARITHMETIC_OPERATORS):
            return left
        children = [left]
        while True:
            tok = self.cur()
            if not (isinstance(tok, t.Operator) and tok.value in ARITHMETIC_OPERATORS):
                break
            op = self.take()
            children.append(op)
            right = self.parse_primary()
            if right is None:
                self.missing("E004", f"expected a value after `{op.value}`", op)
                break
            children.append(right)
        return t.BinaryExpression(children)

    # Bracketed lists ---------------------------------------------------------

    def _bracketed(self, open_: str, close: str, element: Callable[[], Any]) -> list[Any]:
        if self.nesting > MAX_NESTING:
            return [self._too_deep_brackets()]
        self.nesting += 1
        try:
            return self._bracketed_items(open_, close, element)
        finally:
            self.nesting -= 1

    def _too_deep_brackets(self) -> t.ErrorNode:
        """A bracket past the nesting limit, up to its matching closer (or the end of the
        line), as one error: the brackets around it still find their own closers."""
        start = self.i
        depth = 0
        while self.i < self.n:
            tok = self.toks[self.i]
            self.i += 1
            if isinstance(tok, t.Operator):
                if tok.value in _OPENERS:
                    depth += 1
                elif tok.value in _CLOSERS:
                    depth -= 1
                    if depth == 0:
                        break
        opener = self.toks[start]
        self.issues.append(too_deep(opener, f"what this `{opener.value}` encloses"))
        return t.ErrorNode(self.toks[start : self.i])

    def _bracketed_items(self, open_: str, close: str, element: Callable[[], Any]) -> list[Any]:
        opener = self.take()
        children: list[Any] = [opener]
        while True:
            tok = self.cur()
            if tok is None:
                self.issue("E030", f"unclosed `{open_}`: expected `{close}`", opener)
                return children
            if tok.value == close and isinstance(tok, t.Operator):
                children.append(self.take())
                return children
            item = element()
            if item is None:
                self.junk(
                    children, until=lambda x: x.value in (",", close) and isinstance(x, t.Operator)
                )
            else:
                children.append(item)
            tok = self.cur()
            if tok is None:
                continue
            if tok.value == "," and isinstance(tok, t.Operator):
                children.append(self.take())
            elif not (tok.value == close and isinstance(tok, t.Operator)):
                self.junk(
                    children,
                    f"expected `,` or `{close}`",
                    until=lambda x: x.value in (",", close) and isinstance(x, t.Operator),
                )

    def parse_array(self) -> t.ArrayLiteral:
        return t.ArrayLiteral(self._bracketed("[", "]", self.parse_arrow))

    def parse_object(self) -> t.ObjectLiteral:
        return t.ObjectLiteral(self._bracketed("{", "}", self._object_entry))

    def _object_entry(self) -> Any:
        tok = self.cur()
        nxt = self.peek()
        if isinstance(tok, t.Name | t.String) and isinstance(nxt, t.Operator) and nxt.value == ":":
            if isinstance(tok, t.String):
                self.check_string(tok)
            children: list[Any] = [self.take(), self.take()]
            value = self.parse_condition()
            if value is None:
                self.missing("E004", "expected a value after `:`", children[-1])
            else:
                children.append(value)
            return t.ObjectEntry(children)
        return self.parse_arrow()

    def parse_arguments(self) -> t.Arguments:
        return t.Arguments(self._bracketed("(", ")", self._argument))

    def _argument(self) -> Any:
        tok = self.cur()
        nxt = self.peek()
        if isinstance(tok, t.Name) and isinstance(nxt, t.Operator) and nxt.value == ":":
            children: list[Any] = [self.take(), self.take()]
            value = self.parse_arrow()
            if value is None:
                self.missing("E004", f"expected a value after `{tok.value}:`", children[-1])
            else:
                children.append(value)
            return t.KeywordArgument(children)
        return self.parse_arrow()

    # Block-bearing expressions ----------------------------------------------

    def parse_session(self) -> t.Session:
        kw = self.take_keyword()
        children: list[Any] = [kw]
        tok = self.cur()
        has_target = False
        if isinstance(tok, t.String):
            self.check_string(tok)
            children.append(self.take())
            has_target = True
        elif isinstance(tok, t.Operator) and tok.value == ":":
            children.append(self.take())
            has_target = self.name_or_missing_quiet(children)
        elif (
            isinstance(tok, t.Name)
            and isinstance(self.peek(), t.Operator)
            and self.peek().value == ":"
        ):
            children.append(self.take())
            children.append(self.take())
            has_target = self.name_or_missing_quiet(children)
        self.property_block(children)
        node = t.Session(children)
        if not has_target and node.get_property("prompt") is None:
            if isinstance(tok, t.Operator):
                message = "session requires an agent: write `session: agent-name`"
            else:
                message = (
                    "session requires a prompt or agent reference: write "
                    '`session "prompt"` or `session: agent-name`'
                )
            self.issue("E003", message, kw)
        return node

    def name_or_missing_quiet(self, children: list[Any]) -> bool:
        tok = self.cur()
        if isinstance(tok, t.Name):
            children.append(self.take())
            return True
        return False

    def parse_resume(self) -> t.Resume:
        kw = self.take_keyword()
        children: list[Any] = [kw]
        if self.at_op(":"):
            children.append(self.take())
            self.name_or_missing(children, "E004", "expected an agent name after `resume:`")
        else:
            self.missing("E004", "expected `:` after `resume`: write `resume: agent-name`", kw)
        self.property_block(children)
        return t.Resume(children)

    def parse_do(self) -> Any:
        indent = self.line.indent
        kw = self.take_keyword()
        children: list[Any] = [kw]
        if self.at_op(":"):
            children.append(self.take())
            self.header_block(children, STATEMENTS, "do:", indent)
            return t.DoBlock(children)
        tok = self.cur()
        if isinstance(tok, t.Name):
            children.append(self.take())
            if self.at_op("("):
                children.append(self.parse_arguments())
        else:
            self.missing("E004", "expected `:` or a block name after `do`", kw)
        return t.DoInvocation(children)

    def parse_parallel(self) -> Any:
        indent = self.line.indent
        kw = self.take_keyword()
        if self.at_word("for"):
            return self._for_each([kw], indent)
        children: list[Any] = [kw]
        if self.at_op("("):
            children.append(self.parse_arguments())
        self.expect_colon(children, "parallel")
        self.header_block(children, STATEMENTS, "parallel:", indent)
        return t.Parallel(children)

    def parse_for(self) -> t.ForEach:
        return self._for_each([], self.line.indent)

    def _for_each(self, children: list[Any], indent: str) -> t.ForEach:
        children.append(self.take_keyword())
        if self.at_word("in"):
            self.missing("E004", "expected a loop variable after `for`", children[-1])
        else:
            self.name_or_missing(children, "E004", "expected a loop variable after `for`")
        if self.at_op(","):
            children.append(self.take())
            self.name_or_missing(children, "E004", "expected an index variable after `,`")
        if self.at_word("in"):
            children.append(self.take_keyword())
            collection = self.parse_arrow()
            if collection is None:
                self.missing("E004", "expected a collection after `in`", children[-1])
            else:
                children.append(collection)
        else:
            self.missing(
                "E004", "expected `in` and a collection: write `for item in items:`", children[-1]
            )
        self.expect_colon(children, "collection")
        self.header_block(children, STATEMENTS, "for", indent)
        return t.ForEach(children)

    def parse_repeat(self) -> t.Repeat:
        indent = self.line.indent
        children: list[Any] = [self.take_keyword()]
        count = self.parse_primary()
        if count is None:
            self.missing(
                "E004", "expected a count after `repeat`, such as `repeat 3:`", children[-1]
            )
        else:
            children.append(count)
        self._as_name(children)
        self.expect_colon(children, "repeat count")
        self.header_block(children, STATEMENTS, "repeat", indent)
        return t.Repeat(children)

    def _as_name(self, children: list[Any]) -> None:
        if self.at_word("as"):
            children.append(self.take_keyword())
            self.name_or_missing(children, "E004", "expected a variable name after `as`")

    def parse_loop(self) -> t.Loop:
        indent = self.line.indent
        children: list[Any] = [self.take_keyword()]
        if self.at_word("until") or self.at_word("while"):
            word = self.take_keyword()
            children.append(word)
            # `loop while n (max: 5)`: the parentheses are the loop's modifiers, not a call.
            self.calls_allowed = False
            try:
                self._condition(children, word.value)
            finally:
                self.calls_allowed = True
        if self.at_op("("):
            children.append(self.parse_arguments())
        self._as_name(children)
        self.expect_colon(children, "loop")
        self.header_block(children, STATEMENTS, "loop", indent)
        return t.Loop(children)


_BINDERS = ("let", "const", "output")
# Clause nodes report their own misplacement (E035/E036).
_CLAUSES = (t.OptionClause, t.ElifClause, t.ElseClause, t.CatchClause, t.FinallyClause)

_STATEMENTS: dict[str, Callable[[Parser], Any]] = {
    "agent": Parser.parse_agent,
    "block": Parser.parse_block_definition,
    "use": Parser.parse_use,
    "import": Parser.parse_import,
    "input": Parser.parse_input,
    "output": Parser.parse_output,
    "let": Parser.parse_let,
    "const": Parser.parse_let,
    "try": Parser.parse_try,
    "throw": Parser.parse_throw,
    "choice": Parser.parse_choice,
    "if": Parser.parse_if,
    "elif": Parser.parse_orphan,
    "else": Parser.parse_orphan,
    "catch": Parser.parse_orphan,
    "finally": Parser.parse_orphan,
    "option": Parser.parse_orphan,
    "return": Parser.parse_unsupported,
    "break": Parser.parse_unsupported,
    "continue": Parser.parse_unsupported,
    "assert": Parser.parse_unsupported,
    "pass": Parser.parse_unsupported,
}

_EXPRESSIONS: dict[str, Callable[[Parser], Any]] = {
    "session": Parser.parse_session,
    "resume": Parser.parse_resume,
    "do": Parser.parse_do,
    "parallel": Parser.parse_parallel,
    "repeat": Parser.parse_repeat,
    "for": Parser.parse_for,
    "loop": Parser.parse_loop,
    "try": Parser.parse_try,
}


_OPENERS = frozenset("([{")
_CLOSERS = frozenset(")]}")


def too_deep(leaf: Any, what: str) -> t.SyntaxIssue:
    """The one error for nesting past the limit (deeper nesting could exhaust the stack of
    every tool that walks the tree, so the parser does not build it)."""
    return t.SyntaxIssue(
        "E005",
        f"nested too deeply: more than {MAX_NESTING} levels of blocks, brackets and `not`; "
        f"{what} is read without being checked",
        leaf,
    )


def parse(text: str) -> t.Module:
    """Parse OpenProse source into a lossless tree.  Never raises."""
    with gc_paused():
        try:
            return Parser(text).parse_module()
        except RecursionError:  # pragma: no cover - nesting is capped well below the limit
            return flat_module(text)


def flat_module(text: str) -> t.Module:
    """A last-resort tree: every line as one error statement, still lossless."""
    tokenizer = Tokenizer(text)
    statements: list[Any] = []
    while True:
        line = tokenizer.next_line()
        if line.eof:
            assert line.endmarker is not None
            return t.Module([*statements, line.endmarker])
        leaves = [*line.tokens, *([line.newline] if line.newline is not None else [])]
        node = t.ErrorStatement(leaves)
        node.issues = [
            t.SyntaxIssue("E005", "this program is nested too deeply to parse", leaves[0])
        ]
        statements.append(node)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building a tree.

    A parse allocates tens of thousands of objects that all survive; with other trees
    alive (an editor holds several), the collections this triggers scan them all and
    made parse times swing between 1x and 7x.  Nothing a parse creates is garbage.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
