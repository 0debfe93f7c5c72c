"""What the server imports before it answers `initialize` (issue 15: start-up).

The editor waits for that answer before it sends anything else, so what only some requests
need (the parser, the analysis, the formatter, the feature modules, the run costs, the state
stores, the TOML reader) is imported on first use instead. The real server runs with
``-X importtime``, which lists every module as it is imported; it is killed as soon as the
answer arrives, so the list is exactly what answering took.
"""

from __future__ import annotations

import re
import subprocess
import sys

from tests.lsp.raw import INITIALIZE, INITIALIZED, RawServer, notification, request

# Modules (and packages, with everything under them) that `initialize` does not need.
LAZY = (
    "parso",
    "tomllib",
    "sqlite3",
    "openprose.syntax",
    "openprose.analysis",
    "openprose.format",
    "openprose.ide.analysis",
    "openprose.ide.host",
    "openprose.ide.run_costs",
    "openprose.lsp.run_costs",
    "openprose.vm",
)
IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)\s*$", re.MULTILINE)
URI = "file:///startup/a.prose"


def imported_by(server: RawServer) -> set[str]:
    """Kills ``server`` and returns the modules it imported."""
    server.process.kill()
    server.process.wait(timeout=10)
    assert server.process.stderr is not None
    return set(IMPORTED.findall(server.process.stderr.read().decode("utf-8", "replace")))


def lazy_among(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in LAZY))


def test_initialize_is_answered_without_the_lazy_modules() -> None:
    server = RawServer(command=("-X", "importtime", "-m", "openprose.lsp"))
    try:
        server.send(INITIALIZE)
        assert "result" in server.response(0)
        modules = imported_by(server)
    finally:
        server.kill()
    assert "openprose.lsp.server" in modules  # the listing works
    assert lazy_among(modules) == []


def test_the_lazy_modules_are_imported_when_needed() -> None:
    """The same listing shows them once a document is checked: the first test can fail."""
    server = RawServer(command=("-X", "importtime", "-m", "openprose.lsp"))
    try:
        server.send(INITIALIZE, INITIALIZED)
        server.response(0)
        text = 'let x = session "hi"\n'
        item = {"uri": URI, "languageId": "prose", "version": 1, "text": text}
        server.send(notification("textDocument/didOpen", {"textDocument": item}))
        server.send(
            request(
                1,
                "textDocument/formatting",
                {
                    "textDocument": {"uri": URI},
                    "options": {"tabSize": 2, "insertSpaces": True},
                },
            )
        )
        server.response(1)
        modules = imported_by(server)
    finally:
        server.kill()
    for name in ("parso", "openprose.syntax", "openprose.analysis", "openprose.format"):
        assert name in modules, name


def test_garbage_collection_resumes_once_the_server_is_made() -> None:
    """`python -m openprose.lsp` collects nothing while importing (it would free nothing)
    and freezes what the imports made; collection is on again when the server runs."""
    code = (
        "import gc, runpy\n"
        "import openprose.lsp.server as server\n"
        "server.main = lambda: print(gc.isenabled(), gc.get_freeze_count()) or 0\n"
        "runpy.run_module('openprose.lsp', run_name='__main__')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    enabled, frozen = result.stdout.split()
    assert enabled == "True"
    assert int(frozen) > 10_000  # the classes and functions of the imported modules
