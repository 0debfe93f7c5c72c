"""The analysis host owns the caches the features keep: two hosts share none, and each
invalidation method drops exactly what it names."""

from __future__ import annotations

import os
from pathlib import Path

from openprose.analysis.contracts import absolute
from openprose.ide.caches import Caches, default_caches
from openprose.ide.completion.contracts import input_descriptions, program_contract
from openprose.ide.completion.scopes import model_data
from openprose.ide.fixes.fix_all import fix_all
from openprose.ide.host import AnalysisHost, OpenDocument
from openprose.ide.ports import analysis_of_file

LIB = 'input topic: "What to summarise"\noutput summary = session "Summarise {topic}"\n'
# The same size as LIB, with the input renamed: a rewrite keeping size and time is not seen.
LIB_RENAMED = LIB.replace("topic", "theme")
MAIN = 'use "./lib" as lib\nlet r = lib(topic: "tides")\n'


def codes(doc: OpenDocument) -> list[str]:
    return [d.code for d in doc.analysis().diagnostics]


def filled(host: AnalysisHost, folder: Path) -> OpenDocument:
    """``main.prose`` open in ``host``, with every cache of the host holding something."""
    main = folder / "main.prose"
    doc = host.open(main.as_uri(), MAIN, 1, main)
    analysis = doc.analysis()
    assert [d.code for d in analysis.diagnostics] == []  # the contract of lib was read
    contract = program_contract(analysis, "lib")
    assert contract is not None
    assert input_descriptions(analysis, contract) == {"topic": "What to summarise"}
    assert analysis_of_file(absolute(folder / "lib.prose"), analysis.caches) is not None
    fix_all(analysis)
    model_data(analysis)
    return doc


def holdings(caches: Caches, folder: Path, doc: OpenDocument | None = None) -> dict[str, bool]:
    lib = absolute(folder / "lib.prose")
    return {
        "contracts": caches.contracts.holds(lib),
        "descriptions": lib in caches.descriptions,
        "files": lib in caches.files,
        "fix_all": len(caches.fix_all) > 0,
        "completion": doc is not None and doc.analysis().model in caches.completion,
    }


ALL = dict.fromkeys(("contracts", "descriptions", "files", "fix_all", "completion"), True)
NONE = dict.fromkeys(ALL, False)


def write_lib(folder: Path) -> Path:
    lib = folder / "lib.prose"
    lib.write_text(LIB, encoding="utf-8")
    return lib


def test_two_hosts_share_no_cache(tmp_path: Path) -> None:
    write_lib(tmp_path)
    first, second = AnalysisHost(), AnalysisHost()
    doc = filled(first, tmp_path)
    assert holdings(first.caches, tmp_path, doc) == ALL
    assert holdings(second.caches, tmp_path) == NONE
    assert holdings(default_caches(), tmp_path) == NONE
    # The model of a document of the first host has no completion data in the second.
    assert doc.analysis().model not in second.caches.completion


def test_a_program_open_in_one_host_is_not_read_unsaved_by_another(tmp_path: Path) -> None:
    lib = write_lib(tmp_path)
    main = tmp_path / "main.prose"
    editing, other = AnalysisHost(), AnalysisHost()
    editing.open(lib.as_uri(), LIB_RENAMED, 1, lib)
    assert codes(editing.open(main.as_uri(), MAIN, 1, main)) == ["E026", "E027"]
    assert codes(other.open(main.as_uri(), MAIN, 1, main)) == []


def same_size_rewrite(file: Path, text: str) -> None:
    """Rewrite ``file`` keeping its size and modification time (a coarse clock, a tool
    restoring times): only an explicit invalidation tells the caches."""
    before = file.stat()
    file.write_text(text, encoding="utf-8")
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert file.stat().st_size == before.st_size


def test_file_changed_drops_that_files_caches_and_forgets_its_importers(tmp_path: Path) -> None:
    lib = write_lib(tmp_path)
    (tmp_path / "other.prose").write_text(LIB, encoding="utf-8")
    host = AnalysisHost()
    doc = filled(host, tmp_path)
    host.caches.contracts.read(absolute(tmp_path / "other.prose"))
    same_size_rewrite(lib, LIB_RENAMED)
    doc.forget_analysis()
    assert codes(doc) == []  # stale: the old contract is served
    first = doc.analysis()

    assert host.file_changed(lib) == [doc]
    assert holdings(host.caches, tmp_path) == {**NONE, "fix_all": True}
    assert host.caches.contracts.holds(absolute(tmp_path / "other.prose"))
    assert doc.analysis() is not first
    assert codes(doc) == ["E026", "E027"]  # `theme` is missing, `topic` unknown
    contract = program_contract(doc.analysis(), "lib")
    assert contract is not None
    assert input_descriptions(doc.analysis(), contract) == {"theme": "What to summarise"}


def test_file_changed_leaves_documents_not_depending_on_the_file(tmp_path: Path) -> None:
    write_lib(tmp_path)
    host = AnalysisHost()
    doc = filled(host, tmp_path)
    alone = tmp_path / "alone.prose"
    other = host.open(alone.as_uri(), 'let x = session "Hi"\n', 1, alone)
    analysis = other.analysis()
    assert host.file_changed(tmp_path / "lib.prose") == [doc]
    assert other.analysis() is analysis


def test_configuration_changed_drops_only_the_fix_all_answers(tmp_path: Path) -> None:
    write_lib(tmp_path)
    host = AnalysisHost()
    doc = filled(host, tmp_path)
    host.configuration_changed()
    assert holdings(host.caches, tmp_path, doc) == {**ALL, "fix_all": False}


def test_clear_drops_every_cache(tmp_path: Path) -> None:
    write_lib(tmp_path)
    host = AnalysisHost()
    doc = filled(host, tmp_path)
    model = doc.analysis().model
    host.clear()
    assert holdings(host.caches, tmp_path) == NONE
    assert model not in host.caches.completion


def test_without_invalidation_the_fix_all_answer_is_served_again(tmp_path: Path) -> None:
    host = AnalysisHost()
    main = tmp_path / "main.prose"
    analysis = host.open(main.as_uri(), "let x = 1\n", 1, main).analysis()
    answer = fix_all(analysis)
    key = (analysis.text, str(analysis.path), None, False)
    host.caches.fix_all.put(key, ("kept",))
    assert fix_all(analysis) == ["kept"]  # served from the cache
    host.configuration_changed()
    assert fix_all(analysis) == answer
