"""What the quick fix tests share: the actions offered at a diagnostic, the check that a fix
removes its diagnostic and brings no new error, and the programs several modules fix."""

from __future__ import annotations

from collections import Counter

from openprose.checking import check_text
from openprose.config import config_from_table
from openprose.diagnostics import Diagnostic
from openprose.ide import analyze_document
from openprose.ide.analysis import to_pos
from openprose.ide.fixes.registry import code_actions
from openprose.ide.types import CodeAction, Range
from tests.support.edits import apply_edits


def diagnostic(text: str, code: str, index: int = 0) -> Diagnostic:
    found = [d for d in analyze_document(text).diagnostics if d.code == code]
    assert len(found) > index, analyze_document(text).diagnostics
    return found[index]


def actions_for(text: str, code: str, index: int = 0) -> list[CodeAction]:
    d = diagnostic(text, code, index)
    analysis = analyze_document(text)
    found = code_actions(analysis, Range(to_pos(d.start), to_pos(d.end)))
    return [a for a in found if code in a.diagnostic_codes]


def titles(text: str, code: str) -> list[str]:
    return [a.title for a in actions_for(text, code)]


def fixed(text: str, code: str, title: str, index: int = 0) -> str:
    """The text after the action titled ``title`` for the ``code`` diagnostic, checked:
    one diagnostic of that code fewer, and no new error."""
    chosen = [a for a in actions_for(text, code, index) if a.title == title]
    assert chosen, titles(text, code)
    action = chosen[0]
    assert action.kind == "quickfix"
    assert action.diagnostic_codes == (code,)
    result = apply_edits(text, action.edits)
    assert_fixed(text, result, [code])
    return result


def assert_fixed(before_text: str, after_text: str, codes: list[str]) -> None:
    before = check_text(before_text)
    after = check_text(after_text)
    count_before = Counter(d.code for d in before)
    count_after = Counter(d.code for d in after)
    for code in codes:
        assert count_after[code] < count_before[code], after
    errors_before = Counter(d.code for d in before if d.is_error)
    errors_after = Counter(d.code for d in after if d.is_error)
    new = [c for c in errors_after if errors_after[c] > errors_before[c]]
    assert not new, after


def preferred(text: str, code: str) -> list[str]:
    return [a.title for a in actions_for(text, code) if a.preferred]


MESSY = """\
input topic: "What the report covers"

agent analyst:
  model: sonet
  prompt: "You analyse data"

const depth = "shallow"
let report = session: analist
  prompt: "Report on {topc} at {depth} depth"
depth = "deep"
session "Check the report"
  context: reportt
  retyr: 2
loop:
  session "Poll for updates"
agent other:
  model: gpt4
"""


LOOP = 'loop:\n  session "Keep going"\n'  # W018, a safe fix


IGNORING = config_from_table("test", {"ignore": ["W018"]})


SELECTING = config_from_table("test", {"select": ["W018"]})
