"""Placement of imports, and recursion that can never stop."""

from __future__ import annotations

from openprose.checking import check_text


def codes(text: str) -> list[tuple[str, tuple[int, int]]]:
    return [(d.code, d.start) for d in check_text(text)]


def test_import_inside_a_block_is_an_error() -> None:
    text = 'if **needed**:\n  use "@acme/search"\n  session "a"\n'
    assert ("E073", (2, 2)) in codes(text)


def test_import_at_the_top_level_is_fine() -> None:
    assert "E073" not in {c for c, _ in codes('use "@acme/search"\nsession "a"\n')}


def test_mutual_recursion_without_a_condition_is_reported_once() -> None:
    text = "block a:\n  do b\nblock b:\n  do a\ndo a\n"
    found = [d for d in check_text(text) if d.code == "W035"]
    assert len(found) == 1
    assert found[0].start == (1, 6)
    assert "a -> b -> a" in found[0].message


def test_recursion_with_a_base_case_is_fine() -> None:
    text = (
        "block refine(draft):\n"
        "  if **the draft needs work**:\n"
        "    do refine(draft)\n"
        '  session "Done"\n'
        "    context: draft\n"
        'let start = session "a"\n'
        "do refine(start)\n"
    )
    assert check_text(text) == []
