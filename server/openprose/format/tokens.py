"""The formatter's cheap proof of meaning: the printed text has the input's token stream.

The parser reads nothing of the text but the tokenizer's logical lines: each line's tokens
(kind and value), whether a line break ends it, and its indentation, which the parser only
compares with the indentation of earlier lines (equal, or one a strict prefix of the other:
``relation`` and ``deeper`` in ``syntax/parser/core.py``).  In a program without syntax
issues every line is compared only with lines still open above it (the blocks and the
statement holding it), which all sit on the stack of indentations Python's tokenizer keeps
for INDENT and DEDENT; a line dedented to a width not on that stack is the one way to
compare with a closed line, and it is an error (E032).  So the parse, node types and token
values included, is a function of the stream of lines as (depth on that stack, tokens), and
two texts with equal streams parse to equal trees.

``same_tokens`` builds that stream from the input's tree (its leaves are the tokenizer's
tokens, in order) and from the printed text (with the tokenizer's own token pattern and
line-continuation rule), and compares them with the comments.  Whatever it cannot read the
way the tokenizer does (an error token, an unclosed ``**``, indentation that dedents to a
width not open, a program with syntax issues) makes it answer False: the caller then
parses the output again (check.py), so False never means the output is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

from openprose.format.check import _prefix_comments as prefix_comments
from openprose.format.check import input_starts, line_starts
from openprose.format.margins import same_but_margins
from openprose.syntax import tree as t
from openprose.syntax.tokenizer import _TOKEN, Tokenizer

_GROUPS = _TOKEN.groupindex
_NAME, _STR, _NL, _DISC, _NUM, _OP, _ERR = (
    _GROUPS[k] for k in ("name", "str", "nl", "disc", "num", "op", "err")
)
# Older forms of the pattern matched whitespace and comments as tokens of their own.
_WS = _GROUPS.get("ws", -1)
_CMT = _GROUPS.get("comment", -1)
# A leaf's kind, as the group of the pattern that matched it.
_LEAF_KIND: dict[type, int] = {
    t.Name: _NAME,
    t.Keyword: _NAME,  # a name the parser took as a keyword
    t.String: _STR,
    t.Discretion: _DISC,
    t.Number: _NUM,
    t.Operator: _OP,
}
# The leaves of a program without syntax issues.
_LEAVES = frozenset({*_LEAF_KIND, t.Newline, t.EndMarker})
_OPENERS = frozenset("([{")
_BRACKETS = frozenset("([{)]}")
# Kinds read apart from the common ones (old whitespace and comment tokens, errors, `**`).
_ODD = frozenset({_WS, _CMT, _ERR, _DISC})
# In the streams: a line starts at depth d as ``-1 - d``; ``0`` is its line break, ``1``
# the end of the text ending it; a token is its kind then its value.
_BREAK = 0
# Past this share of the output in changed statements, reading it whole is cheaper.
_WHOLE_SHARE = 0.5
# A changed statement longer than this (characters of output) is read block statement by
# block statement, if it ends with a block: below it, the bookkeeping costs more.
_BLOCK_PIECES = 2000
_END = 1
# What ``Tokenizer._continues`` looks at in the tokens before a line break: only whether
# the last one is a ``:`` operator.
_COLON = [t.Operator(":", t.LineAnchor(1), 0)]


def same_tokens(module: t.Module, out: str, keep_comments: bool) -> bool:
    """True if ``out`` provably parses to ``module``'s tree (with its comments if
    ``keep_comments``); False if that could not be shown this way."""
    return _same(tree_stream(module), text_stream(out), keep_comments)


def same_changed_tokens(
    module: t.Module,
    text: str,
    out: str,
    out_starts: list[int],
    keep_comments: bool,
    inner: Callable[[int], list[int] | None] | None = None,
) -> bool:
    """``same_tokens`` for ``module`` parsed from ``text`` WITHOUT syntax issues (the caller
    knows: the printer found none), reading only the top-level statements whose text
    changed.  ``out_starts``: where the printer started each top-level statement, then the
    end's text, in ``out``.

    Each statement of such a program starts a logical line at the left margin and ends one
    outside brackets, so the tokenizer reads it the same wherever it stands: from the start
    of the text on, statement after statement, one unchanged reads as in the input and one
    changed as its stream says, and the stream of the whole text is theirs in a row.

    ``inner(k)``, if given, says where the printer started each statement of the block
    ending top-level statement ``k`` in ``out`` (see ``_Block``): such a statement is then
    read piece by piece too, so that an edit inside one big block reads only what changed."""
    if same_but_margins(text, out):
        return True  # only spaces at lines' ends changed (the common messy text)
    items: list[Any] = module.children[:-1]
    marker = module.children[-1]
    ends = [*out_starts, len(out)]
    if (
        not items
        or len(ends) != len(items) + 2
        or ends[0] != 0
        or any(a > b for a, b in pairwise(ends))
        or type(items[-1].get_last_leaf()) is not t.Newline  # the text ends inside a line
    ):
        return same_tokens(module, out, keep_comments)
    old, new = text.split("\n"), out.split("\n")
    if len(old) == len(new) and sum(map(str.__ne__, old, new)) > _WHOLE_SHARE * len(old):
        # Most lines changed (a text indented another way): so did most statements, and
        # one pass costs less than finding which.
        return same_tokens(module, out, keep_comments)
    lines = line_starts(text)
    in_starts = input_starts(items, marker, text, lines)
    if in_starts is None:
        return same_tokens(module, out, keep_comments)
    changed = [
        k
        for k in range(len(items) + 1)
        if text[in_starts[k] : in_starts[k + 1]] != out[ends[k] : ends[k + 1]]
    ]
    blocks: dict[int, _Block] = {}
    if inner is not None:
        for k in changed:
            if k < len(items) and ends[k + 1] - ends[k] > _BLOCK_PIECES:
                block = _Block.of(
                    items[k],
                    text,
                    lines,
                    (in_starts[k], in_starts[k + 1]),
                    out,
                    (ends[k], ends[k + 1]),
                    inner(k),
                )
                if block is not None:
                    blocks[k] = block
    size = sum(blocks[k].changed_size() if k in blocks else ends[k + 1] - ends[k] for k in changed)
    if size > _WHOLE_SHARE * len(out):
        return same_tokens(module, out, keep_comments)  # one pass costs less than pieces
    for k in changed:
        if k in blocks:
            if not blocks[k].same(k == 0, keep_comments):
                return False
            continue
        piece = out[ends[k] : ends[k + 1]]
        if k < len(items) and not piece.endswith(("\n", "\r")):
            return False  # what is left after its last line break starts the next line
        node = items[k] if k < len(items) else marker
        expected = tree_stream(node, k == 0)
        if expected is None or (expected[0] and expected[0][0] != -1):
            return False  # a statement not at the left margin: not a program without issues
        if not _same(expected, text_stream(piece, k == 0), keep_comments):
            return False
    return True


def _same(
    expected: tuple[list[Any], list[str]] | None,
    printed: tuple[list[Any], list[str]] | None,
    keep_comments: bool,
) -> bool:
    if expected is None or printed is None or printed[0] != expected[0]:
        return False
    return not keep_comments or printed[1] == expected[1]


class _Depths:
    """Python's INDENT/DEDENT stack of indentations: a line's depth on it, or None for
    a dedent to a width that is not open.  ``base``: the indentation of depth 0 (a text
    read from inside a block: a line left of it is None too)."""

    __slots__ = ("stack",)

    def __init__(self, base: str = "") -> None:
        self.stack = [base]

    def line_start(self, indent: str) -> int | None:
        """The stream's mark of a line starting at ``indent``: ``-1 - depth`` (None: a
        dedent to a width that is not open)."""
        stack = self.stack
        if indent == stack[-1]:
            return -len(stack)
        found = self.depth(indent)
        return None if found is None else -1 - found

    def depth(self, indent: str) -> int | None:
        stack = self.stack
        top = stack[-1]
        if indent == top:
            return len(stack) - 1
        if indent.startswith(top):
            stack.append(indent)
            return len(stack) - 1
        while len(stack) > 1:
            stack.pop()
            if stack[-1] == indent:
                return len(stack) - 1
        return None


class _Unreadable(Exception):
    """A node with syntax issues, or an error token."""


def tree_stream(
    node: Any, at_start: bool = True, base: str = ""
) -> tuple[list[Any], list[str]] | None:
    """The line stream and comments of the text ``node`` was parsed from (``at_start``: the
    text's start, where a byte-order mark is not a token; ``base``: the indentation of
    depth 0); None if it has syntax issues."""
    leaves: list[Any] = []
    try:
        if hasattr(node, "children"):
            _collect(node, leaves)
        else:
            leaves.append(node)
    except _Unreadable:
        return None
    return _leaf_stream(leaves, at_start, base)


def head_stream(node: Any, suite: Any, at_start: bool) -> tuple[list[Any], list[str]] | None:
    """``tree_stream`` of ``node`` up to the line break opening ``suite``, its last child."""
    leaves: list[Any] = []
    try:
        if node.issues or suite.issues or isinstance(node, t.ErrorNode):
            raise _Unreadable
        _collect_all(node.children[:-1], leaves)
        _collect_all(suite.children[:1], leaves)
    except _Unreadable:
        return None
    return _leaf_stream(leaves, at_start, "")


def _collect_all(children: list[Any], leaves: list[Any]) -> None:
    for child in children:
        if type(child) in _LEAVES:
            leaves.append(child)
        elif hasattr(child, "children"):
            _collect(child, leaves)
        else:
            raise _Unreadable


def _leaf_stream(
    leaves: list[Any], at_start: bool, base: str
) -> tuple[list[Any], list[str]] | None:
    stream: list[Any] = []
    comments: list[str] = []
    append = stream.append
    depths = _Depths(base)
    kinds = _LEAF_KIND
    line_open = False
    first = at_start
    newline = t.Newline
    for leaf in leaves:
        kind = kinds.get(type(leaf))
        prefix = leaf.prefix
        if "#" in prefix:
            comments.extend(prefix_comments(prefix))
        if kind is None:
            if type(leaf) is newline:
                append(_BREAK)
                line_open = False
            elif line_open:  # the end marker
                append(_END)
            continue
        if not line_open:
            cut = max(prefix.rfind("\n"), prefix.rfind("\r")) + 1
            indent = prefix[cut:]
            if first and not cut and indent.startswith("\ufeff"):
                indent = indent[1:]  # the tokenizer starts after a byte-order mark
            start = depths.line_start(indent)
            if start is None:
                return None
            append(start)
            line_open = True
        first = False
        append(kind)
        append(leaf.value)
    return stream, comments


def _collect(node: Any, leaves: list[Any]) -> None:
    """The leaves under ``node``, in order, into ``leaves``."""
    if node.issues or isinstance(node, t.ErrorNode):
        raise _Unreadable  # syntax issues: see the module's docstring
    for child in node.children:
        if type(child) in _LEAVES:
            leaves.append(child)
        elif hasattr(child, "children"):
            _collect(child, leaves)
        else:
            raise _Unreadable  # an error token


def text_stream(
    text: str, at_start: bool = True, base: str = ""
) -> tuple[list[Any], list[str]] | None:
    """The line stream and comments of ``text``, read as the tokenizer reads it from a line
    start (``at_start``: the text's start, where a byte-order mark is skipped; ``base``:
    the indentation of depth 0)."""
    stream: list[Any] = []
    comments: list[str] = []
    append = stream.append
    depths = _Depths(base)
    continues = Tokenizer(text)._continues
    line_open = False
    line_start = pos = 1 if at_start and text.startswith("\ufeff") else 0
    indent = ""
    brackets = 0
    odd = _ODD
    extend = stream.extend
    nl, op, bracket_values, openers = _NL, _OP, _BRACKETS, _OPENERS
    matches: Any = _TOKEN.finditer(text, pos)
    last_break = max(text.rfind("\n"), text.rfind("\r"))
    if "#" in text[last_break + 1 :]:
        # A match fails only where what is left is blanks and a comment ending the text;
        # the search then goes on inside the comment: stop where the matches stop touching.
        contiguous = []
        for m in matches:
            if m.start() != pos:
                break
            contiguous.append(m)
            pos = m.end()
        matches = contiguous
    m = None
    for m in matches:
        kind = m.lastindex
        if kind == nl:
            begin, end = m.span()
            start = m.start(kind)
            if begin < start:
                hash_at = text.find("#", begin, start)
                if hash_at >= 0:
                    comments.append(text[hash_at:start].strip())
            if not line_open:
                line_start = end  # a blank or comment line
                continue
            if brackets:
                colon = stream[-1] == ":" and stream[-2] == op
                if continues(_COLON if colon else [], end, indent):
                    line_start = end  # continued inside brackets
                    continue
                brackets = 0
            append(_BREAK)
            line_open = False
            line_start = end
            continue
        value = m[kind]
        if kind in odd:
            if kind == _WS:
                continue
            if kind == _CMT:
                comments.append(value.strip())
                continue
            if kind == _ERR:
                return None
            if not value.startswith("***") and not value.endswith("**", 2):
                return None  # an unclosed `**`: the tokenizer may cut it short
        if not line_open:
            indent = text[line_start : m.start(kind)]
            start = depths.line_start(indent)
            if start is None:
                return None
            append(start)
            line_open = True
        extend((kind, value))
        if kind == op and value in bracket_values:
            if value in openers:
                brackets += 1
            elif brackets:
                brackets -= 1
    if m is not None:
        pos = m.end()
    rest = text[pos:]
    if "#" in rest:
        comments.extend(prefix_comments(rest))
    if line_open:
        append(_END)
    return stream, comments


class _Block:
    """A changed top-level statement ending with a block, cut into pieces: its head (up to
    the line break opening the block) and each statement of the block, so that only the
    pieces whose text changed are read.

    Why their streams in a row are the statement's: the head's last logical line is at
    depth 0 (checked), so after it Python's stack is ``[""]``.  Every statement of the
    block starts a line at the block's indentation ``base`` (in the input the parse without
    issues says so; a changed piece, read from ``base``, must start at depth 0, and
    ``base`` is the same in input and output), which is then at depth 1 whatever the
    statement before left deeper on the stack; a line left of ``base`` inside a piece makes
    its reading None.  So each piece reads, in the whole text, as read alone from ``base``
    with every depth one more.  A piece ends a logical line outside brackets as a top-level
    statement does (see ``same_changed_tokens``), and starts just after a line break."""

    __slots__ = ("base", "head", "item", "members", "out", "pieces", "suite", "text")

    def __init__(
        self,
        item: Any,
        text: str,
        out: str,
        base: str,
        pieces: list[tuple[int, int, int, int]],
    ) -> None:
        self.item = item
        self.suite = item.children[-1]
        self.members = self.suite.children[1:]
        self.text, self.out, self.base = text, out, base
        self.pieces = pieces  # input then output span of the head, then of each statement

    @staticmethod
    def of(
        item: Any,
        text: str,
        lines: list[int],
        in_span: tuple[int, int],
        out: str,
        out_span: tuple[int, int],
        starts: list[int] | None,
    ) -> _Block | None:
        """The pieces of ``item`` (its text at ``in_span`` in ``text``, whose lines start at
        ``lines``; printed at ``out_span`` in ``out``, its block's statements starting at
        ``starts``), or None if it is not cut this way."""
        children = getattr(item, "children", None)
        if not children or type(children[-1]) is not t.Suite or starts is None:
            return None
        suite = children[-1]
        members = suite.children[1:]
        if not members or len(starts) != len(members):
            return None
        in_starts = [in_span[0]]
        for member in members:
            leaf = member.get_first_leaf()
            if leaf.line < 2 or not hasattr(member, "children"):
                return None
            prefix = leaf.prefix
            start = lines[leaf.line - 1] + leaf.column - len(prefix)
            if (
                start <= in_starts[-1]
                or not text.startswith(prefix, start)
                or not text.startswith(leaf.value, start + len(prefix))
            ):
                return None
            in_starts.append(start)
        in_starts.append(in_span[1])
        out_starts = [out_span[0], *starts, out_span[1]]
        for a, b in pairwise(out_starts):
            if a >= b or out[b - 1] not in "\r\n" or out.startswith("\r\n", b - 1):
                return None  # a piece must end with its own line break
        first = members[0].get_first_leaf().prefix
        base = first[max(first.rfind("\n"), first.rfind("\r")) + 1 :]
        if not base:
            return None
        pieces = [
            (a, b, c, d)
            for (a, b), (c, d) in zip(pairwise(in_starts), pairwise(out_starts), strict=True)
        ]
        return _Block(item, text, out, base, pieces)

    def changed(self) -> list[int]:
        """The changed pieces: 0 the head, i the block's statement i - 1."""
        text, out = self.text, self.out
        return [i for i, (a, b, c, d) in enumerate(self.pieces) if text[a:b] != out[c:d]]

    def changed_size(self) -> int:
        return sum(self.pieces[i][3] - self.pieces[i][2] for i in self.changed())

    def same(self, at_start: bool, keep_comments: bool) -> bool:
        head = head_stream(self.item, self.suite, at_start)
        if head is None:
            return False
        marks = [x for x in head[0] if type(x) is int and x < 0]
        if not marks or marks[-1] != -1:
            return False  # the block's header line is not at the left margin
        base = self.base
        for i in self.changed():
            _, _, c, d = self.pieces[i]
            piece = self.out[c:d]
            if i == 0:
                if not _same(head, text_stream(piece, at_start), keep_comments):
                    return False
                continue
            expected = tree_stream(self.members[i - 1], False, base)
            if expected is None or not expected[0] or expected[0][0] != -1:
                return False  # a statement of the block not at its indentation
            if not _same(expected, text_stream(piece, False, base), keep_comments):
                return False
        return True
