"""What users expect of any command line (issue 13, item 3), end to end through ``prose``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from openprose.cli.run import program_changes
from tests.cli.fixture_types import RunProse, WriteSource

TIDY = 'session "a"\n'
MESSY = 'session  "a"\n'
BROKEN_BUT_TIDY = 'session "a"\nlet x = = 3\n'


# ------------------------------------------------------------------ usage of the subcommand


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["check", "--bogus"], "usage: prose check "),
        (["fmt", "--bogus"], "usage: prose fmt "),
        (["lsp", "--bogus"], "usage: prose lsp "),
        (["runs", "list", "--bogus"], "usage: prose runs list "),
    ],
)
def test_an_unknown_option_shows_the_usage_of_its_command(
    prose: RunProse, argv: list[str], usage: str
) -> None:
    result = prose(*argv)
    assert result.returncode == 2
    assert result.stderr.startswith(usage), result.stderr
    command = usage.removeprefix("usage: ").strip()
    assert f"{command}: error: unrecognized arguments: --bogus" in result.stderr


def test_a_bad_option_value_already_showed_the_commands_usage(prose: RunProse) -> None:
    result = prose("check", "--format", "nope")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: prose check ")


# ------------------------------------------------------------------ prose lsp and prose-ls


def _options(help_text: str) -> list[str]:
    """The option strings listed in a --help text, in order."""
    return re.findall(r"^\s+(--?[a-z][-a-z]*)", help_text, re.MULTILINE)


def test_prose_lsp_and_prose_ls_accept_the_same_options(prose: RunProse) -> None:
    lsp = prose("lsp", "--help")
    server = subprocess.run(
        [sys.executable, "-m", "openprose.lsp", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert lsp.returncode == server.returncode == 0, (lsp.stderr, server.stderr)
    assert _options(lsp.stdout) == _options(server.stdout)
    assert {"--stdio", "--tcp", "--log-level", "--version"} <= set(_options(lsp.stdout))


def test_prose_lsp_takes_stdio_like_prose_ls(prose: RunProse) -> None:
    # Standard input at its end: the client went away, so the server stops with status 1,
    # not 2 for an unknown option.
    result = prose("lsp", "--stdio", stdin="")
    assert "unrecognized arguments" not in result.stderr
    assert result.returncode == 1, result.stderr


def test_prose_lsp_version_is_the_servers(prose: RunProse) -> None:
    from openprose import __version__

    result = prose("lsp", "--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"prose-ls {__version__}"


@pytest.mark.parametrize("argv", [["--log-level", "verbose"], ["--tcp", "host:port"]])
def test_a_bad_server_option_is_a_usage_error(prose: RunProse, argv: list[str]) -> None:
    result = prose("lsp", *argv)
    assert result.returncode == 2
    assert result.stderr.startswith("usage: prose lsp ")
    assert "Traceback" not in result.stderr


# ------------------------------------------------------------------ no files found


@pytest.mark.parametrize("command", [["check"], ["fmt"], ["fmt", "--check"]])
def test_a_directory_without_prose_files_is_a_warning_and_exit_2(
    prose: RunProse, source: WriteSource, command: list[str]
) -> None:
    source("docs/readme.txt", "not a program\n")
    result = prose(*command, "docs")
    assert result.returncode == 2
    assert "prose: warning: no .prose files found under docs" in result.stderr


def test_the_current_directory_without_prose_files_is_a_warning(prose: RunProse) -> None:
    result = prose("check")
    assert result.returncode == 2
    assert "prose: warning: no .prose files found under ." in result.stderr


@pytest.mark.parametrize("command", ["check", "fmt"])
def test_a_mistyped_path_is_an_error_and_exit_2(prose: RunProse, command: str) -> None:
    result = prose(command, "srcc")
    assert result.returncode == 2
    assert "cannot read srcc: No such file or directory" in result.stderr


def test_files_alongside_an_empty_directory_are_checked(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    source("src/a.prose", TIDY)
    (tmp_path / "empty").mkdir()
    result = prose("check", "src", "empty")
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr


# ------------------------------------------------------------------ fmt and syntax errors


@pytest.mark.parametrize("option", ["--check", "--diff"])
def test_fmt_check_fails_on_a_file_it_cannot_format(
    prose: RunProse, source: WriteSource, option: str
) -> None:
    # Everything that parses is already tidy: before, --check said nothing was wrong.
    path = source("broken.prose", BROKEN_BUT_TIDY)
    result = prose("fmt", option, "broken.prose")
    assert result.returncode == 1
    assert (
        "prose: error: broken.prose: 1 statement has syntax errors and cannot be formatted "
        "(run `prose check broken.prose` to see it)" in result.stderr
    )
    assert "1 file with syntax errors." in result.stderr
    assert path.read_text(encoding="utf-8") == BROKEN_BUT_TIDY


def test_fmt_check_on_standard_input_with_syntax_errors_fails(prose: RunProse) -> None:
    result = prose("fmt", "--check", "-", stdin=BROKEN_BUT_TIDY)
    assert result.returncode == 1
    assert "<stdin>: 1 statement has syntax errors" in result.stderr
    assert "`prose check -`" in result.stderr


def test_fmt_without_check_still_formats_around_syntax_errors(
    prose: RunProse, source: WriteSource
) -> None:
    path = source("broken.prose", 'session  "a"\nlet x = = 3\nlet y = = 4\n')
    result = prose("fmt", "broken.prose")
    assert result.returncode == 0, result.stderr
    assert path.read_text(encoding="utf-8").startswith('session "a"\n')
    assert "prose: warning: broken.prose: 2 statements have syntax errors" in result.stderr


# ------------------------------------------------------------------ plurals


def test_fmt_summary_counts_in_words(prose: RunProse, source: WriteSource) -> None:
    source("a.prose", MESSY)
    source("b.prose", TIDY)
    source("c.prose", TIDY)
    result = prose("fmt", "--check", ".")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "1 file would be reformatted, 2 files already formatted."
    )
    result = prose("fmt", ".")
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "1 file reformatted, 2 files left unchanged."


def test_no_cli_message_pluralises_with_parentheses() -> None:
    cli = Path(__file__).parents[2] / "server" / "openprose" / "cli"
    offenders = [
        f"{path.name}:{number}"
        for path in sorted(cli.glob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"[a-z]\((s|es)\)", line)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("after", "expected"),
    [("a\nB\nc\n", "  2 lines changed:"), ("a\nb\nc\nd\n", "  1 line changed:")],
)
def test_program_changes_count_in_words(after: str, expected: str) -> None:
    assert program_changes("a\nb\nc\n", after).splitlines()[0] == expected


def test_run_summary_counts_in_words(prose: RunProse, source: WriteSource) -> None:
    source("one.prose", 'session "hi"\n')
    result = prose("run", "one.prose")
    assert result.returncode == 0, result.stderr
    match = re.search(r"succeeded: 1 session, (\d+) (tokens?) in", result.stderr)
    assert match, result.stderr
    assert match.group(2) == ("token" if match.group(1) == "1" else "tokens")
