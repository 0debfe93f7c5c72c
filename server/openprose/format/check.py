"""The formatter's safety check: the printed text must hold the input's program.

The check parses the printed text and compares it with the input's tree: node types and
token texts in order (layout aside), and every comment.  Parsing the whole output again
cost as much as the first parse, so only what changed is parsed again:

1. the output is cut where the printer started each top-level statement; a statement whose
   printed text equals its source text needs no parse;
2. a changed statement whose neighbours are unchanged is narrowed to the lines that differ
   and parsed again from the innermost block holding them, the way
   ``syntax/document.py`` reparses an edit (from the statement before, until the parser
   starts a statement where an unchanged one starts, or the block ends where it ended);
   the same conditions escalate to the enclosing block, then to the top level;
3. at the top level, each run of changed statements is parsed again from the statement
   before it until the parser starts a statement at an unchanged one.

Every part parsed again is compared with the statements it replaces.  Whenever a step
cannot show its result equals a full parse, or finds any difference, the whole output is
parsed and compared, so a refusal always comes from the full comparison.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate, chain, zip_longest
from typing import Any

from openprose.format.diff import line_diff, split_lines
from openprose.syntax import parse
from openprose.syntax import tree as t
from openprose.syntax.parser import BlockKind, Parser, gc_paused
from openprose.syntax.reparse import (
    anchored_by_enclosing,
    blocks_in_statement,
    enclosing_blocks,
    first_line,
    header_may_read_first_line,
    header_nested,
    item_at_line,
    item_starting_at,
    last_line,
    line_indent,
    open_token_at_end,
    release,
)
from openprose.syntax.tokenizer import ScanLimitReached

_LINE_BREAK = re.compile(r"\r\n|\n|\r")
_COMMENT = re.compile(r"#[^\r\n]*")


@dataclass(frozen=True, slots=True)
class Checked:
    """What a check parsed again: ``full`` when it parsed the whole output, else the
    characters of output it read in ``regions`` separate parses."""

    problem: str | None
    full: bool
    characters: int
    regions: int


def verify(
    module: t.Module, text: str, out: str, out_starts: list[int], keep_comments: bool
) -> str | None:
    """None if ``out`` parses to ``module``'s program (its comments too, if kept), else
    what differs.  ``out_starts``: where the printer started each top-level statement and
    the end marker's text in ``out``."""
    return verify_counted(module, text, out, out_starts, keep_comments).problem


def verify_counted(
    module: t.Module, text: str, out: str, out_starts: list[int], keep_comments: bool
) -> Checked:
    """``verify``, saying what it parsed again."""
    check = _Check(module, text, out, out_starts, keep_comments)
    if check.run():
        return Checked(None, False, check.read, check.regions)
    return Checked(full_check(module, out, keep_comments), True, len(out), 1)


def full_check(module: t.Module, out: str, keep_comments: bool) -> str | None:
    reparsed = parse(out)
    try:
        if _alike(module.children, reparsed.children, keep_comments):
            return None
        problem = compare(module, reparsed)
        if problem is None and keep_comments and comments(module) != comments(reparsed):
            problem = "a comment would have been lost or changed"
        return problem
    finally:
        release(reparsed.children)


# ---------------------------------------------------------------- comparing trees


# Where a node's children end in a skeleton: without it, a statement moved out of the end
# of its block gave the same sequence of parts (the node types in order are the same).
_NODE_END = ("/", "")


def skeleton(node: Any) -> Iterator[tuple[str, str]]:
    """Node types and token texts in order, each node's end marked, line breaks and the
    end marker left out (layout is what formatting changes).

    A generator, so that comparing two large trees keeps no list of parts alive: millions
    of live tuples made the garbage collector walk both trees again and again."""
    stack: list[Any] = [node]
    while stack:
        current = stack.pop()
        if current is _NODE_END:
            yield _NODE_END
            continue
        children = getattr(current, "children", None)
        if children is None:
            if not isinstance(current, t.Newline | t.EndMarker):
                yield type(current).__name__, current.value
        else:
            yield type(current).__name__, ""
            stack.append(_NODE_END)
            stack.extend(reversed(children))


def _alike(a: list[Any], b: list[Any], keep_comments: bool) -> bool:
    """Whether two lists of subtrees have the same shape, tokens and comments, leaf by leaf:
    enough for the comparison below, and several times faster.  False says nothing (line
    breaks may differ, a comment may sit on another leaf): compare properly then."""
    if len(a) != len(b):
        return False
    stack = list(zip(a, b, strict=True))
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        xs = getattr(x, "children", None)
        if xs is not None:
            ys = y.children
            if len(xs) != len(ys):
                return False
            stack.extend(zip(xs, ys, strict=True))
            continue
        if x.value != y.value and not isinstance(x, t.Newline):
            return False
        if (
            keep_comments
            and ("#" in x.prefix or "#" in y.prefix)
            and _prefix_comments(x.prefix) != _prefix_comments(y.prefix)
        ):
            return False
    return True


