from __future__ import annotations

from typing import Any

import pytest

from openprose.vm.operators import binary, compare, truth
from openprose.vm.values import ProseError

# Every test here runs on both engines (tests/vm/conftest.py).
pytestmark = pytest.mark.both_engines


def test_arithmetic_and_joining() -> None:
    assert binary(5, "-", 1) == 4
    assert binary("3", "*", 2) == 6
    assert binary("a", "+", "b") == "ab"
    assert binary(["a"], "+", ["b"]) == ["a", "b"]
    assert binary(["a"], "+", "b") == ["a", "b"]
    with pytest.raises(ProseError, match="cannot apply '-'"):
        binary("a", "-", "b")
    with pytest.raises(ProseError):
        binary(1, "/", 0)


@pytest.mark.parametrize(
    ("left", "operator", "right", "expected"),
    [
        (1, "<=", 0, False),
        ("2", ">", 1, True),
        ("fetch", "is", "fetch", True),
        ("fetch", "is not", "fetch", False),
        ("b", "in", ["a", "b"], True),
        ("z", "not in", "xyz", False),
        (3, "==", "3", True),
    ],
)
def test_comparisons(left: Any, operator: str, right: Any, expected: bool) -> None:
    assert compare(left, operator, right) is expected


def test_ordering_needs_integers() -> None:
    with pytest.raises(ProseError, match="cannot order"):
        compare("a", "<", "b")


def test_truth() -> None:
    values: tuple[object, ...] = ("yes", "no", "", "false", 0, 2, [])
    assert [truth(v) for v in values] == [
        True,
        False,
        False,
        False,
        False,
        True,
        False,
    ]


def test_word_operators_in_a_program(run_prose: Any) -> None:
    run = run_prose(
        """\
        input mode: "fetch or list"
        if mode is "fetch":
          session "Fetching"
        elif mode is not "list":
          session "Other"
        """,
        {"mode": "fetch"},
    )
    assert run.calls == [("session", "Fetching")]
