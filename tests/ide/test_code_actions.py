"""Quick fixes and "fix all": each fix applied to a program that needs it removes its
diagnostic and brings no new error."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.checking import check_text
from openprose.diagnostics import Diagnostic
from openprose.format import TextEdit
from openprose.ide import analyze_document
from openprose.ide.analysis import to_pos
from openprose.ide.fixes.fix_all import fix_all
from openprose.ide.fixes.registry import code_actions
from openprose.ide.types import CodeAction, Range

# --------------------------------------------------------------------------- helpers


def apply(text: str, edits: tuple[TextEdit, ...] | list[TextEdit]) -> str:
    """Apply non-overlapping edits given in any order (positions: 0-based line and
    character in code points; a line ends at \\n, \\r\\n or \\r)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: tuple[int, int]) -> int:
        line, character = position
        if line >= len(lines):
            return len(text)
        content = lines[line].rstrip("\r\n")
        assert character <= len(content), (position, content)
        return starts[line] + character

    spans = sorted(((offset(e.start), offset(e.end), e.text) for e in edits), reverse=True)
    for (start, end, _), (next_start, _, _) in pairwise(spans):
        assert next_start <= start, "edits overlap"
        assert end >= start
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


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
    result = apply(text, action.edits)
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


# --------------------------------------------------------------------------- E007


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


# --------------------------------------------------------------------------- E008


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


# --------------------------------------------------------------------------- W005


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


# --------------------------------------------------------------------------- undefined


@pytest.mark.parametrize(
    ("code", "text", "title", "expected"),
    [
        (
            "E043",
            'let summary = session "Summarise the thread"\noutput result = sumary\n',
            "Change to `summary`",
            "output result = summary\n",
        ),
        (
            "E043",
            'let tally = session "Count"\ntaly = session "Count again"\n',
            "Change to `tally`",
            'tally = session "Count again"\n',
        ),
        (
            "E044",
            'input topic: "A topic"\nsession "Write a haiku about {topc}"\n',
            "Change to `topic`",
            'session "Write a haiku about {topic}"\n',
        ),
        (
            "E045",
            'let notes = session "Take notes"\nsession "Write minutes"\n  context: nots\n',
            "Change to `notes`",
            "  context: notes\n",
        ),
        (
            "E045",
            'let notes = session "Take notes"\nsession "Write minutes"\n  context: { nots }\n',
            "Change to `notes`",
            "  context: { notes }\n",
        ),
        (
            "E061",
            'let chapters = session "List chapters"\nfor c in chaptrs:\n  session "Sum {c}"\n',
            "Change to `chapters`",
            "for c in chapters:\n",
        ),
    ],
)
def test_undefined_variable_did_you_mean(code: str, text: str, title: str, expected: str) -> None:
    assert preferred(text, code) == [title]
    assert expected in fixed(text, code, title)


def test_undefined_variable_suggests_only_names_in_scope() -> None:
    # `draft` is defined after the use, `inner` inside a loop body: neither is visible.
    text = (
        "repeat 2:\n"
        '  let innerr = session "Loop work"\n'
        'session "Use {drafts} and {inner}"\n'
        'let draft = session "Draft"\n'
    )
    analysis = analyze_document(text)
    assert [d.code for d in analysis.diagnostics] == ["E044", "E044"]
    found = code_actions(analysis, Range((0, 0), (10, 0)))
    assert [a for a in found if a.title.startswith("Change to")] == []


def test_assignment_never_suggests_a_constant() -> None:
    text = "const counter = 1\nlet counted = 2\ncountr = 3\n"
    assert titles(text, "E043") == ["Change to `counted`"]


def test_several_close_names_none_preferred() -> None:
    text = 'let draft1 = session "A"\nlet draft2 = session "B"\nsession "x"\n  context: draft\n'
    assert set(titles(text, "E045")) == {"Change to `draft1`", "Change to `draft2`"}
    assert preferred(text, "E045") == []


def test_block_parameter_is_suggested_inside_the_block() -> None:
    text = 'block review(topic):\n  session "Review {topik}"\ndo review("tests")\n'
    assert "Change to `topic`" in titles(text, "E044")
    fixed(text, "E044", "Change to `topic`")


# --------------------------------------------------------------------------- E048


def test_make_const_a_let() -> None:
    text = 'const tone = "formal"\nsession "Write in a {tone} tone"\ntone = "friendly"\n'
    assert preferred(text, "E048") == ["Make `tone` a `let`"]
    result = fixed(text, "E048", "Make `tone` a `let`")
    assert result.startswith('let tone = "formal"\n')
    assert not check_text(result)


def test_no_let_for_an_input() -> None:
    text = 'input tone: "The tone"\ntone = "friendly"\n'
    assert titles(text, "E048") == []


# --------------------------------------------------------------------------- W011


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


# --------------------------------------------------------------------------- E037


def test_add_catch_after_the_try_body() -> None:
    text = 'try:\n  session "Deploy to staging"\nsession "Announce it"\n'
    result = fixed(text, "E037", "Add `catch:`")
    assert result.startswith('try:\n  session "Deploy to staging"\ncatch as err:\n  session ')
    assert result.endswith('    context: err\nsession "Announce it"\n')
    assert not check_text(result)


def test_add_catch_nested_and_at_the_end_of_the_file() -> None:
    text = 'let err = "taken"\nif **ready**:\n    try:\n        session "Ship it"'
    result = fixed(text, "E037", "Add `catch:`")
    assert result.endswith(
        '        session "Ship it"\n    catch as error:\n        session '
        '"Report what failed and what was left undone"\n            context: error\n'
    )
    assert not [d for d in check_text(result) if d.code != "W019"]


