"""Quick fixes for an invalid model (E008)."""

from __future__ import annotations

from tests.ide.fixes.fixes_support import actions_for, fixed, preferred


def test_invalid_model_offers_every_model_closest_preferred() -> None:
    text = 'agent poet:\n  model: sonet\n  prompt: "You write verse"\n'
    found = actions_for(text, "E008")
    assert found[0].title == "Change model to `sonnet`"
    assert {a.title for a in found} == {
        "Change model to `sonnet`",
        "Change model to `opus`",
        "Change model to `haiku`",
    }
    assert [a.title for a in found if a.preferred] == ["Change model to `sonnet`"]
    for model in ("sonnet", "opus", "haiku"):
        result = fixed(text, "E008", f"Change model to `{model}`")
        assert f"  model: {model}\n" in result


def test_invalid_model_in_a_string_on_a_session() -> None:
    text = 'session "Summarise the report"\n  model: "Opus"\n'
    assert preferred(text, "E008") == ["Change model to `opus`"]
    assert "  model: opus\n" in fixed(text, "E008", "Change model to `opus`")


def test_invalid_model_far_from_every_model_prefers_none() -> None:
    text = 'agent poet:\n  model: gpt4\n  prompt: "You write verse"\n'
    assert len(actions_for(text, "E008")) == 3
    assert preferred(text, "E008") == []
