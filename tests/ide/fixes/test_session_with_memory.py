"""The quick fix for a `session:` on an agent whose memory exists (W011)."""

from __future__ import annotations

from openprose.checking import check_text
from tests.ide.fixes.fixes_support import fixed, titles

MEMORY = """\
agent captain:
  model: opus
  persist: true
  prompt: "You coordinate the release"

session: captain
  prompt: "Plan the release"
session: captain
  prompt: "Check the plan"
"""


def test_switch_to_resume() -> None:
    result = fixed(MEMORY, "W011", "Switch to `resume:`")
    assert result.endswith('resume: captain\n  prompt: "Check the plan"\n')
    assert not check_text(result)


def test_no_switch_for_a_named_session() -> None:
    text = MEMORY.replace(
        'session: captain\n  prompt: "Check', 'session check: captain\n  prompt: "Check'
    )
    assert titles(text, "W011") == []
