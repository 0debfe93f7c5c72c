"""Moving bytes between the client and ``ProseProtocol``: standard input and output, or one
TCP connection.  Frames are cut by ``framing.FrameParser`` (pygls' reader goes deaf after one
wrong Content-Length).  Standard input is read by a daemon thread, so a client that keeps
the pipe open after ``exit`` does not keep the process alive."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from pygls.io_ import StdoutWriter

from openprose.lsp.framing import FrameParser
from openprose.lsp.protocol import ProseProtocol

log = logging.getLogger("prose-ls")
_CHUNK = 1 << 16


async def pump(protocol: ProseProtocol, read: Callable[[], Awaitable[bytes]]) -> None:
    """Hand the client's messages to ``protocol`` until ``exit`` or the end of the stream."""
    parser = FrameParser()
    while protocol.exit_status is None:
        data = await read()
        events = parser.feed(data, drained=len(data) < _CHUNK) if data else parser.close()
        for event in events:
            protocol.receive(event)
            if protocol.exit_status is not None:
                return
        if not data:
            if not protocol.shut_down:
                log.warning("the client closed the connection without shutdown and exit")
            return


def _stdin_reader(stream: BinaryIO) -> Callable[[], Awaitable[bytes]]:
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    fd = stream.fileno()

    def read_forever() -> None:
        while True:
            try:
                data = os.read(fd, _CHUNK)
            except OSError:
                data = b""
            try:
                loop.call_soon_threadsafe(chunks.put_nowait, data)
            except RuntimeError:  # the loop is closed: the server has exited
                return
            if not data:
                return

    threading.Thread(target=read_forever, name="prose-ls stdin", daemon=True).start()
    return chunks.get


def serve_stdio(protocol: ProseProtocol) -> int:
    """Serve on standard input and output; the exit status the protocol asks for."""
    protocol.set_writer(StdoutWriter(sys.stdout.buffer))

    async def run() -> None:
        await pump(protocol, _stdin_reader(sys.stdin.buffer))

    try:
        asyncio.run(run())
    except BrokenPipeError:
        log.error("the connection to the client is lost")
        return 1
    return _status(protocol)


def serve_tcp(protocol: ProseProtocol, host: str, port: int) -> int:
    """Serve the first client that connects to ``host:port``, until it leaves."""

    async def run() -> None:
        done = asyncio.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            protocol.set_writer(writer)
            try:
                await pump(protocol, lambda: reader.read(_CHUNK))
            finally:
                writer.close()
                done.set()

        server: Any = await asyncio.start_server(connection, host, port)
        log.info("listening on %s:%s", host, port)
        async with server:
            await done.wait()

    asyncio.run(run())
    return _status(protocol)


def _status(protocol: ProseProtocol) -> int:
    if protocol.exit_status is not None:
        return protocol.exit_status
    return 0 if protocol.shut_down else 1
