"""``prose check --format github``: GitHub Actions workflow commands.

The commands are read back the way the Actions runner reads them (its ActionCommand parser):
the name up to the first space, properties split at ``,`` and then at the first ``=``, the data
after the first ``::`` that follows, then ``%XX`` escapes decoded with ``%25`` last.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from openprose.cli.github import escape_data, escape_property, format_github
from openprose.diagnostics import Diagnostic, Severity
from tests.cli.fixture_types import RunProse, WriteSource

_DATA_ESCAPES = (("%0D", "\r"), ("%0A", "\n"))
_PROPERTY_ESCAPES = (*_DATA_ESCAPES, ("%3A", ":"), ("%2C", ","))


def _unescape(text: str, escapes: tuple[tuple[str, str], ...]) -> str:
    for escaped, plain in escapes:
        text = text.replace(escaped, plain)
    return text.replace("%25", "%")


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """(command, properties, message) of one ``::command props::message`` line."""
    assert line.startswith("::"), line
    head, separator, data = line[2:].partition("::")
    assert separator, f"no data separator in {line!r}"
    name, _, listed = head.partition(" ")
    properties: dict[str, str] = {}
    for pair in listed.split(","):
        key, equals, value = pair.partition("=")
        assert equals, f"property without a value in {line!r}"
        properties[key] = _unescape(value, _PROPERTY_ESCAPES)
    return name, properties, _unescape(data, _DATA_ESCAPES)


def diagnostic(
    message: str = "undefined variable `y`",
    severity: Severity = Severity.ERROR,
    start: tuple[int, int] = (3, 9),
    end: tuple[int, int] = (3, 12),
) -> Diagnostic:
    return Diagnostic("E044", message, severity, start, end)


def test_an_error_is_an_error_command_with_the_range_from_column_1() -> None:
    line = format_github("flows/a.prose", diagnostic())
    assert line == (
        "::error file=flows/a.prose,line=3,col=10,endLine=3,endColumn=13,title=E044"
        "::flows/a.prose:3:10: E044 undefined variable `y`"
    )


def test_each_severity_has_its_annotation_level() -> None:
    levels = {
        severity: parse_command(format_github("a.prose", diagnostic(severity=severity)))[0]
        for severity in Severity
    }
    assert levels == {
        Severity.ERROR: "error",
        Severity.WARNING: "warning",
        Severity.INFORMATION: "notice",
        Severity.HINT: "notice",
    }


def test_escapes_follow_the_actions_toolkit() -> None:
    assert escape_data("100%\r\nnext: a, b") == "100%25%0D%0Anext: a, b"
    assert escape_property("a:b,c%d\ne") == "a%3Ab%2Cc%25d%0Ae"
    # "%" first: an escape sequence already in the text must survive as text.
    assert escape_property("%3A") == "%253A"


def test_separators_in_the_path_and_message_stay_inside_their_fields() -> None:
    path = "odd, name: 100%.prose"
    message = "line one\nline two: a, b :: 50%"
    name, properties, data = parse_command(format_github(path, diagnostic(message)))
    assert name == "error"
    assert properties["file"] == path
    assert properties["title"] == "E044"
    assert data == f"{path}:3:10: E044 {message}"


@given(
    path=st.text(min_size=1, max_size=30).filter(lambda p: "\x00" not in p),
    message=st.text(max_size=60),
)
def test_any_path_and_message_read_back_as_written(path: str, message: str) -> None:
    line = format_github(path, diagnostic(message))
    assert "\n" not in line and "\r" not in line
    _, properties, data = parse_command(line)
    assert properties["file"] == path
    assert properties["line"] == "3"
    assert data == f"{path}:3:10: E044 {message}"


def test_check_prints_one_command_per_diagnostic(prose: RunProse, source: WriteSource) -> None:
    source("flows/bad.prose", 'session "Hello\n')
    source("flows/warn.prose", 'session ""\n')
    source("flows/clean.prose", 'session "Hello"\n')
    result = prose("check", "--format", "github", "flows")
    assert result.returncode == 1, result.stderr
    commands = [parse_command(line) for line in result.stdout.splitlines()]
    assert [(name, props["file"], props["title"]) for name, props, _ in commands] == [
        ("error", "flows/bad.prose", "E001"),
        ("warning", "flows/warn.prose", "W001"),
    ]
    error = commands[0][1]
    assert (error["line"], error["col"], error["endLine"]) == ("1", "9", "1")
    # The summary stays on standard error, out of the commands' way.
    assert result.stderr.startswith("Found 1 error and 1 warning in 2 files")


def test_warnings_alone_exit_0(prose: RunProse, source: WriteSource) -> None:
    source("warn.prose", 'session ""\n')
    result = prose("check", "--format", "github", "warn.prose")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("::warning file=warn.prose,line=1,")
