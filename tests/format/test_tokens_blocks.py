"""The token proof read block statement by block statement (format/tokens.py, ``_Block``).

A program held in one top-level block (``block main:``) is one top-level statement, so an
edit anywhere in it changed the one statement and the proof read the whole text.  Given
where the printer started each statement of that block, only the changed ones are read.
These tests show that, and that the pieces prove nothing a full parse would not: every
change of meaning is rejected, those an inner reading could miss included (a statement
moved out of the block or into a deeper one, dedented, swapped across a block's end), with
any starts the caller gives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from openprose.format import check, format_text, tokens
from openprose.format.printer import Printer, line_ending
from openprose.format.tokens import same_changed_tokens
from openprose.syntax import parse
from tests.format.test_check import PROGRAM
from tests.format.test_tokens import CHANGES, mutations
from tests.support.strategies import programs

Inner = Callable[[int], list[int] | None]


def wrap(text: str) -> str:
    """``text`` as the body of one top-level block."""
    body = "".join("  " + line if line.strip() else line for line in text.splitlines(True))
    return "block main:\n" + body


WRAPPED = wrap(PROGRAM)
# The wrapped program saved after an edit: stray spaces after one statement.
TOUCHED = WRAPPED.replace('"Step 7"\n', '"Step 7"   \n')


@pytest.fixture(autouse=True)
def _every_block_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    # Small programs too: the pieces are read whatever the block's size.
    monkeypatch.setattr(tokens, "_BLOCK_PIECES", 0)


def printed(text: str) -> tuple[Any, str, list[int], Inner]:
    module = parse(text)
    printer = Printer(line_ending(text, module))
    printer.module(module)
    assert not printer.broken and not printer.issues_seen
    out, starts = printer.text_and_starts()
    return module, out, starts, lambda k: printer.block_starts(k, starts[k])


def _given(starts: list[int]) -> Inner:
    return lambda k: starts


def shifted(offsets: list[int], at: int, shift: int) -> list[int]:
    return [s if s <= at else s + shift for s in offsets]


def test_the_wrapped_program_prints_as_the_program_wrapped() -> None:
    assert format_text(TOUCHED).text == WRAPPED
    assert format_text(TOUCHED).refused is None


def test_only_the_changed_statements_of_a_block_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    module, out, starts, inner = printed(TOUCHED)
    read: list[str] = []
    text_stream = tokens.text_stream

    def spy(piece: str, at_start: bool = True, base: str = "") -> Any:
        read.append(piece)
        return text_stream(piece, at_start, base)

    monkeypatch.setattr(tokens, "text_stream", spy)
    # Stray spaces alone are proven by margins.py before any token is read: off, to see
    # what the reading of pieces reads.
    monkeypatch.setattr(tokens, "same_but_margins", lambda text, out: False)
    assert same_changed_tokens(module, TOUCHED, out, starts, True, inner)
    assert read == ['\n  session "Step 7"\n']  # the statement and the blank line before it


def _inside(change: Callable[[str], str]) -> Callable[[str], str]:
    """``change`` made to the program inside the block."""
    return lambda s: wrap(change(PROGRAM)) if s == WRAPPED else change(s)


def inner_changes() -> dict[str, Callable[[str], str]]:
    """Changes of meaning inside the block: each of test_tokens' changes, made to the
    program inside it, and changes only a reading of the block's statements could miss."""
    changes: dict[str, Callable[[str], str]] = {
        name: _inside(change) for name, change in CHANGES.items()
    }
    last = '  session "Wrap up"\n'
    changes |= {
        "a statement moved out of the block": lambda s: s.replace(last, last[2:]),
        "a statement dedented into the block's header level": lambda s: s.replace(
            '  session "Step 7"\n', 'session "Step 7"\n'
        ),
        "a statement indented into the one before": lambda s: s.replace(
            '\n  session "Step 7"\n', '\n    session "Step 7"\n'
        ),
        "a statement swapped with the last line of a block": lambda s: s.replace(
            '        session "Polish {topic}"\n    session "File {topic}"\n',
            '    session "File {topic}"\n        session "Polish {topic}"\n',
        ),
        "the header moved below the block's first line": lambda s: s.replace(
            "block main:\n  # the first comment\n  agent writer:\n",
            "  # the first comment\n  agent writer:\nblock main:\n",
        ),
        "a statement indented one space more": lambda s: s.replace(
            '\n  session "Step 7"\n', '\n   session "Step 7"\n'
        ),
    }
    return changes


