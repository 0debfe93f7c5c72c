"""The completion items: agents, blocks, variables, properties and their values, keywords,
snippets and program aliases, with their details, documentation and insert texts."""

from __future__ import annotations

import pytest

from openprose.ide.types import Range
from tests.ide.completion.completion_support import (
    AGENTS,
    USE,
    VARIABLES,
    complete,
    item,
    labels,
)


@pytest.mark.parametrize(
    "line",
    [
        "session: ‸",
        "session:‸",
        "session review: ‸",
        "let r = session: ‸",
        'session "a" -> session: ‸',
        "resume: ‸",
        "let r = resume: ‸",
    ],
)
def test_agents_after_session_and_resume(line: str) -> None:
    items = complete(AGENTS + line)
    assert {i.label for i in items} == {"researcher", "captain"}
    assert all(i.kind == "agent" for i in items)


def test_agent_detail_and_documentation() -> None:
    found = item(AGENTS + "session: ‸", "researcher")
    assert found.detail == "agent · sonnet"
    assert "research topics" in found.documentation
    assert "persistent" in item(AGENTS + "session: ‸", "captain").detail


def test_agents_replace_the_partial_name() -> None:
    found = item(AGENTS + "session: res‸", "researcher")
    assert found.replace == Range((9, 9), (9, 12))
    assert labels(AGENTS + "session: res‸") == ["researcher"]  # what cannot match is left out


def test_agent_name_with_hyphens_is_replaced_whole() -> None:
    source = "agent web-researcher:\n  model: haiku\nsession: web-re‸search"
    found = item(source, "web-researcher")
    assert found.replace == Range((2, 9), (2, 21))


def test_resume_lists_persistent_agents_first() -> None:
    items = sorted(complete(AGENTS + "resume: ‸"), key=lambda i: i.sort_text or "")
    assert [i.label for i in items] == ["captain", "researcher"]


BLOCKS = """\
block review(topic, depth):
  session "Review {topic} at {depth}"

block final-check:
  session "Check"

"""


@pytest.mark.parametrize("line", ["do ‸", "let r = do ‸", "do rev‸"])
def test_blocks_after_do(line: str) -> None:
    found = item(BLOCKS + line, "review")
    assert found.kind == "block"
    assert found.insert_text == "review(${1:topic}, ${2:depth})"
    assert found.snippet
    assert found.detail == "block review(topic, depth)"


def test_block_without_parameters_inserts_its_name() -> None:
    found = item(BLOCKS + "do final‸", "final-check")
    assert found.insert_text in (None, "final-check")
    assert not found.snippet
    assert found.replace == Range((6, 3), (6, 8))


def test_block_before_existing_arguments_inserts_only_the_name() -> None:
    found = item(BLOCKS + 'do rev‸("x", 2)', "review")
    assert found.insert_text in (None, "review")


def test_blocks_are_hoisted() -> None:
    assert "later" in labels('do ‸\nblock later:\n  session "x"\n')


def test_block_documentation_is_its_leading_comment() -> None:
    source = '# Reviews a topic.\nblock review(topic):\n  session "x"\ndo ‸'
    assert item(source, "review").documentation == "Reviews a topic."


def test_variable_detail_and_documentation() -> None:
    found = item(VARIABLES + 'session "x"\n  context: ‸', "research")
    assert found.detail == "let · session"
    assert "let research = session" in found.documentation
    assert item(VARIABLES + 'session "x"\n  context: ‸', "config").detail == "const · session"


def test_inputs_are_variables() -> None:
    found = item('input topic: "The subject"\nsession "{‸}"', "topic")
    assert found.detail == "input · The subject"


def test_agent_properties() -> None:
    items = complete("agent a:\n  ‸")
    assert [i.label for i in items] == ["model", "prompt", "persist", "skills", "permissions"]
    assert all(i.kind == "property" for i in items)
    assert items[0].insert_text == "model: ${1|sonnet,opus,haiku|}"
    assert items[0].snippet


def test_agent_properties_leave_out_those_present() -> None:
    source = 'agent a:\n  model: opus\n  prompt: "x"\n  ‸'
    assert labels(source) == ["persist", "skills", "permissions"]


def test_session_properties_on_an_incomplete_line() -> None:
    assert labels('session "a"\n  con‸') == ["context"]
    source = 'session "a"\n  model: opus\n  ‸'
    assert labels(source) == ["prompt", "context", "retry", "backoff"]


def test_resume_and_bound_session_properties() -> None:
    assert "context" in labels(AGENTS + "resume: captain\n  ‸")
    assert "retry" in labels("let r = session: researcher\n  ‸")
    assert "backoff" in labels('parallel:\n  a = session "x"\n    ‸')


