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
    # difflib's ratio is 2M / (len(a) + len(b)) with M <= the shorter length: a name too
    # short or too long for the cutoff can't match (difflib's real_quick_ratio, the same
    # expression), and sorting it out here, before difflib's per-candidate work, is what
    # keeps a program with thousands of names quick.
    size = len(word)
    options = sorted(
        {c for c in candidates if c != word and 2.0 * min(size, len(c)) / (size + len(c)) >= CUTOFF}
    )
    found = _closest(word, options, n)
    if not found and word.lower() != word:
        found = _closest(word.lower(), options, n)
    return found


def _closest(word: str, options: list[str], n: int) -> list[str]:
    """``difflib.get_close_matches(word, options, n, CUTOFF)``, the same answer sooner: once
    ``n`` matches are found, a candidate whose quick upper bounds fall below the ``n``-th
    best score cannot enter, so its exact ratio is not computed (in a program of thousands
    of similar names, each hint computed thousands of them)."""
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    best: list[tuple[float, str]] = []
    floor = CUTOFF
    size = len(word)
    # The characters of an option that are not in the word match nothing: an option can
    # match at most its other characters, a bound counted without a Python loop.
    foreign = re.compile("[^" + re.escape("".join(set(word))) + "]") if word else None
    for option in options:
        if foreign is not None:
            length = len(option)
            shared = length - foreign.subn("", option)[1]
            if 2.0 * shared / (length + size) < floor:
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
