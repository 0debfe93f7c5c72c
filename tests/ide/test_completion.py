"""Completion: each context on programs written with a `§` cursor marker, incomplete lines,
replace ranges, and robustness on empty, garbage and out-of-range input."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprose.ide.analysis import Analysis, analyze_document
from openprose.ide.completion import completion
from openprose.ide.types import CompletionItem, Pos, Range

MARK = "§"

AGENTS = """\
agent researcher:
  model: sonnet
  prompt: "You research topics thoroughly"

agent captain:
  model: opus
  persist: true
  prompt: "You coordinate"

"""

RESEARCH = """\
input topic: "The subject to research"
input depth: "How deep to go"
output findings = session "Research {topic} to {depth} depth"
output sources = session "List the sources"
"""


def at(source: str, path: str | Path | None = None) -> tuple[Analysis, Pos]:
    index = source.index(MARK)
    text = source.replace(MARK, "", 1)
    before = text[:index]
    line = before.count("\n")
    character = index - (before.rfind("\n") + 1)
    return analyze_document(text, path=path), (line, character)


def complete(source: str, path: str | Path | None = None) -> list[CompletionItem]:
    analysis, position = at(source, path)
    items = completion(analysis, position)
    labels = [item.label for item in items]
    assert len(labels) == len(set(labels)), labels  # never the same item twice
    return items


def labels(source: str, path: str | Path | None = None) -> list[str]:
    return [item.label for item in complete(source, path)]


def item(source: str, label: str, path: str | Path | None = None) -> CompletionItem:
    found = [i for i in complete(source, path) if i.label == label]
    assert found, f"no {label!r} in {labels(source, path)}"
    return found[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A saved main program beside a program it imports; returns the main file's path."""
    (tmp_path / "research.prose").write_text(RESEARCH, encoding="utf-8")
    return tmp_path / "main.prose"


USE = 'use "./research" as research\n'


# --------------------------------------------------------------------------- agents


@pytest.mark.parametrize(
    "line",
    [
        "session: §",
        "session:§",
        "session review: §",
        "let r = session: §",
        'session "a" -> session: §',
        "resume: §",
        "let r = resume: §",
    ],
)
def test_agents_after_session_and_resume(line: str) -> None:
    items = complete(AGENTS + line)
    assert {i.label for i in items} == {"researcher", "captain"}
    assert all(i.kind == "agent" for i in items)


def test_agent_detail_and_documentation() -> None:
    found = item(AGENTS + "session: §", "researcher")
    assert found.detail == "agent · sonnet"
    assert "research topics" in found.documentation
    assert "persistent" in item(AGENTS + "session: §", "captain").detail


def test_agents_replace_the_partial_name() -> None:
    found = item(AGENTS + "session: res§", "researcher")
    assert found.replace == Range((9, 9), (9, 12))
    assert labels(AGENTS + "session: res§") == ["researcher"]  # what cannot match is left out


def test_agent_name_with_hyphens_is_replaced_whole() -> None:
    source = "agent web-researcher:\n  model: haiku\nsession: web-re§search"
    found = item(source, "web-researcher")
    assert found.replace == Range((2, 9), (2, 21))


def test_resume_lists_persistent_agents_first() -> None:
    items = sorted(complete(AGENTS + "resume: §"), key=lambda i: i.sort_text or "")
    assert [i.label for i in items] == ["captain", "researcher"]


# --------------------------------------------------------------------------- blocks


BLOCKS = """\
block review(topic, depth):
  session "Review {topic} at {depth}"

block final-check:
  session "Check"

"""


@pytest.mark.parametrize("line", ["do §", "let r = do §", "do rev§"])
def test_blocks_after_do(line: str) -> None:
    found = item(BLOCKS + line, "review")
    assert found.kind == "block"
    assert found.insert_text == "review(${1:topic}, ${2:depth})"
    assert found.snippet
    assert found.detail == "block review(topic, depth)"


def test_block_without_parameters_inserts_its_name() -> None:
    found = item(BLOCKS + "do final§", "final-check")
    assert found.insert_text in (None, "final-check")
    assert not found.snippet
    assert found.replace == Range((6, 3), (6, 8))


