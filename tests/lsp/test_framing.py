"""Cutting a byte stream into messages: whatever the chunking, and after a broken frame."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.lsp.framing import FrameParser, Garbled, Message

texts = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30
)  # astral characters, line breaks and quotes included
messages = st.builds(
    lambda n, text: {"jsonrpc": "2.0", "id": n, "method": "m", "params": {"text": text}},
    st.integers(0, 10**6),
    texts,
)


def utf8_frame(message: Any, length_error: int = 0, extra_headers: bytes = b"") -> bytes:
    """A frame of ``message`` whose body is raw UTF-8, so its byte and character counts differ
    (tests/lsp/raw.py's ``frame`` escapes to ASCII), declaring ``length_error`` bytes more than
    the body holds, with ``extra_headers`` after Content-Length."""
    body = json.dumps(message, ensure_ascii=False).encode("utf-8")
    declared = len(body) + length_error
    return b"Content-Length: %d\r\n%s\r\n" % (declared, extra_headers) + body


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    pieces, start = [], 0
    for point in points:
        pieces.append(data[start:point])
        start = point
    pieces.append(data[start:])
    return pieces


def run(data: bytes, cuts: list[int]) -> list[Message | Garbled]:
    parser = FrameParser()
    events = []
    for piece in chunked(data, cuts):
        events += parser.feed(piece)
    return events + parser.close()


def values(events: list[Message | Garbled]) -> list[Any]:
    return [e.value for e in events if isinstance(e, Message)]


@given(st.lists(messages, max_size=5), st.lists(st.integers(0, 2000), max_size=8))
def test_well_formed_frames_come_out_whole_whatever_the_chunking(
    sent: list[Any], cuts: list[int]
) -> None:
    events = run(b"".join(utf8_frame(m) for m in sent), cuts)
    assert events == [Message(m) for m in sent]


@settings(max_examples=300)
@given(
    st.lists(messages, min_size=1, max_size=3),
    messages,
    st.integers(-40, 60).filter(lambda e: e != 0),
    st.lists(messages, min_size=1, max_size=3),
    st.lists(st.integers(0, 2000), max_size=8),
)
def test_a_wrong_length_loses_at_most_its_own_message(
    before: list[Any], broken: Any, error: int, after: list[Any], cuts: list[int]
) -> None:
    body = json.dumps(broken, ensure_ascii=False).encode("utf-8")
    error = max(error, -len(body))
    data = b"".join(utf8_frame(m) for m in before) + utf8_frame(broken, error)
    data += b"".join(utf8_frame(m) for m in after)
    got = values(run(data, cuts))
    assert got[: len(before)] == before
    assert got[-len(after) :] == after
    assert len(got) <= len(before) + 1 + len(after)


def test_a_wrong_length_in_one_read_recovers_the_message_too() -> None:
    one, two = {"jsonrpc": "2.0", "id": 1}, {"jsonrpc": "2.0", "id": 2}
    for error in (-5, -1, 1, 30):
        assert run(utf8_frame(one, error) + utf8_frame(two), []) == [Message(one), Message(two)]


def test_a_too_long_length_does_not_wait_for_bytes_that_will_not_come() -> None:
    parser = FrameParser()
    assert parser.feed(utf8_frame({"id": 1}, 20)) == [Message({"id": 1})]


def test_malformed_json_is_reported_once_and_the_next_frame_read() -> None:
    bad = b'{"id": 1, "method": '
    events = run(b"Content-Length: %d\r\n\r\n" % len(bad) + bad + utf8_frame({"id": 2}), [])
    assert [type(e) for e in events] == [Garbled, Message]
    parser = FrameParser()  # and without a next frame, at once
    assert [type(e) for e in parser.feed(b"Content-Length: %d\r\n\r\n" % len(bad) + bad)] == [
        Garbled
    ]


def test_junk_between_frames_is_reported_once() -> None:
    junk = b"hello\r\n" * 30 + b"{}"
    events = run(utf8_frame({"id": 1}) + junk + utf8_frame({"id": 2}), [7, 100, 150])
    assert [type(e) for e in events] == [Message, Garbled, Message]


def test_other_headers_before_and_after_the_length() -> None:
    content_type = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
    body = b'{"id": 1}'
    data = content_type + b"Content-Length: %d\r\n" % len(body) + b"\r\n" + body
    data += utf8_frame({"id": 2}, extra_headers=content_type)
    assert run(data, [3, 60]) == [Message({"id": 1}), Message({"id": 2})]


def test_a_header_without_a_blank_line_is_skipped() -> None:
    events = run(b'Content-Length: 9\r\n{"id": 1}' + utf8_frame({"id": 2}), [])
    assert values(events) == [{"id": 2}]
    assert isinstance(events[0], Garbled)


def test_the_stream_ending_inside_a_body() -> None:
    parser = FrameParser()
    assert parser.feed(b'Content-Length: 50\r\n\r\n{"id": ') == []
    assert [type(e) for e in parser.close()] == [Garbled]


def test_every_cut_of_a_misframed_stream_still_yields_the_next_message() -> None:
    # Exhaustive over one small case: hypothesis rarely hits the cut inside a header's
    # line break that once lost the next frame.
    one, two = {"id": 1, "text": "a\u2028b"}, {"id": 2}
    for error in range(-20, 40):
        data = utf8_frame(one, error) + utf8_frame(two)
        for cut in range(len(data)):
            assert values(run(data, [cut]))[-1:] == [two], (error, cut)


def test_a_body_shorter_than_its_length_is_tried_only_once_nothing_more_arrived() -> None:
    parser = FrameParser()
    # The transport read a full chunk: more is on its way, so the body is not tried yet.
    assert parser.feed(utf8_frame({"id": 1}, 20), drained=False) == []
    assert parser.feed(b"", drained=True) == [Message({"id": 1})]
