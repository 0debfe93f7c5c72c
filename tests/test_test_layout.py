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


def imported_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted names an import statement reaches, relative ones with their leading dots."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = "." * node.level + (node.module or "")
    # `from . import conftest` names the module among the imported names.
    return [base] + [f"{base.rstrip('.')}.{alias.name}" for alias in node.names]


def test_no_module_imports_from_a_conftest() -> None:
    # pytest discourages it: a conftest is a plugin that pytest loads itself, and importing it
    # by name works under importlib mode only because the repository root is on sys.path.
    # What a conftest and its tests share lives in a helper module both import.
    offenders = [
        f"{path.relative_to(TESTS)}:{node.lineno}"
        for path in python_files()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and any("conftest" in name.split(".") for name in imported_modules(node))
    ]
    assert offenders == []
