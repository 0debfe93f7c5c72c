"""The canonical printer.

Every token's text is kept exactly (strings, discretion conditions, comments' text); the
printer only chooses what goes between tokens: indentation (two spaces per level), spacing
inside a line, blank lines, where comments sit, and line endings.  Indentation comes from
the tree, not from the original text, so the block structure is printed as parsed.

Statements with syntax errors are printed exactly as written (top-level statements are the
unit), so text is never lost and an error's surroundings never change meaning.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from openprose.syntax import tree as t
from openprose.syntax.issues import iter_issues
from openprose.syntax.vocabulary import PIPE_OPERATIONS

INDENT = "  "
_LINE_BREAK = re.compile(r"\r\n|\n|\r")
_OPEN = frozenset("([{")
_CLOSE = frozenset(")]}")
# Keywords written directly before their parameters: `reduce(acc, item):`.
_CALL_LIKE_KEYWORDS = frozenset(PIPE_OPERATIONS)
_BLOCKS = (t.Suite, t.PropertyBlock)
_OPERATOR = t.Operator
_NEWLINE = t.Newline
_END_MARKER = t.EndMarker
_PIPELINE = t.Pipeline
_ARROW = t.ArrowSequence
_BLOCK_TYPES = frozenset(_BLOCKS)
_LEAVES = frozenset(
    {t.Name, t.Keyword, t.Operator, t.Number, t.String, t.Discretion, t.Newline, t.EndMarker}
)
_BRACKETS = _OPEN | _CLOSE
# Operators written without a space before them, and after them (see ``space``).
_TIGHT_BEFORE = frozenset((",", ":", ")", "]", "."))
_TIGHT_AFTER = frozenset(("(", "[", "."))
# The tokens ``node`` prints itself in the common cases (not the end or error tokens).
_INLINE = frozenset({t.Name, t.Keyword, t.Operator, t.Number, t.String, t.Discretion, t.Newline})


def line_ending(text: str, module: Any = None) -> str:
    """The file's line ending: the one ending its first line of code (or, without one,
    the first it uses; LF when it has none)."""
    if module is not None:
        for leaf in t.iter_leaves(module):
            if isinstance(leaf, t.Newline):
                return str(leaf.value)
    match = _LINE_BREAK.search(text)
    return match.group() if match else "\n"


def _partition_line(text: str) -> tuple[str, str, str]:
    """(first line, its line break, the rest)."""
    match = _LINE_BREAK.search(text)
    if match is None:
        return text, "", ""
    return text[: match.start()], match.group(), text[match.end() :]


def broken_statements(module: t.Module) -> set[int]:
    """Ids of the top-level statements that contain a syntax issue (the parser records
    one for every error node and invalid character), and of every top-level error node.

    An issue may point outside its node: the lines indented after a string closed early by
    a stray `\"\"\"` form an error block whose issue points at that string, in the statement
    before.  Both are kept as written, since moving the block to the left margin would
    turn its lines into statements."""
    broken: set[int] = {id(s) for s in module.statements() if isinstance(s, t.ErrorNode)}
    for issue in iter_issues(module):
        broken.add(id(t.top_level(issue.start_leaf)))
    return broken


class Printer:
    def __init__(self, eol: str, keep_comments: bool = True, blank_lines: bool = True) -> None:
        self.eol = eol
        self.keep_comments = keep_comments
        self.blank_lines = blank_lines
        self.out: list[str] = []
        self.prev: Any = None  # the last leaf printed
        self.at_line_start = True
        self.line_indent = ""  # indentation of the current logical line
        self.brackets = 0  # brackets open on the current logical line
        self.block_start = True  # the next line is the first of its block
        self.top_level = True
        # Original column -> new indentation of recent line starts (for comments that sit
        # after the end of a deeper block).
        self.columns: dict[int, str] = {}
        self.last_column = -1  # the last key of ``columns``
        self.broken: set[int] = set()
        self.bom_printed = False
        # Where each top-level statement's text, then the end's, starts (indexes in out).
        self.starts: list[int] = []
        # Whether a node with a syntax issue was printed (see ``module``).
        self.issues_seen = False
        # Top-level statement's index -> where each statement of the block it holds
        # directly starts (indexes in out; see ``block_starts``).
        self.inner: dict[int, list[int]] = {}

    # Tests turn this off to compare with printing after a walk for issues.
    optimistic = True
    # The tokens ``node`` prints itself in the common cases; tests that break ``leaf``
    # empty it, so that every token goes through ``leaf``.
    inline_tokens = _INLINE

    # ------------------------------------------------------------ output

    def text(self) -> str:
        return "".join(self.out)

    def text_and_starts(self) -> tuple[str, list[int]]:
        """The text, and the offsets in it where each top-level statement's text (its
        comments and blank lines before it included) and then the end's text start."""
        out = self.out
        bounds = [0, *self.starts[1:], len(out)]
        pieces = ["".join(out[a:b]) for a, b in pairwise(bounds)]
        offsets = []
        offset = 0
        for piece in pieces:
            offsets.append(offset)
            offset += len(piece)
        return "".join(pieces), offsets

    def block_starts(self, k: int, offset: int) -> list[int] | None:
        """Where each statement of the last block printed in top-level statement ``k``
        starts in the text, given that ``k`` starts at ``offset`` (None if it holds none)."""
        marks = self.inner.get(k)
        if marks is None:
            return None
        out = self.out
        previous = self.starts[k] if k else 0
        starts = []
        for mark in marks:
            offset += sum(map(len, out[previous:mark]))
            starts.append(offset)
            previous = mark
        return starts

    # ------------------------------------------------------------ walking

    def module(self, module: t.Module) -> None:
        statements = module.statements()
        if self.optimistic and not any(isinstance(s, t.ErrorNode) for s in statements):
            # Most programs have no syntax issue: print every statement laid out, noting
            # any issue met on the way, rather than walk the tree for issues first (a
            # tenth of the printer's time); if one was met, start again.
            self.issues_seen = bool(module.issues)
            try:
                self._module(module, statements)
                if not self.issues_seen:
                    return
            except Exception:
                pass  # a statement with errors, laid out: printed as written below
            self.__init__(self.eol, self.keep_comments, self.blank_lines)  # type: ignore[misc]
        self.broken = broken_statements(module)
        self._module(module, statements)

    def _module(self, module: t.Module, statements: list[Any]) -> None:
        first = module.get_first_leaf()
        if first.prefix.startswith("\ufeff"):
            self.out.append("\ufeff")  # a byte-order mark stays first, printed once
            self.bom_printed = True
        for statement in statements:
            self.starts.append(len(self.out))
            self.top_level = True
            if id(statement) in self.broken:
                self.verbatim(statement)
            else:
                self.statement(statement, "")
        self.starts.append(len(self.out))
        self.end(module.end_marker)

    def verbatim(self, node: Any) -> None:
        """Print a statement exactly as written (it has syntax errors)."""
        first = True
        for leaf in t.iter_leaves(node):
            if first:
                self.line_start_prefix(leaf, "", keep_indent=True)
                at_start = self.prev is None and not "".join(self.out)
                if at_start and leaf.value.startswith("\ufeff"):
                    # Dropping the leading blank lines would make this stray U+FEFF the
                    # file's first character, that is a byte-order mark: keep them.
                    self.out.append(leaf.prefix)
                first = False
            else:
                self.out.append(leaf.prefix)
            self.out.append(leaf.value)
            self.prev = leaf
        self.at_line_start = isinstance(self.prev, t.Newline)
        self.block_start = False

    def statement(self, node: Any, indent: str) -> None:
        self.line_indent = indent
        self.node(node, indent)

    def node(self, node: Any, indent: str) -> None:
        # Leaves first: they are most of the calls.
        children = getattr(node, "children", None)
        if children is None:
            self.leaf(node, indent)
            return
        if node.issues:
            self.issues_seen = True
        cls = type(node)  # none of these node classes has subclasses
        if cls in _BLOCK_TYPES:
            self.block(node, indent)
        elif cls is _PIPELINE:
            self.pipeline(node, indent)
        elif cls is _ARROW:
            self.arrow(node, indent)
        else:
            out = self.out
            inline = self.inline_tokens
            for child in children:
                cls = type(child)
                # ``leaf`` for the common cases, inline (the calls were most of the
                # printer's time): a token following another on its line, a line's line
                # break, a line's first token after only its indentation.
                if cls in inline:
                    prefix = child.prefix
                    if cls is _NEWLINE:
                        if "#" in prefix:
                            out.append(self.trailing_comment(prefix))
                        out.append(self.eol)
                        self.prev = child
                        self.at_line_start = True
                        self.brackets = 0
                        continue
                    if "\n" not in prefix and "\r" not in prefix:
                        value = child.value
                        if not self.at_line_start:
                            prev = self.prev
                            if cls is _OPERATOR:
                                if value not in _TIGHT_BEFORE:
                                    out.append(self.space(prev, child))
                            elif type(prev) is not _OPERATOR or prev.value not in _TIGHT_AFTER:
                                out.append(" ")
                        elif self.brackets or self.bom_printed or prefix.startswith("\ufeff"):
                            self.leaf(child, indent)
                            continue
                        else:
                            line_indent = self.line_indent
                            out.append(line_indent)
                            self.block_start = False
                            self.at_line_start = False
                            if self.last_column == len(prefix):  # as the line before
                                self.columns[self.last_column] = line_indent
                            else:
                                self._line_starts(len(prefix), line_indent)
                        out.append(value)
                        if cls is _OPERATOR and value in _BRACKETS:
                            self.track_brackets(child)
                        self.prev = child
                        continue
                if cls in _LEAVES:
                    self.leaf(child, indent)
                else:
                    self.node(child, indent)

    def block(self, block: Any, header_indent: str, step: str = INDENT) -> None:
        if block.issues:
            self.issues_seen = True
        children = block.children
        self.leaf(children[0], header_indent)  # the header's newline
        inner = header_indent + step
        saved_top = self.top_level
        self.top_level = False
        self.block_start = True
        node = self.node  # ``statement``, inline
        if saved_top:
            marks = self.inner[len(self.starts) - 1] = []
            for item in children[1:]:
                marks.append(len(self.out))
                self.line_indent = inner
                node(item, inner)
        else:
            for item in children[1:]:
                self.line_indent = inner
                node(item, inner)
        self.top_level = saved_top
        self.line_indent = header_indent

    def pipeline(self, node: t.Pipeline, indent: str) -> None:
        saved_top, self.top_level = self.top_level, False  # stages are inside a statement
        try:
            self._pipeline(node, indent)
        finally:
            self.top_level = saved_top

    def _pipeline(self, node: t.Pipeline, indent: str) -> None:
        """Stages continued on their own lines sit one level in, with their bodies two
        levels further (aligned after ``| ``), as the reference lays chains out.  A chain
        whose first stage shares the source's line is laid out the same way, with every
        stage on its own line (the first stage's body would otherwise collide with the
        continued ones)."""
        statement_indent = self.line_indent
        stages = node.stages()
        chain = len(stages) > 1
        for child in node.children:
            if isinstance(child, t.PipeStage):
                if child.issues:
                    self.issues_seen = True
                if chain and not self.at_line_start:
                    self.out.append(self.eol)  # move the stage to its own line
                    self.at_line_start = True
                continued = self.at_line_start
                stage_indent = statement_indent + INDENT if continued else self.line_indent
                if continued:
                    self.line_indent = stage_indent
                for part in child.children:
                    if isinstance(part, t.Suite):
                        self.block(part, stage_indent, INDENT * 2 if continued else INDENT)
                    else:
                        self.node(part, stage_indent)
            else:
                self.node(child, indent)
        self.line_indent = statement_indent

    def arrow(self, node: t.ArrowSequence, indent: str) -> None:
        # A step continued on the next line (`-> session ...`) keeps the statement's level.
        statement_indent = self.line_indent
        saved_top, self.top_level = self.top_level, False  # continuations are inside it
        for child in node.children:
            if self.at_line_start:
                self.line_indent = statement_indent
            self.node(child, indent)
        self.line_indent = statement_indent
        self.top_level = saved_top

    # ------------------------------------------------------------ leaves

    def leaf(self, leaf: Any, indent: str) -> None:
        cls = type(leaf)
        if cls is _NEWLINE:
            self.newline(leaf)
            return
        if cls is _END_MARKER:
            self.end(leaf)
            return
        if self.at_line_start:
            if self.brackets:
                self.continuation(leaf)
            else:
                self.line_start_prefix(leaf, self.line_indent)
                self._line_starts(self._original_column(leaf), self.line_indent)
            self.at_line_start = False
        elif "\n" in leaf.prefix or "\r" in leaf.prefix:
            # A line break inside open brackets: keep it, indented inside the brackets.
            self.continuation(leaf)
        else:
            self.out.append(self.space(self.prev, leaf))
        self.out.append(leaf.value)
        if isinstance(leaf, t.Operator):
            self.track_brackets(leaf)
        self.prev = leaf

    def _line_starts(self, column: int, indent: str) -> None:
        """Note that a line at original ``column`` starts at ``indent``, forgetting the
        lines at or right of it (``columns``' keys increase: each is added last)."""
        columns = self.columns
        while columns and next(reversed(columns)) >= column:
            columns.popitem()
        columns[column] = indent
        self.last_column = column

    def track_brackets(self, leaf: Any) -> None:
        if isinstance(leaf, t.Operator):
            if leaf.value in _OPEN:
                self.brackets += 1
            elif leaf.value in _CLOSE and self.brackets:
                self.brackets -= 1

    def continuation(self, leaf: Any) -> None:
        """A token that starts a continuation line inside brackets: its line is indented
        one level per open bracket; a comment ending the previous line stays there, and
        own-line comments and one blank line between elements are kept."""
        depth = self.brackets - (1 if leaf.value in _CLOSE else 0)
        indent = self.line_indent + INDENT * max(depth, 0)
        segments = _LINE_BREAK.split(leaf.prefix)
        first, middle = segments[0], segments[1:-1]
        out = [self.trailing_comment(first), self.eol]
        blank = False
        for segment in middle:
            text = segment.strip()
            if not text:
                blank = self.blank_lines
                continue
            if not self.keep_comments:
                continue
            if blank:
                out.append(self.eol)
                blank = False
            out.append(indent + text + self.eol)
        if blank:
            out.append(self.eol)
        out.append(indent)
        self.out.append("".join(out))
        self.at_line_start = False

    def newline(self, leaf: t.Newline) -> None:
        comment = self.trailing_comment(leaf.prefix)
        self.out.append(comment)
        self.out.append(self.eol)
        self.prev = leaf
        self.at_line_start = True
        self.brackets = 0

    def end(self, marker: t.EndMarker) -> None:
        prev = self.prev
        runaway = isinstance(prev, t.String | t.Discretion) and not prev.is_terminated
        prefix = marker.prefix
        if runaway:
            self.out.append(prefix)  # inside an unclosed string's line: keep it as it is
            return
        if not self.at_line_start and self.out:
            # The last line had no line break: a comment ending it stays on it.
            first, _, rest = _partition_line(prefix)
            self.out.append(self.trailing_comment(first) + self.eol)
            self.at_line_start = True
            prefix = rest
        if "#" in prefix and self.keep_comments:
            # Comments after the last statement; the last one may lack a line break.
            self.out.append(self.own_line_comments(prefix + self.eol, "", marker))

    # ------------------------------------------------------------ prefixes

    def line_start_prefix(self, leaf: Any, indent: str, keep_indent: bool = False) -> None:
        """Blank lines and own-line comments before a line's first token, then its indent."""
        prefix = leaf.prefix
        if self.bom_printed and prefix.startswith("\ufeff"):
            prefix = prefix[1:]
        self.bom_printed = False
        if keep_indent:
            self.out.append(self.blank_and_comments(prefix, indent, leaf, keep=True))
            return
        if "\n" in prefix or "\r" in prefix:  # else only the old indentation: dropped
            self.out.append(self.own_line_comments(prefix, indent, leaf))
        self.out.append(indent)
        self.block_start = False

    def own_line_comments(self, prefix: str, indent: str, leaf: Any) -> str:
        return self.blank_and_comments(prefix, indent, leaf, keep=False)

    def blank_and_comments(self, prefix: str, indent: str, leaf: Any, keep: bool) -> str:
        lines = _LINE_BREAK.split(prefix)
        last = lines.pop()  # the indentation (or text) before the token itself
        if keep:
            # Verbatim statements keep their own prefix lines, only the blank-line policy
            # and line endings apply.
            body = self.policy(lines, indent, leaf)
            return body + last
        return self.policy(lines, indent, leaf)

    def policy(self, lines: list[str], indent: str, leaf: Any) -> str:
        out: list[str] = []
        blanks = 0
        allowed = 2 if self.top_level else 1
        if not self.blank_lines:
            allowed = 0
        started = not (self.block_start or not self.out)
        for line in lines:
            stripped = line.strip()
            if stripped.startswith("\ufeff"):
                stripped = stripped.lstrip("\ufeff").strip()
            if not stripped:
                blanks += 1
                continue
            if not self.keep_comments:
                continue
            if started and blanks:
                out.append(self.eol * min(blanks, allowed))
            blanks = 0
            started = True
            column = len(line) - len(line.lstrip(" \t"))
            out.append(self.comment_indent(column, indent, leaf) + stripped + self.eol)
        if started and blanks and not isinstance(leaf, t.EndMarker):
            out.append(self.eol * min(blanks, allowed))
        return "".join(out)

    def comment_indent(self, column: int, indent: str, leaf: Any) -> str:
        """A comment indented deeper than the code after it belongs to the block above."""
        own = 0 if isinstance(leaf, t.EndMarker) else self._original_column(leaf)
        if column <= own:
            return indent
        deeper = [c for c in self.columns if c <= column and c > own]
        if deeper:
            return self.columns[max(deeper)]
        return indent

    def trailing_comment(self, prefix: str) -> str:
        if "#" not in prefix or not self.keep_comments:
            return ""
        comment = prefix[prefix.index("#") :].rstrip()
        return "  " + comment

    def comments(self, prefix: str) -> list[str]:
        if "#" not in prefix or not self.keep_comments:
            return []
        return [line.strip() for line in _LINE_BREAK.split(prefix) if line.strip()]

    @staticmethod
    def _original_column(leaf: Any) -> int:
        prefix = leaf.prefix
        cut = max(prefix.rfind("\n"), prefix.rfind("\r")) + 1
        return len(prefix) - cut if cut or not prefix.startswith("\ufeff") else len(prefix) - 1

    # ------------------------------------------------------------ spacing

    @staticmethod
    def space(prev: Any, leaf: Any) -> str:
        """The spacing between two tokens on one line."""
        value = leaf.value
        if isinstance(prev, t.Operator) and prev.value in ("(", "[", "."):
            return ""
        if isinstance(leaf, t.Operator):
            if value in (",", ":", ")", "]", "."):
                return ""
            if value == "}":
                return "" if prev.value == "{" and isinstance(prev, t.Operator) else " "
            if value == "(":
                if isinstance(prev, t.Name) or (
                    isinstance(prev, t.Keyword) and prev.value in _CALL_LIKE_KEYWORDS
                ):
                    return ""
                return " "
            if value == "[":
                return "" if isinstance(prev, t.Name) or prev.value in ")]" else " "
        return " "
