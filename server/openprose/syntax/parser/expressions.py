"""Expressions: values, pipelines, arrows, conditions, bracketed lists, and the
block-bearing expressions (`session`, `resume`, `do`, `parallel`, `for`, `repeat`, `loop`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openprose.syntax import tree as t
from openprose.syntax.parser.core import (
    MAX_NESTING,
    BlockKind,
    ParserCore,
    deeper,
    too_deep,
)
from openprose.syntax.vocabulary import PIPE_OPERATIONS

COMPARISON_OPERATORS = frozenset(("==", "!=", "<", ">", "<=", ">="))
ARITHMETIC_OPERATORS = frozenset("+-*/")
# The values of the tokens that can follow an operand inside a condition or a sum.
_CONTINUE_OPERAND = COMPARISON_OPERATORS | ARITHMETIC_OPERATORS | {"is", "in", "not", "and", "or"}
_OPENERS = frozenset("([{")
# What can follow a name inside a primary: a call's arguments, an attribute, a subscript.
_AFTER_NAME = frozenset("(.[")
_CLOSERS = frozenset(")]}")


class ExpressionParser(ParserCore):
    """Values and the constructs that carry a block; ``Parser`` adds the statements."""

    def parse_expression(self, operators: bool = True) -> Any:
        node = self.parse_arrow(operators)
        if node is None:
            return None
        if self.barrier or self.i >= self.n:
            if self._pipe_continues():
                return self.parse_pipeline(node)
        elif self.at_op("|"):
            return self.parse_pipeline(node)
        return node

    def _pipe_continues(self, after: int = 0) -> bool:
        """Whether the next line continues a pipeline (``after`` tokens still to read)."""
        if self.barrier or self.i + after < self.n:
            return False
        nxt = self._pending or self._peek_line()
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
        self.header_block(children, BlockKind.STATEMENTS, f"| {op.value if op else ''}:", indent)
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
            # Inside the line only `->` goes on; at its end, a line starting with `->` may.
            if self.barrier or self.i >= self.n:
                if not self._arrow_continues(indent, children):
                    break
            elif not self.at_op("->"):
                break
            arrow = self.take()
            children.append(arrow)
            if self.at_eol() and not self.barrier:
                # `session "a" ->` at the end of a line continues on the next one.
                nxt = self._pending or self._peek_line()
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
            line = self._pending or self._peek_line()
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
        # ``cur`` and ``take`` inlined: every value of every line starts here.
        if self.barrier or self.i >= self.n:
            return None
        tok = self.toks[self.i]
        cls = type(tok)
        if cls is t.Name:
            handler = EXPRESSIONS.get(tok.value)
            if handler is not None:
                return handler(self)
            node: Any = tok
            self.i += 1
            if self.barrier or self.i >= self.n or self.toks[self.i].value not in _AFTER_NAME:
                return node  # the common case: a name alone
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
            self.i += 1
            return tok
        if cls is t.Number:
            self.i += 1
            return tok
        if cls is t.Discretion:
            self.check_discretion(tok)
            self.i += 1
            return tok
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

    # Every value passes through all the levels below (or, and, not, comparison, sum).  The
    # lone operand, by far the most common case, is read once and returned unless the token
    # after it continues one of those levels; otherwise the levels carry on from it
    # (``first``), exactly as if each had been entered in turn.
    def _or_test(self, first: Any = None) -> Any:
        if first is None and not self.barrier and self.i < self.n:
            tok = self.toks[self.i]
            if not (tok.value == "not" and isinstance(tok, t.Name)):
                first = self.parse_primary()
                if first is None:
                    return None
                if self.barrier or self.i >= self.n:
                    return first
                if self.toks[self.i].value not in _CONTINUE_OPERAND:
                    return first
        left = self._and_test(first)
        if left is None or not self.at_word("or"):
            return left
        return self._boolean_chain(left, "or", self._and_test)

    def _and_test(self, first: Any = None) -> Any:
        left = self._not_test(first)
        if left is None or not self.at_word("and"):
            return left
        return self._boolean_chain(left, "and", self._not_test)

    def _boolean_chain(self, left: Any, word: str, operand: Callable[[], Any]) -> Any:
        """``left (word operand)*`` as a BooleanExpression (``left`` is followed by ``word``)."""
        children = [left]
        while self.at_word(word):
            children.append(self.take_keyword())
            right = operand()
            if right is None:
                self.missing("E004", f"expected a condition after `{word}`", children[-1])
                break
            children.append(right)
        return t.BooleanExpression(children)

    def _not_test(self, first: Any = None) -> Any:
        if first is None and self.at_word("not"):
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
        left = self.parse_sum(first)
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

    def parse_sum(self, first: Any = None) -> Any:
        """Operands joined by ``+ - * /`` (outside the grammar, used by real programs)."""
        left = self.parse_primary() if first is None else first
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

    def parse_parameters(self) -> t.Parameters:
        return t.Parameters(self._bracketed("(", ")", self._parameter))

    def _parameter(self) -> Any:
        tok = self.cur()
        if isinstance(tok, t.Name):
            return self.take()
        return None

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
        else:
            has_target = self._agent_without_colon(children)
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

    def _agent_without_colon(self, children: list[Any]) -> bool:
        """``session c`` or ``resume c``, the name alone on its line: the `:` of
        ``session: c`` is missing.  That one error, at the name, stands for the mistake;
        the name is kept in the header so the properties below still belong to it."""
        tok = self.cur()
        if not isinstance(tok, t.Name) or self.peek() is not None:
            return False
        keyword = children[0].value
        children.append(self.take())
        self.issue(
            "E004",
            f"expected `:` before the agent name: write `{keyword}: {tok.value}`",
            tok,
        )
        return True

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
        elif not self._agent_without_colon(children):
            self.missing("E004", "expected `:` after `resume`: write `resume: agent-name`", kw)
        self.property_block(children)
        return t.Resume(children)

    def parse_do(self) -> Any:
        indent = self.line.indent
        kw = self.take_keyword()
        children: list[Any] = [kw]
        if self.at_op(":"):
            children.append(self.take())
            self.header_block(children, BlockKind.STATEMENTS, "do:", indent)
            return t.DoBlock(children)
        tok = self.cur()
        if isinstance(tok, t.Name):
            children.append(self.take())
            if self.at_op("("):
                children.append(self.parse_arguments())
        elif self.at_eol() and self._block_follows(indent):
            # `do` and an indented block: only the `:` of `do:` is missing.
            self.missing("E004", "expected `:` after `do`", kw)
            self.header_block(children, BlockKind.STATEMENTS, "do:", indent)
            return t.DoBlock(children)
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
        self.header_block(children, BlockKind.STATEMENTS, "parallel:", indent)
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
        self.header_block(children, BlockKind.STATEMENTS, "for", indent)
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
        self.header_block(children, BlockKind.STATEMENTS, "repeat", indent)
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
        self.header_block(children, BlockKind.STATEMENTS, "loop", indent)
        return t.Loop(children)

    # Under a header ----------------------------------------------------------

    def property_block(self, children: list[Any]) -> None:
        """An optional block of properties under a session or resume line.

        Taken only when the first indented line looks like a property (``name:``):
        an indented statement, an ``->`` or ``|`` continuation, or text left over
        after a stray triple quote is something else, and reported once as such.
        """
        if self.barrier or self.i < self.n:
            return
        nxt = self._pending or self._peek_line()
        tokens = nxt.tokens
        if (
            len(tokens) >= 2
            and isinstance(tokens[0], t.Name)
            and tokens[1].value == ":"
            and isinstance(tokens[1], t.Operator)
        ):
            block = self.parse_block(BlockKind.PROPERTIES, self.line.indent, False)
            if block is not None:
                children.append(block)

    def _block_follows(self, indent: str) -> bool:
        """Whether the next line is indented deeper than a header indented ``indent``."""
        if self.barrier:
            return False
        nxt = self._pending or self._peek_line()
        return not nxt.eof and deeper(nxt.indent, indent)

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

    if TYPE_CHECKING:
        # `try` is a statement that is also a value: defined in statements.py.

        def parse_try(self) -> t.TryStatement: ...


# Words that start a block-bearing expression, and the method that parses each.
EXPRESSIONS: dict[str, Callable[[ExpressionParser], Any]] = {
    "session": ExpressionParser.parse_session,
    "resume": ExpressionParser.parse_resume,
    "do": ExpressionParser.parse_do,
    "parallel": ExpressionParser.parse_parallel,
    "repeat": ExpressionParser.parse_repeat,
    "for": ExpressionParser.parse_for,
    "loop": ExpressionParser.parse_loop,
    "try": lambda parser: parser.parse_try(),
}
