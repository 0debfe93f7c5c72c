"""The quick fix for a reassigned `const` (E048)."""

from __future__ import annotations

from openprose.checking import check_text
from tests.ide.fixes.fixes_support import fixed, preferred, titles


def test_make_const_a_let() -> None:
    text = 'const tone = "formal"\nsession "Write in a {tone} tone"\ntone = "friendly"\n'
    assert preferred(text, "E048") == ["Make `tone` a `let`"]
    result = fixed(text, "E048", "Make `tone` a `let`")
    assert result.startswith('let tone = "formal"\n')
    assert not check_text(result)


def test_no_let_for_an_input() -> None:
    text = 'input tone: "The tone"\ntone = "friendly"\n'
    assert titles(text, "E048") == []