INNER_CHANGES = inner_changes()


@pytest.mark.parametrize("change", INNER_CHANGES)
def test_a_change_of_meaning_inside_a_block_is_not_proven(change: str) -> None:
    module, out, starts, inner = printed(TOUCHED)
    assert out == WRAPPED
    changed = INNER_CHANGES[change](out)
    assert changed != out, change
    if change not in ("a string changed", "two names merged"):
        assert check.full_check(module, changed, True) is not None  # it changes the program
    at = next(
        (i for i, (a, b) in enumerate(zip(out, changed, strict=False)) if a != b), len(changed)
    )
    shift = len(changed) - len(out)
    pieces = inner(0)
    assert pieces is not None
    for top, members in (
        (shifted(starts, at, shift), shifted(pieces, at, shift)),
        (starts, pieces),
    ):
        assert not same_changed_tokens(module, TOUCHED, changed, top, True, _given(members))


def test_blanks_after_a_piece_s_line_break_are_not_proven() -> None:
    # They indent the statement after it, whose own text is unchanged and not read, and
    # the piece holding them reads as before (nothing follows its last line break).
    text = 'block main:\n  session "a"   \n  session "b"\n  session "c"\n'
    module, out, starts, inner = printed(text)
    pieces = inner(0)
    assert pieces is not None and len(pieces) == 3
    b = pieces[1]
    changed = out[:b] + "  " + out[b:]
    assert changed == 'block main:\n  session "a"\n    session "b"\n  session "c"\n'
    assert check.full_check(module, changed, True) is not None
    top = [starts[0], starts[1] + 2]
    assert not same_changed_tokens(
        module, text, changed, top, True, _given([pieces[0], b + 2, pieces[2] + 2])
    )


def test_a_printer_making_a_change_inside_a_block_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text_and_starts = Printer.text_and_starts
    for change in INNER_CHANGES.values():
        with monkeypatch.context() as patch:

            def broken(self: Printer, c: Callable[[str], str] = change) -> tuple[str, list[int]]:
                out, starts = text_and_starts(self)
                return c(out), starts

            patch.setattr(Printer, "text_and_starts", broken)
            result = format_text(TOUCHED)
            assert result.refused is not None
            assert result.text == TOUCHED


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.data())
def test_what_it_proves_block_statement_by_statement_a_full_parse_confirms(
    text: str, data: st.DataObject
) -> None:
    module = parse(wrap(text))
    printer = Printer(line_ending(wrap(text), module))
    printer.module(module)
    assume(not printer.broken and not printer.issues_seen)
    out, starts = printer.text_and_starts()
    pieces = printer.block_starts(0, 0)
    assume(pieces)
    assert pieces is not None
    bounds = [*pieces, starts[1]]
    i = data.draw(st.integers(0, len(bounds) - 2))
    piece = mutations(out[bounds[i] : bounds[i + 1]], data)
    changed = out[: bounds[i]] + piece + out[bounds[i + 1] :]
    shift = len(piece) - (bounds[i + 1] - bounds[i])
    for top, members in (
        (shifted(starts, bounds[i], shift), shifted(pieces, bounds[i], shift)),
        (starts, pieces),
        (starts, sorted(data.draw(st.lists(st.integers(0, len(changed)), max_size=12)))),
    ):
        if same_changed_tokens(module, wrap(text), changed, top, True, _given(members)):
            assert check.full_check(module, changed, True) is None
