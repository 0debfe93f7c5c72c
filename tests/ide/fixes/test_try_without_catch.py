"""The quick fix for a `try` without `catch` or `finally` (E037)."""

from __future__ import annotations

from openprose.checking import check_text
from tests.ide.fixes.fixes_support import fixed


def test_add_catch_after_the_try_body() -> None:
    text = 'try:\n  session "Deploy to staging"\nsession "Announce it"\n'
    result = fixed(text, "E037", "Add `catch:`")
    assert result.startswith('try:\n  session "Deploy to staging"\ncatch as err:\n  session ')
    assert result.endswith('    context: err\nsession "Announce it"\n')
    assert not check_text(result)


def test_add_catch_nested_and_at_the_end_of_the_file() -> None:
    text = 'let err = "taken"\nif **ready**:\n    try:\n        session "Ship it"'
    result = fixed(text, "E037", "Add `catch:`")
    assert result.endswith(
        '        session "Ship it"\n    catch as error:\n        session '
        '"Report what failed and what was left undone"\n            context: error\n'
    )
    assert not [d for d in check_text(result) if d.code != "W019"]
