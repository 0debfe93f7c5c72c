"""Statements and properties, and ``Parser``, the complete parser."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openprose.syntax import tree as t
from openprose.syntax.parser.core import BlockKind
from openprose.syntax.parser.expressions import EXPRESSIONS, ExpressionParser
from openprose.syntax.vocabulary import CLAUSE_KEYWORDS, UNSUPPORTED_STATEMENTS

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


class Parser(ExpressionParser):
    """The OpenProse parser: ``Parser(text).parse_module()``."""

    def parse_statement(self) -> Any:
        i = self.i
        tok = self.toks[i] if not self.barrier and i < self.n else None  # ``cur`` inlined
        if isinstance(tok, t.Name):
            nxt = self.toks[i + 1] if i + 1 < self.n else None  # ``peek`` inlined
            is_assign = isinstance(nxt, t.Operator) and nxt.value == "="
            handler = _STATEMENTS.get(tok.value)
            if handler is not None and not (is_assign and tok.value not in _BINDERS):
                return handler(self)
            if is_assign:
                return self.parse_assignment()
            handler = EXPRESSIONS.get(tok.value)
            if (
                handler is not None
                or (isinstance(nxt, t.Operator) and nxt.value in "(|")
                or (nxt is None and self._pipe_continues(after=1))
            ):
                # A call, or a pipeline run for its effects: `items | map: ...`, with the
                # stages on the same line or on the indented lines below.
                return self.parse_expression_statement()
        return self.parse_error_statement()

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

    def _string_or_missing(self, children: list[Any], message: str) -> None:
        """A quoted path or name, or E004 right after the last child."""
        tok = self.cur()
        if isinstance(tok, t.String):
            self.check_string(tok)
            children.append(self.take())
        else:
            self.missing("E004", message, children[-1])

    def parse_use(self) -> t.UseStatement:
        children: list[Any] = [self.take_keyword()]
        self._string_or_missing(
            children, 'expected a program path after `use`, such as `use "@handle/slug"`'
        )
        if self.at_word("as"):
            children.append(self.take_keyword())
            self.name_or_missing(children, "E004", "expected an alias name after `as`")
        self.finish(children)
        return t.UseStatement(children)

    def parse_import(self) -> t.ImportStatement:
        children: list[Any] = [self.take_keyword()]
        self._string_or_missing(children, "expected a quoted name after `import`")
        if self.at_word("from"):
            children.append(self.take_keyword())
            self._string_or_missing(children, 'expected a quoted source after "from"')
        else:
            self.missing("E004", 'expected `from "source"` after the imported name', children[-1])
        self.finish(children)
        return t.ImportStatement(children)

    def parse_agent(self) -> t.AgentDefinition:
        indent = self.line.indent
        children: list[Any] = [self.take_keyword()]
        name = self.name_or_missing(children, "E004", "expected an agent name after `agent`")
        self._header_colon(children, name, "agent name")
        self.header_block(children, BlockKind.PROPERTIES, "agent", indent)
        return t.AgentDefinition(children)

    def parse_block_definition(self) -> t.BlockDefinition:
        indent = self.line.indent
        children: list[Any] = [self.take_keyword()]
        name = self.name_or_missing(
            children, "E054", "block definition must have a name: write `block name:`"
        )
        if self.at_op("("):
            children.append(self.parse_parameters())
        self._header_colon(children, name, "block name")
        self.header_block(children, BlockKind.STATEMENTS, "block", indent)
        return t.BlockDefinition(children)

    def _header_colon(self, children: list[Any], name: t.Name | None, what: str) -> None:
        """The `:` after a definition's name.  A bare `agent` or `block` at the end of the
        line already has its error (the missing name): a second one at the same spot for
        the `:` would report the same unfinished header twice."""
        if name is None and len(children) == 1 and self.at_eol():
            return
        self.expect_colon(children, what)

    def parse_try(self) -> t.TryStatement:
        indent = self.line.indent
        kw = self.take_keyword()
        children: list[Any] = [kw]
        self.expect_colon(children, "try")
        self.header_block(children, BlockKind.STATEMENTS, "try:", indent)
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
        # Annotated, not cast: a cast builds the generic alias on every item.
        issues: list[t.SyntaxIssue] = []
        self.issues = issues
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
        self.header_block(children, BlockKind.STATEMENTS, f"{word}:", indent, may_be_empty=empty_ok)
        node = cls(children)
        node.issues = issues or None
        self.issues = saved
        return node

    def parse_if(self) -> t.IfStatement:
        indent = self.line.indent
        children: list[Any] = [self.take_keyword()]
        self._condition(children, "if")
        self.expect_colon(children, "condition")
        self.header_block(children, BlockKind.STATEMENTS, "if", indent, may_be_empty=True)
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
        block = self.header_block(children, BlockKind.OPTIONS, "choice", indent)
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
            block = self.parse_block(BlockKind.STATEMENTS, indent, True)
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
        if self.i == self.n - 1 and not self.barrier and self._lone_value(children):
            return t.Property(children)
        if self.at_eol():
            block = self.parse_block(BlockKind.PROPERTIES, indent, True)
            if block is not None:
                children.append(block)
                return t.Property(children)
            self.missing("E004", f"expected a value after `{tok.value}:`", children[-1])
        else:
            self._value(children, f"{tok.value}:")
        self.finish(children)
        return t.Property(children)

    def _lone_value(self, children: list[Any]) -> bool:
        """The most common property, ``name: value`` with a single-token value ending the
        line, read without the expression levels: what ``_value`` would read then, unless
        the next line continues the value (``->`` or ``|``).  False: nothing consumed."""
        tok = self.toks[self.i]
        cls = type(tok)
        if cls is t.Name:
            if tok.value in EXPRESSIONS or tok.value == "not":
                return False
        elif cls is not t.String and cls is not t.Number and cls is not t.Discretion:
            return False
        following = (self._pending or self._peek_line()).tokens
        if following and following[0].value in ("->", "|"):
            return False
        if cls is t.String:
            self.check_string(tok)
        elif cls is t.Discretion:
            self.check_discretion(tok)
        self.i += 1
        children.append(tok)
        self.finish(children)
        return True


_BINDERS = ("let", "const", "output")
# Clause nodes report their own misplacement (E035/E036).
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
    **dict.fromkeys(CLAUSE_KEYWORDS, Parser.parse_orphan),
    **dict.fromkeys(UNSUPPORTED_STATEMENTS, Parser.parse_unsupported),
}
