"""The parser's machinery: the token stream, issues, error recovery and indented blocks.

The parser reads logical lines from the tokenizer and builds the lossless tree of
``openprose.syntax.tree``.  Blocks are found by comparing indentation strings
(prefix relations rather than widths, so tabs mixed with spaces are detected
instead of guessed).  Every problem becomes a ``SyntaxIssue`` on the item (statement
or property) being parsed; the parser recovers at the next line, so one mistake
never takes the statements around it down.

Parsing a block only depends on the block's own lines and on the indentation of the
header and of the block, which is what lets ``Document`` reparse a few statements
in the middle of a file and splice them into the old tree.

The grammar itself is in ``expressions.py`` and ``statements.py``, subclasses of
``ParserCore``; ``Parser`` in ``statements.py`` is the complete parser.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from typing import TYPE_CHECKING, Any

from openprose.syntax import tree as t
from openprose.syntax.strings import invalid_escapes
from openprose.syntax.tokenizer import LogicalLine, Tokenizer


class BlockKind(Enum):
    """What the items of an indented block are."""

    STATEMENTS = "statements"
    PROPERTIES = "properties"
    OPTIONS = "options"  # a `choice` block: `option` clauses


class Relation(Enum):
    """How a line's indentation stands to an open block."""

    SAME = "same"  # an item of the block
    DEEPER = "deeper"  # indented deeper than the block without a header to open it
    BAD_DEDENT = "bad dedent"  # between the block and its header
    MIXED = "mixed"  # tabs and spaces mixed differently from the block's
    OUT = "out"  # the block has ended


# Module globals for the members read on every line: on Python 3.11 an Enum member
# lookup (`Relation.SAME`) costs about ten times a global's.
_SAME = Relation.SAME
_DEEPER = Relation.DEEPER
_BAD_DEDENT = Relation.BAD_DEDENT
_MIXED = Relation.MIXED
_OUT = Relation.OUT
_PROPERTIES = BlockKind.PROPERTIES
_OPTIONS = BlockKind.OPTIONS

MAX_NESTING = 64
# Clause nodes report their own misplacement (E035/E036).
_CLAUSES = (t.OptionClause, t.ElifClause, t.ElseClause, t.CatchClause, t.FinallyClause)


def relation(indent: str, block: str, parent: str | None) -> Relation:
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


def too_deep(leaf: Any, what: str) -> t.SyntaxIssue:
    """The one error for nesting past the limit (deeper nesting could exhaust the stack of
    every tool that walks the tree, so the parser does not build it)."""
    return t.SyntaxIssue(
        "E005",
        f"nested too deeply: more than {MAX_NESTING} levels of blocks, brackets and `not`; "
        f"{what} is read without being checked",
        leaf,
    )


class ParserCore:
    """Token access, issues, error recovery and blocks; the grammar is in the subclasses."""

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

    # at_op and at_word are the parser's most frequent questions: ``cur`` is inlined.
    def at_op(self, value: str) -> bool:
        if self.barrier or self.i >= self.n:
            return False
        tok = self.toks[self.i]
        return tok.value == value and isinstance(tok, t.Operator)

    def at_word(self, value: str) -> bool:
        if self.barrier or self.i >= self.n:
            return False
        tok = self.toks[self.i]
        return tok.value == value and isinstance(tok, t.Name)

    def at_eol(self) -> bool:
        return self.barrier or self.i >= self.n

    def take(self) -> Any:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def take_keyword(self) -> t.Keyword:
        tok: t.Keyword = self.toks[self.i]
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
        if "\\" not in leaf.value:
            return  # no escape at all, the common case
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
        items = self.parse_items(BlockKind.STATEMENTS, None, "")
        marker = self.line.endmarker
        if marker is None:  # pragma: no cover - the top level only ends at end of file
            raise AssertionError("top-level block ended before end of file")
        return t.Module([*items, marker], self.tokenizer.anchors)

    def parse_items(self, kind: BlockKind, parent: str | None, block: str) -> list[Any]:
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

    def _parse_items(self, kind: BlockKind, parent: str | None, block: str) -> list[Any]:
        items: list[Any] = []
        stop_at, self.stop_at = self.stop_at, None  # nested blocks never stop early
        while not self.line.eof:
            if stop_at is not None and items and stop_at(self.line.prefix_line):
                self.stopped = True
                break
            indent = self.line.indent
            if indent == block:  # the common case, without the call
                items.append(self.parse_item(kind))
                continue
            rel = relation(indent, block, parent)
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

    def parse_item(self, kind: BlockKind, mixed: bool = False) -> Any:
        saved = self.issues
        # Annotated, not cast: a cast builds the generic alias on every item.
        issues: list[t.SyntaxIssue] = []
        self.issues = issues
        self.barrier = False
        first = self.toks[0] if self.toks else None
        if mixed and first is not None:
            self.issue(
                "E034",
                "inconsistent indentation: this line mixes tabs and spaces "
                "differently from the lines around it",
                first,
            )
        if kind is _PROPERTIES:
            node = self.parse_property()
        elif kind is _OPTIONS and isinstance(first, t.Name) and first.value == "option":
            node = self.parse_clause(t.OptionClause, self.line.indent)
        else:
            node = self.parse_statement()
            if kind is _OPTIONS and not isinstance(node, (*_CLAUSES, t.ErrorNode)):
                self.issue(
                    "E005",
                    'only `option "label":` clauses can appear inside a `choice` block',
                    node.get_first_leaf(),
                )
        if issues:
            node.issues = [*issues, *(node.issues or [])]
        self.issues = saved
        return node

    def parse_error_block(self, kind: BlockKind, parent: str, code: str) -> t.ErrorBlock:
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

    def parse_block(self, kind: BlockKind, header_indent: str, required: bool) -> Any:
        """At the end of a header line: the indented block under it, or None (nothing
        consumed).  Optional blocks are only taken when the next line is deeper and,
        for properties, does not continue a pipeline.
        """
        if self.barrier:
            return None  # a construct inside the header already took the lines below it
        nxt = self._pending or self._peek_line()
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
            assert newline is not None  # a line followed by another ends in a line break
            self._advance()
            items = self.parse_items(kind, header_indent, self.line.indent)
            block_cls = t.PropertyBlock if kind is _PROPERTIES else t.Suite
            return block_cls([newline, *items])
        return None

    def header_block(
        self,
        children: list[Any],
        kind: BlockKind,
        what: str,
        indent: str,
        may_be_empty: bool = False,
    ) -> Any:
        """After a header's ``:``: junk to end of line, then the required block.

        ``may_be_empty``: for ``if``/``elif``/``else``/``option`` an empty body is a
        warning of the analyzer (W025/W026), not a syntax error.
        """
        if self.i < self.n:
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
        if self.i < self.n:
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

    # ------------------------------------------------------------ error recovery

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
                items = self.parse_items(BlockKind.STATEMENTS, indent, self.line.indent)
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

    if TYPE_CHECKING:
        # The grammar of an item, defined in statements.py.

        def parse_statement(self) -> Any: ...

        def parse_property(self) -> Any: ...

        def parse_clause(self, cls: type[Any], indent: str) -> Any: ...


def flat_module(text: str) -> t.Module:
    """A last-resort tree: every line as one error statement, still lossless."""
    tokenizer = Tokenizer(text)
    statements: list[Any] = []
    while True:
        line = tokenizer.next_line()
        if line.eof:
            assert line.endmarker is not None
            return t.Module([*statements, line.endmarker], tokenizer.anchors)
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
