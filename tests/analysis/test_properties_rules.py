"""Properties of agents, sessions and resume: every rule with a program that breaks it (code
and exact range) and one that does not (agent memory, E018 and W011, is
test_agent_memory_rules.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprose.analysis import prepare
from openprose.analysis.context import NodeIndex
from openprose.analysis.rules import properties
from openprose.checking import check_text
from openprose.syntax import parse
from openprose.syntax import tree as t
from tests.analysis.rule_checks import Range, found, only

# code: (program, [(start, end) of each diagnostic with that code])
BAD: dict[str, tuple[str, list[Range]]] = {
    "E008": (
        "agent a:\n  model: gpt-4\nsession: a\n  model: Opus\n",
        [((2, 9), (2, 14)), ((4, 9), (4, 13))],
    ),
    "E009": (
        'agent a:\n  model: opus\n  model: haiku\nsession: a\n  prompt: "x"\n  prompt: "y"\n',
        [((3, 2), (3, 7)), ((6, 2), (6, 8))],
    ),
    "E013": ('agent a:\n  skills: "web-search"\nsession: a\n', [((2, 10), (2, 22))]),
    "E014": (
        'use "@acme/web-search"\nagent a:\n  skills: ["web-search", search]\nsession: a\n',
        [((3, 25), (3, 31))],
    ),
    "E015": ("agent a:\n  permissions: deny\nsession: a\n", [((2, 15), (2, 19))]),
    "E016": (
        'agent a:\n  permissions:\n    read: ["*.md", 42]\nsession: a\n',
        [((3, 19), (3, 21))],
    ),
    "E017": (
        "agent a:\n  model: opus\nsession: a\nresume: a\n",
        [((4, 8), (4, 9))],
    ),
    "E065": (
        'session "a"\n  retry: 0\nsession "b"\n  retry: -2\n',
        [((2, 9), (2, 10)), ((4, 9), (4, 11))],
    ),
    "E066": (
        'session "a"\n  retry: 1.5\nsession "b"\n  retry: "3"\nsession "c"\n  retry: many\n',
        [((2, 9), (2, 12)), ((4, 9), (4, 12)), ((6, 9), (6, 13))],
    ),
    "E067": ('session "a"\n  retry: 2\n  backoff: quadratic\n', [((3, 11), (3, 20))]),
    "W001": ('session ""\n', [((1, 8), (1, 10))]),
    "W002": ('session "   "\n', [((1, 8), (1, 13))]),
    "W003": ('session "' + "x" * 10_001 + '"\n', [((1, 8), (1, 10_011))]),
    "W004": (
        'agent a:\n  prompt: ""\nsession: a\n  prompt: "  "\n',
        [((2, 10), (2, 12)), ((4, 10), (4, 14))],
    ),
    "W005": (
        'agent a:\n  temperature: 1\nsession: a\n  prompt: "x"\n  persona: "y"\n',
        [((2, 2), (2, 13)), ((5, 2), (5, 9))],
    ),
    "W007": ('agent a:\n  skills: ["web-search"]\nsession: a\n', [((2, 11), (2, 23))]),
    "W008": (
        "agent a:\n  permissions:\n    delete: deny\nsession: a\n",
        [((3, 4), (3, 10))],
    ),
    "W009": (
        'agent a:\n  permissions:\n    bash: sometimes\n    network: ["*"]\nsession: a\n',
        [((3, 10), (3, 19)), ((4, 13), (4, 18))],
    ),
    "W010": ("agent a:\n  skills: []\nsession: a\n", [((2, 10), (2, 12))]),
    "W013": (
        "agent a:\n  retry: 3\n  backoff: linear\nsession: a\n",
        [((2, 2), (2, 7)), ((3, 2), (3, 9))],
    ),
    "W023": ('session "a"\n  retry: 11\n', [((2, 9), (2, 11))]),
    "W031": ('session "a"\n  backoff: exponential\n', [((2, 2), (2, 9))]),
}


@pytest.mark.parametrize("code", sorted(BAD))
def test_bad_program_reports_code_at_exact_range(code: str) -> None:
    text, ranges = BAD[code]
    assert found(text, code) == ranges


# Programs that use every construct the rules look at correctly: no diagnostic at all.
GOOD: dict[str, str] = {
    "agent properties": """\
use "@acme/web-search"
use "@acme/summarize" as summarizer
agent researcher:
  model: sonnet
  prompt: "You research topics thoroughly"
  skills: ["web-search", "summarizer"]
  permissions:
    read: ["*.md", "docs/**"]
    write: ["out/"]
    execute: deny
    bash: prompt
    network: allow
session: researcher
""",
    "session properties": """\
agent writer:
  model: haiku
  prompt: "You write"
let draft = session: writer
  model: opus
  prompt: "Write a draft"
  retry: 10
  backoff: exponential
session "Review the draft"
  context: draft
  retry: 1
  backoff: "linear"
session "A long but acceptable prompt"
  retry: 3
  backoff: none