def test_block_before_existing_arguments_inserts_only_the_name() -> None:
    found = item(BLOCKS + 'do rev§("x", 2)', "review")
    assert found.insert_text in (None, "review")


def test_blocks_are_hoisted() -> None:
    assert "later" in labels('do §\nblock later:\n  session "x"\n')


# --------------------------------------------------------------------------- variables


VARIABLES = """\
let research = session "Research"
const config = session "Config"
"""


@pytest.mark.parametrize(
    "line",
    [
        'session "Write"\n  context: §',
        'session "Write"\n  context: [§',
        'session "Write"\n  context: [research, §',
        'session "Write"\n  context: {§',
        'session "Write"\n  context: { research, §',
        "session: writer\n  context: con§",
        "let r = §",
        "for x in §",
        "parallel for x in §",
        'let r = §| map:\n  session "x"',
        "do review(§",
    ],
)
def test_variables_in_value_positions(line: str) -> None:
    found = labels(VARIABLES + line)
    assert "config" in found
    kinds = {i.label: i.kind for i in complete(VARIABLES + line)}
    assert kinds["config"] == "variable"


def test_context_list_leaves_out_names_already_listed() -> None:
    found = labels(VARIABLES + 'session "Write"\n  context: [research, §')
    assert "research" not in found
    assert "config" in found
    found = labels(VARIABLES + 'session "Write"\n  context: { config, §')
    assert "config" not in found


def test_multi_line_context_array() -> None:
    found = labels(VARIABLES + 'session "Write"\n  context: [\n    research,\n    §')
    assert found == ["config"]


def test_variable_detail_and_documentation() -> None:
    found = item(VARIABLES + 'session "x"\n  context: §', "research")
    assert found.detail == "let · session"
    assert "let research = session" in found.documentation
    assert item(VARIABLES + 'session "x"\n  context: §', "config").detail == "const · session"


def test_only_names_defined_before_the_position() -> None:
    source = 'let early = session "a"\nsession "x"\n  context: §\nlet late = session "b"\n'
    found = labels(source)
    assert "early" in found
    assert "late" not in found


def test_a_binding_does_not_see_itself() -> None:
    assert "r" not in labels('let a = session "x"\nlet r = §')
    assert "r" not in labels('let a = session "x"\nlet r = session "y"\n  context: §')


def test_exported_block_outputs_are_visible_anywhere() -> None:
    source = 'session "x"\n  context: §\nblock auth:\n  output token = session "t"\n'
    assert "token" in labels(source)


def test_block_parameters_inside_the_block_only() -> None:
    source = 'block review(topic):\n  session "x"\n    context: §\n'
    found = item(source, "topic")
    assert found.kind == "parameter"
    assert found.detail == "parameter · block review"
    assert "topic" not in labels('block review(topic):\n  session "x"\nsession "y"\n  context: §')


def test_loop_variables_inside_the_loop_only() -> None:
    inside = 'let xs = ["a"]\nfor x, i in xs:\n  session "{§}"\n'
    assert {"x", "i", "xs"} <= set(labels(inside))
    after = 'let xs = ["a"]\nfor x in xs:\n  session "a"\nsession "b"\n  context: §'
    assert "x" not in labels(after)
    on_blank_line = 'let xs = ["a"]\nfor x in xs:\n  session "a"\n  let y = §'
    assert "x" in labels(on_blank_line)


def test_loop_lets_do_not_leak_after_the_loop() -> None:
    source = 'repeat 3:\n  let inner = session "a"\nsession "b"\n  context: §'
    assert "inner" not in labels(source)


def test_catch_error_variable() -> None:
    source = 'try:\n  session "a"\ncatch as err:\n  session "b"\n    context: §'
    assert item(source, "err").detail.startswith("error variable")


def test_pipeline_variables() -> None:
    source = 'let xs = ["a"]\nlet r = xs | map:\n  session "{§}"'
    assert "item" in labels(source)
    reduce = 'let xs = ["a"]\nlet r = xs | reduce(acc, x):\n  session "{§}"'
    assert {"acc", "x"} <= set(labels(reduce))


