"""Quick fixes for a property given twice (E009)."""

from __future__ import annotations

from tests.ide.fixes.fixes_support import fixed, preferred, titles


def test_remove_a_duplicate_property() -> None:
    text = 'agent t:\n  model: sonnet\n  prompt: "Translate"\n  model: sonnet\n'
    assert preferred(text, "E009") == ["Remove duplicate `model`"]
    result = fixed(text, "E009", "Remove duplicate `model`")
    assert result == 'agent t:\n  model: sonnet\n  prompt: "Translate"\n'


def test_a_conflicting_duplicate_lets_the_user_choose() -> None:
    text = 'agent t:\n  model: sonnet\n  prompt: "Translate"\n  model: opus\n'
    assert titles(text, "E009") == ["Remove this `model`", "Remove the first `model`"]
    assert preferred(text, "E009") == []
    assert "opus" in fixed(text, "E009", "Remove the first `model`")
    assert "opus" not in fixed(text, "E009", "Remove this `model`")
