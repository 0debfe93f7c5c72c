"""The renderers, on hand-made diagnostics: no parser involved."""

from __future__ import annotations

import io
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.cli.render import (
    Style,
    caret_line,
    cell_width,
    display_line,
    format_concise,
    format_human,
    format_summary,
    source_lines,
    to_json,
    wants_colour,
)
from openprose.diagnostics import Diagnostic, Related, Severity


def diagnostic(
    start: tuple[int, int],
    end: tuple[int, int],
    *,
    code: str = "E004",
    message: str = "unexpected token",
    severity: Severity = Severity.ERROR,
    related: tuple[Related, ...] = (),
) -> Diagnostic:
    return Diagnostic(code, message, severity, start, end, related)


class TestCaretLine:
    def test_single_character(self) -> None:
        assert caret_line("abc", 1, 2) == " ^"

    def test_run_under_the_whole_range(self) -> None:
        assert caret_line('session "Hello', 8, 14) == "        ^~~~~~"

    def test_empty_range_is_a_lone_caret(self) -> None:
        assert caret_line("abc", 1, 1) == " ^"

    def test_range_continuing_on_later_lines_stops_at_end_of_line(self) -> None:
        assert caret_line("let x = ***", 8, None) == "        ^~~"

    def test_caret_just_past_the_last_character(self) -> None:
        assert caret_line("abc", 3, 3) == "   ^"
        assert caret_line("abc", 3, None) == "   ^"

    def test_end_beyond_the_line_is_clipped(self) -> None:
        assert caret_line("abc", 1, 99) == " ^~"

    def test_tabs_before_the_range_are_copied(self) -> None:
        assert caret_line('\tsession\t"x', 9, 11) == "\t       \t^~"

    def test_column_beyond_the_line_is_padded(self) -> None:
        assert caret_line("ab", 4, 5) == "    ^"

    def test_counts_cells_not_bytes_or_utf16_units(self) -> None:
        # 🙂 is wide (two cells); é is one character and one cell.
        line = 'session "🙂 é" x'
        column = line.index("x")
        assert caret_line(line, column, column + 1) == " " * (column + 1) + "^"


class TestTerminalCells:
    """The marker is padded by the cells the terminal gives each character, not by code
    points: wide (East Asian W/F) characters take two, combining and zero-width ones none."""

    def test_cjk_before_the_range(self) -> None:
        line = 'session "日本語" x'
        column = line.index("x")
        assert caret_line(line, column, column + 1) == " " * (column + 3) + "^"

    def test_run_under_a_wide_character_covers_both_cells(self) -> None:
        assert caret_line("let 名 = 1", 4, 5) == "    ^~"
        assert caret_line('session "日本"', 9, 11) == " " * 9 + "^~~~"

    def test_emoji_before_and_inside_the_range(self) -> None:
        line = 'session "😀 x"'
        assert caret_line(line, line.index("x"), line.index("x") + 1) == " " * 12 + "^"
        assert caret_line(line, 9, 11) == " " * 9 + "^~~"

    def test_combining_accents_take_no_cell(self) -> None:
        line = 'session "e\u0301te\u0301" x'
        column = line.index("x")
        assert caret_line(line, column, column + 1) == " " * (column - 2) + "^"
        # e + accent is one cell: the run under "été" is three cells wide.
        assert caret_line(line, 9, 14) == " " * 9 + "^~~"

    def test_range_starting_on_a_combining_accent_points_at_its_base(self) -> None:
        # The accent is drawn in the cell of the letter it sits on.
        assert caret_line("ae\u0301b", 2, 4) == " ^~"

    def test_zero_width_characters_take_no_cell(self) -> None:
        line = "a\u200bb\u200dc x"
        column = line.index("x")
        assert caret_line(line, column, column + 1) == " " * (column - 2) + "^"

    def test_tab_and_wide_characters_before_the_range(self) -> None:
        assert caret_line("\t名\tx", 3, 4) == "\t  \t^"

    def test_tab_inside_the_range_is_copied_so_the_rest_stays_aligned(self) -> None:
        assert caret_line("ab\tcd", 0, 5) == "^~\t~~"

    def test_range_of_tabs_only_is_a_caret_at_the_first(self) -> None:
        assert caret_line("\t\tx", 0, 2) == "^"

    def test_range_starting_with_a_tab_puts_the_caret_after_it(self) -> None:
        # Tab stops are the terminal's: a caret before the tab could push the rest of the
        # run one stop too far, so the tab is copied and the caret goes under what follows.
        assert caret_line("a\tb日", 1, 4) == " \t^~~"

    def test_control_characters_count_as_the_one_cell_of_their_replacement(self) -> None:
        line = "a\x1bb x"
        assert caret_line(line, 4, 5) == "    ^"
        assert display_line(line) == "a\ufffdb x"


