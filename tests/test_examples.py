"""The example programs we ship must check clean: they are what newcomers copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.checking import check_text

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").rglob("*.prose"))


def test_there_are_examples() -> None:
    assert EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_checks_clean(path: Path) -> None:
    assert check_text(path.read_text(encoding="utf-8"), str(path)) == []
