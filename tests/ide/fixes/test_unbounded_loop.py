"""The quick fix for a `loop` without a limit (W018)."""

from __future__ import annotations

from openprose.checking import check_text
from tests.ide.fixes.fixes_support import fixed


def test_add_max_to_a_bare_loop() -> None:
    text = 'loop:\n  session "Answer the next ticket"\n'
    result = fixed(text, "W018", "Add `(max: 10)`")
    assert result.startswith("loop (max: 10):\n")
    assert not check_text(result)


def test_add_max_before_the_index_name() -> None:
    text = 'loop as turn:\n  session "Take turn {turn}"\n'
    result = fixed(text, "W018", "Add `(max: 10)`")
    assert result.startswith("loop (max: 10) as turn:\n")
    assert not check_text(result)