def test_permissions_properties() -> None:
    source = "agent a:\n  permissions:\n    bash: deny\n    ‸"
    assert labels(source) == ["read", "write", "execute", "network"]
    back_out = "agent a:\n  permissions:\n    bash: deny\n  ‸"
    assert labels(back_out) == ["model", "prompt", "persist", "skills"]


def test_property_name_before_an_existing_colon() -> None:
    found = item('session "a"\n  mo‸del: opus', "model")
    assert found.insert_text in (None, "model")
    assert found.replace == Range((1, 2), (1, 7))


@pytest.mark.parametrize(
    ("line", "values"),
    [
        ("agent a:\n  model: ‸", ["sonnet", "opus", "haiku"]),
        ('session "x"\n  model: ‸', ["sonnet", "opus", "haiku"]),
        ("agent a:\n  persist: ‸", ["true", "project", "user"]),
        ('session "x"\n  backoff: ‸', ["none", "linear", "exponential"]),
        ("agent a:\n  permissions:\n    bash: ‸", ["allow", "deny", "prompt"]),
        ("agent a:\n  permissions:\n    network: ‸", ["allow", "deny", "prompt"]),
    ],
)
def test_property_values(line: str, values: list[str]) -> None:
    items = complete(line)
    assert [i.label for i in items] == values
    assert all(i.kind == "value" for i in items)


def test_property_value_replaces_the_partial_value() -> None:
    found = item("agent a:\n  model: op‸", "opus")
    assert found.replace == Range((1, 9), (1, 11))


def test_no_values_after_a_free_text_property() -> None:
    assert labels('session "x"\n  prompt: ‸') == []
    assert labels('session "x"\n  retry: ‸') == []


STATEMENTS = {"session", "let", "const", "do", "parallel", "repeat", "for", "loop", "try"}
STATEMENTS |= {"choice", "if", "output", "throw", "resume"}
TOP_ONLY = {"agent", "block", "use", "input"}


def test_statement_keywords_at_top_level() -> None:
    items = complete("‸")
    keywords = {i.label for i in items if i.kind == "keyword"}
    assert keywords == STATEMENTS | TOP_ONLY


def test_statement_keywords_in_a_body() -> None:
    keywords = {i.label for i in complete('if **x**:\n  session "a"\n  ‸') if i.kind == "keyword"}
    assert keywords >= STATEMENTS
    assert not keywords & TOP_ONLY


def test_keyword_prefix_replaces_the_word() -> None:
    found = item("ses‸", "session")
    assert found.kind == "keyword"
    assert found.replace == Range((0, 0), (0, 3))
    assert "let" not in labels("ses‸")


SNIPPETS = {
    "agent name:",
    "session: agent",
    "parallel: branches",
    "loop until (max)",
    "try/catch/finally",
    "choice/option",
    "if/elif/else",
    "block name(params)",
}


def test_snippets_at_statement_start() -> None:
    items = [i for i in complete("‸") if i.kind == "snippet"]
    assert {i.label for i in items} >= SNIPPETS
    for snippet in items:
        assert snippet.snippet
        assert snippet.insert_text is not None
        body = snippet.insert_text
        assert "$0" in body or "$1" in body
        # Two-space indentation for every nested line.
        for line in body.split("\n")[1:]:
            indent = len(line) - len(line.lstrip(" "))
            assert indent % 2 == 0


def test_snippet_bodies() -> None:
    agent = item("‸", "agent name:")
    assert agent.insert_text is not None
    assert agent.insert_text.startswith("agent ${1:name}:\n  model: ")
    assert "prompt:" in agent.insert_text
    loop = item("‸", "loop until (max)").insert_text
    assert loop is not None and "(max: ${2:5})" in loop
    trying = item("‸", "try/catch/finally").insert_text
    assert trying is not None and "\ncatch" in trying and "\nfinally:" in trying
    choice = item("‸", "choice/option").insert_text
    assert choice is not None and '\n  option "${2:first}":\n    ' in choice
    branches = item("‸", "if/elif/else").insert_text
    assert branches is not None and "\nelif " in branches and "\nelse:\n  " in branches


def test_definition_snippets_only_at_top_level() -> None:
    found = set(labels('if **x**:\n  session "a"\n  ‸'))
    assert "agent name:" not in found
    assert "block name(params)" not in found
    assert "parallel: branches" in found


def test_program_aliases_in_expressions() -> None:
    found = item(USE + "let r = ‸", "research")
    assert found.kind == "program"
    assert found.detail == "program · ./research"
    assert item(USE + "‸", "research").kind == "program"  # a call is a statement too
