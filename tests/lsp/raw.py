"""Talking to prose-ls with hand-made frames: what pytest-lsp's client cannot send (wrong
Content-Length, malformed JSON, requests before initialize, invalid params, exit codes)."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

Message = dict[str, Any]


def frame(message: Message | bytes, length: int | None = None) -> bytes:
    """A frame holding ``message``, declaring ``length`` bytes (the true length by default)."""
    body = message if isinstance(message, bytes) else json.dumps(message).encode("utf-8")
    declared = len(body) if length is None else length
    return b"Content-Length: %d\r\n\r\n" % declared + body


def request(id: int | str, method: str, params: Any = None) -> Message:
    message: Message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> Message:
    message: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


INITIALIZE = request(0, "initialize", {"capabilities": {}, "processId": None, "rootUri": None})
INITIALIZED = notification("initialized", {})


class RawServer:
    """A prose-ls process; a thread reads its frames into a queue so reads can time out."""

    def __init__(self, *args: str, command: tuple[str, ...] = ("-m", "openprose.lsp")) -> None:
        self.process = subprocess.Popen(
            [sys.executable, *command, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.messages: queue.Queue[Message | None] = queue.Queue()
        self.seen: list[Message] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            assert length is not None
            self.messages.put(json.loads(stream.read(length)))

    def send(self, *items: Message | bytes) -> None:
        """Write messages (framed) or raw bytes (as they are)."""
        assert self.process.stdin is not None
        for item in items:
            self.process.stdin.write(item if isinstance(item, bytes) else frame(item))
        self.process.stdin.flush()

    def wait_for(self, wanted: Callable[[Message], bool], timeout: float = 20) -> Message:
        """The first message (from now on) that ``wanted`` accepts; the server's requests
        that come first are answered with null."""
        while True:
            try:
                message = self.messages.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"nothing within {timeout}s; saw {self.seen}") from None
            if message is None:
                raise AssertionError(f"the server closed its output; saw {self.seen}")
            self.seen.append(message)
            if wanted(message):
                return message
            if "method" in message and "id" in message:
                # A request from the server (progress, configuration): accept it.
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})

    def response(self, id: int | str, timeout: float = 20) -> Message:
        return self.wait_for(lambda m: m.get("id") == id and "method" not in m, timeout)

    def initialize(self, capabilities: Message | None = None) -> Message:
        start = dict(INITIALIZE)
        start["params"] = {**INITIALIZE["params"], "capabilities": capabilities or {}}
        self.send(start, INITIALIZED)
        return self.response(0)

    def finish(self, timeout: float = 20) -> tuple[int, str]:
        """Close standard input; the exit status and everything written to stderr."""
        assert self.process.stdin is not None and self.process.stderr is not None
        with contextlib.suppress(BrokenPipeError):  # the server may have exited already
            self.process.stdin.close()
        try:
            status = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
            raise
        return status, self.process.stderr.read().decode("utf-8", "replace")

    def kill(self) -> None:
        """Kill the server if it still runs, and close its pipes (an open one is a
        ResourceWarning, an error in this suite, in whichever test runs next)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self._reader.join(timeout=10)  # it reads stdout until the end of the output
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(BrokenPipeError):
                    stream.close()
