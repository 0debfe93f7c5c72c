"""The protocol around the features, with hand-made frames: every request is answered (with an
error where it must be), broken frames do not make the server deaf, the lifecycle's rules hold
(ServerNotInitialized, exit codes, progress only when the client supports it), and a client's
mistake is not logged as an internal error with a traceback."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lsp.raw import INITIALIZE, INITIALIZED, RawServer, frame, notification, request

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002
REQUEST_FAILED = -32803


@pytest.fixture
def server() -> Iterator[RawServer]:
    running = RawServer()
    yield running
    running.kill()


def did_open(uri: str, text: str, version: int = 1) -> dict[str, object]:
    return notification(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "prose", "version": version, "text": text}},
    )


def hover(id: int, uri: object, line: int = 0, character: int = 0) -> dict[str, object]:
    return request(
        id,
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}},
    )


def error_code(message: dict[str, object]) -> object:
    error = message.get("error")
    return error.get("code") if isinstance(error, dict) else None


def assert_quiet(stderr: str) -> None:
    """Nothing reported as an internal failure."""
    assert "Traceback" not in stderr, stderr
    assert "internal error" not in stderr.lower(), stderr


def shut_down(server: RawServer) -> tuple[int, str]:
    server.send(request("bye", "shutdown"))
    server.response("bye")
    server.send(notification("exit"))
    return server.finish()


# ---------------------------------------------------------------- lifecycle


def test_requests_before_initialize_get_server_not_initialized(server: RawServer) -> None:
    server.send(hover(1, "file:///a.prose"), did_open("file:///a.prose", "session: ghost\n"))
    assert error_code(server.response(1)) == SERVER_NOT_INITIALIZED
    # The notification was dropped: the document is not open once initialized.
    server.initialize()
    server.send(
        request(2, "textDocument/documentSymbol", {"textDocument": {"uri": "file:///a.prose"}})
    )
    assert server.response(2)["result"] in (None, [])
    status, stderr = shut_down(server)
    assert status == 0
    assert_quiet(stderr)


@pytest.mark.parametrize("command", [("-m", "openprose.lsp"), ("-m", "openprose", "lsp")])
def test_exit_without_shutdown_exits_with_1(command: tuple[str, ...]) -> None:
    server = RawServer(command=command)
    try:
        server.initialize()
        server.send(notification("exit"))
        status, _ = server.finish()
        assert status == 1
    finally:
        server.kill()


def test_the_client_going_away_without_exit_is_a_failure(server: RawServer) -> None:
    server.initialize()
    status, stderr = server.finish()
    assert status == 1
    assert "without shutdown" in stderr


def test_exit_after_shutdown_exits_with_0(server: RawServer) -> None:
    server.initialize()
    server.send(request("bye", "shutdown"))
    server.response("bye")
    server.send(notification("exit"))
    # At once, even though the client keeps the pipe open.
    assert server.process.wait(timeout=10) == 0
    assert_quiet(server.finish()[1])


def test_requests_after_shutdown_are_refused(server: RawServer) -> None:
    server.initialize()
    server.send(request(1, "shutdown"), hover(2, "file:///a.prose"))
    assert server.response(1)["result"] is None
    assert error_code(server.response(2)) == INVALID_REQUEST
    server.send(notification("exit"))
    assert server.finish()[0] == 0


def test_no_progress_request_unless_the_client_supports_it(tmp_path: Path) -> None:
    (tmp_path / "one.prose").write_text("agent writer:\n  model: sonnet\n", encoding="utf-8")
    for capabilities, expected in [({}, False), ({"window": {"workDoneProgress": True}}, True)]:
        server = RawServer()
        try:
            start = dict(INITIALIZE)
            start["params"] = {
                "capabilities": capabilities,
                "rootUri": tmp_path.as_uri(),
                "processId": None,
            }
            server.send(start, INITIALIZED)
            server.response(0)
            # The index is ready once workspace symbols find the agent.
            for attempt in range(200):
                server.send(request(attempt, "workspace/symbol", {"query": "writer"}))
                if server.response(attempt).get("result"):
                    break
                time.sleep(0.05)
            else:
                raise AssertionError("the workspace was never indexed")
            asked = [m for m in server.seen if m.get("method") == "window/workDoneProgress/create"]
            assert bool(asked) == expected, capabilities
            status, stderr = shut_down(server)
            assert status == 0
            assert_quiet(stderr)
        finally:
            server.kill()


# ---------------------------------------------------------------- every request is answered


@pytest.mark.parametrize(
    ("method", "params"),
    [
        (
            "textDocument/hover",
            {"textDocument": {"uri": "file:///a.prose"}, "position": {"line": -1, "character": 0}},
        ),
        ("textDocument/completion", None),
        (
            "textDocument/rename",
            {"textDocument": {"uri": "file:///a.prose"}, "position": {"line": 0, "character": 8}},
        ),
        (
            "textDocument/hover",
            {"textDocument": {"uri": 5}, "position": {"line": 0, "character": 0}},
        ),
        ("textDocument/definition", {"textDocument": {"uri": "file:///a.prose"}}),
        ("textDocument/documentSymbol", {"textDocument": "file:///a.prose"}),
    ],
    ids=[
        "negative-line",
        "null-params",
        "rename-without-newName",
        "numeric-uri",
        "no-position",
        "uri-not-object",
    ],
)
def test_invalid_params_get_an_invalid_params_error(
    server: RawServer, method: str, params: object
) -> None:
    server.initialize()
    server.send(did_open("file:///a.prose", 'let x = session "a"\n'))
    message = request(1, method)
    message["params"] = params
    server.send(message)
    assert error_code(server.response(1)) == INVALID_PARAMS
    # And the server goes on answering.
    server.send(hover(2, "file:///a.prose", 0, 4))
    assert server.response(2)["result"] is not None
    status, stderr = shut_down(server)
    assert status == 0
    assert_quiet(stderr)


def test_an_unknown_method_is_not_an_internal_error(server: RawServer) -> None:
    server.initialize()
    server.send(request(1, "prose/noSuchThing", {}), notification("prose/noSuchNotice", {}))
    assert error_code(server.response(1)) == METHOD_NOT_FOUND
    status, stderr = shut_down(server)
    assert status == 0
    assert_quiet(stderr)


def test_a_refused_rename_is_not_an_internal_error(server: RawServer) -> None:
    server.initialize()
    server.send(did_open("file:///a.prose", 'session "a"\n'))
    server.send(
        request(
            1,
            "textDocument/rename",
            {
                "textDocument": {"uri": "file:///a.prose"},
                "position": {"line": 0, "character": 2},
                "newName": "x",
            },
        )
    )
    assert error_code(server.response(1)) == REQUEST_FAILED
    status, stderr = shut_down(server)
    assert status == 0
    assert_quiet(stderr)


# ---------------------------------------------------------------- broken frames


def test_malformed_json_is_answered_and_the_server_goes_on(server: RawServer) -> None:
    server.initialize()
    server.send(frame(b'{"jsonrpc": "2.0", "id": 7, "method": '))
    answer = server.wait_for(lambda m: "error" in m)
    assert error_code(answer) == PARSE_ERROR and answer["id"] is None
    server.send(frame(b"[1, 2]"), frame(b'{"no": "method"}'))
    assert error_code(server.wait_for(lambda m: "error" in m)) == INVALID_REQUEST
    assert error_code(server.wait_for(lambda m: "error" in m)) == INVALID_REQUEST
    server.send(hover(2, "file:///a.prose"))
    assert "result" in server.response(2)
    status, stderr = shut_down(server)
    assert status == 0
    assert_quiet(stderr)


@pytest.mark.parametrize("error", [-9, -1, 1, 40])
def test_a_wrong_content_length_does_not_make_the_server_deaf(
    server: RawServer, error: int
) -> None:
    server.initialize()
    server.send(did_open("file:///a.prose", 'let x = session "a"\n'))
    server.send(misframed(hover(1, "file:///a.prose", 0, 4), error))
    # The next frames are read, whatever became of the broken one.
    server.send(hover(2, "file:///a.prose", 0, 4))
    assert "result" in server.response(2)
    status, stderr = shut_down(server)
    assert status == 0
    assert "Traceback" not in stderr, stderr


def misframed(message: dict[str, object], error: int) -> bytes:
    """A frame whose Content-Length is ``error`` bytes off."""
    body = json.dumps(message).encode()
    return frame(body, length=len(body) + error)


def test_a_too_long_content_length_is_answered_without_waiting_for_more(
    server: RawServer,
) -> None:
    server.initialize()
    server.send(did_open("file:///a.prose", 'let x = session "a"\n'))
    server.send(misframed(hover(1, "file:///a.prose", 0, 4), 25))
    # Nothing follows: the message is complete JSON, so it is answered now.
    assert "result" in server.response(1, timeout=10)


def test_a_too_short_content_length_still_answers_the_request(server: RawServer) -> None:
    server.initialize()
    server.send(did_open("file:///a.prose", 'let x = session "a"\n'))
    server.send(misframed(hover(1, "file:///a.prose", 0, 4), -3))
    assert "result" in server.response(1, timeout=10)


# ---------------------------------------------------------------- in process


class Written:
    """A writer that keeps the frames the protocol writes."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, object]]:
        found = []
        rest = self.data
        while rest:
            header, _, rest = rest.partition(b"\r\n\r\n")
            length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            found.append(json.loads(rest[:length]))
            rest = rest[length:]
        return found


def test_an_answer_that_cannot_be_serialised_is_still_an_answer() -> None:
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

    from openprose.lsp.protocol import ProseProtocol, strict_converter

    server = LanguageServer(
        "t", "0", protocol_cls=ProseProtocol, converter_factory=strict_converter
    )
    written = Written()
    server.protocol.set_writer(written)
    # A plain int where lsprotocol expects its enum fails to serialise.
    where = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=1)
    )
    broken = types.Diagnostic(range=where, message="m", severity=1)  # type: ignore[arg-type]
    server.protocol._send_response(3, result=[broken])
    (answer,) = written.messages()
    assert answer["id"] == 3 and error_code(answer) == -32603
