from __future__ import annotations

import pytest

from openprose.vm.values import (
    ProseError,
    Record,
    attribute,
    error_value,
    items_of,
    preview,
    render,
    to_count,
)


def test_records_give_attribute_access_and_render_as_objects() -> None:
    record = Record({"findings": "x", "n": ["a", 1]}, kind="program")
    assert attribute(record, "findings") == "x"
    assert render(record) == '{findings: "x", n: ["a", 1]}'
    with pytest.raises(ProseError, match="no attribute 'missing'"):
        attribute(record, "missing")
    with pytest.raises(ProseError):
        attribute("plain text", "length")


def test_errors_are_records_with_a_message() -> None:
    error = ProseError("timeout", 'session "A"', "session")
    assert error.value == error_value("timeout", 'session "A"', "session")
    assert attribute(error.value, "message") == "timeout"


def test_iteration_and_counts() -> None:
    assert items_of("one\n\n two \n") == ["one", " two "]
    assert items_of(["a"]) == ["a"]
    assert items_of(None) == []
    assert to_count(" 3 ") == 3 and to_count("many") is None and to_count(True) is None


def test_preview_is_one_shortened_line() -> None:
    assert preview("a\nb") == '"a b"'
    assert preview("x" * 200, limit=10) == '"xxxxxxx..."'
