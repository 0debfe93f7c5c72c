"""Fixtures of the editor-feature tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.ide.caches import default_caches
from tests.ide.names_support import LIBRARY, write


@pytest.fixture(autouse=True)
def fresh_contracts() -> None:
    """Imported programs' contracts (and what else the default caches keep) are cached by
    path: each test starts without them."""
    default_caches().clear()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The main program's path beside the library that names_support's programs import
    (the completion and signature help tests have their own project with another import)."""
    write(tmp_path / "lib.prose", LIBRARY)
    return tmp_path / "main.prose"
