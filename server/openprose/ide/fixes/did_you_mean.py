"""How close one name is to another: the measure of every "did you mean" fix, and of the
command line's hints on problems that have no fix.
"""

from __future__ import annotations

import difflib
import heapq
import re
from collections.abc import Iterable

__all__ = ["CUTOFF", "MAX_SUGGESTIONS", "close_matches", "close_names"]


# How close a name must be to count as "did you mean" (the rules' own hints use 0.6).
CUTOFF = 0.6
MAX_SUGGESTIONS = 3


def close_names(word: str, candidates: Iterable[str]) -> list[str]:
    """The ``candidates`` close enough to ``word`` for a "did you mean", closest first: the
    measure every fix here uses, for hints on problems that have no fix."""
    return close_matches(word, candidates)


def close_matches(word: str, candidates: Iterable[str], n: int = MAX_SUGGESTIONS) -> list[str]:
    # Each name once, the word itself left out; in no particular order: the answer is the n
    # best by (score, name), whatever the order they are met in (as in difflib).
    unique = set(candidates)
    unique.discard(word)
    options = list(unique)
    found = _closest(word, options, n)
    if not found and word.lower() != word:
        found = _closest(word.lower(), options, n)
    return found


def _shared_counts(word: str, options: list[str]) -> list[int]:
    """For each option, how many of its characters occur in ``word``: the characters that do
    not match nothing, so an option matches at most these. Counted for all the options in
    one pass of a pattern over their joined text, not option by option."""
    separator = "\n"
    joined = separator.join(options)
    if joined.count(separator) != len(options) - 1:  # an option holds the separator
        foreign = re.compile("[^" + re.escape("".join(set(word))) + "]")
        return [len(option) - foreign.subn("", option)[1] for option in options]
    kept = re.sub("[^" + re.escape("".join(set(word) | {separator})) + "]", "", joined)
    return [len(part) for part in kept.split(separator)]


def _closest(word: str, options: list[str], n: int) -> list[str]:
    """``difflib.get_close_matches(word, options, n, CUTOFF)``, the same answer sooner: once
    ``n`` matches are found, a candidate whose quick upper bounds fall below the ``n``-th
    best score cannot enter, so its exact ratio is not computed (in a program of thousands
    of similar names, each hint computed thousands of them)."""
    if not word or not options:
        return []  # an empty word matches nothing: every ratio is 0
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    best: list[tuple[float, str]] = []
    floor = CUTOFF
    size = len(word)
    for option, shared in zip(options, _shared_counts(word, options), strict=True):
        if 2.0 * shared / (len(option) + size) < floor:
            continue
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
            # a tie, as in difflib): only a lower bound below it rules one out.
            floor = max(CUTOFF, min(best)[0])
    return [option for _, option in heapq.nlargest(n, best)]
