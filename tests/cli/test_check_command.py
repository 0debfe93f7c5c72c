"""``prose check`` end to end: the real command in a child process, on files we write."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from openprose import __version__
from openprose.diagnostics import Diagnostic, Severity
from tests.cli.fixture_types import RunProse, WriteSource

CLEAN = """\
agent editor:
  model: sonnet
  prompt: "You tighten prose"

let draft = session "Write two sentences about tides"
session: editor
  prompt: "Shorten {draft}"
"""

UNTERMINATED = 'session "Hello\n'


JSON_KEYS = {"path", "line", "column", "end_line", "end_column", "severity", "code", "message"}


def caret_run(line: str) -> tuple[int, int]:
    """(0-based start, width) of the ``^~~~`` run in a printed caret line (after the 2-space
    indent the renderer adds)."""
    match = re.fullmatch(r"  ([ \t]*)(\^~*)", line)
    assert match, f"not a caret line: {line!r}"
    return len(match.group(1)), len(match.group(2))


def test_clean_file_passes(prose: RunProse, source: WriteSource) -> None:
    source("clean.prose", CLEAN)
    result = prose("check", "clean.prose")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == "All checks passed (1 file).\n"


def test_unterminated_string_shows_header_line_and_carets(
    prose: RunProse, source: WriteSource
) -> None:
    source("hello.prose", UNTERMINATED)
    result = prose("check", "hello.prose")
    assert result.returncode == 1
    header, line, carets = result.stdout.splitlines()[:3]
    assert re.fullmatch(r"hello\.prose:1:9: error\[E001\]: .+", header), header
    assert line == '  session "Hello'
    start, width = caret_run(carets)
    assert start == len('session "') - 1  # under the opening quote
    end_column = json.loads(prose("check", "--format", "json", "hello.prose").stdout)[0][
        "end_column"
    ]
    assert width == max(end_column - 9, 1)
    assert result.stderr.startswith("Found 1 error in 1 file (1 checked).")


def test_json_format(prose: RunProse, source: WriteSource) -> None:
    source("a.prose", CLEAN)
    source("b.prose", 'session "fine"\n' + UNTERMINATED)
    result = prose("check", "--format", "json", "a.prose", "b.prose")
    assert result.returncode == 1
    items = json.loads(result.stdout)
    assert isinstance(items, list) and items
    for item in items:
        assert set(item) == JSON_KEYS
        for key in ("line", "column", "end_line", "end_column"):
            assert type(item[key]) is int and item[key] >= 1
        for key in ("path", "severity", "code", "message"):
            assert type(item[key]) is str
        assert item["severity"] in {"error", "warning", "information", "hint"}
    first = items[0]
    where = (first["path"], first["line"], first["column"], first["code"])
    assert where == ("b.prose", 2, 9, "E001")
    assert first["severity"] == "error"
    assert (first["end_line"], first["end_column"]) >= (2, 10)


def test_json_format_on_clean_files_is_an_empty_array(prose: RunProse, source: WriteSource) -> None:
    source("a.prose", CLEAN)
    result = prose("check", "--format", "json")
    assert (result.returncode, json.loads(result.stdout)) == (0, [])


def test_concise_format(prose: RunProse, source: WriteSource) -> None:
    source("hello.prose", UNTERMINATED)
    result = prose("check", "--format", "concise", "hello.prose")
    assert result.returncode == 1
    assert re.fullmatch(r"hello\.prose:1:9: error\[E001\] \S.*\n", result.stdout), result.stdout


def test_missing_path_exits_2_with_one_line(prose: RunProse) -> None:
    result = prose("check", "no-such.prose")
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == (
        "prose: error: cannot read no-such.prose: No such file or directory"
    )
    assert "Traceback" not in result.stderr


def test_non_utf8_file_exits_2_with_one_line(prose: RunProse, tmp_path: Path) -> None:
    (tmp_path / "latin1.prose").write_bytes('session "café"\n'.encode("latin-1"))
    result = prose("check", "latin1.prose")
    assert result.returncode == 2
    first, *rest = result.stderr.splitlines()
    assert first.startswith("prose: error: cannot read latin1.prose: not valid UTF-8")
    assert "Traceback" not in result.stderr
    assert rest == ["No problems found in 0 files, but 1 path could not be read."]


def test_unreadable_file_does_not_stop_the_others(prose: RunProse, source: WriteSource) -> None:
    source("bad.prose", UNTERMINATED)
    result = prose("check", "--format", "concise", "missing.prose", "bad.prose")
    assert result.returncode == 2  # an unreadable path outranks errors found
    assert "bad.prose:1:9: error[E001]" in result.stdout


def test_usage_errors_exit_2(prose: RunProse) -> None:
    assert prose("check", "--format", "xml").returncode == 2
    assert prose().returncode == 2
    assert prose("frobnicate").returncode == 2


def test_directories_are_searched_recursively(prose: RunProse, source: WriteSource) -> None:
    source("top.prose", UNTERMINATED)
    source("nested/deeper/inner.prose", UNTERMINATED)
    source("nested/clean.prose", CLEAN)
    source("nested/readme.txt", UNTERMINATED)  # not a .prose file: ignored
    result = prose("check", "--format", "concise", ".")
    assert result.returncode == 1
    paths = [line.split(":")[0] for line in result.stdout.splitlines()]
    assert paths == [str(Path("nested/deeper/inner.prose")), "top.prose"]
    assert "(3 checked)" in result.stderr


def test_no_path_means_the_current_directory(prose: RunProse, source: WriteSource) -> None:
    source("sub/one.prose", CLEAN)
    source("two.prose", CLEAN)
    result = prose("check")
    assert (result.returncode, result.stderr) == (0, "All checks passed (2 files).\n")


def test_crlf_line_endings(tmp_path: Path) -> None:
    (tmp_path / "crlf.prose").write_bytes(b'session "fine"\r\n\r\nsession "Hello\r\n')
    result = subprocess.run(
        [sys.executable, "-m", "openprose", "check", "crlf.prose"],
        cwd=tmp_path,
        capture_output=True,  # bytes: a stray carriage return must be visible
    )
    assert result.returncode == 1
    out = result.stdout.decode("utf-8")
    assert "\r" not in out
    header, line, carets = out.splitlines()[:3]
    assert header.startswith("crlf.prose:3:9: error[E001]: ")
    assert line == '  session "Hello'
    assert caret_run(carets)[0] == 8


def test_columns_count_characters_after_non_ascii(prose: RunProse, source: WriteSource) -> None:
    # Astral (two UTF-16 units, four bytes) and accented characters before the error.
    text = 'session "Crème brûlée 🙂 \\q"\n'
    source("accents.prose", text)
    result = prose("check", "--format", "json", "accents.prose")
    assert result.returncode == 1
    [item] = [i for i in json.loads(result.stdout) if i["code"] == "E002"]
    assert item["line"] == 1
    assert item["column"] == text.index("\\q") + 1
    column = text.index("\\q")
    human = prose("check", "accents.prose").stdout.splitlines()
    assert human[0].startswith(f"accents.prose:1:{column + 1}: error[E002]: ")
    assert caret_run(human[2])[0] == column + 1  # 🙂 takes two terminal cells


def test_caret_lines_up_after_wide_and_combining_characters(
    prose: RunProse, source: WriteSource
) -> None:
    # CJK and emoji take two cells, a combining accent none, a tab is copied as it is.
    prefix = 'session "\t日本 😀 e\u0301 '
    text = prefix + '\\q"\n'
    source("wide.prose", text)
    result = prose("check", "wide.prose")
    header, line, carets = result.stdout.splitlines()[:3]
    column = len(prefix)
    assert header.startswith(f"wide.prose:1:{column + 1}: error[E002]: ")
    assert line == "  " + text.rstrip("\n")
    assert carets == "  " + " " * len('session "') + "\t" + " " * len("日日本本 😀😀 e ") + "^~"
    items = json.loads(prose("check", "--format", "json", "wide.prose").stdout)
    [item] = [i for i in items if i["code"] == "E002"]
    assert (item["column"], item["end_column"]) == (column + 1, column + 3)  # code points


def test_unterminated_string_after_non_ascii(prose: RunProse, source: WriteSource) -> None:
    text = 'let greeting = "naïve 🙂"\nsession "🙂 done" -> session "ü\n'
    source("u.prose", text)
    items = json.loads(prose("check", "--format", "json", "u.prose").stdout)
    e001 = [i for i in items if i["code"] == "E001"]
    assert [(i["line"], i["column"]) for i in e001] == [(2, text.splitlines()[1].rindex('"') + 1)]


def test_byte_order_mark_does_not_shift_columns(prose: RunProse, tmp_path: Path) -> None:
    (tmp_path / "bom.prose").write_bytes(b"\xef\xbb\xbf" + UNTERMINATED.encode())
    result = prose("check", "--format", "concise", "bom.prose")
    assert result.stdout.startswith("bom.prose:1:9: error[E001]")


def test_coding_comment_is_not_an_encoding_declaration(
    prose: RunProse, source: WriteSource
) -> None:
    source("coding.prose", '# coding: latin-1\nsession "café"\n')
    assert prose("check", "coding.prose").returncode == 0


def test_standard_input(prose: RunProse) -> None:
    result = prose("check", "--format", "concise", "-", stdin=UNTERMINATED)
    assert result.returncode == 1
    assert result.stdout.startswith("<stdin>:1:9: error[E001]")


class TestColour:
    def test_pipes_get_no_colour_by_default(self, prose: RunProse, source: WriteSource) -> None:
        source("hello.prose", UNTERMINATED)
        assert "\x1b[" not in prose("check", "hello.prose").stdout

    def test_always_colours_even_with_no_color(self, prose: RunProse, source: WriteSource) -> None:
        source("hello.prose", UNTERMINATED)
        assert "\x1b[" in prose("check", "--color", "always", "hello.prose", NO_COLOR="1").stdout

    def test_never(self, prose: RunProse, source: WriteSource) -> None:
        source("hello.prose", UNTERMINATED)
        assert "\x1b[" not in prose("check", "--color=never", "hello.prose").stdout


def test_version(prose: RunProse) -> None:
    result = prose("--version")
    assert (result.returncode, result.stdout) == (0, f"prose {__version__}\n")


# In-process: the analyzer does not exist yet, so warnings are injected to pin down the rule
# that warnings alone never fail a check.


def test_warnings_alone_exit_0(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], source: WriteSource
) -> None:
    import openprose.checking
    from openprose.cli import main

    warning = Diagnostic("W001", "session prompt is empty", Severity.WARNING, (1, 8), (1, 10))
    # Every way of checking ends in checking.finish (the human format keeps the analysis
    # for its hints, the others call check_text).
    monkeypatch.setattr(openprose.checking, "finish", lambda *args: [warning])
    path = source("w.prose", 'session ""\n')
    assert main(["check", "--color", "never", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"{path}:1:9: warning[W001]: session prompt is empty",
        '  session ""',
        "          ^~",
    ]
    assert err == "Found 1 warning in 1 file (1 checked).\n"
