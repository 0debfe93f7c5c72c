"""Find references, in one document and of the inputs of an imported program."""

from __future__ import annotations

from pathlib import Path

from openprose.ide import analyze_document
from openprose.ide.highlights import highlights
from openprose.ide.references import references
from openprose.ide.types import Location, Range
from tests.ide.names_support import (
    CALLER,
    PROGRAM,
    at_word,
    spot,
)


def test_references_with_and_without_the_declaration() -> None:
    analysis = analyze_document(PROGRAM)
    position = at_word(PROGRAM, "notes", 2)
    every = [
        spot(PROGRAM, "notes", 0),
        spot(PROGRAM, "notes", 1),
        spot(PROGRAM, "notes", 2),
        spot(PROGRAM, "notes", 3),
    ]
    assert references(analysis, position, True) == [Location(r) for r in every]
    assert references(analysis, position, False) == [Location(r) for r in every[1:]]


def test_references_of_agents_blocks_and_interpolated_names() -> None:
    analysis = analyze_document(PROGRAM)
    found = references(analysis, at_word(PROGRAM, "researcher"), True)
    assert [loc.range for loc in found] == [spot(PROGRAM, "researcher", n) for n in range(3)]
    found = references(analysis, at_word(PROGRAM, "review", 1), False)
    assert [loc.range for loc in found] == [spot(PROGRAM, "review", 1)]
    found = references(analysis, at_word(PROGRAM, "doc"), True)
    assert [loc.range for loc in found] == [
        spot(PROGRAM, "doc", 0),
        spot(PROGRAM, "{doc", skip=1),
        spot(PROGRAM, "doc", 2),
    ]


def test_block_parameters_are_scoped_to_their_block() -> None:
    source = (
        'block one(x):\n  session "{x}"\n'
        'block two(x):\n  session "{x}"\n    context: x\n'
        'let x = session "outer"\n'
    )
    analysis = analyze_document(source)
    found = references(analysis, (2, 10), True)
    assert [loc.range for loc in found] == [
        Range((2, 10), (2, 11)),
        Range((3, 12), (3, 13)),
        Range((4, 13), (4, 14)),
    ]


def test_loop_variables_are_scoped_to_their_loop() -> None:
    source = (
        'let item = session "outer"\nlet xs = ["a"]\n'
        'for item in xs:\n  session "Look at {item}"\nsession "Then"\n  context: item\n'
    )
    analysis = analyze_document(source)
    loop_variable = [loc.range for loc in references(analysis, (2, 5), True)]
    assert loop_variable == [Range((2, 4), (2, 8)), Range((3, 20), (3, 24))]
    outer = [loc.range for loc in references(analysis, (5, 12), True)]
    assert outer == [Range((0, 4), (0, 8)), Range((5, 11), (5, 15))]


def test_undefined_names_group_together() -> None:
    source = 'session "A"\n  context: ghost\nsession "B {ghost}"\n'
    analysis = analyze_document(source)
    found = [loc.range for loc in references(analysis, (1, 12), True)]
    assert found == [Range((1, 11), (1, 16)), Range((2, 12), (2, 17))]


def test_references_of_an_input_name_across_calls(project: Path) -> None:
    analysis = analyze_document(CALLER, path=project)
    library = str((project.parent / "lib.prose").resolve())
    found = references(analysis, at_word(CALLER, "topic"), True)
    assert found == [
        Location(Range((0, 6), (0, 11)), library),
        Location(spot(CALLER, "topic", 0)),
        Location(spot(CALLER, "topic", 1)),
        Location(spot(CALLER, "topic", 2)),
    ]
    assert len(references(analysis, at_word(CALLER, "topic"), False)) == 3
    assert [h.range for h in highlights(analysis, at_word(CALLER, "topic"))] == [
        spot(CALLER, "topic", n) for n in range(3)
    ]
