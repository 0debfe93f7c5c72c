"""Columns in code points (our trees) and in the client's negotiated encoding."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types

from openprose.lsp.positions import (
    UTF8,
    UTF16,
    UTF32,
    encoding_name,
    to_client_units,
    to_code_points,
)
from tests.support.edits import units

ENCODINGS = (UTF8, UTF16, UTF32)
lines = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=20)


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        (types.PositionEncodingKind.Utf16, "utf-16"),
        (types.PositionEncodingKind.Utf8, "utf-8"),
        (types.PositionEncodingKind.Utf32, "utf-32"),
        ("utf-8", "utf-8"),
        (None, "utf-16"),  # nothing negotiated: the protocol's default
        ("utf-7", "utf-16"),
    ],
)
def test_the_negotiated_encoding_is_named_by_its_value(kind: object, name: str) -> None:
    assert encoding_name(kind) == name


@given(lines, st.data())
def test_client_units_count_what_the_encoding_counts(line: str, data: st.DataObject) -> None:
    column = data.draw(st.integers(0, len(line)))
    for encoding in ENCODINGS:
        client = to_client_units(line, column, encoding)
        assert client == units(line[:column], encoding)
        assert to_code_points(line, client, encoding) == column


@given(lines, st.integers(0, 200))
def test_a_client_column_maps_to_the_first_character_boundary_at_or_after_it(
    line: str, client: int
) -> None:
    for encoding in ENCODINGS:
        column = to_code_points(line, client, encoding)
        if client >= units(line, encoding):
            assert column == len(line)  # past the end: the line's end, as the protocol says
        else:
            assert units(line[:column], encoding) >= client
            assert column == 0 or units(line[: column - 1], encoding) < client
