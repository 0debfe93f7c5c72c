"""Signature help for `do name(...)` and program calls, on incomplete lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.ide.analysis import analyze_document
from openprose.ide.signature import signature_help
from openprose.ide.types import Pos, SignatureHelp
from tests.support.cursor import cursor

BLOCKS = """\
# Review a topic
# at some depth.
block review(topic, depth):
  session "Review {topic} at {depth}"

block final-check:
  session "Check"

"""

RESEARCH = """\
input topic: "The subject to research"
input depth: "How deep to go"
session "Research"
input angle: "Any particular angle?"
output findings = session "Summarise"
"""

USE = 'use "./research" as research\n'


def help_at(source: str, path: str | Path | None = None) -> SignatureHelp | None:
    text, position = cursor(source)
    return signature_help(analyze_document(text, path=path), position)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "research.prose").write_text(RESEARCH, encoding="utf-8")
    return tmp_path / "main.prose"


# --------------------------------------------------------------------------- blocks


def test_block_signature() -> None:
    found = help_at(BLOCKS + "do review(‸")
    assert found is not None
    assert found.label == "block review(topic, depth)"
    assert found.parameters == ("topic", "depth")
    assert found.active_parameter == 0
    assert found.documentation == "Review a topic\nat some depth."


@pytest.mark.parametrize(
    ("call", "active"),
    [
        ('do review("a", ‸', 1),
        ('do review("a",‸', 1),
        ('do review("a, b", ‸', 1),  # a comma in a string is not a separator
        ("do review([a, b], ‸", 1),  # nor one inside brackets
        ('do review("a‸', 0),
        ('do review("a", [x, ‸', 1),  # inside a nested array: still the second argument
        ('do review("a", "b", ‸', 2),  # more arguments than parameters
        ('let r = do review("a", ‸)', 1),
        ('do review(\n  "a",\n  ‸\n)', 1),
    ],
)
def test_active_parameter_from_commas(call: str, active: int) -> None:
    found = help_at(BLOCKS + call)
    assert found is not None
    assert found.active_parameter == active


def test_block_without_parameters() -> None:
    found = help_at(BLOCKS + "do final-check(‸")
    assert found is not None
    assert found.label == "block final-check()"
    assert found.parameters == ()


def test_unicode_arguments_before_the_cursor() -> None:
    found = help_at(BLOCKS + 'do review("café 🙂", ‸')
    assert found is not None
    assert found.active_parameter == 1


@pytest.mark.parametrize(
    "source",
    [
        BLOCKS + "do missing(‸",
        BLOCKS + "do review‸",
        BLOCKS + 'do review("a")‸',
        BLOCKS + 'do review("a") # (‸',
        BLOCKS + "block other(‸",
        'let xs = ["a"]\nlet r = xs | reduce(‸',
        "session (‸",
        "unknown(‸",
        "‸",
    ],
)
def test_no_signature(source: str) -> None:
    assert help_at(source) is None


# --------------------------------------------------------------------------- programs


def test_program_signature(project: Path) -> None:
    found = help_at(USE + "let r = research(‸", project)
    assert found is not None
    assert found.label == "research(topic, depth, angle)"
    assert found.parameters == ("topic", "depth", "angle")
    assert found.active_parameter == 0
    assert "- `topic`: The subject to research" in found.documentation
    assert "- `angle`: Any particular angle? (optional)" in found.documentation


def test_program_active_parameter_is_the_input_being_given(project: Path) -> None:
    found = help_at(USE + "let r = research(depth: ‸", project)
    assert found is not None and found.active_parameter == 1
    found = help_at(USE + 'research(angle: "x", topic: "y‸")', project)
    assert found is not None and found.active_parameter == 0


def test_program_active_parameter_is_the_next_input_to_give(project: Path) -> None:
    found = help_at(USE + 'let r = research(topic: "x", ‸', project)
    assert found is not None and found.active_parameter == 1


def test_program_without_a_saved_file() -> None:
    assert help_at(USE + "let r = research(‸") is None


def test_program_that_cannot_be_found(tmp_path: Path) -> None:
    assert help_at(USE + "let r = research(‸", tmp_path / "main.prose") is None


# --------------------------------------------------------------------------- robustness


@pytest.mark.parametrize("position", [(3, 0), (0, 50), (-1, 0), (0, -2)])
def test_positions_past_the_end(position: Pos) -> None:
    assert signature_help(analyze_document("do review(\n"), position) is None


@pytest.mark.parametrize("text", ["", "((((", ")))", '"""(', "do (,,,", "do x(((,", "\x00("])
def test_garbage(text: str) -> None:
    analysis = analyze_document(text)
    for line, content in enumerate(analysis.lines):
        for character in range(len(content) + 1):
            signature_help(analysis, (line, character))
