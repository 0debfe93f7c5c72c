"""Converting columns between code points (our trees) and the client's position encoding."""

from __future__ import annotations

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"


def encoding_name(kind: object) -> str:
    """The encoding a negotiated ``PositionEncodingKind`` names (UTF-16 when none was).

    ``str()`` of the enum is ``'PositionEncodingKind.Utf16'`` on Python 3.11+, which matched
    none of the names below and made every position count code points: compare values."""
    value = getattr(kind, "value", kind)
    return value if value in (UTF8, UTF16, UTF32) else UTF16


def _units(char: str, encoding: str) -> int:
    code = ord(char)
    if encoding == UTF16:
        return 2 if code > 0xFFFF else 1
    if encoding == UTF8:
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return 1


def to_code_points(line_text: str, units: int, encoding: str) -> int:
    """The code-point column of a client column (clamped to the line's end)."""
    if encoding == UTF32 or line_text.isascii():
        return min(units, len(line_text))
    count = 0
    for index, char in enumerate(line_text):
        if count >= units:
            return index
        count += _units(char, encoding)
    return len(line_text)


def to_client_units(line_text: str, column: int, encoding: str) -> int:
    """The client column of a code-point column."""
    prefix = line_text[:column]
    if encoding == UTF32 or prefix.isascii():
        return column
    return sum(_units(char, encoding) for char in prefix) + max(0, column - len(line_text))
