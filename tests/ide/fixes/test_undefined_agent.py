"""Quick fixes for an undefined agent (E007): "did you mean", or a new agent definition."""

from __future__ import annotations

from openprose.checking import check_text
from tests.ide.fixes.fixes_support import fixed, preferred, titles

WRITERS = """\
input topic: "What to write about"

agent writer:
  model: sonnet
  prompt: "You write clear prose"

let draft = session: writer
  prompt: "Draft a note about {topic}"
session: editor
  prompt: "Tighten the note"
  context: draft
"""


def test_create_agent_goes_after_the_other_agents() -> None:
    result = fixed(WRITERS, "E007", "Create agent `editor`")
    assert result.startswith(WRITERS.split("let draft")[0])
    assert "agent editor:\n  model: sonnet\n  prompt: " in result
    # The stub sits between the agents and the first statement, a blank line after it.
    assert result.index("agent writer:") < result.index("agent editor:")
    assert result.index("agent editor:") < result.index("let draft")
    assert '"\n\nlet draft' in result
    assert not [d for d in check_text(result) if d.is_error]


def test_create_agent_before_its_first_use_without_other_agents() -> None:
    text = 'input topic: "A topic"\n\nlet a = session "Gather notes on {topic}"\nsession: scribe\n'
    result = fixed(text, "E007", "Create agent `scribe`")
    lines = result.splitlines()
    assert lines[3] == ""  # a blank line between the statement above and the stub
    assert lines[4] == "agent scribe:"
    assert lines[-2:] == ["", "session: scribe"]


def test_create_agent_keeps_the_comment_of_the_statement_it_precedes() -> None:
    text = 'let a = session "Notes"\n\n# Hand the notes over\nsession: scribe\n  context: a\n'
    result = fixed(text, "E007", "Create agent `scribe`")
    assert result.index("agent scribe:") < result.index("# Hand the notes over")
    assert "# Hand the notes over\nsession: scribe" in result


def test_create_agent_for_a_resume_makes_it_persistent() -> None:
    text = 'session: keeper\n  prompt: "Start the log"\nresume: keeper\n  prompt: "Add to it"\n'
    result = fixed(text, "E007", "Create agent `keeper`")
    assert "  persist: true\n" in result
    assert not check_text(result)


def test_create_agent_uses_the_documents_indentation_and_line_breaks() -> None:
    text = "agent a:\r\n    model: opus\r\n\r\nsession: b\r\n"
    result = fixed(text, "E007", "Create agent `b`")
    assert "agent b:\r\n    model: sonnet\r\n    prompt: " in result
    assert "\n" not in result.replace("\r\n", "")


def test_undefined_agent_did_you_mean_is_preferred() -> None:
    text = 'agent reviewer:\n  model: sonnet\n\nsession: reveiwer\n  prompt: "Review it"\n'
    assert preferred(text, "E007") == ["Change to `reviewer`"]
    result = fixed(text, "E007", "Change to `reviewer`")
    assert "session: reviewer\n" in result
    assert "Create agent `reveiwer`" in titles(text, "E007")


def test_create_agent_goes_after_a_byte_order_mark() -> None:
    result = fixed("\ufeffsession: writer\n", "E007", "Create agent `writer`")
    assert result.startswith("\ufeffagent writer:\n")
