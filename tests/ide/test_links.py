"""Document links over `use` paths that name a program file on disk."""

from __future__ import annotations

from pathlib import Path

from openprose.ide import analyze_document
from openprose.ide.links import document_links
from openprose.ide.types import DocumentLink, Range

PROGRAM = 'input topic: "T"\noutput result = session "Do {topic}"\n'


def write(path: Path, text: str = PROGRAM) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def links(text: str, path: Path | None) -> list[DocumentLink]:
    return document_links(analyze_document(text, path=path))


def test_local_paths_link_to_their_files(tmp_path: Path) -> None:
    helper = write(tmp_path / "helper.prose")
    shared = write(tmp_path / "lib" / "shared.prose")
    main = write(tmp_path / "app" / "main.prose", "")
    text = (
        'use "../helper.prose"\n'
        'use "../lib/shared" as shared\n'
        'use "./missing.prose" as missing\n'
        'session "A"\n'
    )
    found = links(text, main)
    assert [(link.range, link.target) for link in found] == [
        (Range((0, 5), (0, 20)), str(helper.resolve())),
        (Range((1, 5), (1, 18)), str(shared.resolve())),
    ]
    assert all(link.tooltip for link in found)


def test_bare_names_resolve_next_to_the_file(tmp_path: Path) -> None:
    helper = write(tmp_path / "helper.prose")
    found = links('use "helper"\n', tmp_path / "main.prose")
    assert [(link.range, link.target) for link in found] == [
        (Range((0, 5), (0, 11)), str(helper.resolve()))
    ]


def test_registry_paths_link_only_to_a_cached_copy(tmp_path: Path) -> None:
    main = tmp_path / "main.prose"
    assert links('use "@acme/tool"\n', main) == []
    copy = write(tmp_path / ".prose" / "imports" / "acme--tool" / "program.prose")
    found = links('use "@acme/tool" as tool\n', main)
    assert [(link.range, link.target) for link in found] == [
        (Range((0, 5), (0, 15)), str(copy.resolve()))
    ]
    assert "@acme/tool" in found[0].tooltip


def test_the_latest_run_copy_of_a_registry_program(tmp_path: Path) -> None:
    runs = tmp_path / ".prose" / "runs"
    write(runs / "20240101-000000-old" / "imports" / "acme--tool" / "program.prose")
    newest = write(runs / "20250101-000000-new" / "imports" / "acme--tool" / "program.prose")
    found = links('use "@acme/tool"\n', tmp_path / "sub" / "main.prose")
    assert [link.target for link in found] == [str(newest.resolve())]


def test_no_links_without_a_path_or_for_other_sources(tmp_path: Path) -> None:
    write(tmp_path / "helper.prose")
    assert links('use "./helper.prose"\n', None) == []
    text = (
        'use "https://example.com/x.prose"\n'
        'use "github:acme/x"\n'
        'use ""\n'
        'use "./helper.prose\n'
        'import "web" from "./helper.prose"\n'
    )
    assert links(text, tmp_path / "main.prose") == []


def test_unicode_before_the_path(tmp_path: Path) -> None:
    target = write(tmp_path / "café.prose")
    found = links('use "./café.prose" as café\n', tmp_path / "main.prose")
    assert [(link.range, link.target) for link in found] == [
        (Range((0, 5), (0, 17)), str(target.resolve()))
    ]


def test_garbage_and_empty_documents(tmp_path: Path) -> None:
    for text in ["", "\n", "use", "use use use", '"""', "$$ ;; @@", 'use "./x" as\n  :']:
        assert links(text, tmp_path / "main.prose") == []
