"""Quick fixes and "fix all" under a rule configuration: a code it leaves out gets no fix,
and "fix all" answers for the configuration it is asked under, not the last one."""

from __future__ import annotations

from openprose.config import config_from_table
from openprose.ide import analyze_document
from openprose.ide.fixes.fix_all import fix_all
from openprose.ide.fixes.registry import code_actions
from openprose.ide.types import Range

LOOP = 'loop:\n  session "Keep going"\n'  # W018, a safe fix
IGNORING = config_from_table("test", {"ignore": ["W018"]})
SELECTING = config_from_table("test", {"select": ["W018"]})


def test_an_ignored_code_gets_no_quick_fix() -> None:
    analysis = analyze_document(LOOP)
    where = Range((0, 0), (0, 4))
    assert [a.title for a in code_actions(analysis, where)] == ["Add `(max: 10)`"]
    assert code_actions(analysis, where, config=IGNORING) == []
    assert [a.title for a in code_actions(analysis, where, config=SELECTING)] == ["Add `(max: 10)`"]


def test_fix_all_answers_for_the_configuration_it_is_asked_under() -> None:
    # The same text (and so the same cache entry before the configuration was part of it),
    # asked under one configuration after the other, in both orders.
    text = LOOP + "# fix-all under configurations\n"
    assert len(fix_all(analyze_document(text))) == 1
    assert fix_all(analyze_document(text), IGNORING) == []
    assert len(fix_all(analyze_document(text), SELECTING)) == 1
    assert fix_all(analyze_document(text), IGNORING) == []
