"""Fixtures of the editor-feature tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.analysis.contracts import clear_cache
from tests.ide.names_support import LIBRARY, write


@pytest.fixture(autouse=True)
def fresh_contracts() -> None:
    """Imported programs' contracts are cached by path: each test starts without them."""
    clear_cache()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The main program's path beside the library that names_support's programs import
    (the completion and signature help tests have their own project with another import)."""
    write(tmp_path / "lib.prose", LIBRARY)
    return tmp_path / "main.prose"
