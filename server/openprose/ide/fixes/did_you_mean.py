"""How close one name is to another: the measure of every "did you mean" fix, and of the
command line's hints on problems that have no fix.

The measure is difflib's (``get_close_matches``), found sooner.  A name's ratio to the word
is at most ``2 * shared / (len(name) + len(word))``, ``shared`` counting its characters that
occur in the word; names are met in decreasing order of that bound, so once the best are
known the others need no exact ratio.  Names asked about many times (a program's variables,
once per undefined one) are prepared once in a ``NameTable``: grouped by length, so that
counting ``shared`` is one translation of a group's joined text, without a Python step per
name.
"""

from __future__ import annotations

import difflib
import heapq
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence

from openprose.diagnostics import Position

__all__ = [
    "CUTOFF",
    "MAX_SUGGESTIONS",
    "NameTable",
    "Part",
    "close_matches",
    "close_names",
    "closest_in",
]


# How close a name must be to count as "did you mean" (the rules' own hints use 0.6).
CUTOFF = 0.6
MAX_SUGGESTIONS = 3

# Ends each name in a group's joined text (a group holding it is counted name by name).
_SEPARATOR = "\n"


def close_names(word: str, candidates: Iterable[str]) -> list[str]:
    """The ``candidates`` close enough to ``word`` for a "did you mean", closest first: the
    measure every fix here uses, for hints on problems that have no fix."""
    return close_matches(word, candidates)


def close_matches(word: str, candidates: Iterable[str], n: int = MAX_SUGGESTIONS) -> list[str]:
    """The ``n`` candidates closest to ``word`` (the word itself left out), as difflib finds
    them; when none is close, those close to the word in lower case."""
    table = NameTable(((0, 0), name) for name in set(candidates))
    return closest_in(word, table.before(None), n)


class _Group:
    """The names of one length, in the order of their keys."""

    __slots__ = ("_alphabet", "_joined", "keys", "length", "names")

    def __init__(self, length: int) -> None:
        self.length = length
        self.keys: list[Position] = []
        self.names: list[str] = []
        self._joined: bytes | str | None = None
        self._alphabet: frozenset[str] = frozenset()

    def shared(self, chars: set[str], drop: bytes, count: int) -> bytes | list[int]:
        """For each of the first ``count`` names, how many of its characters are in
        ``chars`` (``drop``: the other ASCII characters but the separator), as bytes when
        every count fits in one."""
        joined = self._prepared()
        width = self.length + 1
        if isinstance(joined, bytes):
            parts: list[bytes] | list[str] = (
                joined[: count * width].translate(None, drop).split(b"\n")
            )
        elif joined:
            table = {ord(ch): None for ch in self._alphabet if ch not in chars}
            parts = joined[: count * width].translate(table).split(_SEPARATOR)
        else:  # a name holds the separator
            return [sum(ch in chars for ch in name) for name in self.names[:count]]
        parts.pop()  # after the last separator
        lengths = map(len, parts)
        return bytes(lengths) if self.length < 256 else list(lengths)

    def _prepared(self) -> bytes | str:
        """The names joined, each ended by the separator: every name takes ``length + 1``
        characters, so the first ``k`` are a prefix.  "" when a name holds the separator."""
        if self._joined is None:
            text = _SEPARATOR.join(self.names) + _SEPARATOR
            if text.count(_SEPARATOR) != len(self.names):
                self._joined = ""
            elif text.isascii():
                self._joined = text.encode("ascii")
            else:
                self._joined = text
                self._alphabet = frozenset(text) - {_SEPARATOR}
        return self._joined


# A group and how many of its first names a question is about.
Part = tuple[_Group, int]