def test_display_line_replaces_control_characters_one_for_one() -> None:
    assert display_line("a\x1b[2Jb\tc\x7f") == "a\ufffd[2Jb\tc\ufffd"


def test_source_lines_split_only_at_line_ends() -> None:
    assert source_lines("a\r\nb\x0cc\rd\ne") == ["a", "b\x0cc", "d", "e"]


class TestHumanFormat:
    def test_header_source_line_and_carets(self) -> None:
        text = 'agent writer:\n  model: sonnet\nsession "Hello\n'
        d = diagnostic((3, 8), (3, 14), code="E001", message="unterminated string literal")
        assert format_human("a.prose", d, source_lines(text)).splitlines() == [
            "a.prose:3:9: error[E001]: unterminated string literal",
            '  session "Hello',
            "          ^~~~~~",
        ]

    def test_multi_line_range_underlines_the_rest_of_the_first_line(self) -> None:
        lines = source_lines("if ***\n  still open\n")
        d = diagnostic((1, 3), (3, 0), code="E029", message="`***` is not closed")
        assert format_human("p.prose", d, lines).splitlines()[1:] == ["  if ***", "     ^~~"]

    def test_related_information_as_notes(self) -> None:
        lines = source_lines("agent a:\n  model: opus\nagent a:\n  model: haiku\n")
        first = Related("first defined here", (1, 6), (1, 7))
        elsewhere = Related("imported here", (2, 0), (2, 3), path="lib/other.prose")
        d = diagnostic(
            (3, 6), (3, 7), code="E006", message="duplicate agent 'a'", related=(first, elsewhere)
        )
        assert format_human("main.prose", d, lines).splitlines() == [
            "main.prose:3:7: error[E006]: duplicate agent 'a'",
            "  agent a:",
            "        ^",
            "  note: main.prose:1:7: first defined here",
            "  note: lib/other.prose:2:1: imported here",
        ]

    def test_severity_label(self) -> None:
        d = diagnostic((1, 0), (1, 7), code="W001", severity=Severity.WARNING, message="m")
        assert format_human("x", d, ["session"]).startswith("x:1:1: warning[W001]: m")

    def test_position_on_a_missing_line_prints_only_the_header(self) -> None:
        d = diagnostic((5, 0), (5, 0))
        assert format_human("x", d, ["one line"]) == "x:5:1: error[E004]: unexpected token"

    def test_colour_wraps_header_parts_and_carets(self) -> None:
        d = diagnostic((1, 0), (1, 3))
        coloured = format_human("x", d, ["abc"], Style(colour=True))
        assert "\x1b[1;31merror[E004]:\x1b[0m" in coloured
        assert "\x1b[1;31m^~~\x1b[0m" in coloured
        assert format_human("x", d, ["abc"], Style(colour=False)).count("\x1b") == 0


def test_concise_format() -> None:
    d = diagnostic((2, 4), (2, 9), code="E039", message="unknown pipe operator 'sort'")
    assert format_concise("dir/a.prose", d) == (
        "dir/a.prose:2:5: error[E039] unknown pipe operator 'sort'"
    )


def test_json_object_is_one_based_with_exclusive_end() -> None:
    d = diagnostic((2, 4), (3, 0), severity=Severity.HINT)
    assert to_json("a.prose", d) == {
        "path": "a.prose",
        "line": 2,
        "column": 5,
        "end_line": 3,
        "end_column": 1,
        "severity": "hint",
        "code": "E004",
        "message": "unexpected token",
    }


