""" "Fix all": every safe fix at once, checked, under the configuration it is asked under."""

from __future__ import annotations

from itertools import pairwise

from openprose.checking import check_text
from openprose.ide import analyze_document
from openprose.ide.fixes.fix_all import fix_all
from tests.ide.fixes.fixes_support import IGNORING, LOOP, MESSY, SELECTING
from tests.support.edits import apply_edits


def test_fix_all_applies_every_safe_fix() -> None:
    analysis = analyze_document(MESSY)
    found = fix_all(analysis)
    assert len(found) == 1
    action = found[0]
    assert action.kind == "source.fixAll"
    assert set(action.diagnostic_codes) == {"E007", "E008", "E044", "E045", "E048", "W005", "W018"}
    result = apply_edits(MESSY, action.edits)
    remaining = check_text(result)
    # Only the model nothing is close to is left (that one needs a person to choose).
    assert [d.code for d in remaining] == ["E008"]
    assert "model: gpt4" in result
    assert "  model: sonnet\n" in result
    assert "let depth" in result
    assert "loop (max: 10):" in result


def test_fix_all_edits_do_not_overlap_and_come_sorted() -> None:
    text = 'const a = "x"\na = "y"\na = "z"\nloop:\n  session "w"\n'
    (action,) = fix_all(analyze_document(text))
    edits = list(action.edits)
    assert edits == sorted(edits, key=lambda e: (e.start, e.end))
    for first, second in pairwise(edits):
        assert first.end <= second.start
    assert len([e for e in edits if e.text == "let"]) == 1  # both E048 fixed by one edit
    assert not check_text(apply_edits(text, edits))


def test_fix_all_leaves_out_fixes_that_bring_problems() -> None:
    # Two close names to choose from: nothing is safe.
    text = 'let draft1 = session "A"\nlet draft2 = session "B"\nsession "x"\n  context: draft\n'
    assert fix_all(analyze_document(text)) == []
    # The same misspelling twice in one block cannot become the same property twice.
    text = 'session "x"\n  retyr: 2\n  retri: 3\n'
    (action,) = fix_all(analyze_document(text))
    assert action.title == "Fix 1 problem that can be fixed safely"
    result = apply_edits(text, action.edits)
    assert [d.code for d in check_text(result)] == ["W005"]


def test_fix_all_on_a_clean_program() -> None:
    assert fix_all(analyze_document('session "Say hello"\n')) == []
    assert fix_all(analyze_document("")) == []


def test_fix_all_answers_for_the_configuration_it_is_asked_under() -> None:
    # The same text (and so the same cache entry before the configuration was part of it),
    # asked under one configuration after the other, in both orders.
    text = LOOP + "# fix-all under configurations\n"
    assert len(fix_all(analyze_document(text))) == 1
    assert fix_all(analyze_document(text), IGNORING) == []
    assert len(fix_all(analyze_document(text), SELECTING)) == 1
    assert fix_all(analyze_document(text), IGNORING) == []
