"""Quick fixes for a suppression comment that has no effect (W036)."""

from __future__ import annotations

from openprose.checking import check_text
from openprose.ide import analyze_document
from openprose.ide.analysis import to_pos
from openprose.ide.fixes.registry import code_actions
from openprose.ide.types import Range
from tests.ide.fixes.fixes_support import diagnostic, fixed, preferred, titles

SHADOWING = """\
let topic = session "Pick a topic"
block review(topic):  # prose: ignore[W105]
  session "Review {topic}"
"""


def test_a_mistyped_suppression_code_changes_to_the_code_reported_on_its_line() -> None:
    assert preferred(SHADOWING, "W036") == ["Change to `W015`"]
    result = fixed(SHADOWING, "W036", "Change to `W015`")
    assert "# prose: ignore[W015]" in result
    assert check_text(result) == []  # the suppression now works


def test_removing_the_only_code_removes_the_directive() -> None:
    result = fixed(SHADOWING, "W036", "Remove `W105` from the suppression comment")
    assert result.splitlines()[1] == "block review(topic):"


def test_removing_one_code_of_several_keeps_the_others_and_tidy_separators() -> None:
    first = SHADOWING.replace("[W105]", "[W105, W015]")
    assert "[W015]" in fixed(first, "W036", "Remove `W105` from the suppression comment")
    last = SHADOWING.replace("[W105]", "[W015, E001]")
    result = fixed(last, "W036", "Remove `E001` from the suppression comment")
    assert result.splitlines()[1] == "block review(topic):  # prose: ignore[W015]"


def test_a_directive_that_does_nothing_is_removed_with_its_line_when_alone() -> None:
    late = SHADOWING.replace("  # prose: ignore[W105]", "") + "# prose: ignore-file[W015]\n"
    assert fixed(late, "W036", "Remove the suppression comment") == late.replace(
        "# prose: ignore-file[W015]\n", ""
    )
    empty = 'session "Hi"  # note  # prose: ignore[]\n'
    assert fixed(empty, "W036", "Remove the suppression comment") == 'session "Hi"  # note\n'


def test_without_a_code_on_the_line_close_codes_are_offered_but_none_preferred() -> None:
    text = 'session "Hi"  # prose: ignore[W00l]\n'  # a look-alike letter
    assert titles(text, "W036") == [
        "Change to `W001`",
        "Remove `W00l` from the suppression comment",
    ]
    assert preferred(text, "W036") == []
    one_off = titles('session "Hi"  # prose: ignore[W0X5]\n', "W036")
    assert one_off[:-1] == ["Change to `W005`", "Change to `W015`", "Change to `W025`"]


def test_no_fix_for_a_stale_w036() -> None:
    stale = diagnostic(SHADOWING, "W036")
    now = analyze_document(SHADOWING.replace("W105", "W015"))
    assert code_actions(now, Range(to_pos(stale.start), to_pos(stale.end)), [stale]) == []