@pytest.mark.parametrize(
    ("severity", "label"),
    [
        (Severity.ERROR, "error"),
        (Severity.WARNING, "warning"),
        (Severity.INFORMATION, "information"),
        (Severity.HINT, "hint"),
    ],
)
def test_json_severity_names(severity: Severity, label: str) -> None:
    assert to_json("a", diagnostic((1, 0), (1, 1), severity=severity))["severity"] == label


class TestSummary:
    def test_clean(self) -> None:
        assert format_summary(Counter(), 3, 0) == "All checks passed (3 files)."
        assert format_summary(Counter(), 1, 0) == "All checks passed (1 file)."

    def test_errors_and_warnings(self) -> None:
        counts = Counter({Severity.ERROR: 2, Severity.WARNING: 1})
        expected = "Found 2 errors and 1 warning in 2 files (3 checked)."
        assert format_summary(counts, 3, 2) == expected

    def test_every_severity(self) -> None:
        counts = Counter(
            {Severity.HINT: 2, Severity.ERROR: 1, Severity.INFORMATION: 1, Severity.WARNING: 3}
        )
        assert format_summary(counts, 1, 1) == (
            "Found 1 error, 3 warnings, 1 info and 2 hints in 1 file (1 checked)."
        )

    def test_unreadable_paths_are_never_all_clear(self) -> None:
        assert format_summary(Counter(), 2, 0, unreadable=1) == (
            "No problems found in 2 files, but 1 path could not be read."
        )
        assert format_summary(Counter({Severity.ERROR: 1}), 2, 1, unreadable=2) == (
            "Found 1 error in 1 file (2 checked); 2 paths could not be read."
        )


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class TestWantsColour:
    def test_auto_colours_only_terminals(self) -> None:
        assert wants_colour("auto", _Terminal(), environ={})
        assert not wants_colour("auto", io.StringIO(), environ={})

    def test_auto_respects_no_color_and_dumb_terminals(self) -> None:
        assert not wants_colour("auto", _Terminal(), environ={"NO_COLOR": "1"})
        assert not wants_colour("auto", _Terminal(), environ={"TERM": "dumb"})
        # no-color.org: an empty NO_COLOR does not count.
        assert wants_colour("auto", _Terminal(), environ={"NO_COLOR": ""})

    def test_explicit_choice_wins(self) -> None:
        assert wants_colour("always", io.StringIO(), environ={"NO_COLOR": "1"})
        assert not wants_colour("never", _Terminal(), environ={})


def plain_caret_line(line: str, start: int, end: int | None) -> str:
    """``caret_line`` a character at a time, as it was before its pass over ASCII lines."""
    end = len(line) if end is None else min(end, len(line))
    before = line[:start]
    indent = "".join("\t" if ch == "\t" else " " * cell_width(ch) for ch in before)
    indent += " " * (start - len(before))
    inside = line[start:end]
    run = "".join("\t" if ch == "\t" else "~" * cell_width(ch) for ch in inside).rstrip("\t")
    if inside and cell_width(inside[0]) == 0 and indent.endswith(" "):
        return indent[:-1] + "^" + run
    if "~" not in run:
        return indent + "^"
    return indent + run.replace("~", "^", 1)


# ASCII lines with tabs and control characters, and lines mixing in wide, combining and
# control characters beyond ASCII.
LINES = st.text(alphabet=st.characters(max_codepoint=127), max_size=20) | st.text(
    alphabet="a\t\x1b\x7f\x85\u00e9\u0301\u4e2d\u00ad\u200d", max_size=12
)


@settings(max_examples=400, deadline=None)
@given(LINES, st.integers(0, 24), st.none() | st.integers(0, 30))
def test_caret_line_is_the_plain_computation(line: str, start: int, end: int | None) -> None:
    if end is not None:
        end = max(end, start)
    assert caret_line(line, start, end) == plain_caret_line(line, start, end)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=30) | LINES)
def test_display_line_is_the_plain_computation(line: str) -> None:
    plain = "".join("\ufffd" if ch != "\t" and _control(ch) else ch for ch in line)
    assert display_line(line) == plain


def _control(ch: str) -> bool:
    code = ord(ch)
    return code < 0x20 or 0x7F <= code < 0xA0