""",
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_good_program_has_no_diagnostics(name: str) -> None:
    assert check_text(GOOD[name]) == []


# ----------------------------------------------------------------------- details


def test_duplicate_points_at_the_first_occurrence() -> None:
    d = only('agent a:\n  model: opus\n  prompt: "p"\n  model: haiku\nsession: a\n', "E009")
    assert (d.start, d.end) == ((4, 2), (4, 7))
    assert [(r.message, r.start, r.end) for r in d.related] == [
        ("first specified here", (2, 2), (2, 7))
    ]


def test_duplicate_permission_in_permissions_block() -> None:
    text = 'agent a:\n  permissions:\n    read: ["a"]\n    read: ["b"]\nsession: a\n'
    d = only(text, "E009")
    assert (d.start, d.end) == ((4, 4), (4, 8))
    assert d.related[0].start == (3, 4)


def test_duplicate_on_resume() -> None:
    text = "agent a:\n  persist: true\nsession: a\nresume: a\n  retry: 2\n  retry: 3\n"
    assert found(text, "E009") == [((6, 2), (6, 7))]


def test_context_and_retry_on_agent() -> None:
    text = "agent a:\n  context: notes\nsession: a\n"
    d = only(text, "W005")
    assert (d.start, d.end) == ((2, 2), (2, 9))
    assert "sessions" in d.message


def test_agent_properties_on_a_session_are_unknown() -> None:
    text = 'agent a:\n  model: opus\nsession: a\n  permissions:\n    bash: deny\n  skills: ["x"]\n'
    assert found(text, "W005") == [((4, 2), (4, 13)), ((6, 2), (6, 8))]
    assert found(text, "W007") == []  # not an agent: its contents are not checked


def test_unknown_property_suggests_the_closest() -> None:
    d = only('session "a"\n  promt: "b"\n', "W005")
    assert "did you mean `prompt`" in d.message


def test_invalid_model_on_resume() -> None:
    text = "agent a:\n  persist: true\nsession: a\nresume: a\n  model: large\n"
    assert found(text, "E008") == [((5, 9), (5, 14))]


def test_empty_prompt_property_on_resume_and_session_is_w004_not_w001() -> None:
    text = 'agent a:\n  persist: true\nsession: a\n  prompt: ""\nresume: a\n  prompt: " "\n'
    codes = [d.code for d in check_text(text)]
    assert codes.count("W004") == 2
    assert "W001" not in codes and "W002" not in codes


def test_long_prompt_property_on_session() -> None:
    text = 'session "a"\n  prompt: "' + "y" * 10_001 + '"\n'
    assert found(text, "W003") == [((2, 10), (2, 10_013))]


def test_long_prompt_counts_decoded_text() -> None:
    # 5,001 escapes decode to 5,001 characters: well under the limit.
    assert found('session "' + "\\n" * 5_001 + '"\n', "W003") == []


def test_persist_value_must_be_true_project_or_a_path() -> None:
    text = "agent a:\n  persist: forever\nsession: a\n"
    d = only(text, "W009")
    assert (d.start, d.end) == ((2, 11), (2, 18))
    assert "persist" in d.message
    assert found('agent a:\n  persist: ""\nsession: a\n', "W009") == [((2, 11), (2, 13))]


def test_persist_false_is_not_persistent() -> None:
    text = "agent a:\n  persist: false\nsession: a\nresume: a\n"
    assert found(text, "E017") == [((4, 8), (4, 9))]


def test_pattern_permission_with_a_single_string() -> None:
    text = 'agent a:\n  permissions:\n    write: "out/"\nsession: a\n'
    assert found(text, "W009") == [((3, 11), (3, 17))]


def test_permissions_block_of_an_agent_is_not_a_value() -> None:
    text = "agent a:\n  permissions:\n    bash:\n      allow: yes\nsession: a\n"
    assert found(text, "W009") == [((3, 4), (3, 8))]


def test_skills_from_legacy_import_and_alias() -> None:
    text = (
        'import "web-search" from "github:acme/skills"\n'
        'use "@acme/summarize" as summarizer\n'
        'agent a:\n  skills: ["web-search", "summarizer", "summarize", "other"]\nsession: a\n'
    )
    assert found(text, "W007") == [((4, 52), (4, 59))]


def test_skills_block_is_not_an_array() -> None:
    text = 'agent a:\n  skills:\n    web: "x"\nsession: a\n'
    assert found(text, "E013") == [((2, 2), (2, 8))]


def test_backoff_without_retry_on_resume() -> None:
    text = "agent a:\n  persist: true\nsession: a\nresume: a\n  backoff: linear\n"
    assert found(text, "W031") == [((5, 2), (5, 9))]


def test_values_with_syntax_errors_are_left_to_the_parser() -> None:
    text = 'session "a"\n  retry: 3 4\n  model: claude-3.5\n'
    codes = {d.code for d in check_text(text)}
    assert not codes & {"E008", "E065", "E066"}


# ----------------------------------------------------------------------- resume


def test_resume_without_persist_relates_to_the_agent() -> None:
    d = only("agent a:\n  model: opus\nresume: a\n", "E017")
    assert (d.start, d.end) == ((3, 8), (3, 9))
    assert [(r.start, r.end) for r in d.related] == [((1, 6), (1, 7))]


def test_undefined_agent_on_resume_is_not_e017() -> None:
    assert found("resume: ghost\n", "E017") == []


# ----------------------------------------------------------------------- shortcuts

# Lines that make sessions and resumes with and without property blocks, broken ones too.
_LINES = [
    'session "a"',
    "session: a",
    "session a",
    "session",
    'let x = session "b"',
    "resume: a",
    "resume",
    "  model: opus",
    "  context: x",
    '  prompt: "p',
    "    read: deny",
    "  permissions:",
    '  session "nested"',
    "  -> x",
    "agent a:",
    "  )",
]


@given(st.lists(st.sampled_from(_LINES), max_size=8))
def test_a_session_or_resume_block_is_its_last_child(lines: list[str]) -> None:
    # The property block is read from the last child (the parser adds it last).
    module = parse("\n".join(lines) + "\n")
    for node in NodeIndex(module).nodes(t.Session, t.Resume):
        assert properties._block_of(node) is node.property_block
    ctx = prepare(module)
    blocks = {id(s): b for s, _, b in properties.sessions_to_check(ctx)}
    headless = {id(s) for s in properties.sessions_without_colon(ctx)}
    for session in NodeIndex(module).nodes(t.Session):
        block = session.property_block
        assert blocks.get(id(session)) is block
        assert (id(session) in headless) is (block is not None and session.children[1] is block)


@given(st.text(alphabet='a "\\\t\u00a0\u2003\x1c{é', max_size=5))
def test_a_prompt_is_looked_at_unless_plain(inside: str) -> None:
    # The loop's first-character shortcut answers as `_plain_text`.
    module = parse(f'session "{inside}"\n')
    sessions = NodeIndex(module).nodes(t.Session)
    looked_at = {id(s) for s, prompt, _ in properties.sessions_to_check(prepare(module)) if prompt}
    for session in sessions:
        prompt = session.children[1] if len(session.children) > 1 else None
        if isinstance(prompt, t.String):
            assert (id(session) in looked_at) is not properties._plain_text(prompt.value)


def test_misplaced_and_unknown_properties_name_their_statement() -> None:
    text = (
        'agent a:\n  persist: true\nresume: a\n  skills: ["x"]\n  colour: red\n'
        'session "b"\n  skills: ["x"]\n'
    )
    messages = [d.message for d in check_text(text) if d.code == "W005"]
    assert messages[0] == "`skills` is not a resume property: set it on the agent definition"
    assert messages[1].startswith("unknown resume property `colour`")
    assert messages[2] == "`skills` is not a session property: set it on the agent definition"


def _prompt_reports(ctx_module: str, session: bool) -> list[tuple[str, str]]:
    """What ``_prompt_property`` reports on the first property of the text's first node."""
    module = parse(ctx_module)
    ctx = prepare(module)
    node = NodeIndex(module).nodes(t.AgentDefinition, t.Session)[0]
    prop = node.properties()[0]
    properties._prompt_property(ctx, prop, session=session)
    return [(d.code, d.message) for d in ctx.diagnostics]


