"""The layering contracts of pyproject.toml's [tool.importlinter], checked by `lint-imports`
(import-linter) over this checkout's source, so that a forbidden import fails the suite
as well as .ci/run. tests/vm/test_layering.py checks what the VM loads at run time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
# The console script's function, run by this interpreter: no reliance on PATH.
LINT_IMPORTS = "from importlinter.cli import lint_imports_command; lint_imports_command()"


def lint_imports(source_root: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    """Runs lint-imports on the `openprose` package under `source_root`, which comes first
    on the path, before the editable install's."""
    env = {**os.environ, "PYTHONPATH": str(source_root)}
    selected = [arg for contract in contracts for arg in ("--contract", contract)]
    options = ["--config", str(PYPROJECT), "--no-cache", "--no-logo", *selected]
    return subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS, *options],
        cwd=source_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_source_keeps_every_layering_contract() -> None:
    result = lint_imports(ROOT / "server")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout, result.stdout


# For each contract, an import that breaks it, added to a package's __init__.py (which no
# reorganisation moves); imports inside functions count as well.
VIOLATIONS = [
    ("layers", "openprose.analysis", "import openprose.format", True),
    ("layers", "openprose.lsp", "import openprose.cli", False),
    ("syntax-imports-nothing-above", "openprose.syntax", "import openprose.analysis", False),
    ("no-protocol-or-vm-below-lsp", "openprose.ide", "import lsprotocol", False),
    ("no-protocol-or-vm-below-lsp", "openprose.format", "import openprose.vm", True),
    ("vm-imports-no-editor", "openprose.vm", "import openprose.ide", True),
]


@pytest.mark.parametrize(("contract", "importer", "statement", "lazy"), VIOLATIONS)
def test_a_forbidden_import_breaks_its_contract(
    tmp_path: Path, contract: str, importer: str, statement: str, lazy: bool
) -> None:
    shutil.copytree(
        ROOT / "server" / "openprose",
        tmp_path / "openprose",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    init = tmp_path.joinpath(*importer.split("."), "__init__.py")
    added = f"def _later() -> None:\n    {statement}\n" if lazy else statement + "\n"
    init.write_text(init.read_text(encoding="utf-8") + "\n\n" + added, encoding="utf-8")
    result = lint_imports(tmp_path, contract)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 broken" in result.stdout, result.stdout
    imported = statement.split()[1]
    assert f"{importer} -> {imported}" in result.stdout, result.stdout
