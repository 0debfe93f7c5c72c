"""The lines of a text, found when asked for: a report shows the few lines that have a
diagnostic, and splitting a big program into all of its lines took as long as the rest of
the report and a tenth of the check's memory."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate, repeat
from typing import overload

from parso.utils import split_lines

# Characters per stretch whose line breaks are counted ahead: a line is then found by
# skipping the few breaks of its stretch before it.
_STRETCH = 256


def text_lines(text: str) -> Sequence[str]:
    """``text``'s lines without their line breaks, as the parser counts lines (parso's
    ``split_lines``)."""
    if "\r" in text:  # "\r\n" and a lone "\r" end lines too: the plain split
        return split_lines(text)
    return _Lines(text)


class _Lines(Sequence[str]):
    """The lines of a text without "\\r", each found when asked for."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._count = text.count("\n") + 1
        # _breaks[k]: the line breaks before the end of stretch k (made on the first question).
        self._breaks: list[int] | None = None

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[row] for row in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("line index out of range")
        text = self._text
        start = self._start(index)
        end = text.find("\n", start)
        return text[start:] if end < 0 else text[start:end]

    def _start(self, row: int) -> int:
        """Where line ``row`` (from 0) starts: after the ``row``-th line break."""
        if row == 0:
            return 0
        breaks = self._breaks
        if breaks is None:
            text = self._text
            starts = range(0, len(text), _STRETCH)
            ends = range(_STRETCH, len(text) + _STRETCH, _STRETCH)
            breaks = self._breaks = list(accumulate(map(text.count, repeat("\n"), starts, ends)))
        stretch = bisect_left(breaks, row)  # the first that holds the row-th break
        seen = breaks[stretch - 1] if stretch else 0
        at = stretch * _STRETCH - 1
        for _ in range(row - seen):
            at = self._text.find("\n", at + 1)
        return at + 1
