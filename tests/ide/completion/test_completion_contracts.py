"""Completion of an imported program's inputs inside its call and of its outputs after a dot,
read from the program's file (so only in a saved document)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ide.completion.completion_support import (
    RESEARCH,
    USE,
    VARIABLES,
    complete,
    labels,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A saved main program beside a program it imports; returns the main file's path."""
    (tmp_path / "research.prose").write_text(RESEARCH, encoding="utf-8")
    return tmp_path / "main.prose"


def test_program_inputs_inside_the_call(project: Path) -> None:
    items = complete(USE + "let r = research(‸", project)
    assert [i.label for i in items] == ["topic:", "depth:"]
    assert items[0].kind == "input"
    assert items[0].insert_text == "topic: "
    assert items[0].documentation == "The subject to research"


def test_program_inputs_leave_out_those_given(project: Path) -> None:
    assert labels(USE + 'let r = research(topic: "x", ‸', project) == ["depth:"]
    assert labels(USE + "let r = research(\n  depth: 2,\n  ‸", project) == ["topic:"]


def test_program_input_value_offers_variables(project: Path) -> None:
    source = USE + VARIABLES + "let r = research(topic: ‸"
    assert "research" in labels(source, project)  # the program alias is not a variable
    assert "config" in labels(source, project)


def test_no_program_inputs_without_a_saved_file() -> None:
    assert labels(USE + "let r = research(‸") == []


def test_program_outputs_after_a_dot(project: Path) -> None:
    source = USE + 'let r = research(topic: "x")\nsession "a"\n  context: r.‸'
    assert labels(source, project) == ["findings", "sources"]
    in_string = USE + 'let r = research(topic: "x")\nsession "{r.f‸}"'
    assert labels(in_string, project) == ["findings"]
