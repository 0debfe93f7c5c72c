"""The quick fixes at a range: only the diagnostics there, positions in code points, the
configuration's codes only, and no crash on any text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.checking import check_text
from openprose.codes import CODES
from openprose.ide import analyze_document
from openprose.ide.fixes.fix_all import fix_all
from openprose.ide.fixes.registry import HANDLERS, code_actions
from openprose.ide.types import Range
from tests.ide.fixes.fixes_support import IGNORING, LOOP, MESSY, SELECTING, fixed
from tests.support.edits import apply_edits


def test_each_fixed_code_is_known_and_its_provider_is_found_by_name() -> None:
    # A code's fixes live in ide/fixes/<what it fixes>.py: the provider's own name, or the
    # name of its family.
    for code, provider in HANDLERS.items():
        package, module = provider.__module__.rsplit(".", 1)
        assert code in CODES
        assert package == "openprose.ide.fixes"
        assert module in (provider.__name__, "missing_colon"), (code, provider.__module__)


def test_positions_count_code_points() -> None:
    text = 'input topic: "Thème 😀"\nsession "Écris 😀 un haïku 🎋 sur {topc}"\n'
    result = fixed(text, "E044", "Change to `topic`")
    assert 'session "Écris 😀 un haïku 🎋 sur {topic}"\n' in result

    text = 'session "Résumé 😀"\n  modèle: sonnet\n  retyr: 2\n'
    result = fixed(text, "W005", "Change to `retry`", index=1)
    assert result.endswith("  retry: 2\n")


def test_range_past_the_end_and_stale_diagnostics() -> None:
    text = 'loop:\n  session "x"\n'
    analysis = analyze_document(text)
    assert code_actions(analysis, Range((50, 0), (60, 3))) == []
    everything = code_actions(analysis, Range((0, 0), (999, 999)))
    assert [a.title for a in everything] == ["Add `(max: 10)`"]
    # Diagnostics of another version of the text: nothing matches, nothing breaks.
    stale = check_text("agent a:\n  model: x\n\n\n\nsession: ghost\nconst c = 1\nc = 2\n")
    assert code_actions(analysis, Range((0, 0), (999, 0)), stale) == []


def test_only_the_diagnostics_in_range() -> None:
    analysis = analyze_document(MESSY)
    found = code_actions(analysis, Range((13, 0), (13, 2)))
    assert {c for a in found for c in a.diagnostic_codes} == {"W018"}


GARBAGE = [
    "",
    "\n\n\n",
    ":::\n  ]]]\n\t\t$$",
    "agent\nsession:\n  model:\nloop (\ntry\n",
    'session "unterminated {x\n  context: [a, \n',
    "\ufeffloop:\r\n  session: ghost\r\n  model: 😀\r",
    "let = \nconst = \n = 3\nfor in :\n",
]


@pytest.mark.parametrize("text", GARBAGE)
def test_no_crash_on_garbage(text: str) -> None:
    analysis = analyze_document(text)
    for action in code_actions(analysis, Range((0, 0), (100, 0))) + fix_all(analysis):
        apply_edits(text, action.edits)


_WORDS = st.sampled_from(
    [
        "agent a:\n",
        "  model: sonet\n",
        "  modle: opus\n",
        "session: b\n",
        'session "x {y}"\n',
        "  context: z\n",
        "const c = 1\n",
        "c = 2\n",
        "loop:\n",
        "try:\n",
        "  ",
        "\t",
        "é😀",
        "(",
        ":",
        '"',
        "\n",
        "resume: a\n",
        "  persist: true\n",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_WORDS, max_size=14).map("".join))
def test_no_crash_on_generated_programs(text: str) -> None:
    analysis = analyze_document(text)
    for action in code_actions(analysis, Range((0, 0), (100, 0))) + fix_all(analysis):
        apply_edits(text, action.edits)


def test_an_ignored_code_gets_no_quick_fix() -> None:
    analysis = analyze_document(LOOP)
    where = Range((0, 0), (0, 4))
    assert [a.title for a in code_actions(analysis, where)] == ["Add `(max: 10)`"]
    assert code_actions(analysis, where, config=IGNORING) == []
    assert [a.title for a in code_actions(analysis, where, config=SELECTING)] == ["Add `(max: 10)`"]