def _prompt_reports_decoding(ctx_module: str, session: bool) -> list[tuple[str, str]]:
    """The same, the prompt's text always decoded (as before the triple-quote shortcut)."""
    module = parse(ctx_module)
    ctx = prepare(module)
    node = NodeIndex(module).nodes(t.AgentDefinition, t.Session)[0]
    value = properties._value(node.properties()[0])
    if isinstance(value, t.String) and value.is_terminated:
        text = value.text
        if not text.strip():
            what = "empty" if not text else "whitespace-only"
            ctx.report("W004", f"{what} prompt: consider providing a prompt", value)
        elif session and len(text) > properties.MAX_PROMPT:
            properties._long_prompt(ctx, value, len(text))
    return [(d.code, d.message) for d in ctx.diagnostics]


# A terminated triple-quoted prompt without a backslash is judged from its body, without
# decoding it: it reports what decoding its text would.
@given(
    st.text(alphabet=' a"\\\t\n\u00a0\u2003{', max_size=8),
    st.booleans(),
    st.sampled_from(["", "x" * (properties.MAX_PROMPT - 2), "x" * properties.MAX_PROMPT]),
)
def test_a_triple_quoted_prompt_reports_as_its_decoded_text(
    inside: str, session: bool, padding: str
) -> None:
    head = "session:\n" if session else "agent a:\n"
    text = f'{head}  prompt: """{inside}{padding}"""\n'
    assert _prompt_reports(text, session) == _prompt_reports_decoding(text, session)


def test_a_triple_quoted_prompt_of_blanks_or_too_long() -> None:
    assert _prompt_reports('agent a:\n  prompt: """ \n  """\n', False) == [
        ("W004", "whitespace-only prompt: consider providing a prompt")
    ]
    long = "x" * (properties.MAX_PROMPT + 1)
    assert [c for c, _ in _prompt_reports(f'session:\n  prompt: """{long}"""\n', True)] == ["W003"]
    assert _prompt_reports(f'agent a:\n  prompt: """{long}"""\n', False) == []
