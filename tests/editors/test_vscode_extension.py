"""The VS Code extension (vscode-extension/): its unit tests, its VSIX, and the server it carries.

Needs Node.js 20 or later and the extension's npm packages: `npm ci --prefix vscode-extension`.
Packaging runs `scripts/bundle-server.py`, which pip-installs the server's pinned dependencies
(from the package index pip is configured with) into vscode-extension/bundled/libs.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.editors.editor_tools import unavailable

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "vscode-extension"
GRAMMAR = ROOT / "syntaxes" / "prose.tmLanguage.json"
SETUP = "run npm ci --prefix vscode-extension"
TIMEOUT = 30  # seconds for one LSP answer
NODE_MAJOR = 20


def npm(*args: str, timeout: float = 600) -> str:
    """Runs npm in vscode-extension/; fails the test with npm's output when it fails."""
    executable = shutil.which("npm")
    node = shutil.which("node")
    if executable is None or node is None:
        unavailable(f"Node.js 20 or later and npm are needed; then {SETUP}")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    major = re.match(r"v(\d+)\.", version)
    if not major or int(major[1]) < NODE_MAJOR:
        unavailable(f"Node.js {NODE_MAJOR} or later is needed (vsce 3), not {version or node}")
    if not (EXTENSION / "node_modules").is_dir():
        unavailable(f"vscode-extension/node_modules is missing: {SETUP}")
    result = subprocess.run(
        [executable, *args],
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    output = result.stdout + result.stderr
    if result.returncode != 0:
        pytest.fail(f"`npm {' '.join(args)}` exited with {result.returncode}:\n{output}")
    return output


@pytest.fixture(scope="module")
def vsix() -> Path:
    """`npm run package`, once for the module: the VSIX it made."""
    version = json.loads((EXTENSION / "package.json").read_text("utf-8"))["version"]
    path = EXTENSION / f"openprose-{version}.vsix"
    path.unlink(missing_ok=True)
    npm("run", "package")
    assert path.is_file(), f"npm run package did not make {path.name}"
    return path


@pytest.fixture(scope="module")
def bundled_libs(vsix: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The VSIX's bundled/libs, extracted."""
    target = tmp_path_factory.mktemp("vsix")
    prefix = "extension/bundled/libs/"
    with zipfile.ZipFile(vsix) as archive:
        archive.extractall(target, [n for n in archive.namelist() if n.startswith(prefix)])
    return target / prefix


def test_unit_tests_pass() -> None:
    output = npm("test")
    # npm test fails when a test fails; check that tests ran at all.
    assert re.search(r"\bpass [1-9]", output), output


def test_vsix_has_what_the_extension_needs(vsix: Path) -> None:
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("extension/package.json"))
        grammar = archive.read("extension/syntaxes/prose.tmLanguage.json")
    for name in (
        "extension/package.json",
        "extension/LICENSE.txt",
        "extension/out/extension.js",
        "extension/language-configuration.json",
        "extension/syntaxes/prose.tmLanguage.json",
        "extension/bundled/libs/openprose/lsp/server.py",
        "extension/bundled/libs/openprose/lsp/__main__.py",
        "extension/bundled/libs/pygls/__init__.py",
        "extension/bundled/libs/lsprotocol/types.py",
        "extension/bundled/libs/parso/__init__.py",
        "extension/bundled/libs/attrs/__init__.py",
        "extension/bundled/libs/cattrs/__init__.py",
        "extension/bundled/libs/typing_extensions.py",
    ):
        assert name in names, f"{vsix.name} lacks {name}"
    # What the manifest points at is in the package.
    contributes = manifest["contributes"]
    assert "extension/" + manifest["main"].removeprefix("./") in names
    for entry in contributes["languages"] + contributes["grammars"]:
        key = "configuration" if "configuration" in entry else "path"
        assert "extension/" + entry[key].removeprefix("./") in names, entry
    # The grammar is the repository's, copied at build time.
    assert grammar == GRAMMAR.read_bytes()
    # Nothing the extension does not need: sources, tests, npm packages, caches, binaries
    # (the bundled libraries' bytecode aside: test_vsix_ships_bytecode).
    unwanted = [
        name
        for name in names
        if name.startswith(("extension/node_modules/", "extension/src/", "extension/test"))
        or name.startswith(("extension/scripts/", "extension/out/test/"))
        or name.endswith((".ts", ".map", ".so", ".pyd", ".vsix"))
        or (
            (name.endswith(".pyc") or "/__pycache__/" in name)
            and not name.startswith("extension/bundled/libs/")
        )
        or "/bin/" in name
    ]
    assert not unwanted, f"{vsix.name} should not contain {sorted(unwanted)[:10]}"


def bytecode_tags(libs: Path) -> set[str]:
    return {path.suffixes[-2].lstrip(".") for path in libs.rglob("__pycache__/*.pyc")}


def test_vsix_ships_bytecode(bundled_libs: Path) -> None:
    """Every bundled module, ours and the libraries', has bytecode for the Python that
    packaged the VSIX (issue 15: the first start compiled ~250 modules, ~0.4 s), bytecode
    that Python uses without checking the sources (which the VSIX does not date)."""
    tags = bytecode_tags(bundled_libs)
    assert len(tags) == 1, tags
    tag = tags.pop()
    sources = sorted(bundled_libs.rglob("*.py"))
    for top in ("openprose", "pygls", "lsprotocol", "parso", "attrs", "cattrs", "pathspec"):
        assert any(path.relative_to(bundled_libs).parts[0] == top for path in sources), top
    assert bundled_libs / "typing_extensions.py" in sources
    for source in sources:
        compiled = source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"
        assert compiled.is_file(), f"no bytecode for {source.relative_to(bundled_libs)}"
        flags = int.from_bytes(compiled.read_bytes()[4:8], "little")
        assert flags == 0b01, f"{compiled.name}: not unchecked-hash bytecode ({flags})"


def test_bundled_server_writes_no_bytecode(bundled_libs: Path) -> None:
    """Started from the extracted VSIX, the server imports what it ships and writes nothing
    next to it (an installed extension may be read-only)."""
    if bytecode_tags(bundled_libs) != {sys.implementation.cache_tag}:
        pytest.skip(f"the VSIX was packaged for another Python than {sys.executable}")
    before = sorted(bundled_libs.rglob("*"))
    code = "import openprose.lsp.server, openprose.ide.analysis, openprose.format"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHONDONTWRITE")}
    result = subprocess.run(
        [sys.executable, "-S", "-c", code],
        env={**env, "PYTHONPATH": str(bundled_libs)},
        cwd=bundled_libs,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(bundled_libs.rglob("*")) == before


def test_bundled_libs_are_self_sufficient(bundled_libs: Path) -> None:
    """With no site-packages at all (-S), the modules come from the bundle."""
    code = (
        "import openprose.lsp.server, pygls, lsprotocol; print(openprose.__file__, pygls.__file__)"
    )
    result = subprocess.run(
        [sys.executable, "-S", "-c", code],
        env={**os.environ, "PYTHONPATH": str(bundled_libs)},
        cwd=bundled_libs,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    for path in result.stdout.split():
        assert Path(path).is_relative_to(bundled_libs), path


class LspProcess:
    """A server over stdio with Content-Length framing; messages are read on a thread."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        assert process.stdout is not None
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        try:
            while True:
                length = None
                while (line := stream.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode("ascii").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                if length is None:
                    break
                self.messages.put(json.loads(stream.read(length)))
        finally:
            self.messages.put(None)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()

    def wait_for(self, description: str, match: Any) -> dict[str, Any]:
        while True:
            try:
                message = self.messages.get(timeout=TIMEOUT)
            except queue.Empty:
                pytest.fail(f"no {description} from the bundled server within {TIMEOUT} s")
            if message is None:
                pytest.fail(f"the bundled server closed its output before {description}")
            if match(message):
                return message

    def request(self, id_: int, method: str, params: Any) -> dict[str, Any]:
        self.send({"id": id_, "method": method, "params": params})
        return self.wait_for(
            f"answer to {method}", lambda m: m.get("id") == id_ and "method" not in m
        )


@pytest.fixture
def bundled_server(bundled_libs: Path, tmp_path: Path) -> Iterator[LspProcess]:
    """`python -m openprose.lsp` the way the extension starts it, in an empty directory."""
    process = subprocess.Popen(
        [sys.executable, "-S", "-m", "openprose.lsp"],
        env={**os.environ, "PYTHONPATH": str(bundled_libs)},
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield LspProcess(process)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_bundled_server_starts_and_checks(bundled_server: LspProcess, tmp_path: Path) -> None:
    server = bundled_server
    answer = server.request(
        1,
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": tmp_path.as_uri(),
            "capabilities": {},
            # What the extension sends for its default settings.
            "initializationOptions": {"format": {"enable": True}, "debounce": 0, "trace": "off"},
        },
    )
    capabilities = answer["result"]["capabilities"]
    assert capabilities["textDocumentSync"]
    assert capabilities["documentFormattingProvider"]
    assert capabilities["completionProvider"]
    assert capabilities["hoverProvider"]
    assert answer["result"]["serverInfo"]["name"]
    server.send({"method": "initialized", "params": {}})

    # The analyzer works from the bundle: an unterminated string is E001.
    uri = (tmp_path / "broken.prose").as_uri()
    text = 'session "Tighten the draft\n'
    server.send(
        {
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": uri, "languageId": "prose", "version": 1, "text": text}
            },
        }
    )
    published = server.wait_for(
        "diagnostics",
        lambda m: (
            m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        ),
    )
    assert [d["code"] for d in published["params"]["diagnostics"]] == ["E001"]

    assert server.request(2, "shutdown", None)["result"] is None
    server.send({"method": "exit"})
    assert server.process.wait(timeout=10) == 0
