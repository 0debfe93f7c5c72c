"""Placement of imports, and recursion that can never stop."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from openprose.analysis import prepare
from openprose.analysis.rules import structure
from openprose.checking import check_text
from openprose.syntax import parse


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


# The calls between blocks are read from the node index (each `do` climbs to its blocks)
# rather than by walking every block: both must find the same calls in the same order.
_BODY_LINE = st.sampled_from(
    ["do a", "do b", "do c(x)", "do missing", 'session "s"', "if **ok**:", "repeat 2:"]
)


@st.composite
def _block_programs(draw: st.DrawFn) -> str:
    lines = []
    for name in draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=4)):
        lines.append(f"block {name}:" if name != "c" else "block c(x):")
        depth = 1
        for line in draw(st.lists(_BODY_LINE, min_size=1, max_size=5)):
            lines.append("  " * depth + line)
            if line.endswith(":"):
                depth += 1
        if lines[-1].endswith(":"):
            lines.append("  " * depth + 'session "end"')
    lines += draw(st.lists(st.sampled_from(["do a", "do b", 'session "top"']), max_size=2))
    return "\n".join(lines) + "\n"


@given(_block_programs())
def test_the_index_finds_the_calls_a_walk_of_each_block_finds(text: str) -> None:
    ctx = prepare(parse(text))
    blocks = ctx.model.blocks
    walked = {
        name: [
            (call.name.value, call)
            for call in structure._unconditional_calls(found[0])
            if call.name.value in blocks
        ]
        for name, found in blocks.items()
    }
    assert structure._calls_from_index(ctx) == walked