def compare(before: Any, after: Any) -> str | None:
    return _first_difference(skeleton(before), skeleton(after))


def _first_difference(a: Iterator[tuple[str, str]], b: Iterator[tuple[str, str]]) -> str | None:
    for count, (x, y) in enumerate(zip_longest(a, b)):
        if x is None or y is None:  # one ended first
            length_a = count + (x is not None) + sum(1 for _ in a)
            length_b = count + (y is not None) + sum(1 for _ in b)
            return f"{length_a} parts became {length_b}"
        if x != y:
            return f"first difference at token {count}: {x} became {y}"
    return None


def comments(node: Any) -> list[str]:
    """The text of every comment, in order: each leaf's prefix holds the comments before
    it (so a ``#`` inside a string is never taken for one)."""
    return _comments_of([node])


def _comments_of(nodes: Iterable[Any]) -> list[str]:
    found: list[str] = []
    for node in nodes:
        for leaf in t.iter_leaves(node):
            prefix = leaf.prefix
            if "#" in prefix:
                found.extend(_prefix_comments(prefix))
    return found


def _prefix_comments(prefix: str) -> list[str]:
    return [c.strip() for c in _COMMENT.findall(prefix)]


# ---------------------------------------------------------------- the incremental check


def input_starts(items: list[Any], marker: Any, text: str, lines: list[int]) -> list[int] | None:
    """Where each top-level statement's text (its prefix included) and the end marker's
    text start in the input ``text`` (then its length), checked against the text; ``lines``:
    where its lines start."""
    bom = 1 if text.startswith("\ufeff") else 0
    starts = [0]
    for item in items[1:]:
        leaf = item.get_first_leaf()
        start = lines[leaf.line - 1] + leaf.column + (bom if leaf.line == 1 else 0)
        start -= len(leaf.prefix)
        if start <= starts[-1] or not text.startswith(leaf.prefix, start):
            return None
        if not text.startswith(leaf.value, start + len(leaf.prefix)):
            return None
        starts.append(start)
    marker_start = len(text) - len(marker.prefix)
    if marker_start < starts[-1] or not text.endswith(marker.prefix):
        return None
    return [*starts, marker_start, len(text)]


def line_starts(text: str) -> list[int]:
    if "\r" in text:
        return [0, *(m.end() for m in _LINE_BREAK.finditer(text))]
    # Only LF: the lines' lengths summed up, in C (a third of the time of the matches).
    lines = text.split("\n")
    lines.pop()
    return list(accumulate(map((1).__add__, map(len, lines)), initial=0))


