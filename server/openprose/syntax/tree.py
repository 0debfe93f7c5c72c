"""The lossless syntax tree: parso tree classes specialised for OpenProse.

Whitespace, comments and blank lines live in the ``prefix`` of the next leaf, so
``module.get_code()`` reproduces the source exactly.  Every logical line ends in a
``Newline`` leaf; a construct that owns an indented block (a ``Suite`` of statements
or a ``PropertyBlock``) keeps that newline as the first child of the block, the way
parso does for Python suites.

Syntax problems are recorded as ``SyntaxIssue`` objects on the statement that
contains them (the ``issues`` slot), anchored to leaves, so that positions stay
right when the incremental parser shifts reused statements.
"""

from __future__ import annotations

import builtins
import re
from bisect import bisect_left
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

from parso import tree as _parso
from parso.utils import split_lines

if TYPE_CHECKING:
    from openprose.syntax.strings import StringPart

Position = tuple[int, int]
_T = TypeVar("_T")

# --------------------------------------------------------------------------- leaves


class LineAnchor:
    """The line number of the leaves that start on one physical line of a logical line.

    Leaves read their line through their anchor, so a reparse that adds or removes lines
    moves everything after it by updating one anchor per line, not one attribute per leaf.
    The tokenizer makes one for each physical line it starts tokens on, in text order, and
    ``Module.line_anchors`` lists them so (``Document`` keeps that list in step with edits).
    """

    __slots__ = ("line",)

    def __init__(self, line: int) -> None:
        self.line = line

    def __repr__(self) -> str:
        return f"<LineAnchor {self.line}>"


# parso's ``line`` slot holds the anchor, under the name ``anchor``: a slot's descriptor
# reads it at C speed under any name, and the ``line`` property below shadows the old one.
_ANCHOR_SLOT = _parso.Leaf.__dict__["line"]


def _get_line(leaf: ProseLeaf | ErrorToken) -> int:
    return leaf.anchor.line


def _set_line(leaf: ProseLeaf | ErrorToken, line: int) -> None:
    # Detaches the leaf from the shared anchor: only this leaf moves.
    leaf.anchor = LineAnchor(line)


def _get_start_pos(leaf: ProseLeaf | ErrorToken) -> Position:
    return leaf.anchor.line, leaf.column


def _set_start_pos(leaf: ProseLeaf | ErrorToken, position: Position) -> None:
    leaf.anchor = LineAnchor(position[0])
    leaf.column = position[1]


def _get_end_pos(leaf: ProseLeaf | ErrorToken) -> Position:
    value = leaf.value
    line = leaf.anchor.line
    if "\n" not in value and "\r" not in value:
        return line, leaf.column + len(value)
    lines = split_lines(value)
    return line + len(lines) - 1, len(lines[-1])


class ProseLeaf(_parso.Leaf):
    """Base of our leaves; a direct ``__init__`` avoids parso's property setter."""

    __slots__ = ()
    type = "leaf"
    if TYPE_CHECKING:
        anchor: LineAnchor
    else:
        anchor = _ANCHOR_SLOT

    def __init__(self, value: str, anchor: LineAnchor, column: int, prefix: str = "") -> None:
        self.value = value
        self.anchor = anchor
        self.column = column
        self.prefix = prefix
        self.parent = None

    line = property(_get_line, _set_line)
    start_pos = property(_get_start_pos, _set_start_pos)
    end_pos = property(_get_end_pos)


class Name(ProseLeaf):
    __slots__ = ()
    type = "name"


class Keyword(ProseLeaf):
    """A name the parser read as a keyword (OpenProse keywords are soft)."""

    __slots__ = ()
    type = "keyword"


class Operator(ProseLeaf):
    __slots__ = ()
    type = "operator"


class Number(ProseLeaf):
    __slots__ = ()
    type = "number"

    def as_int(self) -> int | None:
        try:
            return int(self.value)
        except ValueError:
            return None


