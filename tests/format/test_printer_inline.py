"""``Printer.node`` prints the common tokens itself (one following another on its line, a
line's line break, a line's first token after only its indentation) instead of calling
``leaf``: the output must be what ``leaf`` prints for every token, on any text."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings

from openprose.format.printer import Printer, line_ending
from openprose.syntax import parse
from tests.format.test_check import PROGRAM
from tests.format.test_format_properties import error_texts
from tests.support.strategies import programs, texts


def printed(text: str, inline: bool, keep_comments: bool = True) -> tuple[str, list[int]]:
    module = parse(text)
    with pytest.MonkeyPatch.context() as monkeypatch:
        if not inline:
            monkeypatch.setattr(Printer, "inline_tokens", frozenset())
        printer = Printer(line_ending(text, module), keep_comments, keep_comments)
        printer.module(module)
    return printer.text_and_starts()


def assert_same(text: str) -> None:
    for keep in (True, False):
        assert printed(text, True, keep) == printed(text, False, keep)


# Comments after blocks ending at several depths: where each goes depends on the columns
# the line starts before it were at (``Printer.columns``).
DEDENTS = (
    "if **a**:\n"
    "    if **b**:\n"
    '        session "x"\n'
    "        # after x, at its level\n"
    "    # after the inner if\n"
    "  # between the levels\n"
    '    session "y"\n'
    "# at the top\n"
    'session "z"\n'
)


@pytest.mark.parametrize("text", [PROGRAM, PROGRAM.replace("\n  ", "\n    "), DEDENTS])
def test_a_program_prints_the_same(text: str) -> None:
    assert_same(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("\ufeff  session\n")
@example('x = [\n  "a",\n]\nsession "b"  # c\n')
def test_any_text_prints_the_same(text: str) -> None:
    assert_same(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(error_texts)
def test_texts_with_errors_print_the_same(text: str) -> None:
    assert_same(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_programs_print_the_same(text: str) -> None:
    assert_same(text)
