"""Cutting the client's byte stream into JSON-RPC messages, recovering from broken frames.

A frame is ``Content-Length: N`` (and maybe other headers), a blank line, and N bytes of
JSON.  pygls trusts N: one frame whose length is wrong makes it read the next frame's
header as body, or the next body as headers, and every later frame is lost.  Here a header
line ``Content-Length: <digits>`` followed by a raw line break marks where a frame starts,
which valid JSON never contains (a raw line break cannot be inside a JSON string, and the
words cannot be outside one), so when N is wrong the body is cut at the next header
instead, and a body that already parses is not kept waiting for bytes that will not come.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# Case-sensitive, as every client writes it: a case-insensitive search is 35 times slower,
# and the body of a large message is searched as it arrives.
_HEADER = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r?\n")
# A header line, or the start of one still arriving.
_HEADER_LINE = re.compile(rb"[A-Za-z][A-Za-z0-9-]*(?::[^\r\n]*)?")
_HEADER_START = re.compile(r"[A-Za-z][A-Za-z0-9-]*(?::[^\r\n]*)?(?:\r?\n|\r?$)")
_DECODER = json.JSONDecoder()
# The longest tail of the buffer that may be the start of a header still arriving.
_KEEP = 64


@dataclass(frozen=True, slots=True)
class Message:
    """One decoded JSON value."""

    value: Any


@dataclass(frozen=True, slots=True)
class Garbled:
    """Bytes that are not a message (answered with a JSON-RPC parse error)."""

    reason: str
    size: int


Event = Message | Garbled


class _Progress:
    """A step that consumed bytes without completing a message."""


_NOTHING = _Progress()


def _decode(data: bytes | bytearray) -> Message | None:
    try:
        return Message(json.loads(data))
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError
        return None


def _complete_value(data: bytes | bytearray) -> int | None:
    """Where a JSON value at the start of ``data`` ends, if it is followed only by
    whitespace or the beginning of a header."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        text = data[: error.start].decode("utf-8")
    start = len(text) - len(text.lstrip())
    try:
        _, end = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    rest = text[end:].lstrip()
    if rest and not _HEADER_START.match(rest):
        return None
    return len(text[:end].encode("utf-8"))


def _last_byte(data: bytearray) -> bytes:
    """The last byte that is not whitespace (a NUL byte if none)."""
    end = len(data)
    while end and data[end - 1] in b" \t\r\n":
        end -= 1
    return bytes(data[end - 1 : end]) if end else b"\x00"


def _could_continue(data: bytes | bytearray) -> bool:
    """Whether ``data`` fails to parse only because it stops too early."""
    try:
        json.loads(data)
    except UnicodeDecodeError as error:
        return error.reason == "unexpected end of data"
    except json.JSONDecodeError as error:
        return error.pos >= len(data.rstrip()) or error.msg.startswith("Unterminated string")
    except (ValueError, RecursionError):
        return False
    return False


class FrameParser:
    """Feed bytes in as they arrive; get the messages (and garbled runs) they complete."""

    def __init__(self) -> None:
        # A bytearray: appending a chunk to bytes would copy the whole body every time.
        self._buffer = bytearray()
        self._length: int | None = None  # the declared length of the body being read
        self._scanned = 0  # how much of the body was already searched for a header
        self._junk = False  # junk before the next header was already reported
        self._drained = True

    def feed(self, data: bytes, drained: bool = True) -> list[Event]:
        """``drained``: nothing more has arrived yet.  A transport that read a full chunk
        says False, and a body shorter than its length is then not tried as a whole
        message (which would parse a large body again at every chunk ending in ``}``)."""
        self._drained = drained
        self._buffer += data
        events: list[Event] = []
        while True:
            event = self._step()
            if event is None:
                return events
            if isinstance(event, Message | Garbled):
                events.append(event)

    def close(self) -> list[Event]:
        """The end of the stream: whatever is left."""
        events = self.feed(b"")
        rest = bytes(self._buffer)
        self._buffer = bytearray()
        if self._length is not None and rest.strip():
            events.append(_decode(rest) or Garbled("the stream ended inside a message", len(rest)))
        elif rest.strip() and not self._junk:
            events.append(Garbled("bytes outside any frame", len(rest)))
        self._length = None
        return events

    # ------------------------------------------------------------ one step

    def _step(self) -> Event | _Progress | None:
        """The next event, ``_NOTHING`` when progress was made without one, or None when
        more bytes are needed."""
        if self._length is None:
            return self._header()
        return self._body(self._length)

    def _header(self) -> Event | _Progress | None:
        buffer = self._buffer
        match = _HEADER.search(buffer)
        if match is None:
            # Keep a tail that may be a header still arriving; drop older junk.
            if len(buffer) > _KEEP:
                dropped, self._buffer = buffer[:-_KEEP], buffer[-_KEEP:]
                return self._report_junk(dropped)
            return None
        # Other header lines may follow, up to a blank line.
        position = match.end()
        while True:
            newline = buffer.find(b"\n", position)
            line = buffer[position:] if newline < 0 else buffer[position : newline + 1]
            text = line.rstrip(b"\r\n")
            if newline >= 0 and text == b"":
                break
            if text and not _HEADER_LINE.fullmatch(text):
                # Not a header (a body without the blank line, say): resynchronise after it.
                self._buffer = buffer[match.end() :]
                return Garbled("a header without a blank line after it", match.end())
            if newline < 0:
                return None
            position = newline + 1
        skipped = buffer[: match.start()]
        self._buffer = buffer[newline + 1 :]
        self._length = int(match.group(1))
        self._scanned = 0
        if skipped.strip() and not all(
            _HEADER_LINE.fullmatch(line.rstrip(b"\r")) for line in skipped.strip().split(b"\n")
        ):
            return self._report_junk(skipped)
        self._junk = False
        return _NOTHING

    def _report_junk(self, junk: bytes | bytearray) -> Garbled | _Progress:
        if not junk.strip() or self._junk:
            return _NOTHING
        self._junk = True
        return Garbled("bytes outside any frame", len(junk))

    def _body(self, length: int) -> Event | _Progress | None:
        buffer = self._buffer
        if len(buffer) >= length:
            found = _decode(buffer[:length])
            if found is not None:
                return self._take(length, found)
        # The length is wrong, or the body is still arriving.
        header = _HEADER.search(buffer, max(0, self._scanned - _KEEP))
        self._scanned = len(buffer)
        if header is not None:
            # The next frame starts there: the body is what comes before it.
            size = header.start()
            return self._take(size, _decode(buffer[:size]) or Garbled("a malformed message", size))
        if len(buffer) >= length or (self._drained and _last_byte(buffer) in b"}]"):
            # A complete message followed by nothing, or by the start of the next header:
            # its length was wrong (too long, it would wait for bytes that will not come;
            # too short, its end would be taken for the next header).
            end = _complete_value(buffer)
            if end is not None:
                return self._take(end, Message(json.loads(buffer[:end])))
        if len(buffer) > length and _could_continue(buffer):
            return None  # too short a length, and the rest still arriving
        if len(buffer) >= length:
            return self._take(length, Garbled("a malformed message", length))
        return None

    def _take(self, size: int, event: Event) -> Event:
        self._buffer = self._buffer[size:]
        self._length = None
        self._scanned = 0
        self._junk = False
        return event
