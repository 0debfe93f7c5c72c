"""The VM is its own layer: it imports syntax, analysis, checking, files and config only,
and never an editor, a protocol library or a model SDK."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import openprose.vm

VM = Path(openprose.vm.__file__).parent
ALLOWED = ("openprose.syntax", "openprose.analysis", "openprose.checking", "openprose.files",
           "openprose.config", "openprose.vm")  # fmt: skip
# A real backend's module, and only it, imports its model SDK.
LAZY_SDKS = {
    "anthropic_backend.py": "anthropic",
    "openai_backend.py": "openai",
    "claude_code_backend.py": "claude_agent_sdk",
    "postgres.py": "psycopg",  # the postgres state backend's driver, and its schema's
    "postgres_schema.py": "psycopg",
}


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_vm_modules_import_only_the_layers_below() -> None:
    files = sorted(VM.rglob("*.py"))
    assert len(files) >= 8
    for path in files:
        for name in imported_modules(path):
            if name.startswith("openprose"):
                assert name.startswith(ALLOWED), f"{path.name} imports {name}"
            elif LAZY_SDKS.get(path.name) == name:
                continue  # imported inside a function; the test below checks it stays lazy
            else:
                assert name.split(".")[0] in sys.stdlib_module_names, f"{path.name}: {name}"


def test_importing_the_vm_loads_no_server_or_sdk() -> None:
    code = (
        "import sys, openprose.vm, openprose.cli.run\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('pygls', 'lsprotocol', 'anthropic', 'openai', 'claude_agent_sdk', 'psycopg')"
        " or m.startswith(('openprose.lsp', 'openprose.ide'))]\n"
        "print(bad)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
