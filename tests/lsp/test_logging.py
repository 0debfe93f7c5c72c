"""What prose-ls writes to stderr (the editor's output channel) during an ordinary session."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from tests.lsp.raw import frame


def test_a_cancel_for_an_answered_request_is_not_reported() -> None:
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        # VS Code cancels requests whose answers are already on the way, on most keystrokes.
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}},
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 42}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    result = subprocess.run(
        [sys.executable, "-m", "openprose.lsp"],
        input=b"".join(frame(m) for m in messages),
        capture_output=True,
        timeout=60,
    )
    assert b'"id": 2' in result.stdout or b'"id":2' in result.stdout  # shutdown was answered
    assert b"Cancel notification" not in result.stderr, result.stderr.decode()
