"""What completion offers where: values after a property or in brackets, interpolations in
strings, pipeline operations, parallel and loop modifiers, clause keywords, and nothing where a
new name is written."""

from __future__ import annotations

import pytest

from openprose.ide.types import Range
from tests.ide.completion.completion_support import (
    VARIABLES,
    complete,
    item,
    labels,
)


@pytest.mark.parametrize(
    "line",
    [
        'session "Write"\n  context: ‸',
        'session "Write"\n  context: [‸',
        'session "Write"\n  context: [research, ‸',
        'session "Write"\n  context: {‸',
        'session "Write"\n  context: { research, ‸',
        "session: writer\n  context: con‸",
        "let r = ‸",
        "for x in ‸",
        "parallel for x in ‸",
        'let r = ‸| map:\n  session "x"',
        "do review(‸",
    ],
)
def test_variables_in_value_positions(line: str) -> None:
    found = labels(VARIABLES + line)
    assert "config" in found
    kinds = {i.label: i.kind for i in complete(VARIABLES + line)}
    assert kinds["config"] == "variable"


def test_context_list_leaves_out_names_already_listed() -> None:
    found = labels(VARIABLES + 'session "Write"\n  context: [research, ‸')
    assert "research" not in found
    assert "config" in found
    found = labels(VARIABLES + 'session "Write"\n  context: { config, ‸')
    assert "config" not in found


def test_multi_line_context_array() -> None:
    found = labels(VARIABLES + 'session "Write"\n  context: [\n    research,\n    ‸')
    assert found == ["config"]


def test_interpolation_in_a_string() -> None:
    items = complete(VARIABLES + 'session "Summarise {res‸"')
    assert [i.label for i in items] == ["research"]
    assert items[0].insert_text == "research}"
    assert items[0].replace == Range((2, 20), (2, 23))


def test_interpolation_with_closing_brace_already_there() -> None:
    found = item(VARIABLES + 'session "Summarise {‸}"', "research")
    assert found.insert_text in (None, "research")


def test_interpolation_in_a_triple_quoted_string() -> None:
    source = VARIABLES + 'session """\n  Read this:\n  {con‸\n"""\n'
    found = item(source, "config")
    assert found.replace == Range((4, 3), (4, 6))


def test_no_completion_in_plain_string_text() -> None:
    assert labels(VARIABLES + 'session "Summarise the ‸"') == []
    assert labels(VARIABLES + 'session "Summarise {research} and ‸"') == []
    assert labels(VARIABLES + 'session "Escaped \\{‸"') == []


def test_pipeline_operations_after_the_pipe() -> None:
    items = complete('let xs = ["a"]\nlet r = xs | ‸')
    assert [i.label for i in items] == ["map", "filter", "pmap", "reduce"]
    assert items[0].insert_text == "map:\n  $0"
    assert item('let xs = ["a"]\nlet r = xs | re‸', "reduce").insert_text == (
        "reduce(${1:acc}, ${2:item}):\n  $0"
    )


def test_pipeline_operations_on_a_continuation_line() -> None:
    source = 'let xs = ["a"]\nlet r = xs\n  | map:\n    session "a"\n  | ‸'
    assert "filter" in labels(source)


def test_pipeline_source_offers_variables_and_a_snippet() -> None:
    found = labels('let xs = ["a"]\nlet r = ‸')
    assert "xs" in found
    assert "items | map:" in found


def test_parallel_modifiers() -> None:
    items = complete("parallel (‸")
    assert [i.label for i in items] == ['"all"', '"first"', '"any"', "on-fail:", "count:"]
    assert item("parallel (‸", "on-fail:").insert_text == "on-fail: "


def test_parallel_modifiers_leave_out_those_given() -> None:
    assert labels('parallel ("any", ‸') == ["on-fail:", "count:"]
    assert labels('parallel ("any", count: 2, ‸') == ["on-fail:"]


def test_on_fail_values() -> None:
    expected = ['"fail-fast"', '"continue"', '"ignore"']
    assert labels('parallel ("first", on-fail: ‸') == expected
    assert labels("let r = parallel (on-fail: ‸") == expected


def test_strategy_inside_a_string_replaces_the_string() -> None:
    found = item('parallel ("fi‸"):', '"first"')
    assert found.replace == Range((0, 10), (0, 14))
    unterminated = item('parallel ("‸', '"all"')
    assert unterminated.replace == Range((0, 10), (0, 11))
    assert labels('parallel (on-fail: "co‸"):') == ['"continue"']


def test_loop_modifiers() -> None:
    assert labels("loop until **done** (‸") == ["max:"]
    assert labels("loop (‸") == ["max:"]


@pytest.mark.parametrize(
    ("source", "expected", "absent"),
    [
        ('if **a**:\n  session "x"\n‸', {"elif", "else"}, set()),
        ('if **a**:\n  session "x"\nelif **b**:\n  session "y"\n‸', {"elif", "else"}, set()),
        ('if **a**:\n  session "x"\nelse:\n  session "y"\n‸', set(), {"elif", "else"}),
        ('try:\n  session "x"\n‸', {"catch", "finally"}, set()),
        ('try:\n  session "x"\ncatch:\n  session "y"\n‸', {"finally"}, {"catch"}),
        ('try:\n  session "x"\nfinally:\n  session "y"\n‸', set(), {"catch", "finally"}),
        ('session "x"\n‸', set(), {"elif", "else", "catch", "finally"}),
        ('if **a**:\n  if **b**:\n    session "x"\n  ‸', {"elif", "else"}, set()),
        ('if **a**:\n  session "x"\nel‸', {"elif", "else"}, set()),
    ],
)
def test_clause_keywords(source: str, expected: set[str], absent: set[str]) -> None:
    found = set(labels(source))
    assert expected <= found
    assert not found & absent


def test_clause_keywords_sort_first() -> None:
    items = sorted(complete('try:\n  session "x"\n‸'), key=lambda i: i.sort_text or "")
    assert [i.label for i in items[:2]] == ["catch", "finally"]


def test_option_inside_a_choice() -> None:
    source = 'choice **best**:\n  option "a":\n    session "x"\n  ‸'
    assert labels(source) == ["option", 'option "label":']


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("loop ‸", ["until", "while", "as"]),
        ("loop until **done** ‸", ["as"]),
        ("loop until **done** (max: 3) ‸", ["as"]),
        ("repeat 3 ‸", ["as"]),
        ("catch ‸", ["as"]),
        ('use "@alice/research" ‸', ["as"]),
        ("for x ‸", ["in"]),
        ("for x, i ‸", ["in"]),
        ("parallel ‸", ["for"]),
        ("let r = loop ‸", ["until", "while", "as"]),
    ],
)
def test_keywords_where_they_fit(line: str, expected: list[str]) -> None:
    assert labels(line) == expected


@pytest.mark.parametrize(
    "line",
    ["let ‸", "const ‸", "agent ‸", "block ‸", "input ‸", "for ‸", "catch as ‸", "session ‸"],
)
def test_nothing_where_a_new_name_is_written(line: str) -> None:
    assert labels(VARIABLES + line) == []


def test_after_an_arrow() -> None:
    assert {"session", "resume"} <= set(labels('session "a" -> ‸'))