class String(ProseLeaf):
    """A ``"..."`` or ``\"\"\"...\"\"\"`` literal, quotes included in ``value``."""

    __slots__ = ()
    type = "string"

    @property
    def is_triple(self) -> bool:
        return self.value.startswith('"""')

    @property
    def quote_length(self) -> int:
        return 3 if self.value.startswith('"""') else 1

    @property
    def is_terminated(self) -> bool:
        v = self.value
        q = 3 if v.startswith('"""') else 1
        if len(v) < 2 * q or v[-1] != '"' or (q == 3 and not v.endswith('"""')):
            return False
        end = len(v) - q
        if v[end - 1] != "\\":
            return True
        # A closing quote preceded by an odd number of backslashes is escaped.
        backslashes = 0
        i = end - 1
        while i >= q and v[i] == "\\":
            backslashes += 1
            i -= 1
        return backslashes % 2 == 0

    @property
    def body(self) -> str:
        """The raw text between the quotes (escapes not decoded)."""
        value = self.value
        q = 3 if value.startswith('"""') else 1
        end = len(value) - q if self.is_terminated else len(value)
        return value[q:end]

    def parts(self) -> list[StringPart]:
        """Text runs, escapes and ``{name}`` interpolations, each with its own range."""
        return _strings.string_parts(self)

    @property
    def text(self) -> str:
        """The string's value with escapes decoded (interpolations left as written)."""
        return _strings.decode(self)


class Discretion(ProseLeaf):
    """A ``**...**`` condition, or ``***...***`` spanning lines."""

    __slots__ = ()
    type = "discretion"

    @property
    def is_multiline(self) -> bool:
        return self.value.startswith("***") and self.value != "****"  # `****`: empty `**`

    @property
    def is_terminated(self) -> bool:
        d = "***" if self.is_multiline else "**"
        return len(self.value) >= 2 * len(d) and self.value.endswith(d)

    @property
    def condition(self) -> str:
        """The condition text between the markers, stripped."""
        d = 3 if self.is_multiline else 2
        end = len(self.value) - d if self.is_terminated else len(self.value)
        return self.value[d:end].strip()


class Newline(ProseLeaf):
    __slots__ = ()
    type = "newline"


class EndMarker(ProseLeaf):
    __slots__ = ()
    type = "endmarker"


class ErrorToken(_parso.ErrorLeaf):
    """A character that cannot start any token (``$``, ``;``, a stray NBSP...)."""

    __slots__ = ()
    if TYPE_CHECKING:
        anchor: LineAnchor
    else:
        anchor = _ANCHOR_SLOT

    def __init__(self, value: str, anchor: LineAnchor, column: int, prefix: str = "") -> None:
        self.token_type = "errortoken"
        self.value = value
        self.anchor = anchor
        self.column = column
        self.prefix = prefix
        self.parent = None

    line = property(_get_line, _set_line)
    start_pos = property(_get_start_pos, _set_start_pos)
    end_pos = property(_get_end_pos)


# --------------------------------------------------------------------------- issues


