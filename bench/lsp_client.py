"""A minimal language-server client over stdio, for benchmarks: JSON-RPC with Content-Length
framing on an asyncio subprocess, requests matched to responses by id, notifications kept.

No pygls: its client structures every message with lsprotocol, which cannot even read ruff's
``initialize`` result (a structuring bug with notebook document selectors), and a benchmark
that compares servers must reach them all through the same code.  Messages stay plain dicts;
each one is stamped with ``time.perf_counter()`` as soon as its body is read, so a latency
does not include the event loop's scheduling of whoever waits for it.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Message = dict[str, Any]
Predicate = Callable[[Message], bool]

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class ServerError(Exception):
    """The server answered a request with an error, or went away."""


class LspClient:
    """One server process; ``start`` it, ``initialize`` it, then send requests and notifications."""

    def __init__(self, *command: str, cwd: str | None = None) -> None:
        self.command = command
        self.cwd = cwd
        self.process: asyncio.subprocess.Process | None = None
        self.notifications: list[tuple[float, Message]] = []
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[tuple[float, Message]]] = {}
        self._waiters: list[tuple[Predicate, asyncio.Future[tuple[float, Message]]]] = []
        self._tasks: list[asyncio.Task[None]] = []

    # ------------------------------------------------------------ process

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self.cwd,
            # Pipe reads of 64 KiB (asyncio's default limit) would split a 10,000-line didOpen echo.
            limit=1 << 24,
        )
        self._tasks = [
            asyncio.create_task(self._read_messages()),
            asyncio.create_task(self._read_stderr()),
        ]

    @property
    def pid(self) -> int:
        assert self.process is not None, "not started"
        return self.process.pid

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process (all its threads) so far."""
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        # The command name (field 2) may hold spaces; the fields after its ')' are fixed.
        fields = stat[stat.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    async def stop(self, timeout: float = 10) -> None:
        """``shutdown`` then ``exit``; kill the process if it does not end by itself."""
        if self.process is None:
            return
        try:
            if self.process.returncode is None:
                await asyncio.wait_for(self.request("shutdown"), timeout)
                await self.notify("exit")
                await asyncio.wait_for(self.process.wait(), timeout)
        except (TimeoutError, ServerError, ConnectionError):
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()
        finally:
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # ------------------------------------------------------------ sending

    async def _send(self, message: Message) -> None:
        assert self.process is not None and self.process.stdin is not None, "not started"
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.process.stdin.drain()

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and return its result (raise ServerError on an error response)."""
        _, message = await self.request_timed(method, params)
        return message.get("result")

    async def request_timed(self, method: str, params: Any = None) -> tuple[float, Message]:
        """Send a request; return the instant its response was read, and the response."""
        self._next_id += 1
        future: asyncio.Future[tuple[float, Message]] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        message: Message = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)
        received, response = await future
        if "error" in response:
            raise ServerError(f"{method}: {response['error']}")
        return received, response

    async def notify(self, method: str, params: Any = None) -> None:
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)

    def expect(self, predicate: Predicate) -> asyncio.Future[tuple[float, Message]]:
        """A future for the next notification matching ``predicate`` (register before sending
        what causes it): the instant it was read, and the notification."""
        future: asyncio.Future[tuple[float, Message]] = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        return future

    async def initialize(self, params: Message) -> tuple[float, Message]:
        """``initialize`` then ``initialized``; returns the seconds to the answer and the result."""
        begin = time.perf_counter()
        received, response = await self.request_timed("initialize", params)
        await self.notify("initialized", {})
        return received - begin, response.get("result") or {}

    # ------------------------------------------------------------ receiving

    async def _read_messages(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        try:
            while True:
                length = -1
                while True:
                    line = await stdout.readline()
                    if not line:
                        raise ConnectionError("the server closed its output")
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                if length < 0:
                    continue  # a header block without a length: nothing to read
                body = await stdout.readexactly(length)
                received = time.perf_counter()
                await self._dispatch(received, json.loads(body))
        except (ConnectionError, asyncio.IncompleteReadError) as error:
            self._fail_all(ServerError(f"{error}; stderr: {' | '.join(self.stderr_tail)}"))

    async def _dispatch(self, received: float, message: Message) -> None:
        if "method" not in message:
            future = self._pending.pop(message.get("id", -1), None)
            if future is not None and not future.done():
                future.set_result((received, message))
            return
        if "id" in message:
            await self._answer_server_request(message)
            return
        self.notifications.append((received, message))
        for entry in list(self._waiters):
            predicate, future = entry
            if future.done():
                self._waiters.remove(entry)
            elif predicate(message):
                self._waiters.remove(entry)
                future.set_result((received, message))

    async def _answer_server_request(self, message: Message) -> None:
        # A client without capabilities gets few requests; each has a harmless empty answer.
        result: Any = None
        if message["method"] == "workspace/configuration":
            result = [None for _ in message.get("params", {}).get("items", [])]
        await self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def _read_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while line := await self.process.stderr.readline():
            self.stderr_tail.append(line.decode("utf-8", "replace").rstrip())

    def _fail_all(self, error: Exception) -> None:
        for future in [*self._pending.values(), *(future for _, future in self._waiters)]:
            if not future.done():
                future.set_exception(error)
        self._pending.clear()
        self._waiters.clear()


def publish_diagnostics_for(uri: str, version: int | None) -> Predicate:
    """Matches a ``publishDiagnostics`` of ``uri`` for ``version``, or with no version at all
    (then it is the first publication after the change: see ``carries_version``)."""

    def matches(message: Message) -> bool:
        if message.get("method") != "textDocument/publishDiagnostics":
            return False
        params = message.get("params", {})
        if params.get("uri") != uri:
            return False
        published = params.get("version")
        return published is None or published == version

    return matches


def carries_version(message: Message) -> bool:
    return message.get("params", {}).get("version") is not None