class NameTable:
    """Names prepared once for many "did you mean" questions: each with a key (where it is
    defined), so that a question may be about those with a key below a bound only."""

    __slots__ = ("_groups",)

    def __init__(self, entries: Iterable[tuple[Position, str]]) -> None:
        """``entries``: (key, name) in increasing order of key."""
        groups: dict[int, _Group] = {}
        for key, name in entries:
            group = groups.get(len(name))
            if group is None:
                group = groups[len(name)] = _Group(len(name))
            group.keys.append(key)
            group.names.append(name)
        self._groups = list(groups.values())

    def before(self, key: Position | None) -> list[Part]:
        """The names whose key is below ``key`` (all of them when None)."""
        if key is None:
            return [(group, len(group.names)) for group in self._groups]
        return [(group, bisect_left(group.keys, key)) for group in self._groups]


def closest_in(word: str, parts: Sequence[Part], n: int = MAX_SUGGESTIONS) -> list[str]:
    """``close_matches`` on the names of ``parts`` (a name in several counts once)."""
    found = _closest(word, word, parts, n)
    if not found and word.lower() != word:
        found = _closest(word.lower(), word, parts, n)
    return found


def _closest(word: str, leave_out: str, parts: Sequence[Part], n: int) -> list[str]:
    """``difflib.get_close_matches(word, options, n, CUTOFF)`` on the names of ``parts`` but
    ``leave_out``, the same answer sooner: the names are met by decreasing bound, and once
    ``n`` matches are known, the rest is ruled out as soon as its bound falls below the
    ``n``-th best score (the answer, the n best by score then name, does not depend on the
    order the names are met in).

    A name's bound is ``2 * min(shared, len(word)) / (len(name) + len(word))``; a group's,
    with its length for ``shared``, is above those of all its names, so a group's counts are
    made only when its bound reaches the best level still to meet (names much longer or
    shorter than the word are often never counted)."""
    if not word:
        return []  # an empty word matches nothing: every ratio is 0
    size = len(word)
    chars = set(word)
    drop = bytes(c for c in range(128) if chr(c) not in chars and chr(c) != _SEPARATOR)
    groups = sorted(
        (
            (2.0 * min(group.length, size) / (group.length + size), which)
            for which, (group, count) in enumerate(parts)
            if count
        ),
        reverse=True,
    )
    counted: dict[int, bytes | list[int]] = {}
    levels: list[tuple[float, int, int]] = []  # a heap of (-bound, which group, shared)
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    best: list[tuple[float, str]] = []
    floor = CUTOFF
    met: set[str] = set()
    next_group = 0
    while True:
        while next_group < len(groups) and (not levels or groups[next_group][0] > -levels[0][0]):
            cap, which = groups[next_group]
            next_group += 1
            if cap < floor:
                next_group = len(groups)  # the later ones' bounds are lower still
                break
            group, count = parts[which]
            shared = counted[which] = group.shared(chars, drop, count)
            total = group.length + size
            for s in set(shared):
                heapq.heappush(levels, (-2.0 * min(s, size) / total, which, s))
        if not levels:
            break
        negated, which, s = heapq.heappop(levels)
        bound = -negated
        if bound < floor:
            break
        names = parts[which][0].names
        for index in _indices(counted[which], s):
            if bound < floor:
                break
            option = names[index]
            if option == leave_out or option in met:
                continue
            met.add(option)
            matcher.set_seq1(option)
            if matcher.real_quick_ratio() < floor or matcher.quick_ratio() < floor:
                continue
            score = matcher.ratio()
            if score < CUTOFF:
                continue
            best.append((score, option))
            if len(best) > n:
                best = heapq.nlargest(n, best)
            if len(best) == n:
                # A later option with the n-th best score may still enter (a larger name wins
                # a tie, as in difflib): only a bound below it rules one out.
                floor = max(CUTOFF, min(best)[0])
    return [option for _, option in heapq.nlargest(n, best)]


def _indices(shared: bytes | list[int], s: int) -> Iterator[int]:
    """Where ``s`` stands in ``shared``."""
    if isinstance(shared, bytes):
        index = shared.find(s)
        while index >= 0:
            yield index
            index = shared.find(s, index + 1)
    else:
        yield from (index for index, value in enumerate(shared) if value == s)
