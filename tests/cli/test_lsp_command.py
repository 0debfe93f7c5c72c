"""`prose lsp` (stdio) and `prose-ls --tcp HOST:PORT` answer an initialize request."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from typing import IO

from tests.lsp.raw import frame


def read_message(stream: IO[bytes]) -> dict[str, object]:
    length = 0
    while True:
        line = stream.readline()
        if not line:
            raise AssertionError("the server closed the stream")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    message: dict[str, object] = json.loads(stream.read(length))
    return message


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}


def assert_full_capabilities(response: dict[str, object]) -> None:
    capabilities = response["result"]["capabilities"]  # type: ignore[index]
    for provider in (
        "completionProvider",
        "hoverProvider",
        "definitionProvider",
        "referencesProvider",
        "renameProvider",
        "documentSymbolProvider",
        "workspaceSymbolProvider",
        "foldingRangeProvider",
        "semanticTokensProvider",
        "documentFormattingProvider",
        "codeActionProvider",
        "signatureHelpProvider",
        "inlayHintProvider",
        "documentLinkProvider",
        "codeLensProvider",
        "diagnosticProvider",
    ):
        assert provider in capabilities, provider


def test_prose_lsp_speaks_over_stdio() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "openprose", "lsp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(frame(INITIALIZE))
        process.stdin.flush()
        assert_full_capabilities(read_message(process.stdout))
    finally:
        process.kill()
        process.wait(timeout=10)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                with contextlib.suppress(BrokenPipeError):
                    stream.close()


def test_prose_ls_listens_on_tcp() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "openprose.lsp", "--tcp", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        with connection:
            connection.sendall(frame(INITIALIZE))
            assert_full_capabilities(read_message(connection.makefile("rb")))
    finally:
        process.kill()
        process.wait(timeout=10)