# --------------------------------------------------------------------------- W018


def test_add_max_to_a_bare_loop() -> None:
    text = 'loop:\n  session "Answer the next ticket"\n'
    result = fixed(text, "W018", "Add `(max: 10)`")
    assert result.startswith("loop (max: 10):\n")
    assert not check_text(result)


def test_add_max_before_the_index_name() -> None:
    text = 'loop as turn:\n  session "Take turn {turn}"\n'
    result = fixed(text, "W018", "Add `(max: 10)`")
    assert result.startswith("loop (max: 10) as turn:\n")
    assert not check_text(result)


# --------------------------------------------------------------------------- extras


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


def test_rewrite_a_legacy_import() -> None:
    text = 'import "web-search" from "github:acme/skills"\n\nagent r:\n  skills: ["web-search"]\n'
    result = fixed(text, "W027", 'Rewrite as `use "@acme/web-search"`')
    assert result.startswith('use "@acme/web-search"\n')


# --------------------------------------------------------------------------- unicode


def test_positions_count_code_points() -> None:
    text = 'input topic: "Thème 😀"\nsession "Écris 😀 un haïku 🎋 sur {topc}"\n'
    result = fixed(text, "E044", "Change to `topic`")
    assert 'session "Écris 😀 un haïku 🎋 sur {topic}"\n' in result

    text = 'session "Résumé 😀"\n  modèle: sonnet\n  retyr: 2\n'
    result = fixed(text, "W005", "Change to `retry`", index=1)
    assert result.endswith("  retry: 2\n")


# --------------------------------------------------------------------------- fix_all


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


def test_fix_all_applies_every_safe_fix() -> None:
    analysis = analyze_document(MESSY)
    found = fix_all(analysis)
    assert len(found) == 1
    action = found[0]
    assert action.kind == "source.fixAll"
    assert set(action.diagnostic_codes) == {"E007", "E008", "E044", "E045", "E048", "W005", "W018"}
    result = apply(MESSY, action.edits)
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
    assert not check_text(apply(text, edits))


def test_fix_all_leaves_out_fixes_that_bring_problems() -> None:
    # Two close names to choose from: nothing is safe.
    text = 'let draft1 = session "A"\nlet draft2 = session "B"\nsession "x"\n  context: draft\n'
    assert fix_all(analyze_document(text)) == []
    # The same misspelling twice in one block cannot become the same property twice.
    text = 'session "x"\n  retyr: 2\n  retri: 3\n'
    (action,) = fix_all(analyze_document(text))
    assert action.title == "Fix 1 problem that can be fixed safely"
    result = apply(text, action.edits)
    assert [d.code for d in check_text(result)] == ["W005"]


def test_fix_all_on_a_clean_program() -> None:
    assert fix_all(analyze_document('session "Say hello"\n')) == []
    assert fix_all(analyze_document("")) == []


# --------------------------------------------------------------------------- robustness


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
        apply(text, action.edits)


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
        apply(text, action.edits)


# --------------------------------------------------------------------------- W036

SHADOWING = """\
let topic = session "Pick a topic"
block review(topic):  # prose: ignore[W105]
  session "Review {topic}"
"""


def test_a_mistyped_suppression_code_changes_to_the_code_reported_on_its_line() -> None:
    assert preferred(SHADOWING, "W036") == ["Change to `W015`"]
    result = fixed(SHADOWING, "W036", "Change to `W015`")
    assert "# prose: ignore[W015]" in result
    assert check_text(result) == []  # the suppression now works


def test_removing_the_only_code_removes_the_directive() -> None:
    result = fixed(SHADOWING, "W036", "Remove `W105` from the suppression comment")
    assert result.splitlines()[1] == "block review(topic):"


def test_removing_one_code_of_several_keeps_the_others_and_tidy_separators() -> None:
    first = SHADOWING.replace("[W105]", "[W105, W015]")
    assert "[W015]" in fixed(first, "W036", "Remove `W105` from the suppression comment")
    last = SHADOWING.replace("[W105]", "[W015, E001]")
    result = fixed(last, "W036", "Remove `E001` from the suppression comment")
    assert result.splitlines()[1] == "block review(topic):  # prose: ignore[W015]"


def test_a_directive_that_does_nothing_is_removed_with_its_line_when_alone() -> None:
    late = SHADOWING.replace("  # prose: ignore[W105]", "") + "# prose: ignore-file[W015]\n"
    assert fixed(late, "W036", "Remove the suppression comment") == late.replace(
        "# prose: ignore-file[W015]\n", ""
    )
    empty = 'session "Hi"  # note  # prose: ignore[]\n'
    assert fixed(empty, "W036", "Remove the suppression comment") == 'session "Hi"  # note\n'


def test_without_a_code_on_the_line_close_codes_are_offered_but_none_preferred() -> None:
    text = 'session "Hi"  # prose: ignore[W00l]\n'  # a look-alike letter
    assert titles(text, "W036") == [
        "Change to `W001`",
        "Remove `W00l` from the suppression comment",
    ]
    assert preferred(text, "W036") == []
    one_off = titles('session "Hi"  # prose: ignore[W0X5]\n', "W036")
    assert one_off[:-1] == ["Change to `W005`", "Change to `W015`", "Change to `W025`"]


def test_no_fix_for_a_stale_w036() -> None:
    stale = diagnostic(SHADOWING, "W036")
    now = analyze_document(SHADOWING.replace("W105", "W015"))
    assert code_actions(now, Range(to_pos(stale.start), to_pos(stale.end)), [stale]) == []
