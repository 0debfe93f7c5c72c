"""An editable document whose tree is updated incrementally.

``Document.apply_edit`` takes an edit the way an editor sends it (a range and the
new text) and reparses only the statements the edit can affect:

1. find the innermost statement block (the module, or the ``Suite`` of a block,
   loop, branch...) whose statements contain the edited lines;
2. reparse from the statement before the edit, with that block's indentation,
   until the parser starts a new statement exactly where an old one started after
   the edit (the rest of the block is then unchanged text in an unchanged context),
   or until the block ends where it used to;
3. splice the new statements in, and their line anchors into the module's list
   (``Module.line_anchors``); the lines after move by updating one anchor per line.

Whenever a step cannot prove the result equals a full parse (the block's own
indentation changed, the block grew past its old end, an edit inside a ``choice``
changed its options, the header read the block's first line or reports an issue at a
replaced leaf...), it escalates to the enclosing block, and finally to a full parse.
Property tests check the result against ``parse(text)`` after random edits (and
bench/incremental_fuzz.py after 100,000 of them), syntax issues and positions included.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from itertools import islice
from operator import attrgetter
from typing import Any

from openprose.syntax import tree as t
from openprose.syntax.line_starts import LineStarts
from openprose.syntax.parser import BlockKind, Parser, gc_paused, parse
from openprose.syntax.reparse import (
    anchored_by_enclosing,
    blocks_containing,
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

# Reparsing a block inside the module can fail (the block grew past its end...) and
# escalate, reading the same text again one level up.  The blocks inside the module
# share an allowance of this fraction of the text; past it, only the module level is
# tried, which reads at most the text a full parse would.  So an edit costs at most
# (1 + 1/4) full parses, instead of one reparse per level of nesting.  Below the floor
# (a fraction of a millisecond of parsing) the bound gains nothing.
INNER_READ_SHARE = 4
INNER_READ_FLOOR = 4096


@dataclass(frozen=True, slots=True)
class ReparseStats:
    """What the last edit cost: ``mode`` is "incremental" or "full"."""

    mode: str
    reparsed_statements: int = 0
    reused_statements: int = 0
    depth: int = 0
    read: int = 0  # characters the reparse read, over every level it tried


class Document:
    def __init__(self, text: str = "") -> None:
        self.text = text
        self.module = parse(text)
        self._starts = LineStarts(text)
        self.stats = ReparseStats("full")
        # The top-level items the last edit modified in place (an edit inside a block);
        # those it replaced are new objects. None: the last change parsed everything.
        self.touched: list[Any] | None = None

    # ------------------------------------------------------------ positions

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def offset_at(self, line: int, character: int) -> int:
        """The offset of a 0-based (line, character) position, clamped like LSP clamps."""
        starts = self._starts
        if line < 0:
            return 0
        if line >= len(starts):
            return len(self.text)
        start = starts[line]
        end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        # Exclude the line break from the line's own characters.
        text = self.text
        while end > start and text[end - 1] in "\r\n":
            end -= 1
        return min(start + max(character, 0), end)

    def line_text(self, line: int) -> str:
        """The text of a 0-based line without its line break ("" past the end)."""
        starts = self._starts
        if not 0 <= line < len(starts):
            return ""
        end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        return self.text[starts[line] : end].rstrip("\r\n")

    def position_at(self, offset: int) -> tuple[int, int]:
        """The 0-based (line, character) position of an offset."""
        offset = max(0, min(offset, len(self.text)))
        line = self._starts.bisect_right(offset) - 1
        return line, offset - self._starts[line]

    # ------------------------------------------------------------ edits

    def replace(self, text: str) -> None:
        """Replace the whole text (a full reparse)."""
        self.text = text
        old = self.module
        self.module = parse(text)
        release([old])
        self._starts = LineStarts(text)
        self.stats = ReparseStats("full")
        self.touched = None

    def apply_edit(self, start: tuple[int, int], end: tuple[int, int], new_text: str) -> None:
        """Replace the 0-based ``start``..``end`` range by ``new_text`` and update the tree."""
        a = self.offset_at(*start)
        b = self.offset_at(*end)
        if b < a:
            a, b = b, a
        old_text = self.text
        text = old_text[:a] + new_text + old_text[b:]
        starts = self._starts
        old_count = len(starts)
        # Old lines (1-based) the edit touches; a line break next to either end of the
        # edit can merge with inserted text (``\r`` + ``\n``), so widen by a line.
        first = starts.bisect_right(a)
        last = starts.bisect_right(min(b + 1, len(old_text)))
        if a > 0 and old_text[a - 1] == "\r":
            first = max(1, first - 1)
        starts.replace(a, b, len(new_text), text)
        self.text = text
        line_delta = len(starts) - old_count
        try:
            with gc_paused():
                stats = self._reparse(text, first, last, line_delta)
        except RecursionError:  # pragma: no cover - pathological nesting
            stats = None
        if stats is None:
            old = self.module
            self.module = parse(text)
            release([old])
            stats = ReparseStats("full")
            self.touched = None
        self.stats = stats

    # ------------------------------------------------------------ reparsing

    def _reparse(self, text: str, first: int, last: int, delta: int) -> ReparseStats | None:
        allowance = max(len(text) // INNER_READ_SHARE, INNER_READ_FLOOR)
        read = 0
        for depth, block in enumerate(reversed(blocks_containing(self.module, first, last))):
            if block is self.module:
                limit = None
            elif read >= allowance:
                continue  # an outer block's region holds this one's: skip to the module
            else:
                limit = allowance - read
            attempt = _Attempt()
            stats = self._reparse_block(block, text, first, last, delta, limit, attempt)
            read += attempt.read
            if attempt.over_limit:
                read = max(read, allowance)
            if stats is not None:
                self.touched = [] if block is self.module else [t.top_level(block)]
                return ReparseStats(stats[0], stats[1], stats[2], depth, read)
        return None

    def _reparse_block(
        self,
        block: Any,
        text: str,
        first: int,
        last: int,
        delta: int,
        limit: int | None,
        attempt: _Attempt,
    ) -> tuple[str, int, int] | None:
        """Reparse the statements of ``block`` around the edit, reading at most ``limit``
        characters (None: no limit); None if that cannot be proved to equal a full parse."""
        is_module = isinstance(block, t.Module)
        items = block.children[:-1] if is_module else block.children[1:]
        if not items:
            return None
        # i: the statement before the one holding the edit's first line; j: the
        # statement holding its last line.
        i = max(0, item_at_line(items, first) - 1)
        j = max(i, item_at_line(items, last))
        if i == 0 and not is_module and header_may_read_first_line(block):
            return None
        region_line = first_line(items[i])
        region_offset = self._starts[region_line - 1]
        if limit is not None:
            # The reparse reads at least to the end of the statement holding the edit.
            end_line = last_line(items[j]) + delta
            end = self._starts[end_line] if end_line < len(self._starts) else len(text)
            if end - region_offset > limit:
                attempt.over_limit = True
                return None

        if is_module:
            parent_indent: str | None = None
            block_indent = ""
        else:
            # The indentation the parser compared the block's lines with: the header's,
            # captured where the construct owning the block starts.
            parent_indent = line_indent(block.parent.get_first_leaf())
            block_indent = line_indent(items[0].get_first_leaf())

        parser = Parser(
            text, region_offset, region_line, None if limit is None else region_offset + limit
        )
        parser.nesting = enclosing_blocks(block)
        if i == 0 and not is_module and (parser.line.eof or parser.line.indent != block_indent):
            return None  # the block's own indentation may have changed
        before = items[i].get_first_leaf().get_previous_leaf()
        if isinstance(before, t.Newline):
            before = before.get_previous_leaf()
        parser.prev_last = before

        stop_index: list[int] = []

        def stop_at(new_line: int) -> bool:
            old_line = new_line - delta
            k = item_starting_at(items, old_line, j + 1)
            if k is None or isinstance(items[k], t.ErrorBlock):
                return False  # an error block's message depends on the line before it
            stop_index.append(k)
            return True

        parser.stop_at = stop_at
        try:
            new_items = parser.parse_items(BlockKind.STATEMENTS, parent_indent, block_indent)
        except ScanLimitReached:
            attempt.over_limit = True
            return None
        finally:
            attempt.read = parser.tokenizer.pos - region_offset

        at_eof = False
        if parser.stopped:
            resume = stop_index[-1]
        else:
            # The block ended: it must end where it used to, shifted.
            old_end = last_line(items[-1]) + 1
            if parser.line.eof:
                old_marker = self.module.children[-1]
                if not is_module and items[-1].get_last_leaf().get_next_leaf() is not old_marker:
                    return None  # the old block did not run to the end of the file
                at_eof = True
            elif is_module or parser.line.prefix_line != old_end + delta:
                return None
            resume = len(items)
        if not new_items and i == 0 and resume == len(items):
            return None  # the block would be empty: its header reports that

        offset = 0 if is_module else 1
        old_slice = block.children[offset + i : offset + resume]
        if not is_module and anchored_by_enclosing(block, old_slice):
            return None
        if (
            not is_module
            and resume == len(items)
            and header_nested(block)
            and open_token_at_end(items, new_items)
        ):
            return None
        to_end = at_eof or (is_module and resume == len(items))
        anchors = self.module.line_anchors
        span = _anchor_span(anchors, old_slice, to_end)
        new_anchors = _used_anchors(parser, new_items, to_end)
        if span is None or new_anchors is None:  # pragma: no cover - the list is out of step
            return None
        for item in new_items:
            item.parent = block
        lo, hi = span
        anchors[lo:hi] = new_anchors
        if delta and not to_end:
            for anchor in islice(anchors, lo + len(new_anchors), None):
                anchor.line += delta
        if is_module and resume == len(items):
            marker = parser.line.endmarker
            assert marker is not None
            marker.parent = block
            block.children[offset + i :] = [*new_items, marker]
        else:
            block.children[offset + i : offset + resume] = new_items
            if at_eof:
                # The end marker's prefix and position come from the new text.
                marker = parser.line.endmarker
                assert marker is not None
                marker.parent = self.module
                self.module.children[-1] = marker
        release(old_slice)
        return "incremental", len(new_items), len(items) - len(old_slice)


class _Attempt:
    """What one level's reparse read, and whether it stopped at its limit."""

    __slots__ = ("over_limit", "read")

    def __init__(self) -> None:
        self.read = 0
        self.over_limit = False


