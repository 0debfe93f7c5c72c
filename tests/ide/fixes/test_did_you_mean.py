"""The measure of every "did you mean": difflib's close matches, found sooner (candidates too
long or too short for the cutoff sorted out first, and, once three matches are known, those
whose quick bounds fall below the third skipped). The answer must be difflib's own."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.ide.fixes.did_you_mean import CUTOFF, MAX_SUGGESTIONS, close_matches

# Names over a small alphabet, so that many are close to each other (ties included), with
# characters special in a pattern's class and the separator the counting joins options with.
NAMES = st.text(alphabet="abcde_1", min_size=1, max_size=9) | st.text(
    alphabet="ab-]^\\\n ", min_size=1, max_size=6
)


def difflib_answer(word: str, candidates: list[str]) -> list[str]:
    options = sorted({c for c in candidates if c != word})
    found = difflib.get_close_matches(word, options, n=MAX_SUGGESTIONS, cutoff=CUTOFF)
    if not found and word.lower() != word:
        found = difflib.get_close_matches(word.lower(), options, MAX_SUGGESTIONS, CUTOFF)
    return found


@settings(max_examples=300, deadline=None)
@given(NAMES, st.lists(NAMES, max_size=60))
def test_close_matches_are_difflibs(word: str, candidates: list[str]) -> None:
    assert close_matches(word, candidates) == difflib_answer(word, candidates)


def test_among_thousands_of_similar_names_the_closest_come_first() -> None:
    names = [f"{prefix}_{k}" for k in range(2000) for prefix in ("bundle", "notes", "res")]
    found = close_matches("bundle_1505", names)
    assert found == difflib_answer("bundle_1505", names)
    assert len(found) == 3 and "bundle_1505" not in found  # the word itself is no suggestion
    assert close_matches("Notes_99", names) == difflib_answer("Notes_99", names)