def test_inputs_are_variables() -> None:
    found = item('input topic: "The subject"\nsession "{§}"', "topic")
    assert found.detail == "input · The subject"


# --------------------------------------------------------------------------- interpolation


def test_interpolation_in_a_string() -> None:
    items = complete(VARIABLES + 'session "Summarise {res§"')
    assert [i.label for i in items] == ["research"]
    assert items[0].insert_text == "research}"
    assert items[0].replace == Range((2, 20), (2, 23))


def test_interpolation_with_closing_brace_already_there() -> None:
    found = item(VARIABLES + 'session "Summarise {§}"', "research")
    assert found.insert_text in (None, "research")


def test_interpolation_in_a_triple_quoted_string() -> None:
    source = VARIABLES + 'session """\n  Read this:\n  {con§\n"""\n'
    found = item(source, "config")
    assert found.replace == Range((4, 3), (4, 6))


def test_no_completion_in_plain_string_text() -> None:
    assert labels(VARIABLES + 'session "Summarise the §"') == []
    assert labels(VARIABLES + 'session "Summarise {research} and §"') == []
    assert labels(VARIABLES + 'session "Escaped \\{§"') == []


def test_unicode_before_the_cursor() -> None:
    source = 'let café = session "x"\nsession "Résumé 🙂 {ca§"'
    found = item(source, "café")
    # Code points: the emoji counts as one character.
    assert found.replace == Range((1, 19), (1, 21))
    assert found.insert_text == "café}"


# --------------------------------------------------------------------------- pipelines


def test_pipeline_operations_after_the_pipe() -> None:
    items = complete('let xs = ["a"]\nlet r = xs | §')
    assert [i.label for i in items] == ["map", "filter", "pmap", "reduce"]
    assert items[0].insert_text == "map:\n  $0"
    assert item('let xs = ["a"]\nlet r = xs | re§', "reduce").insert_text == (
        "reduce(${1:acc}, ${2:item}):\n  $0"
    )


def test_pipeline_operations_on_a_continuation_line() -> None:
    source = 'let xs = ["a"]\nlet r = xs\n  | map:\n    session "a"\n  | §'
    assert "filter" in labels(source)


def test_pipeline_source_offers_variables_and_a_snippet() -> None:
    found = labels('let xs = ["a"]\nlet r = §')
    assert "xs" in found
    assert "items | map:" in found


# --------------------------------------------------------------------------- properties


def test_agent_properties() -> None:
    items = complete("agent a:\n  §")
    assert [i.label for i in items] == ["model", "prompt", "persist", "skills", "permissions"]
    assert all(i.kind == "property" for i in items)
    assert items[0].insert_text == "model: ${1|sonnet,opus,haiku|}"
    assert items[0].snippet


def test_agent_properties_leave_out_those_present() -> None:
    source = 'agent a:\n  model: opus\n  prompt: "x"\n  §'
    assert labels(source) == ["persist", "skills", "permissions"]


def test_session_properties_on_an_incomplete_line() -> None:
    assert labels('session "a"\n  con§') == ["context"]
    source = 'session "a"\n  model: opus\n  §'
    assert labels(source) == ["prompt", "context", "retry", "backoff"]


def test_resume_and_bound_session_properties() -> None:
    assert "context" in labels(AGENTS + "resume: captain\n  §")
    assert "retry" in labels("let r = session: researcher\n  §")
    assert "backoff" in labels('parallel:\n  a = session "x"\n    §')


def test_permissions_properties() -> None:
    source = "agent a:\n  permissions:\n    bash: deny\n    §"
    assert labels(source) == ["read", "write", "execute", "network"]
    back_out = "agent a:\n  permissions:\n    bash: deny\n  §"
    assert labels(back_out) == ["model", "prompt", "persist", "skills"]


def test_property_name_before_an_existing_colon() -> None:
    found = item('session "a"\n  mo§del: opus', "model")
    assert found.insert_text in (None, "model")
    assert found.replace == Range((1, 2), (1, 7))


