"""A change the server cannot apply: logged, the user told once, the document not served
from the wrong text until the editor opens it again."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.lsp.raw import RawServer, notification, request

URI = "file:///tmp/out-of-sync.prose"
TEXT = "session: ghost\n"  # E007: one diagnostic while in sync


@pytest.fixture
def server() -> Iterator[RawServer]:
    running = RawServer()
    running.initialize()  # no diagnostic pull: diagnostics are pushed
    yield running
    running.kill()


def open_document(server: RawServer) -> list[object]:
    server.send(
        notification(
            "textDocument/didOpen",
            {"textDocument": {"uri": URI, "languageId": "prose", "version": 1, "text": TEXT}},
        )
    )
    return published(server)


def published(server: RawServer) -> list[object]:
    message = server.wait_for(
        lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == URI
    )
    return list(message["params"]["diagnostics"])


def change(version: int, line: int) -> dict[str, object]:
    where = {"line": line, "character": 0}
    return notification(
        "textDocument/didChange",
        {
            "textDocument": {"uri": URI, "version": version},
            "contentChanges": [{"range": {"start": where, "end": where}, "text": "x"}],
        },
    )


def test_an_unusable_change_puts_the_document_out_of_sync_until_reopened(
    server: RawServer,
) -> None:
    assert len(open_document(server)) == 1
    server.send(change(2, -1))
    # Its diagnostics are withdrawn, and the user is told what to do.
    assert published(server) == []
    shown = server.wait_for(lambda m: m.get("method") == "window/showMessage")
    assert "reopen" in shown["params"]["message"]
    assert shown["params"]["type"] == 2  # a warning

    # Meanwhile: no answers computed from the wrong text, and later changes are ignored.
    server.send(change(3, -5), change(4, 0))
    server.send(request(1, "textDocument/documentSymbol", {"textDocument": {"uri": URI}}))
    assert server.response(1)["result"] in (None, [])
    messages = [m.get("method") for m in server.seen]
    assert messages.count("window/showMessage") == 1

    # Reopening mends it.
    assert len(open_document(server)) == 1
    server.send(request(2, "textDocument/documentSymbol", {"textDocument": {"uri": URI}}))
    assert server.response(2)["result"]
    server.send(request("bye", "shutdown"))
    server.response("bye")
    server.send(notification("exit"))
    status, stderr = server.finish()
    assert status == 0
    assert "out of sync" in stderr  # logged
    assert "Traceback" not in stderr, stderr
    # Only one message for the whole episode.
    assert [m.get("method") for m in server.seen].count("window/showMessage") == 1
