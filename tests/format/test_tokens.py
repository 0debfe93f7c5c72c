"""The token proof of the formatter's self-check (format/tokens.py).

It accepts an output without parsing it again when the output's logical lines (depth on the
indentation stack, tokens) and comments equal the input's.  These tests show it accepts
layout changes, rejects every kind of change that keeps the tokens but not the program
(a line moved into another block, two statements swapped, two lines joined) as well as
changed strings and dropped comments, and, as a property, never accepts an output whose
full parse differs from the input's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprose import format as fmt
from openprose.format import check, format_text, tokens
from openprose.format.printer import Printer, line_ending
from openprose.format.tokens import same_changed_tokens, same_tokens, text_stream, tree_stream
from openprose.syntax import parse
from tests.format.test_check import PROGRAM, layouts, sources
from tests.support.strategies import programs, texts


def proven(before: str, after: str, keep_comments: bool = True) -> bool:
    return same_tokens(parse(before), after, keep_comments)


def same_program(a: str, b: str) -> bool:
    """What the full check accepts: equal trees and comments."""
    return check.full_check(parse(a), b, True) is None


def relayout(text: str) -> str:
    """``text`` indented four spaces a level, with stray spaces and CRLF line endings."""
    return text.replace("\n  ", "\n    ").replace('" ', '"   ').replace("\n", "\r\n")


def test_a_layout_change_is_proven() -> None:
    messy = relayout(PROGRAM)
    assert messy != PROGRAM
    assert proven(messy, PROGRAM)
    assert proven(PROGRAM, messy)


def test_a_relaid_program_is_formatted_without_parsing_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fmt, "verify", pytest.fail)
    result = format_text(relayout(PROGRAM))
    assert result.refused is None
    assert result.text == PROGRAM.replace("\n", "\r\n")  # the file's line ending is kept


def test_the_streams_of_text_and_tree_agree_on_the_program() -> None:
    for text in (PROGRAM, relayout(PROGRAM), "\ufeff" + PROGRAM, PROGRAM.rstrip("\n")):
        assert text_stream(text) == tree_stream(parse(text))


# ---------------------------------------------------------------- changes it must reject

# Each: the canonical program changed in one way that keeps every token (or changes one
# string, or drops a comment).  Line numbers are those of PROGRAM.
NOTIFY = '    session "Notify {topic}"\n'
CHANGES: dict[str, Callable[[str], str]] = {
    # Out of the `if` block into the block's body: same tokens, another block.
    "line moved out of its block": lambda s: s.replace(NOTIFY, NOTIFY[2:]),
    # Into the `else` block, after `loop`'s body: same tokens, another parent.
    "line moved into another block": lambda s: s.replace(
        NOTIFY + "  else:\n", "  else:\n" + NOTIFY
    ),
    "two statements swapped": lambda s: s.replace(
        'session "Step 3"\n\nsession "Step 4"', 'session "Step 4"\n\nsession "Step 3"'
    ),
    "two lines joined": lambda s: s.replace('"Step 3"\n\n', '"Step 3" '),
    "a line split": lambda s: s.replace('session "Step 3"', 'session\n"Step 3"'),
    "a string changed": lambda s: s.replace('"Step 7"', '"Step 7 "'),
    "a comment dropped": lambda s: s.replace("  # keep me", ""),
    "a comment changed": lambda s: s.replace("# keep me", "# keep"),
    "the last comment dropped": lambda s: s.replace("# the last comment\n", ""),
    "a block's body dedented": lambda s: s.replace('      session "Polish', '    session "Polish'),
    "two names merged": lambda s: s.replace("do review(", "doreview("),
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_change_of_meaning_is_not_proven(change: str) -> None:
    changed = CHANGES[change](PROGRAM)
    assert changed != PROGRAM
    assert not proven(PROGRAM, changed)
    assert not proven(relayout(PROGRAM), changed)


@pytest.mark.parametrize(
    "change", [c for c in CHANGES if c not in ("a string changed", "two names merged")]
)
def test_each_change_really_changes_the_program(change: str) -> None:
    # Not "a string changed" / "two names merged": those change the tokens, which any
    # check sees.  The others keep every token and still change the tree or the comments.
    changed = CHANGES[change](PROGRAM)
    assert not same_program(PROGRAM, changed)


def broken_printer(change: Callable[[str], str]) -> Callable[[pytest.MonkeyPatch], None]:
    def install(monkeypatch: pytest.MonkeyPatch) -> None:
        text_and_starts = Printer.text_and_starts

        def broken(self: Printer) -> tuple[str, list[int]]:
            out, starts = text_and_starts(self)
            return change(out), starts

        monkeypatch.setattr(Printer, "text_and_starts", broken)

    return install


@pytest.mark.parametrize("change", CHANGES)
def test_a_printer_making_the_change_is_refused(
    change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken_printer(CHANGES[change])(monkeypatch)
    text = PROGRAM.replace("\n  ", "\n    ")
    result = format_text(text)
    assert result.refused is not None, change
    assert result.text == text


def test_comments_are_not_compared_when_they_are_dropped_on_purpose() -> None:
    assert proven(PROGRAM, PROGRAM.replace("  # keep me", ""), keep_comments=False)


# ---------------------------------------------------------------- what it leaves to the parse


@pytest.mark.parametrize(
    "text",
    [
        'session "a"\n  session "b"\n',  # E031: a program with syntax issues
        "if **x:\n  session\n",  # an unclosed `**`
        'session "a" ;\n',  # an invalid character
        "block b:\n    session\n  session\n",  # E032: a dedent to no open width
    ],
)
def test_programs_with_syntax_issues_are_left_to_the_parse(text: str) -> None:
    assert tree_stream(parse(text)) is None
    assert not proven(text, text)


def test_a_dedent_to_a_width_not_open_is_not_read() -> None:
    assert text_stream("block b:\n    session\n  session\n") is None


def test_a_line_continued_in_brackets_is_one_line() -> None:
    text = 'session "a"\n  skills: [\n    "x",\n      "y"\n  ]\n'
    assert tree_stream(parse(text)) is not None
    assert text_stream(text) == tree_stream(parse(text))
    # A closing bracket at the line's own width continues it; another token does not.
    assert not proven(text, 'session "a"\n  skills: [\n    "x",\n  "y"\n  ]\n')


def test_a_comment_ending_the_text_is_not_read_as_code() -> None:
    text = 'session "a"\n# the last word'
    assert text_stream(text) == tree_stream(parse(text))
    assert not proven(text, 'session "a"\n# the last')


# ---------------------------------------------------------------- soundness


def mutations(text: str, data: st.DataObject) -> str:
    """``text`` with a few random edits that keep most tokens: lines swapped, re-indented,
    joined or duplicated, characters dropped."""
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(1, 3))):
        if not lines:
            break
        i = data.draw(st.integers(0, len(lines) - 1))
        edit = data.draw(st.sampled_from(["swap", "indent", "dedent", "join", "drop", "dup"]))
        if edit == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif edit == "indent":
            lines[i] = "  " + lines[i]
        elif edit == "dedent":
            lines[i] = lines[i][2:] if lines[i].startswith("  ") else lines[i]
        elif edit == "join" and i + 1 < len(lines):
            lines[i : i + 2] = [lines[i] + " " + lines[i + 1].lstrip()]
        elif edit == "drop" and lines[i]:
            j = data.draw(st.integers(0, len(lines[i]) - 1))
            lines[i] = lines[i][:j] + lines[i][j + 1 :]
        elif edit == "dup":
            lines.insert(i, lines[i])
    return "\n".join(lines)


def assert_sound(before: str, after: str) -> None:
    module = parse(before)
    if same_tokens(module, after, True):
        assert check.full_check(module, after, True) is None
    if same_tokens(module, after, False):
        assert check.full_check(module, after, False) is None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.data())
def test_what_it_proves_a_full_parse_confirms(text: str, data: st.DataObject) -> None:
    assert_sound(text, format_text(text, verify=False).text)
    assert_sound(text, mutations(text, data))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.data())
def test_what_it_proves_on_any_text_a_full_parse_confirms(text: str, data: st.DataObject) -> None:
    assert_sound(text, format_text(text, verify=False).text)
    assert_sound(text, mutations(text, data))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(list(sources())), st.data())
def test_relaid_programs_are_proven_and_mutated_ones_confirmed(
    source: str, data: st.DataObject
) -> None:
    text = layouts(source, data)
    result = format_text(text, verify=False)
    if not result.unformatted:  # no statement kept as written for its syntax errors
        assert proven(text, result.text)
    assert_sound(text, mutations(text, data))


# ---------------------------------------------------------------- statement by statement


def printed_with_starts(text: str) -> tuple[Any, str, list[int]]:
    module = parse(text)
    printer = Printer(line_ending(text, module))
    printer.module(module)
    assert not printer.broken
    out, starts = printer.text_and_starts()
    return module, out, starts


def test_only_the_changed_statements_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    text = PROGRAM.replace('session "Step 7"', 'session   "Step 7"')
    module, out, starts = printed_with_starts(text)
    read: list[str] = []
    monkeypatch.setattr(tokens, "text_stream", lambda piece, at_start: read.append(piece))
    monkeypatch.setattr(tokens, "_same", lambda *_: True)
    assert same_changed_tokens(module, text, out, starts, True)
    assert read == ['\nsession "Step 7"\n']  # the statement and the blank line before it


@pytest.mark.parametrize("change", CHANGES)
def test_a_change_of_meaning_is_not_proven_statement_by_statement(change: str) -> None:
    text = PROGRAM.replace("\n  ", "\n    ")
    module, out, starts = printed_with_starts(text)
    changed = CHANGES[change](out)
    # Where the printer started each statement, moved by the change's length difference
    # from the first place the texts differ.
    at = next(
        (i for i, (a, b) in enumerate(zip(out, changed, strict=False)) if a != b), len(changed)
    )
    shift = len(changed) - len(out)
    moved = [s if s <= at else s + shift for s in starts]
    assert not same_changed_tokens(module, text, changed, moved, True)
    assert not same_changed_tokens(module, text, changed, starts, True)


def test_a_statement_leaving_blanks_after_its_line_break_is_not_proven() -> None:
    # The blanks after the first statement's line break indent the second one (E031),
    # though each statement's own tokens and lines are unchanged.  Found by the property
    # test below.
    text = 'use "@acme/research" as research\nsession "a"  # note\n'
    module, out, starts = printed_with_starts(text)
    changed = out.replace("research\n", "research\n  ")
    moved = [starts[0], starts[1] + 2, starts[2] + 2]
    assert not same_changed_tokens(module, text, changed, moved, True)
    assert check.full_check(module, changed, True) is not None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.data())
def test_what_it_proves_statement_by_statement_a_full_parse_confirms(
    text: str, data: st.DataObject
) -> None:
    module, out, starts = printed_with_starts(text)
    k = data.draw(st.integers(0, len(starts) - 1))
    end = starts[k + 1] if k + 1 < len(starts) else len(out)
    piece = mutations(out[starts[k] : end], data)
    changed = out[: starts[k]] + piece + out[end:]
    moved = [s if i <= k else s + len(piece) - (end - starts[k]) for i, s in enumerate(starts)]
    for candidate in (moved, starts, sorted(data.draw(st.lists(st.integers(0, len(changed)))))):
        if same_changed_tokens(module, text, changed, candidate, True):
            assert check.full_check(module, changed, True) is None