class SyntaxIssue:
    """A syntax problem anchored to the tree.

    The range runs from ``start_leaf`` to ``end_leaf`` (inclusive, prefixes
    excluded).  ``start_offset``/``end_offset`` narrow it to characters inside the
    start/end leaf's value; ``at_end`` makes a zero-width range just after
    ``start_leaf`` (for something missing).
    """

    __slots__ = (
        "code",
        "end_leaf",
        "end_offset",
        "message",
        "related",
        "start_leaf",
        "start_offset",
    )

    def __init__(
        self,
        code: str,
        message: str,
        start_leaf: _parso.Leaf,
        end_leaf: _parso.Leaf | None = None,
        start_offset: int | None = None,
        end_offset: int | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.start_leaf = start_leaf
        self.end_leaf = end_leaf if end_leaf is not None else start_leaf
        self.start_offset = start_offset
        self.end_offset = end_offset
        # Other places involved, as (message, leaf, start offset, end offset).
        self.related: tuple[tuple[str, _parso.Leaf, int, int], ...] = ()

    @classmethod
    def after(cls, code: str, message: str, leaf: _parso.Leaf) -> SyntaxIssue:
        """A zero-width issue just after ``leaf``: something is missing there."""
        n = len(leaf.value)
        return cls(code, message, leaf, leaf, n, n)

    @property
    def start(self) -> Position:
        if self.start_offset is None:
            return self.start_leaf.start_pos
        return offset_position(self.start_leaf, self.start_offset)

    @property
    def end(self) -> Position:
        if self.end_offset is None:
            return self.end_leaf.end_pos
        return offset_position(self.end_leaf, self.end_offset)

    def __repr__(self) -> str:
        return f"<SyntaxIssue {self.code} {self.start}-{self.end}: {self.message}>"


def offset_position(leaf: _parso.Leaf, offset: int) -> Position:
    """The position of the character at ``offset`` inside ``leaf.value``."""
    value = leaf.value
    line, column = leaf.start_pos
    if offset < 0:
        offset = 0
    elif offset > len(value):
        offset = len(value)
    ends = _line_ends(value)
    if not ends:
        return line, column + offset  # a one-line value
    lines = bisect_left(ends, offset)  # line ends wholly before the offset
    if 0 < offset < len(value) and value[offset - 1] == "\r" and value[offset] == "\n":
        return line + lines + 1, 0  # inside a CRLF: where the CR ends the line
    if not lines:
        return line, column + offset
    return line + lines, offset - ends[lines - 1] - 1


_LINE_END = re.compile(r"\r\n?|\n")


@lru_cache(maxsize=32)
def _line_ends(value: str) -> tuple[int, ...]:
    """The index of the last character of each line end (LF, CRLF, lone CR) in ``value``.

    Cached because callers ask for every part of one string in turn: scanning the value
    each time made a string of n interpolations cost n^2 (a 1 MB line took minutes).  A
    str caches its hash, so finding the same value again is constant time.
    """
    return tuple(m.end() - 1 for m in _LINE_END.finditer(value))


# --------------------------------------------------------------------------- nodes


class ProseNode(_parso.BaseNode):
    """Base of our nodes; ``issues`` holds the syntax issues of a statement."""

    __slots__ = ("issues",)
    type = "node"

    def __init__(self, children: list[_parso.NodeOrLeaf]) -> None:
        self.children = children
        self.parent = None
        self.issues: list[SyntaxIssue] | None = None
        for child in children:
            child.parent = self

    def __repr__(self) -> str:
        line, column = self.start_pos
        return f"<{type(self).__name__}@{line},{column}>"

    # Helpers for accessors -------------------------------------------------
    def _first(self, cls: builtins.type[_T]) -> _T | None:
        for child in self.children:
            if isinstance(child, cls):
                return child
        return None

    def _all(self, cls: builtins.type[_T]) -> list[_T]:
        return [c for c in self.children if isinstance(c, cls)]

    def _keyword(self, value: str) -> Keyword | None:
        for child in self.children:
            if isinstance(child, Keyword) and child.value == value:
                return child
        return None

    def _after(self, leaf: _parso.NodeOrLeaf | None) -> _parso.NodeOrLeaf | None:
        """The child right after ``leaf`` (None if absent)."""
        if leaf is None:
            return None
        children = self.children
        # Tree nodes and leaves compare by identity (parso defines no ``__eq__``), so
        # ``index`` finds ``leaf`` itself, in C.
        try:
            i = children.index(leaf) + 1
        except ValueError:
            return None
        return children[i] if i < len(children) else None

    def _name_after_first(self) -> Name | None:
        children = self.children
        nxt = children[1] if len(children) > 1 else None
        return nxt if isinstance(nxt, Name) else None

    def _expression_after_first(self) -> Expression | None:
        children = self.children
        nxt = children[1] if len(children) > 1 else None
        if isinstance(nxt, Expression) and not isinstance(nxt, _parso.ErrorNode):
            return nxt
        return None

    def _second(self) -> _parso.NodeOrLeaf | None:
        """The child after the first (the keyword of most statements), None if absent."""
        children = self.children
        return children[1] if len(children) > 1 else None

    def _name_after(self, leaf: _parso.NodeOrLeaf | None) -> Name | None:
        nxt = self._after(leaf)
        return nxt if isinstance(nxt, Name) else None

    def _expression_after(self, leaf: _parso.NodeOrLeaf | None) -> Expression | None:
        nxt = self._after(leaf)
        # A recovered header can hold its `:` where the value is missing (`for x in :`); an
        # ErrorNode there is junk, not a value.
        if isinstance(nxt, Expression) and not isinstance(nxt, _parso.ErrorNode):
            return nxt
        return None


class ErrorNode(_parso.ErrorNode):
    """Tokens that do not fit where they stand, kept for losslessness."""

    __slots__ = ("issues",)

    def __init__(self, children: list[_parso.NodeOrLeaf]) -> None:
        self.children = children
        self.parent = None
        self.issues: list[SyntaxIssue] | None = None
        for child in children:
            child.parent = self


class ErrorStatement(ErrorNode):
    """A line (and anything indented under it) that is not a statement."""

    __slots__ = ()
    type = "error_statement"


class ErrorBlock(ErrorNode):
    """Lines indented where no block is open (or dedented to no open block).

    Reported once; the statements inside are parsed for structure but their own
    problems are not reported until the indentation is fixed.
    """

    __slots__ = ()
    type = "error_block"

    def statements(self) -> list[Statement | Property]:
        # Indented `name: value` lines under no open block are kept as properties here.
        return [c for c in self.children if isinstance(c, Statement | Property)]


class Module(ProseNode):
    __slots__ = ("line_anchors",)
    type = "module"

    def __init__(
        self, children: list[_parso.NodeOrLeaf], line_anchors: list[LineAnchor] | None = None
    ) -> None:
        super().__init__(children)
        # The anchors of every leaf, in text order (see ``LineAnchor``).
        self.line_anchors: list[LineAnchor] = [] if line_anchors is None else line_anchors

    def statements(self) -> list[Statement]:
        return [c for c in self.children if isinstance(c, Statement)]

    @property
    def end_marker(self) -> EndMarker:
        marker = self.children[-1]
        assert isinstance(marker, EndMarker)
        return marker


class Suite(ProseNode):
    """An indented block of statements; the first child is the header's newline."""

    __slots__ = ()
    type = "suite"

    def statements(self) -> list[Statement]:
        return [c for c in self.children if isinstance(c, Statement)]


class PropertyBlock(ProseNode):
    """An indented block of ``name: value`` properties; first child is a newline."""

    __slots__ = ()
    type = "property_block"

    def properties(self) -> list[Property]:
        return [c for c in self.children if isinstance(c, Property)]

    def get(self, name: str) -> Property | None:
        for child in self.children:
            # A property's first child is its name (``Property.name_leaf``).
            if isinstance(child, Property) and child.children[0].value == name:
                return child
        return None


class Property(ProseNode):
    """``name: value`` or ``name:`` followed by a nested property block."""

    __slots__ = ()
    type = "property"

    @property
    def name_leaf(self) -> Name:
        leaf = self.children[0]
        assert isinstance(leaf, Name)
        return leaf

    @property
    def name(self) -> str:
        leaf = self.children[0]
        assert isinstance(leaf, Name)
        return leaf.value

    @property
    def value(self) -> Expression | None:
        """The value node or leaf (None when the property has a nested block or nothing)."""
        children = self.children
        # The parser puts the `:` second, right after the name: the value, if any, is third.
        if (
            len(children) > 2
            and isinstance(children[1], Operator)
            and not isinstance(children[0], Operator)
        ):
            nxt = children[2]
            if isinstance(nxt, Expression) and not isinstance(nxt, _parso.ErrorNode):
                return nxt
            return None
        return self._expression_after(self._first(Operator))

    @property
    def block(self) -> PropertyBlock | None:
        return self._first(PropertyBlock)


class _HasProperties(ProseNode):
    __slots__ = ()

    @property
    def property_block(self) -> PropertyBlock | None:
        return self._first(PropertyBlock)

    def properties(self) -> list[Property]:
        block = self.property_block
        return block.properties() if block is not None else []

    def get_property(self, name: str) -> Property | None:
        block = self.property_block
        return block.get(name) if block is not None else None


class _HasSuite(ProseNode):
    __slots__ = ()

    @property
    def body(self) -> Suite | None:
        # A construct has at most one block, its last child unless clauses follow it
        # (``if``/``try``): look there first.
        last = self.children[-1]
        if isinstance(last, Suite):
            return last
        return self._first(Suite)

    def body_statements(self) -> list[Statement]:
        body = self.body
        return body.statements() if body is not None else []


# Statements that declare things -------------------------------------------------


class UseStatement(ProseNode):
    """``use "@handle/slug" [as alias]``."""

    __slots__ = ()
    type = "use_statement"

    @property
    def path(self) -> String | None:
        return self._first(String)

    @property
    def alias(self) -> Name | None:
        return self._name_after(self._keyword("as"))


class ImportStatement(ProseNode):
    """Legacy ``import "name" from "source"`` (early dialect, outside the grammar)."""

    __slots__ = ()
    type = "import_statement"

    @property
    def name(self) -> String | None:
        strings = self._all(String)
        return strings[0] if strings else None

    @property
    def source(self) -> String | None:
        nxt = self._after(self._keyword("from"))
        return nxt if isinstance(nxt, String) else None


class InputDeclaration(ProseNode):
    """``input name: "description"``."""

    __slots__ = ()
    type = "input_declaration"

    @property
    def name(self) -> Name | None:
        return self._name_after(self._keyword("input"))

    @property
    def description(self) -> Expression | None:
        return self._expression_after(self._first(Operator))


class OutputBinding(ProseNode):
    """``output name = expression``, or ``output expression`` (a block's result)."""

    __slots__ = ()
    type = "output_binding"

    @property
    def name(self) -> Name | None:
        nxt = self._second()
        after = self._after(nxt)
        if isinstance(nxt, Name) and isinstance(after, Operator) and after.value == "=":
            return nxt
        return None

    @property
    def value(self) -> Expression | None:
        for child in self.children[1:]:
            if isinstance(child, Operator) and child.value == "=":
                return _value_after_equals(self)
        return self._expression_after_first()


class AgentDefinition(_HasProperties):
    """``agent name:`` with a block of properties."""

    __slots__ = ()
    type = "agent_definition"

    @property
    def name_leaf(self) -> Name | None:
        return self._name_after(self._keyword("agent"))

    @property
    def name(self) -> str | None:
        leaf = self.name_leaf
        return leaf.value if leaf is not None else None


class BlockDefinition(_HasSuite):
    """``block name(params):`` with a body of statements."""

    __slots__ = ()
    type = "block_definition"

    @property
    def name_leaf(self) -> Name | None:
        return self._name_after(self._keyword("block"))

    @property
    def name(self) -> str | None:
        leaf = self.name_leaf
        return leaf.value if leaf is not None else None

    @property
    def parameter_list(self) -> Parameters | None:
        return self._first(Parameters)

    def parameters(self) -> list[Name]:
        params = self.parameter_list
        return params.names() if params is not None else []


class Parameters(ProseNode):
    """``(a, b)`` after a block name or ``reduce``."""

    __slots__ = ()
    type = "parameters"

    def names(self) -> list[Name]:
        return self._all(Name)


class LetBinding(ProseNode):
    """``let target = expression``."""

    __slots__ = ()
    type = "let_binding"
    keyword = "let"

    @property
    def target(self) -> Name | ObjectLiteral | None:
        """A ``Name``, or an ``ObjectLiteral`` pattern for ``let { a, b } = ...``."""
        nxt = self._second()
        return nxt if isinstance(nxt, Name | ObjectLiteral) else None

    def target_names(self) -> list[Name]:
        target = self.target
        if isinstance(target, Name):
            return [target]
        if isinstance(target, ObjectLiteral):
            return [e for e in target.entries() if isinstance(e, Name)]
        return []

    @property
    def value(self) -> Expression | None:
        return _value_after_equals(self)


class ConstBinding(LetBinding):
    """``const target = expression``."""

    __slots__ = ()
    type = "const_binding"
    keyword = "const"


class Assignment(ProseNode):
    """``name = expression`` (a reassignment, or a named branch inside ``parallel``)."""

    __slots__ = ()
    type = "assignment"

    @property
    def target(self) -> Name | None:
        first = self.children[0]
        return first if isinstance(first, Name) else None

    @property
    def value(self) -> Expression | None:
        return _value_after_equals(self)


def _value_after_equals(node: ProseNode) -> Expression | None:
    for i, child in enumerate(node.children):
        if isinstance(child, Operator) and child.value == "=":
            nxt = node.children[i + 1] if i + 1 < len(node.children) else None
            if isinstance(nxt, Expression) and not isinstance(nxt, _parso.ErrorNode):
                return nxt
            return None
    return None


# Sessions ------------------------------------------------------------------------


class Session(_HasProperties):
    """``session "prompt"``, ``session: agent`` or ``session name: agent``."""

    __slots__ = ()
    type = "session"

    @property
    def keyword_leaf(self) -> Keyword:
        leaf = self.children[0]
        assert isinstance(leaf, Keyword)
        return leaf

    @property
    def prompt(self) -> String | None:
        nxt = self._second()
        return nxt if isinstance(nxt, String) else None

    @property
    def agent(self) -> Name | None:
        colon = self._first(Operator)
        if colon is None or colon.value != ":":
            return None
        return self._name_after(colon)

    @property
    def name(self) -> Name | None:
        """The session's own name in ``session name: agent``."""
        nxt = self._second()
        return nxt if isinstance(nxt, Name) else None


class Resume(_HasProperties):
    """``resume: agent`` with optional properties."""

    __slots__ = ()
    type = "resume"

    @property
    def agent(self) -> Name | None:
        return self._name_after(self._first(Operator))


# Composition -----------------------------------------------------------------------


class DoBlock(_HasSuite):
    """``do:`` followed by statements."""

    __slots__ = ()
    type = "do_block"


class DoInvocation(ProseNode):
    """``do name`` or ``do name(args)``."""

    __slots__ = ()
    type = "do_invocation"

    @property
    def name(self) -> Name | None:
        return self._name_after_first()

    @property
    def arguments(self) -> Arguments | None:
        return self._first(Arguments)


class ArrowSequence(ProseNode):
    """``session "A" -> session "B" -> ...``."""

    __slots__ = ()
    type = "arrow_sequence"

    def steps(self) -> list[Expression]:
        return [c for c in self.children if isinstance(c, Expression)]


class Parallel(_HasSuite):
    """``parallel [(modifiers)]:`` with branches."""

    __slots__ = ()
    type = "parallel"

    @property
    def modifiers(self) -> Arguments | None:
        return self._first(Arguments)


class Repeat(_HasSuite):
    """``repeat N [as i]:``."""

    __slots__ = ()
    type = "repeat"

    @property
    def count(self) -> Expression | None:
        # Junk where the count is missing (`repeat $:`) is not a count: the parser reports
        # the count missing, and the checks of a count would report the junk again.
        return self._expression_after_first()

    @property
    def index(self) -> Name | None:
        return self._name_after(self._keyword("as"))


class ForEach(_HasSuite):
    """``for item[, i] in collection:``."""

    __slots__ = ()
    type = "for_each"

    @property
    def is_parallel(self) -> bool:
        return self._keyword("parallel") is not None

    @property
    def item(self) -> Name | None:
        return self._name_after(self._keyword("for"))

    @property
    def index(self) -> Name | None:
        item = self.item
        comma = self._after(item)
        if isinstance(comma, Operator) and comma.value == ",":
            return self._name_after(comma)
        return None

    @property
    def collection(self) -> Expression | None:
        return self._expression_after(self._keyword("in"))


class Loop(_HasSuite):
    """``loop [until|while condition] [(max: N)] [as i]:``."""

    __slots__ = ()
    type = "loop"

    @property
    def kind(self) -> str | None:
        """``"until"``, ``"while"`` or None for a plain ``loop``."""
        for word in ("until", "while"):
            if self._keyword(word) is not None:
                return word
        return None

    @property
    def condition(self) -> Expression | None:
        kind = self.kind
        if kind is None:
            return None
        return self._expression_after(self._keyword(kind))

    @property
    def modifiers(self) -> Arguments | None:
        return self._first(Arguments)

    @property
    def index(self) -> Name | None:
        return self._name_after(self._keyword("as"))


class Pipeline(ProseNode):
    """``source | op: ... | op: ...`` (stages may continue on indented lines)."""

    __slots__ = ()
    type = "pipeline"

    @property
    def source(self) -> Expression:
        source = self.children[0]
        assert isinstance(source, Expression)
        return source

    def stages(self) -> list[PipeStage]:
        return self._all(PipeStage)


class PipeStage(_HasSuite):
    """``| map:``, ``| filter:``, ``| pmap:`` or ``| reduce(acc, item):``."""

    __slots__ = ()
    type = "pipe_stage"

    @property
    def operation(self) -> Name | Keyword | None:
        nxt = self._second()
        return nxt if isinstance(nxt, Name | Keyword) else None

    @property
    def parameter_list(self) -> Parameters | None:
        return self._first(Parameters)


# Error handling and conditionals -------------------------------------------------


class TryStatement(_HasSuite):
    """``try:`` with ``catch [as e]:`` and/or ``finally:`` clauses."""

    __slots__ = ()
    type = "try_statement"

    def catch_clauses(self) -> list[CatchClause]:
        return self._all(CatchClause)

    @property
    def finally_clause(self) -> FinallyClause | None:
        return self._first(FinallyClause)


class CatchClause(_HasSuite):
    __slots__ = ()
    type = "catch_clause"

    @property
    def error_name(self) -> Name | None:
        return self._name_after(self._keyword("as"))


class FinallyClause(_HasSuite):
    __slots__ = ()
    type = "finally_clause"


class ThrowStatement(ProseNode):
    """``throw`` or ``throw "message"``."""

    __slots__ = ()
    type = "throw_statement"

    @property
    def message(self) -> String | None:
        return self._first(String)


class ChoiceStatement(_HasSuite):
    """``choice **criteria**:`` with ``option "label":`` clauses."""

    __slots__ = ()
    type = "choice_statement"

    @property
    def criteria(self) -> Expression | None:
        return self._expression_after_first()

    def options(self) -> list[OptionClause]:
        return [s for s in self.body_statements() if isinstance(s, OptionClause)]


class OptionClause(_HasSuite):
    __slots__ = ()
    type = "option_clause"

    @property
    def label(self) -> String | None:
        nxt = self._second()
        return nxt if isinstance(nxt, String) else None


class IfStatement(_HasSuite):
    """``if condition:`` with ``elif`` and ``else`` clauses."""

    __slots__ = ()
    type = "if_statement"

    @property
    def condition(self) -> Expression | None:
        return self._expression_after_first()

    def elif_clauses(self) -> list[ElifClause]:
        return self._all(ElifClause)

    @property
    def else_clause(self) -> ElseClause | None:
        return self._first(ElseClause)


class ElifClause(_HasSuite):
    __slots__ = ()
    type = "elif_clause"

    @property
    def condition(self) -> Expression | None:
        return self._expression_after_first()


class ElseClause(_HasSuite):
    __slots__ = ()
    type = "else_clause"


class UnsupportedStatement(_HasSuite):
    """``return``, ``break``, ``continue``, ``assert`` or ``pass``: outside the grammar."""

    __slots__ = ()
    type = "unsupported_statement"

    @property
    def keyword(self) -> str:
        return str(self.children[0].value)


# Expressions ---------------------------------------------------------------------


class ProgramCall(ProseNode):
    """``name(input: value, ...)``: invoking an imported program."""

    __slots__ = ()
    type = "program_call"

    @property
    def name(self) -> Name | None:
        first = self.children[0]
        return first if isinstance(first, Name) else None

    @property
    def arguments(self) -> Arguments | None:
        return self._first(Arguments)


class Arguments(ProseNode):
    """``( ... )`` of a call, a ``do`` invocation, ``parallel`` or ``loop`` modifiers."""

    __slots__ = ()
    type = "arguments"

    def items(self) -> list[KeywordArgument | Expression]:
        # Besides these, only the brackets, commas and junk (ErrorNodes) stand in the list.
        return [
            c
            for c in self.children
            if isinstance(c, KeywordArgument | Expression) and not isinstance(c, ErrorNode)
        ]

    def keyword_arguments(self) -> list[KeywordArgument]:
        return self._all(KeywordArgument)

    def positional(self) -> list[Expression]:
        return [c for c in self.items() if not isinstance(c, KeywordArgument)]


class KeywordArgument(ProseNode):
    """``name: value`` inside parentheses."""

    __slots__ = ()
    type = "keyword_argument"

    @property
    def name(self) -> Name:
        first = self.children[0]
        assert isinstance(first, Name)
        return first

    @property
    def value(self) -> Expression | None:
        value = self.children[2] if len(self.children) > 2 else None
        return value if isinstance(value, Expression) else None


class Attribute(ProseNode):
    """Property access: ``result.findings``."""

    __slots__ = ()
    type = "attribute"

    @property
    def base(self) -> Name | ProgramCall | Subscript:
        # An Attribute reads every `.name` of a chain: `a.b.c` is one, never nested.
        base = self.children[0]
        assert isinstance(base, Name | ProgramCall | Subscript)
        return base

    def attribute_names(self) -> list[Name]:
        return [c for c in self.children[1:] if isinstance(c, Name)]

    @property
    def dotted(self) -> str:
        return self.get_code(include_prefix=False).replace(" ", "")


class ArrayLiteral(ProseNode):
    """``[a, "b", ...]``."""

    __slots__ = ()
    type = "array"

    def elements(self) -> list[Expression]:
        # Besides these, only the brackets, commas and junk (ErrorNodes) stand in the list.
        return [
            c for c in self.children if isinstance(c, Expression) and not isinstance(c, ErrorNode)
        ]

    @property
    def is_closed(self) -> bool:
        last = self.children[-1]
        return isinstance(last, Operator) and last.value == "]"


class ObjectLiteral(ProseNode):
    """``{ a, b }`` (object context shorthand) or ``{ key: value }`` (outside the grammar)."""

    __slots__ = ()
    type = "object"

    def entries(self) -> list[ObjectEntry | Expression]:
        """``Name`` leaves for shorthand entries, ``ObjectEntry`` nodes for ``key: value``
        (any other value is an entry too, for the checks to report)."""
        # Besides these, only the braces, commas and junk (ErrorNodes) stand in the list.
        return [
            c
            for c in self.children
            if isinstance(c, ObjectEntry | Expression) and not isinstance(c, ErrorNode)
        ]

    @property
    def is_shorthand(self) -> bool:
        return all(isinstance(e, Name) for e in self.entries())

    @property
    def is_closed(self) -> bool:
        last = self.children[-1]
        return isinstance(last, Operator) and last.value == "}"


class ObjectEntry(ProseNode):
    """``key: value`` inside braces."""

    __slots__ = ()
    type = "object_entry"

    @property
    def key(self) -> Name | String:
        key = self.children[0]
        assert isinstance(key, Name | String)
        return key

    @property
    def value(self) -> Expression | None:
        value = self.children[2] if len(self.children) > 2 else None
        return value if isinstance(value, Expression) else None


class Subscript(ProseNode):
    """``items[0]``: indexing, outside the grammar."""

    __slots__ = ()
    type = "subscript"


class Comparison(ProseNode):
    """``a == b``, ``depth <= 0`` ...: a condition outside the grammar."""

    __slots__ = ()
    type = "comparison"

    @property
    def operator(self) -> Operator:
        op = self.children[1]
        assert isinstance(op, Operator)
        return op


class BinaryExpression(ProseNode):
    """``a + b`` and friends: arithmetic outside the grammar."""

    __slots__ = ()
    type = "binary_expression"


class NotExpression(ProseNode):
    """``not x``: a condition outside the grammar."""

    __slots__ = ()
    type = "not_expression"


class BooleanExpression(ProseNode):
    """``a and b`` / ``a or b``: a condition outside the grammar."""

    __slots__ = ()
    type = "boolean_expression"


# --------------------------------------------------------------------------- unions

# What the parser returns where it reads a value (``parse_expression`` and the constructs it
# reaches: a construct that carries a block is a value too, as in ``let x = session "a"``).
# An ErrorNode stands where nesting went too deep to parse.
ExpressionNode = (
    Attribute
    | Subscript
    | ProgramCall
    | ArrayLiteral
    | ObjectLiteral
    | Comparison
    | BinaryExpression
    | NotExpression
    | BooleanExpression
    | ArrowSequence
    | Pipeline
    | Session
    | Resume
    | DoBlock
    | DoInvocation
    | Parallel
    | ForEach
    | Repeat
    | Loop
    | TryStatement
    | ErrorNode
)
Expression = Name | String | Number | Discretion | ExpressionNode

# What stands in a block of statements (``Module``, ``Suite``, ``ErrorBlock``): the
# statements, the calls and constructs run for their effects (never a bare name or literal),
# and the lines that are not statements.  Properties appear only in a ``PropertyBlock``.
Statement = (
    AgentDefinition
    | BlockDefinition
    | UseStatement
    | ImportStatement
    | InputDeclaration
    | OutputBinding
    | LetBinding
    | Assignment
    | ThrowStatement
    | ChoiceStatement
    | IfStatement
    | UnsupportedStatement
    | ExpressionNode
    | ElifClause
    | ElseClause
    | CatchClause
    | FinallyClause
    | OptionClause
    | ErrorStatement
    | ErrorBlock
)


# --------------------------------------------------------------------------- walking

STATEMENT_BLOCKS = (Suite, PropertyBlock)


def iter_nodes(node: _parso.BaseNode) -> Iterator[_parso.BaseNode]:
    """Every node (not leaf) under ``node``, depth first, ``node`` included."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children = current.children
        for i in range(len(children) - 1, -1, -1):
            child = children[i]
            if hasattr(child, "children"):
                stack.append(child)


def ancestor(
    node: _parso.NodeOrLeaf, classes: builtins.type[_T] | tuple[builtins.type[_T], ...]
) -> _T | None:
    """The nearest enclosing node that is an instance of ``classes`` (a class or a tuple of
    classes), or None."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, classes):
            return parent
        parent = parent.parent
    return None


def top_level(node: _parso.NodeOrLeaf) -> _parso.NodeOrLeaf:
    """The child of the module that holds ``node`` (the topmost node above it when it is
    in no module)."""
    while node.parent is not None and not isinstance(node.parent, Module):
        node = node.parent
    return node


def iter_leaves(node: _parso.BaseNode | _parso.Leaf) -> Iterator[_parso.Leaf]:
    """Every leaf under ``node`` in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, _parso.Leaf):
            yield current
        else:
            stack.extend(reversed(current.children))


# At the end: strings.py imports this module (``offset_position``); the String accessors
# reach it through the module, without an import statement on every call.
from openprose.syntax import strings as _strings  # noqa: E402
