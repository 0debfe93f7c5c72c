"""The offsets where the lines of an edited text start, updated in time proportional to
the distance between successive edits rather than to the length of the text.

An edit moves the start of every later line by the same number of characters.  Instead
of rewriting them all, ``LineStarts`` keeps one pending shift: the starts from index
``k`` on are stored ``d`` characters short.  The next edit moves that boundary to its own
position, adjusting only the starts in between, so typing in one place costs the few
lines around the cursor.
"""

from __future__ import annotations

import re
from bisect import bisect_right

_LINE_BREAK = re.compile(r"\r\n|\n|\r")


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts (line breaks as parso counts them)."""
    return [0, *(m.end() for m in _LINE_BREAK.finditer(text))]


class LineStarts:
    """Line start offsets of a text, as a read-only sequence plus ``replace``."""

    __slots__ = ("_d", "_k", "_raw")

    def __init__(self, text: str) -> None:
        self._raw = line_starts(text)
        self._k = len(self._raw)  # raw[x] + d is the start of line x for every x >= k
        self._d = 0

    def __len__(self) -> int:
        return len(self._raw)

    def __getitem__(self, index: int) -> int:
        if index < 0:
            index += len(self._raw)
        return self._raw[index] + (self._d if index >= self._k else 0)

    def bisect_right(self, offset: int) -> int:
        """How many lines start at or before ``offset``."""
        raw, k = self._raw, self._k
        found = bisect_right(raw, offset, 0, k)
        if found < k:
            return found
        return bisect_right(raw, offset - self._d, k)

    def replace(self, a: int, b: int, new_length: int, text: str) -> None:
        """Account for ``text`` (the new text) having replaced ``a..b`` by ``new_length``
        characters: the lines around the edit are found again in ``text``."""
        raw = self._raw
        delta = new_length - (b - a)
        first = max(0, self.bisect_right(a) - 2)
        end = self.bisect_right(b + 1)
        region_start = self[first]
        if end < len(raw):
            region_end = self[end] + delta
            middle = [
                m.end()
                for m in _LINE_BREAK.finditer(text, region_start, region_end)
                if m.end() < region_end
            ]
        else:
            middle = [m.end() for m in _LINE_BREAK.finditer(text, region_start)]
        k, d = self._k, self._d
        if d:
            # Move the pending shift's boundary to ``end``: the starts kept before the
            # edit take it in, the later ones not yet under it are stored short by it.
            for x in range(k, first):
                raw[x] += d
            for x in range(end, min(k, len(raw))):
                raw[x] -= d
        raw[first:end] = [region_start, *middle]
        self._k = first + 1 + len(middle)
        self._d = d + delta if self._k < len(raw) else 0