class _Check:
    # Past these shares of changed text, one full parse costs less than the bookkeeping
    # (tests raise them past 1 to run the incremental path on every input).
    full_share = 0.5  # of the output, in changed top-level statements
    diff_share = 0.5  # of a changed statement's lines, differing at the same place

    def __init__(
        self, module: t.Module, text: str, out: str, out_starts: list[int], keep_comments: bool
    ) -> None:
        self.items: list[Any] = module.children[:-1]
        self.marker: Any = module.children[-1]
        self.text = text
        self.out = out
        self.out_starts = [*out_starts, len(out)]
        self.keep_comments = keep_comments
        self.in_lines: list[int] = []
        self.out_lines: list[int] = []
        self.read = 0  # characters of output parsed again
        self.regions = 0
        self.changed: list[bool] = []
        # Output line -> index of the unchanged top-level statement starting there.
        self.unchanged_at_line: dict[int, int] | None = None

    def run(self) -> bool:
        """Whether the output is shown equal to the input without a full parse."""
        n = len(self.items)
        if n == 0 or len(self.out_starts) != n + 2:
            return False
        old, new = split_lines(self.text), split_lines(self.out)
        if len(old) == len(new) and sum(map(str.__ne__, old, new)) > self.diff_share * len(old):
            return False  # most lines changed: one full parse is the cheapest check
        self.in_lines = line_starts(self.text)
        in_starts = self._input_starts()
        if in_starts is None:
            return False
        self.in_starts = in_starts
        text, out, out_starts = self.text, self.out, self.out_starts
        changed = [
            text[in_starts[k] : in_starts[k + 1]] != out[out_starts[k] : out_starts[k + 1]]
            for k in range(n + 1)
        ]
        self.changed = changed
        self.out_lines = line_starts(out)
        pending: list[int] = []
        try:
            for k in range(n + 1):
                if not changed[k]:
                    continue
                alone = k < n and (k == 0 or not changed[k - 1]) and not changed[k + 1]
                verdict = self._inner(k) if alone else None
                if verdict is False:
                    return False
                if verdict is None:
                    pending.append(k)
            starts = self.out_starts
            if sum(starts[k + 1] - starts[k] for k in pending) > self.full_share * len(out):
                return False  # most of it changed: one full parse is the cheapest check
            return self._top_level(pending)
        except RecursionError:  # pragma: no cover - nesting is capped well below the limit
            return False

    def _input_starts(self) -> list[int] | None:
        return input_starts(self.items, self.marker, self.text, self.in_lines)

    # ------------------------------------------------------------ one statement, inside

    def _inner(self, k: int) -> bool | None:
        """Check changed statement ``k`` by parsing again, for each run of changed lines,
        from the innermost block holding it: True if equal, False if different, None if
        that cannot be shown inside the statement."""
        item = self.items[k]
        a_in, a_out = self.in_starts[k], self.out_starts[k]
        old = split_lines(self.text[a_in : self.in_starts[k + 1]])
        new = split_lines(self.out[a_out : self.out_starts[k + 1]])
        if len(old) == len(new) and sum(map(str.__ne__, old, new)) > self.diff_share * len(old):
            return None  # most lines changed: parsing it whole is cheaper than a diff
        top_in = bisect_right(self.in_lines, a_in)  # 1-based lines
        top_out = bisect_right(self.out_lines, a_out)
        hunks = [
            _Hunk(top_in + i1, top_in + i2, top_out + j1, top_out + j2)
            for i1, i2, j1, j2 in line_diff(old, new)
        ]
        if not hunks or hunks[0].in_start == top_in:
            return None  # the first line changed: only the top level can tell
        lines = _Lines(hunks, top_out - top_in, top_in + len(old) - 1)
        covered = top_in
        h = 0
        while h < len(hunks):
            first, last = lines.span(h)
            for block in reversed(blocks_in_statement(item, first, last)):
                found = self._block(block, lines, h, covered)
                if found is not None:
                    break
            else:
                return None
            if not isinstance(found, tuple):
                return False
            h, covered = found
        return True

    def _block(
        self, block: Any, lines: _Lines, h: int, covered: int
    ) -> tuple[int, int] | bool | None:
        """Parse the statements of ``block`` around hunk ``h`` again, from the output, as
        ``Document._reparse_block`` does for an edit; the parser may read on through later
        hunks of the statement before it stops.  The next hunk to check and the input line
        checked up to; False if what it read differs; None if that cannot be shown here."""
        items = block.children[1:]
        if not items:
            return None
        first = lines.span(h)[0]
        i = max(0, item_at_line(items, first) - 1)
        if i == 0 and header_may_read_first_line(block):
            return None
        region_line = first_line(items[i])
        if region_line > first or region_line < covered:
            return None
        out_line = region_line + lines.shift_before(h)
        parent_indent = line_indent(block.parent.get_first_leaf())
        block_indent = line_indent(items[0].get_first_leaf())
        stops: list[tuple[int, int]] = []

        def stop_at(new_line: int) -> bool:
            g = lines.gap_of(new_line)
            if g is None or g < h:
                return False  # inside a changed run, or before the edit
            j = max(i, item_at_line(items, lines.span(g)[1]))
            index = item_starting_at(items, new_line - lines.shift_after(g), j + 1)
            if index is None or isinstance(items[index], t.ErrorBlock):
                return False  # an error block's message depends on the line before it
            stops.append((index, g))
            return True

        with gc_paused():
            parser = Parser(self.out, self.out_lines[out_line - 1], out_line)
            parser.nesting = enclosing_blocks(block)
            if i == 0 and (parser.line.eof or parser.line.indent != block_indent):
                return None  # the block's own indentation changed
            before = items[i].get_first_leaf().get_previous_leaf()
            if isinstance(before, t.Newline):
                before = before.get_previous_leaf()
            parser.prev_last = before
            parser.stop_at = stop_at
            try:
                new_items = parser.parse_items(BlockKind.STATEMENTS, parent_indent, block_indent)
            except ScanLimitReached:  # pragma: no cover - no limit is set
                return None
            finally:
                self._count(parser, out_line)
        try:
            if parser.stopped:
                resume, g = stops[-1]
                checked = first_line(items[resume])
            else:
                if parser.line.eof:
                    return None
                end_line = parser.line.prefix_line
                g_end = lines.gap_of(end_line)
                if g_end is None or g_end < h:
                    return None
                g = g_end
                checked = last_line(items[-1]) + 1
                if end_line - lines.shift_after(g) != checked:
                    return None  # the block would not end where it ended
                resume = len(items)
            if not new_items and i == 0 and resume == len(items):
                return None
            replaced = items[i:resume]
            if anchored_by_enclosing(block, replaced):
                return None
            if (
                resume == len(items)
                and header_nested(block)
                and open_token_at_end(items, new_items)
            ):
                return None
            if not self._same(replaced, new_items):
                return False
            return g + 1, checked
        finally:
            release(new_items)

    # ------------------------------------------------------------ the top level

    def _top_level(self, pending: list[int]) -> bool:
        """Parse each run of ``pending`` top-level statements again, from the statement
        before it until the parser starts a statement where an unchanged one starts."""
        n = len(self.items)
        covered = 0  # statements before this index are checked
        for k in pending:
            if k < covered:
                continue
            i = max(k - 1, covered)
            if i >= n:
                i = n - 1  # only the end changed: from the last statement
            ok = self._run_from(i, k)
            if ok is None:
                return False
            covered = ok
        return True

    def _run_from(self, i: int, k: int) -> int | None:
        """Parse from top-level statement ``i`` on; the index where it stopped (n + 1 at
        the end of the file), or None if what it read differs."""
        items, n = self.items, len(self.items)
        if self.unchanged_at_line is None:
            self.unchanged_at_line = {
                bisect_right(self.out_lines, self.out_starts[m]): m
                for m in range(n)
                if not self.changed[m]
            }
        unchanged_at_line = self.unchanged_at_line
        stop_index: list[int] = []

        def stop_at(new_line: int) -> bool:
            index = unchanged_at_line.get(new_line)
            if index is None or index <= k or isinstance(items[index], t.ErrorBlock):
                return False
            stop_index.append(index)
            return True

        offset = self.out_starts[i]
        with gc_paused():
            parser = Parser(self.out, offset, bisect_right(self.out_lines, offset))
            if i > 0:
                before = items[i].get_first_leaf().get_previous_leaf()
                if isinstance(before, t.Newline):
                    before = before.get_previous_leaf()
                parser.prev_last = before
            parser.stop_at = stop_at
            try:
                new_items = parser.parse_items(BlockKind.STATEMENTS, None, "")
            finally:
                self._count(parser, bisect_right(self.out_lines, offset))
        try:
            if parser.stopped:
                resume = stop_index[-1]
                return resume if self._same(items[i:resume], new_items) else None
            marker = parser.line.endmarker
            if marker is None:  # pragma: no cover - the top level only ends at the end
                return None
            new_items.append(marker)
            return n + 1 if self._same([*items[i:], self.marker], new_items) else None
        finally:
            release(new_items)

    def _count(self, parser: Parser, line: int) -> None:
        self.read += parser.tokenizer.pos - self.out_lines[line - 1]
        self.regions += 1

    def _same(self, old: list[Any], new: list[Any]) -> bool:
        if _alike(old, new, self.keep_comments):
            return True
        a = chain.from_iterable(skeleton(node) for node in old)
        b = chain.from_iterable(skeleton(node) for node in new)
        if _first_difference(a, b) is not None:
            return False
        return not self.keep_comments or _comments_of(old) == _comments_of(new)


