"""Go to definition, in one document and into the programs it imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.ide import analyze_document
from openprose.ide.definition import definition
from openprose.ide.types import Location, Range
from tests.ide.names_support import (
    CALLER,
    PROGRAM,
    at_word,
    load,
    spot,
)
from tests.support.cursor import CURSOR


@pytest.mark.parametrize(
    ("needle", "nth", "target", "target_nth"),
    [
        ("researcher", 1, "researcher", 0),  # session: -> agent
        ("researcher", 2, "researcher", 0),  # resume: -> agent
        ("review", 1, "review", 0),  # do -> block
        ("{doc", 0, "doc", 0),  # interpolation -> parameter
        ("doc", 2, "doc", 0),  # context -> parameter
        ("{topic", 0, "topic", 0),  # interpolation -> input
        ("notes", 3, "notes", 0),  # context -> let
        ("{a.summary", 0, "a =", 0),  # dotted interpolation -> parallel branch
        ("{ a", 0, "a =", 0),  # object shorthand context -> parallel branch
    ],
)
def test_definition(needle: str, nth: int, target: str, target_nth: int) -> None:
    analysis = analyze_document(PROGRAM)
    position = at_word(PROGRAM, needle, nth, offset=2 if needle[0] in "{" else 1)
    expected = spot(PROGRAM, target, target_nth)
    expected = Range(
        expected.start, (expected.start[0], expected.start[1] + len(target.split()[0]))
    )
    assert definition(analysis, position) == [Location(expected)]


def test_definition_of_a_definition_is_itself_and_nothing_elsewhere() -> None:
    analysis = analyze_document(PROGRAM)
    assert definition(analysis, at_word(PROGRAM, "notes")) == [Location(spot(PROGRAM, "notes"))]
    assert definition(analysis, at_word(PROGRAM, "session")) == []
    assert definition(analysis, at_word(PROGRAM, "model")) == []
    assert definition(analysis, (200, 0)) == []


def test_definition_of_loop_and_pipeline_variables() -> None:
    source = 'let xs = ["a"]\nfor x, i in xs:\n  session "{x} {‸i}"\n'
    analysis, position = load(source)
    assert definition(analysis, position) == [Location(Range((1, 7), (1, 8)))]
    source = 'let xs = ["a"]\nlet ys = xs | map:\n  session "A"\n    context: ‸item\n'
    analysis, position = load(source)
    # The implicit `item` is introduced by the `map` keyword.
    assert definition(analysis, position) == [Location(Range((1, 14), (1, 17)))]


def test_definition_of_a_program_is_its_use() -> None:
    source = 'use "@acme/research"\nuse "./lib.prose" as lib\nlet r = ‸research(t: 1)\n'
    analysis, position = load(source)
    assert definition(analysis, position) == [Location(Range((0, 11), (0, 19)))]
    analysis = analyze_document(source.replace(CURSOR, ""))
    assert definition(analysis, (2, 5)) == [Location(Range((2, 4), (2, 5)))]


def test_definition_of_a_name_hidden_after_its_body() -> None:
    source = 'for x in ["a"]:\n  let inner = session "A"\nsession "B"\n  context: ‸inner\n'
    analysis, position = load(source)
    assert definition(analysis, position) == [Location(Range((1, 6), (1, 11)))]


def test_definition_of_inputs_and_outputs_in_the_imported_file(project: Path) -> None:
    analysis = analyze_document(CALLER, path=project)
    library = str((project.parent / "lib.prose").resolve())
    position = at_word(CALLER, "depth")
    assert definition(analysis, position) == [Location(Range((1, 6), (1, 11)), library)]
    findings = Location(Range((4, 7), (4, 15)), library)
    assert definition(analysis, at_word(CALLER, "findings", 1)) == [findings]
    assert definition(analysis, at_word(CALLER, "{r.findings", offset=4)) == [findings]
    # The destructured name's own definition leads to the output it receives.
    assert definition(analysis, at_word(CALLER, "findings", 2)) == [findings]
    # A use of it leads to the local name.
    assert definition(analysis, at_word(CALLER, "findings", 3)) == [
        Location(spot(CALLER, "findings", 2))
    ]


def test_definition_of_an_unknown_input_or_without_a_path(project: Path) -> None:
    source = CALLER.replace('depth: "y"', 'width: "y"')
    assert definition(analyze_document(source, path=project), at_word(source, "width")) == []
    assert definition(analyze_document(CALLER), at_word(CALLER, "depth")) == []