@pytest.mark.parametrize(
    ("line", "values"),
    [
        ("agent a:\n  model: §", ["sonnet", "opus", "haiku"]),
        ('session "x"\n  model: §', ["sonnet", "opus", "haiku"]),
        ("agent a:\n  persist: §", ["true", "project", "user"]),
        ('session "x"\n  backoff: §', ["none", "linear", "exponential"]),
        ("agent a:\n  permissions:\n    bash: §", ["allow", "deny", "prompt"]),
        ("agent a:\n  permissions:\n    network: §", ["allow", "deny", "prompt"]),
    ],
)
def test_property_values(line: str, values: list[str]) -> None:
    items = complete(line)
    assert [i.label for i in items] == values
    assert all(i.kind == "value" for i in items)


def test_property_value_replaces_the_partial_value() -> None:
    found = item("agent a:\n  model: op§", "opus")
    assert found.replace == Range((1, 9), (1, 11))


def test_no_values_after_a_free_text_property() -> None:
    assert labels('session "x"\n  prompt: §') == []
    assert labels('session "x"\n  retry: §') == []


# --------------------------------------------------------------------------- parallel, loop


def test_parallel_modifiers() -> None:
    items = complete("parallel (§")
    assert [i.label for i in items] == ['"all"', '"first"', '"any"', "on-fail:", "count:"]
    assert item("parallel (§", "on-fail:").insert_text == "on-fail: "


def test_parallel_modifiers_leave_out_those_given() -> None:
    assert labels('parallel ("any", §') == ["on-fail:", "count:"]
    assert labels('parallel ("any", count: 2, §') == ["on-fail:"]


def test_on_fail_values() -> None:
    expected = ['"fail-fast"', '"continue"', '"ignore"']
    assert labels('parallel ("first", on-fail: §') == expected
    assert labels("let r = parallel (on-fail: §") == expected


def test_strategy_inside_a_string_replaces_the_string() -> None:
    found = item('parallel ("fi§"):', '"first"')
    assert found.replace == Range((0, 10), (0, 14))
    unterminated = item('parallel ("§', '"all"')
    assert unterminated.replace == Range((0, 10), (0, 11))
    assert labels('parallel (on-fail: "co§"):') == ['"continue"']


def test_loop_modifiers() -> None:
    assert labels("loop until **done** (§") == ["max:"]
    assert labels("loop (§") == ["max:"]


# --------------------------------------------------------------------------- keywords


STATEMENTS = {"session", "let", "const", "do", "parallel", "repeat", "for", "loop", "try"}
STATEMENTS |= {"choice", "if", "output", "throw", "resume"}
TOP_ONLY = {"agent", "block", "use", "input"}


def test_statement_keywords_at_top_level() -> None:
    items = complete("§")
    keywords = {i.label for i in items if i.kind == "keyword"}
    assert keywords == STATEMENTS | TOP_ONLY


def test_statement_keywords_in_a_body() -> None:
    keywords = {i.label for i in complete('if **x**:\n  session "a"\n  §') if i.kind == "keyword"}
    assert keywords >= STATEMENTS
    assert not keywords & TOP_ONLY


def test_keyword_prefix_replaces_the_word() -> None:
    found = item("ses§", "session")
    assert found.kind == "keyword"
    assert found.replace == Range((0, 0), (0, 3))
    assert "let" not in labels("ses§")


@pytest.mark.parametrize(
    ("source", "expected", "absent"),
    [
        ('if **a**:\n  session "x"\n§', {"elif", "else"}, set()),
        ('if **a**:\n  session "x"\nelif **b**:\n  session "y"\n§', {"elif", "else"}, set()),
        ('if **a**:\n  session "x"\nelse:\n  session "y"\n§', set(), {"elif", "else"}),
        ('try:\n  session "x"\n§', {"catch", "finally"}, set()),
        ('try:\n  session "x"\ncatch:\n  session "y"\n§', {"finally"}, {"catch"}),
        ('try:\n  session "x"\nfinally:\n  session "y"\n§', set(), {"catch", "finally"}),
        ('session "x"\n§', set(), {"elif", "else", "catch", "finally"}),
        ('if **a**:\n  if **b**:\n    session "x"\n  §', {"elif", "else"}, set()),
        ('if **a**:\n  session "x"\nel§', {"elif", "else"}, set()),
    ],
)
def test_clause_keywords(source: str, expected: set[str], absent: set[str]) -> None:
    found = set(labels(source))
    assert expected <= found
    assert not found & absent