class _Hunk:
    """Input lines in_start..in_end (1-based, end excluded) printed as output lines
    out_start..out_end."""

    __slots__ = ("in_end", "in_start", "out_end", "out_start")

    def __init__(self, in_start: int, in_end: int, out_start: int, out_end: int) -> None:
        self.in_start, self.in_end = in_start, in_end
        self.out_start, self.out_end = out_start, out_end


class _Lines:
    """Lines of one statement: its changed runs (hunks) and the unchanged lines between
    them, which sit at an input line plus a shift in the output."""

    def __init__(self, hunks: list[_Hunk], shift: int, last_line: int) -> None:
        self.hunks = hunks
        self.shift = shift  # before the first hunk
        self.last_line = last_line  # the statement's last input line
        self.out_starts = [h.out_start for h in hunks]

    def span(self, h: int) -> tuple[int, int]:
        """The input lines an edit replacing hunk ``h`` touches (for lines only inserted,
        the line after them, as an editor's insertion would)."""
        hunk = self.hunks[h]
        if hunk.in_end > hunk.in_start:
            return hunk.in_start, hunk.in_end - 1
        line = min(hunk.in_start, self.last_line)
        return line, line

    def shift_before(self, h: int) -> int:
        return self.shift_after(h - 1)

    def shift_after(self, g: int) -> int:
        """Output line minus input line in the unchanged lines after hunk ``g``."""
        if g < 0:
            return self.shift
        hunk = self.hunks[g]
        return hunk.out_end - hunk.in_end

    def gap_of(self, out_line: int) -> int | None:
        """The hunk after which unchanged output line ``out_line`` comes (-1: before the
        first), or None if the line is a changed one."""
        g = bisect_right(self.out_starts, out_line) - 1
        if g >= 0 and out_line < self.hunks[g].out_end:
            return None
        return g
