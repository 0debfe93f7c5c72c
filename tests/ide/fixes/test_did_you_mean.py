"""The measure of every "did you mean": difflib's close matches, found sooner (candidates met
by decreasing bound on their ratio, and, once three matches are known, those whose bounds
fall below the third skipped; names asked about often prepared once in a table). The answer
must be difflib's own."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.ide.fixes.did_you_mean import (
    CUTOFF,
    MAX_SUGGESTIONS,
    NameTable,
    Part,
    close_matches,
    closest_in,
)

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


# Names of several lengths over a small alphabet, some not ASCII (a group then counts its
# characters in its own text), each with a key: where it is defined.
KEYED = st.lists(
    st.tuples(
        st.integers(0, 30),
        st.text(alphabet="abé_1", max_size=5) | st.text(alphabet="ab\n", max_size=4),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(
    NAMES | st.text(alphabet="abé_1", min_size=1, max_size=5),
    st.lists(st.tuples(KEYED, st.none() | st.integers(0, 31)), max_size=3),
)
def test_names_of_tables_before_a_key_are_difflibs(
    word: str, tables: list[tuple[list[tuple[int, str]], int | None]]
) -> None:
    """A question about the names of several tables (overlapping, a name in one or more)
    below a key in each: the answer of the plain computation on those names."""
    parts: list[Part] = []
    plain: list[str] = []
    for entries, key in tables:
        ordered = sorted(((line, 0), name) for line, name in entries)
        parts += NameTable(ordered).before(None if key is None else (key, 0))
        plain += [name for (line, _), name in ordered if key is None or line < key]
    assert closest_in(word, parts) == difflib_answer(word, plain)


def test_names_too_long_to_count_in_a_byte_are_difflibs() -> None:
    names = ["a" * 300 + "b", "a" * 299 + "bc", "a" * 301, "a" * 5]
    table = NameTable(((k, 0), name) for k, name in enumerate(names))
    for word in ("a" * 300, "a" * 298 + "b", "A" * 300):
        assert closest_in(word, table.before(None)) == difflib_answer(word, names)
    assert closest_in("a" * 300, table.before((2, 0))) == difflib_answer("a" * 300, names[:2])
