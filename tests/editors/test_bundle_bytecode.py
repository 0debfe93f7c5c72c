"""The bytecode scripts/bundle-server.py ships in the VSIX (issue 15: start-up).

Python must load it from a read-only install without looking at the sources' modification
times (the VSIX does not keep them) and never write bytecode of its own there. No Node.js and
no network: the script's compile step runs on a small tree of modules.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "vscode-extension" / "scripts" / "bundle-server.py"
TAG = sys.implementation.cache_tag
UNCHECKED_HASH = 0b01  # the flags word of a .pyc: hash-based, source not checked (PEP 552)


def bundle_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bundle_server", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def libs(root: Path) -> Path:
    """A small bundle: a package, a module in it and a top-level module."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("from pkg.mod import VALUE\n")
    (root / "pkg" / "mod.py").write_text("VALUE = 'compiled'\n")
    (root / "single.py").write_text("def where():\n    raise RuntimeError\n")
    return root


def files(root: Path) -> set[Path]:
    return {path for path in root.rglob("*") if path.is_file()}


def test_every_module_gets_unchecked_hash_bytecode(tmp_path: Path) -> None:
    root = libs(tmp_path / "libs")
    bundle_script().compile_bytecode(root)
    for source in (root / "pkg" / "__init__.py", root / "pkg" / "mod.py", root / "single.py"):
        compiled = source.parent / "__pycache__" / f"{source.stem}.{TAG}.pyc"
        header = compiled.read_bytes()[:16]
        assert header[:4] == importlib.util.MAGIC_NUMBER, compiled
        assert int.from_bytes(header[4:8], "little") == UNCHECKED_HASH, compiled
        # Where the bundle was built is not recorded in what the VSIX ships.
        assert str(root).encode() not in compiled.read_bytes(), compiled
    # Optimisation level 0 only: the extension runs Python without -O.
    assert not list(root.rglob("*.opt-*.pyc"))


def test_python_uses_the_shipped_bytecode_and_writes_nothing(tmp_path: Path) -> None:
    root = libs(tmp_path / "libs")
    bundle_script().compile_bytecode(root)
    before = files(root)
    # Installed files get new modification times (and could get new contents): the
    # bytecode is used all the same, without looking at the sources.
    (root / "pkg" / "mod.py").write_text("VALUE = 'source'\n")
    for path in before:
        os.utime(path, (1, 1))
    code = (
        "import pkg, single, sys\n"
        "print(pkg.VALUE)\n"
        "try:\n    single.where()\n"
        "except RuntimeError as error:\n"
        "    print(error.__traceback__.tb_next.tb_frame.f_code.co_filename)\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
    }
    result = subprocess.run(
        [sys.executable, "-S", "-c", code],
        env={**env, "PYTHONPATH": str(root)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    value, filename = result.stdout.split("\n")[:2]
    assert value == "compiled"  # the bytecode, not the changed source
    assert Path(filename) == root / "single.py"  # tracebacks name the installed file
    assert files(root) == before
