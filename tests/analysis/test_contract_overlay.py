"""The contract loader's overlay: programs open in an editor are read as the editor has them
(unsaved), and a loader records the files its answers depended on."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.analysis import check
from openprose.analysis.contracts import (
    ContractCache,
    ContractLoader,
    Status,
    Unsaved,
    absolute,
)
from openprose.syntax import parse

CHILD = 'input topic: "What to summarise"\noutput summary = session "Summarise {topic}"\n'
PARENT = 'use "./child" as child\nlet r = child(topic: "tides", depth: "deep")\n'


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "child.prose").write_text(CHILD, encoding="utf-8")
    (tmp_path / "parent.prose").write_text(PARENT, encoding="utf-8")
    return tmp_path


def overlay_of(texts: dict[Path, str]) -> dict[Path, Unsaved]:
    return {absolute(path): Unsaved(text) for path, text in texts.items()}


def test_unsaved_text_wins_over_the_file(folder: Path) -> None:
    child = folder / "child.prose"
    unsaved = overlay_of({child: CHILD + 'input depth: "How deep"\n'})
    on_disk = ContractLoader().resolve(folder / "parent.prose", "./child")
    in_editor = ContractLoader(overlay=unsaved.get).resolve(folder / "parent.prose", "./child")
    assert on_disk.contract is not None and in_editor.contract is not None
    assert [p.name for p in on_disk.contract.inputs] == ["topic"]
    assert [p.name for p in in_editor.contract.inputs] == ["topic", "depth"]
    assert in_editor.file == absolute(child)


def test_a_program_only_open_in_the_editor_is_found(folder: Path) -> None:
    new = folder / "new.prose"
    assert ContractLoader().resolve(folder / "parent.prose", "./new").status is Status.MISSING
    loader = ContractLoader(overlay=overlay_of({new: CHILD}).get)
    assert loader.resolve(folder / "parent.prose", "./new").status is Status.FOUND


def test_the_consulted_files_include_those_looked_for_in_vain(folder: Path) -> None:
    loader = ContractLoader()
    loader.resolve(folder / "parent.prose", "./child")
    loader.resolve(folder / "parent.prose", "./missing")
    assert absolute(folder / "child.prose") in loader.consulted
    assert absolute(folder / "missing.prose") in loader.consulted  # it may appear later


def test_the_consulted_files_include_those_an_import_cycle_goes_through(folder: Path) -> None:
    (folder / "a.prose").write_text('use "./b" as b\n', encoding="utf-8")
    (folder / "b.prose").write_text('use "./c" as c\n', encoding="utf-8")
    (folder / "c.prose").write_text('use "./a" as a\n', encoding="utf-8")
    loader = ContractLoader()
    found = loader.resolve(folder / "a.prose", "./b")
    assert loader.cycle(folder / "a.prose", found) is not None
    assert absolute(folder / "c.prose") in loader.consulted


def test_the_overlay_of_a_cache_reaches_the_checker_through_its_loaders(folder: Path) -> None:
    unsaved: dict[Path, Unsaved] = {}
    cache = ContractCache(overlay=unsaved.get)
    parent = folder / "parent.prose"

    def codes() -> list[str]:
        return [d.code for d in check(parse(PARENT), parent, contracts=ContractLoader(cache=cache))]

    assert codes() == ["E027"]
    unsaved[absolute(folder / "child.prose")] = Unsaved(CHILD + 'input depth: "How deep"\n')
    assert codes() == []
    # A loader without that cache reads the file on disk.
    assert [d.code for d in check(parse(PARENT), parent)] == ["E027"]
    del unsaved[absolute(folder / "child.prose")]
    assert codes() == ["E027"]