# ---------------------------------------------------------------- tree helpers


_line_of = attrgetter("line")


def _anchor_index(anchors: list[t.LineAnchor], anchor: t.LineAnchor) -> int | None:
    """Where ``anchor`` is in the document's list (only the end marker shares its line)."""
    k = bisect_left(anchors, anchor.line, key=_line_of)
    while k < len(anchors) and anchors[k].line == anchor.line:
        if anchors[k] is anchor:
            return k
        k += 1
    return None


def _anchor_span(
    anchors: list[t.LineAnchor], old_slice: list[Any], to_end: bool
) -> tuple[int, int] | None:
    """The slice of ``anchors`` that the leaves of ``old_slice`` use (through the end
    marker's when ``to_end``); None if the list is out of step with the tree."""
    lo = _anchor_index(anchors, old_slice[0].get_first_leaf().anchor)
    if lo is None:
        return None
    if to_end:
        return lo, len(anchors)
    last = _anchor_index(anchors, old_slice[-1].get_last_leaf().anchor)
    return None if last is None else (lo, last + 1)


def _used_anchors(parser: Parser, new_items: list[Any], to_end: bool) -> list[t.LineAnchor] | None:
    """The anchors of the leaves the reparse keeps: the tokenizer also read the line it
    stopped at (and may have looked further), whose leaves are dropped."""
    made = parser.tokenizer.anchors
    if to_end:
        marker = parser.line.endmarker
        assert marker is not None
        last = marker.anchor
    elif new_items:
        last = new_items[-1].get_last_leaf().anchor
    else:
        return []
    for k in range(len(made) - 1, -1, -1):
        if made[k] is last:
            return made[: k + 1]
    return None


__all__ = ["Document", "ReparseStats"]
