"""An optional package a test module needs: skipped without it, naming the install
command, except under CI, which installs every extra and must fail rather than pass on a
shrunken suite."""

from __future__ import annotations

import importlib
import os

import pytest


def require(module: str, install: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"{module} is not installed ({install}); CI installs it", pytrace=False)
        pytest.skip(f"{module} is not installed: {install}", allow_module_level=True)
