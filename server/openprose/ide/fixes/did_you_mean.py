"""How close one name is to another: the measure of every "did you mean" fix, and of the
command line's hints on problems that have no fix.
"""

from __future__ import annotations

import difflib
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
    found = difflib.get_close_matches(word, options, n=n, cutoff=CUTOFF)
    if not found and word.lower() != word:
        found = difflib.get_close_matches(word.lower(), options, n=n, cutoff=CUTOFF)
    return found
