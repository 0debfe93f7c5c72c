"""The VM is its own layer: it imports syntax, analysis, checking, files and config only,
and never an editor, a protocol library or a model SDK."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

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
# OpenTelemetry's packages, by the telemetry module only, once telemetry is configured; DBOS
# by the dbos engine only, when a run asks for it.
LAZY_PACKAGES = {
    "telemetry.py": ("opentelemetry",),
    "dbos_engine.py": ("dbos", "sqlalchemy"),  # sqlalchemy: DBOS's own, for the heartbeats
    "dbos_branches.py": ("dbos",),
    "dbos_steps.py": ("dbos",),
    "dbos_pacing.py": ("sqlalchemy",),  # DBOS's own, for the window of request places
    "dbos_budget.py": ("sqlalchemy",),  # DBOS's own, for the spending rows
    "dbos_summaries.py": ("sqlalchemy",),  # DBOS's own, for the summaries' claims
    "dbos_partials.py": ("sqlalchemy",),  # DBOS's own, for cancelled items' partial outcomes
    "dbos_tables.py": ("sqlalchemy",),  # DBOS's own, for the engine's tables
    "postgres_pool.py": ("psycopg_pool",),  # the driver's pool, for a worker's item journals
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
            elif name == LAZY_SDKS.get(path.name) or (
                name.split(".")[0] in LAZY_PACKAGES.get(path.name, ())
            ):
                continue  # imported inside a function; the test below checks it stays lazy
            else:
                assert name.split(".")[0] in sys.stdlib_module_names, f"{path.name}: {name}"


def test_importing_the_vm_loads_no_server_or_sdk() -> None:
    code = (
        "import sys, openprose.vm, openprose.cli.run\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('pygls', 'lsprotocol', 'anthropic', 'openai', 'claude_agent_sdk', 'psycopg', "
        "'psycopg_pool', "
        "'opentelemetry', 'dbos', 'sqlalchemy')"
        " or m.startswith(('openprose.lsp', 'openprose.ide'))]\n"
        "print(bad)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_opentelemetry_is_imported_only_inside_functions() -> None:
    tree = ast.parse((VM / "telemetry.py").read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    names = [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in top if isinstance(n, ast.ImportFrom)]
    assert not [n for n in names if n.split(".")[0] == "opentelemetry"]


@pytest.mark.parametrize("module", ["dbos_engine.py", "dbos_branches.py"])
def test_dbos_is_imported_only_inside_functions(module: str) -> None:
    tree = ast.parse((VM / "engines" / module).read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    names = [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in top if isinstance(n, ast.ImportFrom)]
    assert names and not [n for n in names if n.split(".")[0] in ("dbos", "sqlalchemy")]
