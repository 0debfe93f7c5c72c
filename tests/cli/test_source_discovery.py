"""Finding and decoding source files: no parser involved."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openprose.cli.sources import (
    SourceError,
    SourceFile,
    decode_source,
    discover,
    read_source,
)


def touch(root: Path, *relatives: str) -> None:
    for relative in relatives:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('session "x"\n', encoding="utf-8")


def test_directories_are_searched_recursively_in_sorted_order(tmp_path: Path) -> None:
    touch(tmp_path, "z.prose", "b/y.prose", "a/c/x.prose", "a/w.prose", "notes.txt")
    found, errors = discover([str(tmp_path)])
    assert errors == []
    assert [os.path.relpath(f.display_path, tmp_path) for f in found] == [
        os.path.join("a", "c", "x.prose"),
        os.path.join("a", "w.prose"),
        os.path.join("b", "y.prose"),
        "z.prose",
    ]


def test_hidden_directories_are_skipped(tmp_path: Path) -> None:
    touch(tmp_path, ".git/x.prose", ".prose/runs/1/y.prose", "kept.prose")
    found, _ = discover([str(tmp_path)])
    assert [Path(f.display_path).name for f in found] == ["kept.prose"]


def test_current_directory_paths_have_no_dot_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    touch(tmp_path, "a.prose", "sub/b.prose")
    monkeypatch.chdir(tmp_path)
    found, _ = discover(["."])
    assert [f.display_path for f in found] == ["a.prose", os.path.join("sub", "b.prose")]


def test_named_files_are_taken_whatever_their_extension(tmp_path: Path) -> None:
    touch(tmp_path, "program.txt")
    found, _ = discover([str(tmp_path / "program.txt")])
    assert [f.display_path for f in found] == [str(tmp_path / "program.txt")]


def test_a_file_reached_twice_is_checked_once(tmp_path: Path) -> None:
    touch(tmp_path, "a.prose")
    found, _ = discover([str(tmp_path / "a.prose"), str(tmp_path)])
    assert len(found) == 1


def test_missing_path_is_an_error_not_an_exception(tmp_path: Path) -> None:
    found, errors = discover([str(tmp_path / "nope.prose")])
    assert found == []
    assert [str(e) for e in errors] == [
        f"cannot read {tmp_path / 'nope.prose'}: No such file or directory"
    ]


def test_dash_means_standard_input() -> None:
    found, _ = discover(["-"])
    assert found == [SourceFile("<stdin>", None)]


class TestDecoding:
    def test_byte_order_mark_is_dropped(self) -> None:
        assert decode_source(b'\xef\xbb\xbfsession "x"\n', "a") == 'session "x"\n'

    def test_line_endings_are_kept(self) -> None:
        assert decode_source(b"a\r\nb\rc\n", "a") == "a\r\nb\rc\n"

    def test_coding_comments_are_just_comments(self) -> None:
        # parso's decoder would obey this line as a Python encoding declaration.
        data = '# coding: latin-1\nsession "café"\n'.encode()
        assert decode_source(data, "a") == '# coding: latin-1\nsession "café"\n'

    def test_invalid_utf8_names_the_byte_and_line(self) -> None:
        with pytest.raises(SourceError) as raised:
            decode_source(b'session "ok"\nsession "caf\xe9"\n', "bad.prose")
        assert str(raised.value) == (
            "cannot read bad.prose: not valid UTF-8 (byte 0xe9 on line 2, offset 25)"
        )

    def test_offsets_count_the_byte_order_mark(self) -> None:
        with pytest.raises(SourceError, match="byte 0xff on line 1, offset 4"):
            decode_source(b"\xef\xbb\xbfa\xff", "bad.prose")


def test_unreadable_file_raises_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"^cannot read d: "):
        read_source(SourceFile("d", str(tmp_path)))  # a directory cannot be opened as a file
