"""Completion of the path of a `use`: the programs and folders beside a saved document, or in
the folder typed so far."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.ide.types import Range
from tests.ide.completion.completion_support import (
    RESEARCH,
    complete,
    item,
    labels,
)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """main.prose beside two programs, a folder with one more, a hidden folder and a note."""
    (tmp_path / "research.prose").write_text(RESEARCH, encoding="utf-8")
    (tmp_path / "review.prose").write_text('session "Review"\n', encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a program\n", encoding="utf-8")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "summarize.prose").write_text('session "Sum"\n', encoding="utf-8")
    (tmp_path / ".prose").mkdir()
    main = tmp_path / "main.prose"
    main.write_text("", encoding="utf-8")
    return main


def test_use_offers_the_programs_and_folders_beside_the_document(library: Path) -> None:
    items = complete('use "‸"', library)
    assert [(i.label, i.kind) for i in items] == [
        ("research.prose", "file"),
        ("review.prose", "file"),
        ("shared/", "folder"),
    ]  # not the document itself, hidden folders or other files
    assert all(i.replace == Range((0, 5), (0, 5)) for i in items)


def test_use_paths_follow_the_folder_typed_and_filter_by_the_name(library: Path) -> None:
    assert labels('use "./shared/‸"', library) == ["summarize.prose"]
    found = item('use "./re‸search" as r', "research.prose", library)
    assert found.replace == Range((0, 7), (0, 15))  # the name being typed, up to the quote
    assert labels('use "./rev‸"', library) == ["review.prose"]
    inner = library.parent / "shared" / "inner.prose"
    assert labels('use "../‸"', inner) == [
        "main.prose",
        "research.prose",
        "review.prose",
        "shared/",
    ]


def test_use_paths_need_a_saved_document_and_a_local_path(library: Path) -> None:
    assert labels('use "‸"') == []
    assert labels('use "@acme/‸"', library) == []
    assert labels('use "./missing/‸"', library) == []
    assert labels('session "./‸"', library) == []  # only the path of a use