def test_clause_keywords_sort_first() -> None:
    items = sorted(complete('try:\n  session "x"\n§'), key=lambda i: i.sort_text or "")
    assert [i.label for i in items[:2]] == ["catch", "finally"]


def test_option_inside_a_choice() -> None:
    source = 'choice **best**:\n  option "a":\n    session "x"\n  §'
    assert labels(source) == ["option", 'option "label":']


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("loop §", ["until", "while", "as"]),
        ("loop until **done** §", ["as"]),
        ("loop until **done** (max: 3) §", ["as"]),
        ("repeat 3 §", ["as"]),
        ("catch §", ["as"]),
        ('use "@alice/research" §', ["as"]),
        ("for x §", ["in"]),
        ("for x, i §", ["in"]),
        ("parallel §", ["for"]),
        ("let r = loop §", ["until", "while", "as"]),
    ],
)
def test_keywords_where_they_fit(line: str, expected: list[str]) -> None:
    assert labels(line) == expected


@pytest.mark.parametrize(
    "line",
    ["let §", "const §", "agent §", "block §", "input §", "for §", "catch as §", "session §"],
)
def test_nothing_where_a_new_name_is_written(line: str) -> None:
    assert labels(VARIABLES + line) == []


def test_after_an_arrow() -> None:
    assert {"session", "resume"} <= set(labels('session "a" -> §'))


# --------------------------------------------------------------------------- snippets


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
    items = [i for i in complete("§") if i.kind == "snippet"]
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
    agent = item("§", "agent name:")
    assert agent.insert_text is not None
    assert agent.insert_text.startswith("agent ${1:name}:\n  model: ")
    assert "prompt:" in agent.insert_text
    loop = item("§", "loop until (max)").insert_text
    assert loop is not None and "(max: ${2:5})" in loop
    trying = item("§", "try/catch/finally").insert_text
    assert trying is not None and "\ncatch" in trying and "\nfinally:" in trying
    choice = item("§", "choice/option").insert_text
    assert choice is not None and '\n  option "${2:first}":\n    ' in choice
    branches = item("§", "if/elif/else").insert_text
    assert branches is not None and "\nelif " in branches and "\nelse:\n  " in branches


def test_definition_snippets_only_at_top_level() -> None:
    found = set(labels('if **x**:\n  session "a"\n  §'))
    assert "agent name:" not in found
    assert "block name(params)" not in found
    assert "parallel: branches" in found


# --------------------------------------------------------------------------- programs


def test_program_aliases_in_expressions() -> None:
    found = item(USE + "let r = §", "research")
    assert found.kind == "program"
    assert found.detail == "program · ./research"
    assert item(USE + "§", "research").kind == "program"  # a call is a statement too


def test_program_inputs_inside_the_call(project: Path) -> None:
    items = complete(USE + "let r = research(§", project)
    assert [i.label for i in items] == ["topic:", "depth:"]
    assert items[0].kind == "input"
    assert items[0].insert_text == "topic: "
    assert items[0].documentation == "The subject to research"


def test_program_inputs_leave_out_those_given(project: Path) -> None:
    assert labels(USE + 'let r = research(topic: "x", §', project) == ["depth:"]
    assert labels(USE + "let r = research(\n  depth: 2,\n  §", project) == ["topic:"]


def test_program_input_value_offers_variables(project: Path) -> None:
    source = USE + VARIABLES + "let r = research(topic: §"
    assert "research" in labels(source, project)  # the program alias is not a variable
    assert "config" in labels(source, project)


def test_no_program_inputs_without_a_saved_file() -> None:
    assert labels(USE + "let r = research(§") == []


def test_program_outputs_after_a_dot(project: Path) -> None:
    source = USE + 'let r = research(topic: "x")\nsession "a"\n  context: r.§'
    assert labels(source, project) == ["findings", "sources"]
    in_string = USE + 'let r = research(topic: "x")\nsession "{r.f§}"'
    assert labels(in_string, project) == ["findings"]


