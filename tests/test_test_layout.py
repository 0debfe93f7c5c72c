"""The test suite's own layout: helpers are imported from the repository root.

The suite runs under `--import-mode=importlib` (pyproject.toml), where pytest puts no test
folder on `sys.path`: a module of helpers imported by its bare name (`from vm_support import`)
is found only by accident, and two test modules may share a file name. So every helper is
imported as `tests.<folder>.<module>`, and what several folders share is in `tests/support/`.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def python_files() -> list[Path]:
    return [path for path in TESTS.rglob("*.py") if "node_modules" not in path.parts]


def test_the_suite_runs_in_importlib_mode() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pytest_options = options["tool"]["pytest"]["ini_options"]
    assert "--import-mode=importlib" in pytest_options["addopts"]
    assert pytest_options["xfail_strict"] is True
    assert pytest_options["filterwarnings"][0] == "error"


def test_helpers_are_imported_from_the_repository_root() -> None:
    helpers = {path.stem for path in python_files()} - {"__init__"}
    assert "vm_support" in helpers, "no helper modules found"
    bare: list[str] = []
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            bare += [
                f"{path.relative_to(TESTS)}:{node.lineno} {name}"
                for name in names
                if name.split(".")[0] in helpers
            ]
    assert bare == []
