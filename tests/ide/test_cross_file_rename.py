"""Rename across files: between a caller and the local program it imports, both ways."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openprose.ide import analyze_document
from openprose.ide.rename import prepare_rename, rename
from openprose.ide.types import RenameError
from tests.fifos import finishes
from tests.ide.names_support import (
    CALLER,
    LIBRARY,
    at_word,
    renamed,
    write,
)
from tests.support.edits import apply_edits


def test_rename_a_keyword_argument_renames_the_imported_input(project: Path) -> None:
    analysis = analyze_document(CALLER, path=project)
    result = rename(analysis, at_word(CALLER, "topic", 1), "subject")
    assert not isinstance(result, RenameError), result
    library = str((project.parent / "lib.prose").resolve())
    assert set(result) == {None, library}
    assert apply_edits(CALLER, result[None]) == CALLER.replace("topic:", "subject:")
    assert apply_edits(LIBRARY, result[library]) == LIBRARY.replace("topic", "subject")


def test_rename_an_output_from_the_caller(project: Path) -> None:
    analysis = analyze_document(CALLER, path=project)
    result = rename(analysis, at_word(CALLER, "findings", 1), "summary")
    assert not isinstance(result, RenameError), result
    library = str((project.parent / "lib.prose").resolve())
    assert apply_edits(LIBRARY, result[library]) == LIBRARY.replace("findings", "summary")
    assert apply_edits(CALLER, result[None]) == CALLER.replace("findings", "summary")
    # From the destructured name, the same edits.
    again = rename(analysis, at_word(CALLER, "findings", 3), "summary")
    assert again == result


def test_cross_file_rename_refuses_collisions(project: Path) -> None:
    analysis = analyze_document(CALLER, path=project)
    found = rename(analysis, at_word(CALLER, "topic", 1), "notes")
    assert isinstance(found, RenameError)
    assert "lib.prose" in found.message and "notes" in found.message
    found = rename(analysis, at_word(CALLER, "topic", 1), "depth")
    assert isinstance(found, RenameError)
    found = rename(analysis, at_word(CALLER, "findings", 1), "again")
    assert isinstance(found, RenameError) and "again" in found.message


def test_renaming_an_input_in_the_imported_program_renames_it_in_its_callers(
    project: Path,
) -> None:
    caller = write(project, CALLER)
    other = write(
        project.parent / "sub" / "other.prose", 'use "../lib" as l\nlet r = l(topic: "a")\n'
    )
    unrelated = write(project.parent / "plain.prose", 'session "topic: not a call"\n')
    library = project.parent / "lib.prose"
    analysis = analyze_document(LIBRARY, path=library)
    importers = [caller, other, unrelated, library]
    result = rename(analysis, at_word(LIBRARY, "topic"), "subject", importers)
    assert not isinstance(result, RenameError), result
    assert set(result) == {None, str(caller), str(other)}
    assert apply_edits(LIBRARY, result[None]) == LIBRARY.replace("topic", "subject")
    assert apply_edits(CALLER, result[str(caller)]) == CALLER.replace("topic:", "subject:")
    assert (
        apply_edits(other.read_text(), result[str(other)])
        == 'use "../lib" as l\nlet r = l(subject: "a")\n'
    )
    # Without the workspace's files, only this document changes.
    alone = rename(analysis, at_word(LIBRARY, "topic"), "subject")
    assert not isinstance(alone, RenameError) and set(alone) == {None}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_rename_skips_workspace_files_that_are_not_regular(project: Path) -> None:
    caller = write(project, CALLER)
    fifo = project.parent / "pipe.prose"
    os.mkfifo(fifo)
    library = project.parent / "lib.prose"
    analysis = analyze_document(LIBRARY, path=library)
    importers = [fifo, caller]
    result = finishes(
        lambda: rename(analysis, at_word(LIBRARY, "topic"), "subject", importers), fifo
    )
    assert not isinstance(result, RenameError), result
    assert set(result) == {None, str(caller)}


def test_renaming_an_output_in_the_imported_program_renames_its_uses_in_callers(
    project: Path,
) -> None:
    caller = write(project, CALLER)
    library = project.parent / "lib.prose"
    analysis = analyze_document(LIBRARY, path=library)
    result = rename(analysis, at_word(LIBRARY, "findings"), "summary", [caller])
    assert not isinstance(result, RenameError), result
    assert apply_edits(CALLER, result[str(caller)]) == CALLER.replace("findings", "summary")


def test_renaming_in_the_imported_program_refuses_a_collision_in_a_caller(
    project: Path,
) -> None:
    caller = write(project, CALLER.replace("let again = ", "let summary = "))
    library = project.parent / "lib.prose"
    analysis = analyze_document(LIBRARY, path=library)
    found = rename(analysis, at_word(LIBRARY, "findings"), "summary", [caller])
    assert isinstance(found, RenameError)
    assert "main.prose" in found.message and "summary" in found.message


def test_cross_file_rename_refuses_registry_and_unknown_programs(tmp_path: Path) -> None:
    write(tmp_path / ".prose" / "imports" / "acme--lib" / "program.prose", LIBRARY)
    source = CALLER.replace('"./lib.prose"', '"@acme/lib"')
    analysis = analyze_document(source, path=tmp_path / "main.prose")
    found = prepare_rename(analysis, at_word(source, "topic"))
    assert isinstance(found, RenameError) and "registry program" in found.message
    refused = rename(analysis, at_word(source, "findings", 2), "x")
    assert isinstance(refused, RenameError) and "output" in refused.message
    found = prepare_rename(analyze_document(CALLER), at_word(CALLER, "topic"))
    assert isinstance(found, RenameError) and "not saved" in found.message
    found = prepare_rename(
        analyze_document(CALLER, path=tmp_path / "main.prose"), at_word(CALLER, "topic")
    )
    assert isinstance(found, RenameError) and "cannot be read" in found.message


def test_rename_an_input_declared_here_leaves_keyword_arguments_alone(project: Path) -> None:
    source = 'use "./lib.prose" as lib\ninput ‸topic: "T"\nlet r = lib(topic: topic, depth: "d")\n'
    assert renamed(source, "theme", project) == (
        'use "./lib.prose" as lib\ninput theme: "T"\nlet r = lib(topic: theme, depth: "d")\n'
    )