# --------------------------------------------------------------------------- robustness


def test_empty_text() -> None:
    analysis = analyze_document("")
    assert {i.label for i in completion(analysis, (0, 0)) if i.kind == "keyword"} >= {"session"}


@pytest.mark.parametrize("position", [(1, 0), (5, 0), (0, 20), (-1, 0), (0, -1)])
def test_positions_past_the_end(position: Pos) -> None:
    assert completion(analyze_document("session"), position) == []


def test_in_a_comment_or_condition() -> None:
    assert labels('session "a"  # context: §') == []
    assert labels("# session: §\n") == []
    assert labels("if **the user §") == []
    assert labels("loop until **done §**:\n  session 'x'") == []


GARBAGE = [
    "§)))(((",
    '"""§',
    "*** §",
    "agent: §\n  : : :",
    "session: [§",
    "let = = §",
    "{ } ] [ §",
    "\t\tsession\n§\t",
    "parallel (((§",
    "do (§",
    "for in in in §",
    "| | | §",
    "$ ; § !",
    'session "a" -> -> §',
    "\ufeffsession: §",
    "block (:\n  do §",
    "choice:\n  §",
]


@pytest.mark.parametrize("source", GARBAGE)
def test_garbage_does_not_crash(source: str) -> None:
    complete(source)


def test_crlf_line_endings() -> None:
    source = 'let research = session "a"\r\nsession "b"\r\n  context: res§\r\n'
    found = item(source, "research")
    assert found.replace == Range((2, 11), (2, 14))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from([*'abx-_ :\n\t"{}()[],|.=*#é🙂', "session", "agent ", "  "]),
        max_size=40,
    ).map("".join),
    st.integers(0, 8),
    st.integers(0, 70),
)
def test_arbitrary_text_and_positions(text: str, line: int, character: int) -> None:
    analysis = analyze_document(text)
    items = completion(analysis, (line, character))
    for found in items:
        assert found.replace is not None
        assert found.replace.start[0] == line == found.replace.end[0]
        assert found.replace.start[1] <= character <= found.replace.end[1]


def test_block_documentation_is_its_leading_comment() -> None:
    source = '# Reviews a topic.\nblock review(topic):\n  session "x"\ndo §'
    assert item(source, "review").documentation == "Reviews a topic."


# --------------------------------------------------------------------------- use paths


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """main.prose beside two programs, a folder with one more, a hidden folder and a note."""
    (tmp_path / "research.prose").write_text(RESEARCH, encoding="utf-8")
    (tmp_path / "review.prose").write_text('session "Review"\n', encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a program\n", encoding="utf-8")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "summarize.prose").write_text('session "Sum"\n', encoding="utf-8")
    (tmp_path / ".prose").mkdir()
    main = tmp_path / "main.prose"
    main.write_text("", encoding="utf-8")
    return main


def test_use_offers_the_programs_and_folders_beside_the_document(library: Path) -> None:
    items = complete('use "§"', library)
    assert [(i.label, i.kind) for i in items] == [
        ("research.prose", "file"),
        ("review.prose", "file"),
        ("shared/", "folder"),
    ]  # not the document itself, hidden folders or other files
    assert all(i.replace == Range((0, 5), (0, 5)) for i in items)


def test_use_paths_follow_the_folder_typed_and_filter_by_the_name(library: Path) -> None:
    assert labels('use "./shared/§"', library) == ["summarize.prose"]
    found = item('use "./re§search" as r', "research.prose", library)
    assert found.replace == Range((0, 7), (0, 15))  # the name being typed, up to the quote
    assert labels('use "./rev§"', library) == ["review.prose"]
    inner = library.parent / "shared" / "inner.prose"
    assert labels('use "../§"', inner) == [
        "main.prose",
        "research.prose",
        "review.prose",
        "shared/",
    ]


def test_use_paths_need_a_saved_document_and_a_local_path(library: Path) -> None:
    assert labels('use "§"') == []
    assert labels('use "@acme/§"', library) == []
    assert labels('use "./missing/§"', library) == []
    assert labels('session "./§"', library) == []  # only the path of a use
