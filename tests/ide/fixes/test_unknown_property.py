"""Quick fixes for an unknown property or modifier (W005)."""

from __future__ import annotations

from openprose.checking import check_text
from tests.ide.fixes.fixes_support import fixed, preferred, titles


def test_unknown_agent_property_did_you_mean() -> None:
    text = 'agent critic:\n  model: sonnet\n  promt: "You point out weak arguments"\n'
    assert titles(text, "W005") == ["Change to `prompt`", "Remove property `promt`"]
    assert preferred(text, "W005") == ["Change to `prompt`"]
    result = fixed(text, "W005", "Change to `prompt`")
    assert '  prompt: "You point out weak arguments"\n' in result


def test_unknown_session_property_did_you_mean_and_remove() -> None:
    text = 'session "Fetch the page"\n  retyr: 3\n  backoff: linear\n'
    assert "  retry: 3\n" in fixed(text, "W005", "Change to `retry`")
    result = fixed(text, "W005", "Remove property `retyr`")
    assert result == 'session "Fetch the page"\n  backoff: linear\n'


def test_remove_property_takes_its_whole_lines() -> None:
    text = (
        'agent critic:\n  model: sonnet\n  notes:\n    first: "a"\n    second: "b"\n'
        '  prompt: "You critique"\n'
    )
    result = fixed(text, "W005", "Remove property `notes`")
    assert result == 'agent critic:\n  model: sonnet\n  prompt: "You critique"\n'


def test_remove_property_on_the_last_line_without_a_line_break() -> None:
    text = 'session "Fetch the page"\n  colour: "blue"'
    result = fixed(text, "W005", "Remove property `colour`")
    assert result == 'session "Fetch the page"'


def test_did_you_mean_skips_a_property_already_there() -> None:
    text = 'agent critic:\n  model: sonnet\n  modle: opus\n  prompt: "You critique"\n'
    assert titles(text, "W005") == ["Remove property `modle`"]


def test_no_removal_that_would_empty_an_agent() -> None:
    text = "agent critic:\n  colour: blue\n"
    assert titles(text, "W005") == []


def test_agent_property_on_a_session_can_only_be_removed() -> None:
    text = 'session "Draft"\n  persist: true\n'
    assert titles(text, "W005") == ["Remove property `persist`"]
    fixed(text, "W005", "Remove property `persist`")


def test_loop_and_parallel_modifiers() -> None:
    text = 'loop (mx: 4):\n  session "Poll the queue"\n'
    assert preferred(text, "W005") == ["Change to `max`"]
    result = fixed(text, "W005", "Change to `max`")
    assert result.startswith("loop (max: 4):")
    assert not check_text(result)

    text = 'loop (4):\n  session "Poll the queue"\n'
    result = fixed(text, "W005", "Change to `(max: 4)`")
    assert result.startswith("loop (max: 4):")
    assert not check_text(result)

    text = 'parallel (on_fail: "continue"):\n  a = session "A"\n  b = session "B"\n'
    result = fixed(text, "W005", "Change to `on-fail`")
    assert result.startswith('parallel (on-fail: "continue"):')
