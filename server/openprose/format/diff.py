"""Line diffs in time linear in the size of the texts, for formatting edits.

A general minimal diff costs the product of the sizes on texts that differ a lot (difflib
took minutes on a 5 MB document), and formatting can change every line.  So:

1. the lines both texts start and end with are equal;
2. in the middle, lines that occur exactly once in each text are paired up, keeping the
   longest run of pairs in the same order (as patience diff does): they split the middle
   into gaps;
3. in each gap, past its own equal ends, Myers' search finds the fewest changed lines, but
   only within a budget of work proportional to the gap's size (and a budget for the whole
   diff): a gap whose search would cost more becomes one replacement.

The result is exact whatever the budgets cut short, and minimal for the usual changes
(scattered lines, blank lines added or removed).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence

# (old start, old end, new start, new end): old[start:end] is replaced by new[start:end].
Block = tuple[int, int, int, int]

# Work allowed per line of a gap, and per gap, in steps of Myers' search (a step is one
# diagonal tried or one equal line followed).  With these, a search finds up to about 16
# changed lines in a gap of any size.
_WORK_PER_LINE = 16
_WORK_PER_GAP = 64

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split only where the parser counts a line break (so
    joining them gives ``text`` back)."""
    lines = _LINE.findall(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def line_diff(old: Sequence[str], new: Sequence[str]) -> list[Block]:
    """The blocks of lines to replace to turn ``old`` into ``new``, in order, each
    separated from the next by at least one equal line."""
    budget = [_WORK_PER_LINE * (len(old) + len(new)) + 1000]
    return list(_blocks(_matches(old, new, budget), len(old), len(new)))


def _blocks(matches: Iterator[tuple[int, int]], n: int, m: int) -> Iterator[Block]:
    """The unmatched runs between pairs of equal lines (pairs in increasing order)."""
    i = j = 0
    for x, y in matches:
        if x > i or y > j:
            yield i, x, j, y
        i, j = x + 1, y + 1
    if i < n or j < m:
        yield i, n, j, m


def _matches(
    old: Sequence[str], new: Sequence[str], budget: list[int]
) -> Iterator[tuple[int, int]]:
    """Pairs of equal lines (old index, new index), increasing in both."""
    previous_i = previous_j = 0
    for i, j in [*_anchors(old, new), (len(old), len(new))]:
        yield from _gap(old, previous_i, i, new, previous_j, j, budget)
        if i < len(old):
            yield i, j
        previous_i, previous_j = i + 1, j + 1


def _anchors(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs of lines unique in both texts, the longest chain of them in the same order in
    both (patience sorting: n log n)."""
    once_old: dict[str, int] = {}
    seen: set[str] = set()
    for i, line in enumerate(old):
        if line in seen:
            once_old.pop(line, None)
        else:
            seen.add(line)
            once_old[line] = i
    once_new: dict[str, int] = {}
    seen.clear()
    for j, line in enumerate(new):
        if line in seen:
            once_new.pop(line, None)
        elif line in once_old:
            seen.add(line)
            once_new[line] = j
        else:
            seen.add(line)
    pairs = sorted((once_old[line], j) for line, j in once_new.items())
    # Longest increasing run of new indices: tails[k] ends the best run of length k + 1.
    tails: list[int] = []
    tail_pair: list[int] = []
    before: list[int] = []
    for index, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tails, j)
        before.append(tail_pair[k - 1] if k else -1)
        if k == len(tails):
            tails.append(j)
            tail_pair.append(index)
        else:
            tails[k] = j
            tail_pair[k] = index
    chain: list[tuple[int, int]] = []
    index = tail_pair[-1] if tail_pair else -1
    while index >= 0:
        chain.append(pairs[index])
        index = before[index]
    chain.reverse()
    return chain


def _gap(
    old: Sequence[str], i0: int, i1: int, new: Sequence[str], j0: int, j1: int, budget: list[int]
) -> Iterator[tuple[int, int]]:
    """Pairs of equal lines within old[i0:i1] and new[j0:j1]."""
    while i0 < i1 and j0 < j1 and old[i0] == new[j0]:
        yield i0, j0
        i0, j0 = i0 + 1, j0 + 1
    tail: list[tuple[int, int]] = []
    while i1 > i0 and j1 > j0 and old[i1 - 1] == new[j1 - 1]:
        i1, j1 = i1 - 1, j1 - 1
        tail.append((i1, j1))
    if i0 < i1 and j0 < j1:
        a, b = old[i0:i1], new[j0:j1]
        if not set(a).isdisjoint(b):
            limit = min(budget[0], _WORK_PER_LINE * (len(a) + len(b)) + _WORK_PER_GAP)
            found = _myers(a, b, limit)
            if found is not None:
                pairs, work = found
                budget[0] -= work
                yield from ((i0 + x, j0 + y) for x, y in pairs)
            else:
                budget[0] -= limit
    yield from reversed(tail)


def _myers(
    a: Sequence[str], b: Sequence[str], limit: int
) -> tuple[list[tuple[int, int]], int] | None:
    """The equal lines of a shortest edit script from ``a`` to ``b`` and the work spent,
    or None when finding it would take more than ``limit`` steps."""
    n, m = len(a), len(b)
    v = {1: 0}
    trace: list[dict[int, int]] = []
    work = 0
    for d in range(n + m + 1):
        trace.append(dict(v))
        work += d + 1  # the copy
        for k in range(-d, d + 1, 2):
            x = v[k + 1] if _from_above(v, k, d) else v[k - 1] + 1
            y = x - k
            start = x
            while x < n and y < m and a[x] == b[y]:
                x, y = x + 1, y + 1
            work += 1 + x - start
            v[k] = x
            if x >= n and y >= m:
                return _backtrack(trace, n, m), work
        if work > limit:
            return None
    raise AssertionError("unreachable: d = n + m always reaches the end")


def _from_above(v: dict[int, int], k: int, d: int) -> bool:
    """Whether the furthest path on diagonal ``k`` after ``d`` changes comes from diagonal
    ``k + 1`` (a line inserted) rather than ``k - 1`` (a line deleted)."""
    return k == -d or (k != d and v[k - 1] < v[k + 1])


def _backtrack(trace: list[dict[int, int]], n: int, m: int) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    x, y = n, m
    for d in range(len(trace) - 1, -1, -1):
        v = trace[d]
        k = x - y
        previous_k = k + 1 if _from_above(v, k, d) else k - 1
        previous_x = v[previous_k]
        previous_y = previous_x - previous_k
        while x > previous_x and y > previous_y:
            x, y = x - 1, y - 1
            pairs.append((x, y))
        x, y = previous_x, previous_y
    pairs.reverse()
    return pairs
