"""The printer lays every statement out before knowing whether the program has syntax
issues, and starts again keeping the broken statements as written when it met one: the
output must be what printing after a walk for issues gives, on any text."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings

from openprose.format.printer import Printer, line_ending
from openprose.syntax import parse
from tests.format.test_format_properties import error_texts
from tests.support.strategies import programs, texts


def printed(text: str, optimistic: bool) -> tuple[str, list[int], int]:
    module = parse(text)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(Printer, "optimistic", optimistic)
        printer = Printer(line_ending(text, module))
        printer.module(module)
    out, starts = printer.text_and_starts()
    return out, starts, len(printer.broken)


def assert_same(text: str) -> None:
    assert printed(text, True) == printed(text, False)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example('session "a" | map:\n  session "b" ;\n')  # an issue inside a pipeline stage
@example("x = (\n")
def test_any_text_prints_the_same(text: str) -> None:
    assert_same(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(error_texts)
def test_texts_with_errors_print_the_same(text: str) -> None:
    assert_same(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_programs_print_the_same(text: str) -> None:
    assert_same(text)


def test_a_program_with_an_issue_keeps_its_statement_as_written() -> None:
    text = 'session   "a"\nsession "b" ;\n'
    out, _, broken = printed(text, True)
    assert broken == 1
    assert out == 'session "a"\nsession "b" ;\n'
