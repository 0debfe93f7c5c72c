"""``prose fmt`` end to end: the real command in a child process, on files we write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.cli.fixture_types import RunProse, WriteSource

MESSY = 'agent  writer :\n    model:sonnet\nlet d=session  "Draft"\n\n\n\n\nsession "x"\n'
TIDY = 'agent writer:\n  model: sonnet\nlet d = session "Draft"\n\n\nsession "x"\n'


def test_rewrites_the_file_in_place(prose: RunProse, source: WriteSource) -> None:
    path = source("messy.prose", MESSY)
    result = prose("fmt", "messy.prose")
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == TIDY.encode()
    assert result.stdout == ""


def test_formatted_file_is_left_byte_identical(prose: RunProse, source: WriteSource) -> None:
    path = source("tidy.prose", TIDY)
    before = path.stat().st_mtime_ns
    os.utime(path, ns=(before - 10_000_000_000, before - 10_000_000_000))
    old = path.stat().st_mtime_ns
    result = prose("fmt", "tidy.prose")
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == TIDY.encode()
    assert path.stat().st_mtime_ns == old, "an unchanged file must not be rewritten"


def test_check_reports_without_changing(prose: RunProse, source: WriteSource) -> None:
    path = source("messy.prose", MESSY)
    result = prose("fmt", "--check", "messy.prose")
    assert result.returncode == 1
    assert "Would reformat: messy.prose" in result.stdout.splitlines()
    assert path.read_bytes() == MESSY.encode()


def test_check_passes_on_formatted_files(prose: RunProse, source: WriteSource) -> None:
    source("tidy.prose", TIDY)
    result = prose("fmt", "--check", "tidy.prose")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Would reformat" not in result.stdout


def test_check_lists_only_the_files_that_would_change(prose: RunProse, source: WriteSource) -> None:
    source("a/messy.prose", MESSY)
    source("a/tidy.prose", TIDY)
    result = prose("fmt", "--check", "a")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("Would reformat")] == [
        f"Would reformat: {Path('a', 'messy.prose')}"
    ]


def test_diff_prints_a_unified_diff(prose: RunProse, source: WriteSource) -> None:
    path = source("messy.prose", MESSY)
    result = prose("fmt", "--diff", "messy.prose")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("---") and "messy.prose" in lines[0]
    assert lines[1].startswith("+++") and "messy.prose" in lines[1]
    assert any(line.startswith("@@") for line in lines)
    assert '-let d=session  "Draft"' in lines
    assert '+let d = session "Draft"' in lines
    assert path.read_bytes() == MESSY.encode()


def test_diff_on_formatted_file_is_empty(prose: RunProse, source: WriteSource) -> None:
    source("tidy.prose", TIDY)
    result = prose("fmt", "--diff", "tidy.prose")
    assert result.returncode == 0
    assert result.stdout == ""


def test_stdin_to_stdout(prose: RunProse) -> None:
    result = prose("fmt", "-", stdin=MESSY)
    assert result.returncode == 0, result.stderr
    assert result.stdout == TIDY


def test_stdin_crlf_stays_crlf(tmp_path: Path) -> None:
    # The `prose` fixture reads output as text (CRLF would come back as LF): use bytes.
    result = subprocess.run(
        [sys.executable, "-m", "openprose", "fmt", "-"],
        cwd=tmp_path,
        input=MESSY.replace("\n", "\r\n").encode(),
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == TIDY.replace("\n", "\r\n").encode()


def test_stdin_keeps_its_byte_order_mark(tmp_path: Path) -> None:
    for before, after in [(b"\xef\xbb\xbf", b"\xef\xbb\xbf"), (b"", b"")]:
        result = subprocess.run(
            [sys.executable, "-m", "openprose", "fmt", "-"],
            cwd=tmp_path,
            input=before + MESSY.encode(),
            capture_output=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout == after + TIDY.encode()


def test_stdin_already_formatted(prose: RunProse) -> None:
    result = prose("fmt", "-", stdin=TIDY)
    assert result.returncode == 0
    assert result.stdout == TIDY


def test_stdin_check(prose: RunProse) -> None:
    result = prose("fmt", "--check", "-", stdin=MESSY)
    assert result.returncode == 1
    assert TIDY not in result.stdout


def test_directory_is_searched_recursively(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    top = source("proj/top.prose", MESSY)
    deep = source("proj/sub/deeper/deep.prose", MESSY)
    other = source("proj/notes.txt", MESSY)
    result = prose("fmt", "proj")
    assert result.returncode == 0, result.stderr
    assert top.read_bytes() == TIDY.encode()
    assert deep.read_bytes() == TIDY.encode()
    assert other.read_bytes() == MESSY.encode(), "only .prose files are formatted"


def test_default_is_the_current_directory(prose: RunProse, source: WriteSource) -> None:
    path = source("here/a.prose", MESSY)
    result = prose("fmt", cwd=path.parent)
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == TIDY.encode()


def test_syntax_error_formats_the_clean_statements_only(
    prose: RunProse, source: WriteSource
) -> None:
    broken = 'session  "a"\nlet   x = = 3\nparallel:\n    session  "b"\n'
    path = source("broken.prose", broken)
    result = prose("fmt", "broken.prose")
    assert path.read_bytes() == b'session "a"\nlet   x = = 3\nparallel:\n  session "b"\n'
    assert "broken.prose" in result.stderr
    assert "syntax error" in result.stderr
    assert result.returncode == 0


def test_nonexistent_path_exits_2(prose: RunProse) -> None:
    result = prose("fmt", "missing.prose")
    assert result.returncode == 2
    assert "missing.prose" in result.stderr


def test_nonexistent_path_does_not_stop_the_others(prose: RunProse, source: WriteSource) -> None:
    path = source("messy.prose", MESSY)
    result = prose("fmt", "missing.prose", "messy.prose")
    assert result.returncode == 2
    assert path.read_bytes() == TIDY.encode()


def test_crlf_file_stays_crlf(prose: RunProse, source: WriteSource) -> None:
    path = source("crlf.prose", MESSY.replace("\n", "\r\n"))
    result = prose("fmt", "crlf.prose")
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == TIDY.replace("\n", "\r\n").encode()


def test_crlf_formatted_file_passes_check(prose: RunProse, source: WriteSource) -> None:
    source("crlf.prose", TIDY.replace("\n", "\r\n"))
    result = prose("fmt", "--check", "crlf.prose")
    assert result.returncode == 0, result.stdout


def test_byte_order_mark_is_kept(prose: RunProse, source: WriteSource) -> None:
    path = source("bom.prose", "\ufeff" + MESSY)
    result = prose("fmt", "bom.prose")
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == b"\xef\xbb\xbf" + TIDY.encode()


def test_byte_order_mark_formatted_file_passes_check(prose: RunProse, source: WriteSource) -> None:
    path = source("bom.prose", "\ufeff" + TIDY)
    result = prose("fmt", "--check", "bom.prose")
    assert result.returncode == 0, result.stdout
    assert path.read_bytes() == b"\xef\xbb\xbf" + TIDY.encode()


def test_non_ascii_content_is_kept(prose: RunProse, source: WriteSource) -> None:
    path = source("u.prose", 'session   "café — 𝄞"\n')
    result = prose("fmt", "u.prose")
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == 'session "café — 𝄞"\n'.encode()


def test_file_permissions_are_kept(prose: RunProse, source: WriteSource) -> None:
    path = source("mode.prose", MESSY)
    path.chmod(0o640)
    result = prose("fmt", "mode.prose")
    assert result.returncode == 0, result.stderr
    assert path.stat().st_mode & 0o777 == 0o640
    assert path.read_bytes() == TIDY.encode()


def test_second_run_changes_nothing(prose: RunProse, source: WriteSource) -> None:
    path = source("messy.prose", MESSY)
    assert prose("fmt", "messy.prose").returncode == 0
    first = path.read_bytes()
    result = prose("fmt", "--check", "messy.prose")
    assert result.returncode == 0
    assert path.read_bytes() == first


def test_comment_on_a_last_line_without_newline_survives(
    prose: RunProse, source: WriteSource
) -> None:
    path = source("end.prose", 'session   "a"\n# keep me')
    result = prose("fmt", "end.prose")
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == b'session "a"\n# keep me\n'


# --------------------------------------------------------------------------- where it writes


def test_symlink_is_kept_and_its_target_rewritten(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    target = source("real/target.prose", MESSY)
    link = tmp_path / "link.prose"
    link.symlink_to(Path("real", "target.prose"))
    result = prose("fmt", "link.prose")
    assert result.returncode == 0, result.stderr
    assert link.is_symlink(), "the link must stay a link"
    assert os.readlink(link) == str(Path("real", "target.prose"))
    assert target.read_bytes() == TIDY.encode()
    assert sorted(p.name for p in target.parent.iterdir()) == ["target.prose"], "no temporaries"
    assert "1 file reformatted." in result.stderr


def test_hard_links_all_see_the_change(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    first = source("first.prose", MESSY)
    second = tmp_path / "other" / "second.notprose"
    second.parent.mkdir()
    os.link(first, second)
    inode = first.stat().st_ino
    result = prose("fmt", "first.prose")
    assert result.returncode == 0, result.stderr
    assert first.stat().st_ino == inode == second.stat().st_ino
    assert first.stat().st_nlink == 2
    assert second.read_bytes() == TIDY.encode()


def test_read_only_file_is_refused_and_the_others_formatted(
    prose: RunProse, source: WriteSource
) -> None:
    # Checked on the mode bits: under root, os.access would say the file is writable.
    locked = source("locked.prose", MESSY)
    locked.chmod(0o444)
    other = source("other.prose", MESSY)
    result = prose("fmt", "locked.prose", "other.prose")
    assert result.returncode == 2
    assert locked.read_bytes() == MESSY.encode()
    assert locked.stat().st_mode & 0o777 == 0o444
    assert other.read_bytes() == TIDY.encode()
    assert "prose: error: cannot write locked.prose: the file is read-only" in result.stderr
    assert "1 file reformatted, 1 file could not be written." in result.stderr


def test_read_only_target_of_a_symlink_is_refused(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    target = source("target.prose", MESSY)
    target.chmod(0o444)
    (tmp_path / "link.prose").symlink_to("target.prose")
    result = prose("fmt", "link.prose")
    assert result.returncode == 2
    assert target.read_bytes() == MESSY.encode()
    assert "cannot write link.prose: the file is read-only" in result.stderr
    assert "1 file could not be written." in result.stderr


def test_read_only_file_that_needs_no_change_is_fine(prose: RunProse, source: WriteSource) -> None:
    path = source("tidy.prose", TIDY)
    path.chmod(0o444)
    result = prose("fmt", "tidy.prose")
    assert result.returncode == 0, result.stderr
    assert "1 file left unchanged." in result.stderr


def test_check_does_not_mind_a_read_only_file(prose: RunProse, source: WriteSource) -> None:
    path = source("locked.prose", MESSY)
    path.chmod(0o444)
    result = prose("fmt", "--check", "locked.prose")
    assert result.returncode == 1
    assert "Would reformat: locked.prose" in result.stdout
