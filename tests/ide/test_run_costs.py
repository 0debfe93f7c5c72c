"""The last run's figures on hover and as inlay hints, from plain data (no journal here)."""

from __future__ import annotations

from openprose.ide.analysis import analyze_document
from openprose.ide.run_costs import (
    Budget,
    RunCosts,
    RunHint,
    StatementCost,
    Totals,
    age,
    hint_label,
    hover_section,
    run_hints,
)
from openprose.ide.types import Range

PROGRAM = """\
agent writer:
  model: sonnet
  prompt: "You write."

let draft = session: writer
  prompt: "Write a poem"

session "Summarise {draft}"  # short
resume: writer
  prompt: "Again"
"""
EVERYTHING = Range((0, 0), (10_000, 0))
NOW = 1_800_000_000.0
LAYERS = (
    ("system", 120),
    ("memory", 0),
    ("history", 0),
    ("context", 2_000),
    ("prompt", 30),
    ("reserve", 8_192),
)
BUDGET = Budget("claude-sonnet-4", 200_000, LAYERS, "estimate", ("summarised `notes`",))


def costs(**statements: StatementCost) -> RunCosts:
    found = {s.line: s for s in statements.values()}
    agents = {"writer": Totals(3, 900, 300, 34, 0.05)}
    return RunCosts("20261124-013508-8rzq2v", NOW - 300, found, agents)


DRAFT = StatementCost(
    5, "let draft = session: writer", Totals(2, 1_000, 200, 34, 0.0123), BUDGET, attempts=2
)
SUMMARY = StatementCost(8, 'session "Summarise {draft}"  # short', Totals(1, 16, 25, 0, 0.0))
RESUME = StatementCost(9, "resume: writer", Totals(1, 5, 5, 0, 0.5))
RUN = costs(draft=DRAFT, summary=SUMMARY, resume=RESUME)


def section(text: str, line: int, character: int, data: RunCosts | None = RUN) -> str | None:
    return hover_section(analyze_document(text), (line, character), data, NOW)


def test_a_session_keyword_shows_the_statement_budget_and_cost() -> None:
    found = section(PROGRAM, 4, 14)
    assert found is not None
    assert found.startswith("**Last run** `20261124-013508-8rzq2v` (5 minutes ago)")
    assert "This statement: 2 calls, 1,234 tokens (1,000 in, 200 out, 34 cached), $0.0123." in (
        found
    )
    assert "Context of the last of 2 attempts (`claude-sonnet-4`, tokens estimated):" in found
    assert "| context | 2,000 |" in found
    assert "| reserve | 8,192 |" in found
    assert "| **total** | **10,342** |" in found
    window = "Window: 10,342 of 200,000 tokens (5%), the 8,192 kept for the answer included."
    assert window in found
    assert "To fit the window:\n- summarised `notes`" in found


def test_a_statement_without_budgets_shows_its_totals_only() -> None:
    found = section(PROGRAM, 7, 3)
    assert found is not None
    assert "This statement: 1 call, 41 tokens (16 in, 25 out)." in found  # no cost: none shown
    assert "Window" not in found and "| layer |" not in found


def test_resume_is_a_session_too() -> None:
    found = section(PROGRAM, 8, 2)
    assert found is not None and "1 call, 10 tokens (5 in, 5 out), $0.5000." in found


def test_an_agent_name_shows_its_sessions_in_the_run() -> None:
    expected = "`writer`: 3 sessions, 1,234 tokens (900 in, 300 out, 34 cached), $0.0500."
    for position in ((0, 8), (4, 23), (8, 10)):  # its definition and two uses
        found = section(PROGRAM, *position)
        assert found is not None and found.endswith(expected), position


def test_nothing_elsewhere_or_without_a_run() -> None:
    assert section(PROGRAM, 5, 14) is None  # the prompt string
    assert section(PROGRAM, 4, 5) is None  # the variable
    assert section(PROGRAM, 4, 14, None) is None
    assert section(PROGRAM, 4, 14, costs()) is None  # a run without this statement
    assert section("agent critic:\n  model: haiku\n", 0, 8) is None  # an agent that never ran


def test_a_moved_or_changed_statement_shows_nothing() -> None:
    moved = "\n" + PROGRAM  # every statement one line down
    assert section(moved, 5, 14) is None
    assert run_hints(analyze_document(moved), EVERYTHING, RUN) == []
    changed = PROGRAM.replace("let draft = session: writer", "let poem = session: writer")
    assert section(changed, 4, 14) is None
    assert [h.position[0] for h in run_hints(analyze_document(changed), EVERYTHING, RUN)] == [
        7,
        8,
    ]


def test_hints_follow_each_session_first_line() -> None:
    hints = run_hints(analyze_document(PROGRAM), EVERYTHING, RUN)
    assert hints == [
        RunHint(
            (4, 27),
            "1,234 tok · $0.0123",
            "Last run 20261124-013508-8rzq2v: 2 calls, 1,234 tokens (1,000 in, 200 out, "
            "34 cached), $0.0123",
        ),
        RunHint(
            (7, 36),
            "41 tok",
            "Last run 20261124-013508-8rzq2v: 1 call, 41 tokens (16 in, 25 out)",
        ),
        RunHint(
            (8, 14),
            "10 tok · $0.5000",
            "Last run 20261124-013508-8rzq2v: 1 call, 10 tokens (5 in, 5 out), $0.5000",
        ),
    ]


def test_hints_only_in_the_range_asked_and_only_with_a_run() -> None:
    analysis = analyze_document(PROGRAM)
    assert [h.position for h in run_hints(analysis, Range((6, 0), (7, 5)), RUN)] == [(7, 36)]
    assert run_hints(analysis, EVERYTHING, None) == []
    assert run_hints(analysis, EVERYTHING, costs()) == []


def test_a_session_inside_a_body_gets_its_own_hint() -> None:
    text = 'repeat 2:\n  session "Again"\n'
    data = RunCosts("r", NOW, {2: StatementCost(2, 'session "Again"', Totals(2, 10, 10))}, {})
    assert [(h.position, h.label) for h in run_hints(analyze_document(text), EVERYTHING, data)] == [
        ((1, 17), "20 tok")
    ]


def test_labels_and_ages() -> None:
    assert hint_label(Totals(1, 1_000, 234, 0, 0.0)) == "1,234 tok"
    assert hint_label(Totals(1, 1, 1, 0, 0.00004)) == "2 tok · <$0.0001"  # not "$0.0000"
    assert [age(s) for s in (-5, 0, 59, 60, 7_200, 86_400 * 3)] == [
        "just now",
        "just now",
        "just now",
        "1 minute ago",
        "2 hours ago",
        "3 days ago",
    ]


def test_one_attempt_counted_by_the_provider() -> None:
    counted = Budget("", 0, (("prompt", 40), ("reserve", 0)), "anthropic")
    data = costs(summary=StatementCost(8, SUMMARY.statement, SUMMARY.totals, counted, 1))
    found = section(PROGRAM, 7, 3, data)
    assert found is not None
    assert "Context of the request (counted by anthropic):" in found
    assert "Window" not in found  # no window known: no share of it
    assert "To fit" not in found
