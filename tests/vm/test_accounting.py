"""Tokens and cost per call, agent, statement and run (vm/accounting.py), and the caps
``max_tokens`` and ``max_cost`` checked before a call (an estimate) and after it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from openprose.vm.accounting import (
    ACCOUNT,
    Breakdown,
    Entry,
    Ledger,
    estimate,
    stored_entries,
    total_tokens,
)
from openprose.vm.backends.base import (
    ConditionRequest,
    SessionRequest,
    SessionResult,
    Usage,
)
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.backends.pricing import PRICES
from openprose.vm.interpreter import Options
from openprose.vm.runner import run_file
from openprose.vm.state import open_catalog

PROGRAM = """\
agent writer:
  model: sonnet
  prompt: "You write."
let notes = session "Research bees"
if **the notes are good**:
  let draft = session: writer
    prompt: "Draft"
    context: notes
output final = session: writer
  prompt: "Polish"
"""


class Anthropicish(OfflineBackend):
    """Answers offline, but is named and priced like the anthropic backend."""

    name = "anthropic"
    dry_run = False

    def __init__(self, usage: Usage) -> None:
        super().__init__()
        self.model_map: dict[str, str] = {}
        self.usage = usage

    async def run_session(self, request: SessionRequest) -> SessionResult:
        text = (await super().run_session(request)).text
        return SessionResult(usage=self.usage, cost=0.01, session_ref="a", text=text)


def test_the_breakdown_adds_up_by_agent_statement_and_session(run_prose: Any) -> None:
    run = run_prose(PROGRAM)
    result = run.result
    assert result.status == "success"
    breakdown = result.breakdown
    total = breakdown.total
    assert (total.input_tokens, total.output_tokens) == (
        result.usage.input_tokens,
        result.usage.output_tokens,
    )
    assert total.calls == 4  # three sessions and the condition
    assert set(breakdown.agents) == {"writer", ""}
    assert breakdown.agents["writer"].calls == 2
    assert sum(t.tokens for t in breakdown.agents.values()) == total.tokens
    statements = {(line, text) for (_p, line, text) in breakdown.statements}
    assert statements == {
        (4, 'let notes = session "Research bees"'),
        (5, "if **the notes are good**:"),
        (6, "let draft = session: writer"),
        (9, "output final = session: writer"),
    }
    assert [(s.key, s.agent) for s in breakdown.sessions] == [
        ("2#attempt1", ""),
        ("3?0.1#attempt1", "writer"),
        ("4#attempt1", "writer"),
    ]
    data = breakdown.to_json()
    assert data["total"]["tokens"] == total.tokens
    assert [a["agent"] for a in data["agents"]] == ["writer", None]  # the most tokens first


def test_the_journal_keeps_the_breakdown_and_a_resume_writes_it_once(tmp_path: Path) -> None:
    path = tmp_path / "main.prose"
    path.write_text(PROGRAM, encoding="utf-8")
    runs = tmp_path / "runs"
    first = asyncio.run(
        run_file(path, runs_root=runs, options=Options(jitter=False, max_tokens=40))
    )
    assert first.status == "error" and first.error.startswith("token limit reached")
    database = runs / first.run_id / "journal.db"
    stored = stored_entries(database, first.run_id)
    assert stored is not None and Breakdown.of(stored).total == first.breakdown.total
    store = open_catalog("filesystem", runs).open(first.run_id)
    resumed = asyncio.run(
        run_file(path, resume=store, runs_root=runs, options=Options(jitter=False))
    )
    assert resumed.status == "success"
    again = stored_entries(database, resumed.run_id)
    assert again is not None
    assert Breakdown.of(again).total == resumed.breakdown.total
    # Every call once, replayed ones included, in the journal and in the result.
    assert len({e.key for e in again}) == len(again) == resumed.breakdown.total.calls == 4


def test_a_run_with_no_journal_accounts_in_memory_only() -> None:
    ledger = Ledger()
    entry = Entry("session", "1#attempt1", "a", "session: a", 1, "p", Usage(3, 4, 5, 6), 0.5)
    ledger.add(entry)
    assert ledger.breakdown().total.tokens == total_tokens(entry.usage) == 18
    assert Entry.from_json(entry.to_json()) == entry
    assert ACCOUNT.startswith("@")  # a commit name no binding can have


def test_the_estimate_is_four_characters_a_token_plus_the_known_reserve() -> None:
    request = SessionRequest(prompt="x" * 40, step="1", system="y" * 20, context=(("c", "z" * 19),))
    assert estimate(request, OfflineBackend()) == (20, 0.0)  # 40 + 20 + 1 + 19 characters
    tokens, cost = estimate(request, Anthropicish(Usage()))
    price = PRICES["claude-sonnet-4-6"]
    assert tokens == 20 + 8192
    assert cost == (20 * price.input + 8192 * price.output) / 1_000_000
    condition = ConditionRequest("ok?", "1", "if")
    assert estimate(condition, Anthropicish(Usage()))[0] == 1 + 1024


def test_the_token_cap_stops_before_the_call_that_would_pass_it(run_prose: Any) -> None:
    backend = OfflineBackend()
    run = run_prose('session "A"\nsession "B"\n', backend=backend, options=Options(max_tokens=11))
    # "A" takes 1 token in and 10 out: 11 of 11; "B" needs about 1 more, so it is not asked.
    assert run.prompts == ["A"]
    assert (
        run.result.error
        == "token limit reached (11 used, the next call needs about 1, of 11 tokens)"
    )
    assert run.result.fatal


def test_the_token_cap_stops_after_the_call_that_passed_it(run_prose: Any) -> None:
    run = run_prose('session "A"\nsession "B"\n', options=Options(max_tokens=5))
    assert run.prompts == ["A"]
    assert run.result.error == "token limit reached (11 of 5 tokens)"


def test_the_cost_cap_stops_before_a_call_estimated_to_pass_it(run_prose: Any) -> None:
    backend = Anthropicish(Usage(10, 10))
    run = run_prose('session "A"\nsession "B"\n', backend=backend, options=Options(max_cost=0.2))
    # $0.01 spent; the next session reserves 8,192 output tokens at $15 a million ($0.12).
    assert run.prompts == ["A", "B"]
    run = run_prose('session "A"\nsession "B"\n', backend=backend, options=Options(max_cost=0.1))
    assert run.prompts == []
    assert run.result.error.startswith("cost limit reached ($0.00 spent, the next call costs")


FAN_OUT = """\
agent critic:
  model: opus
  prompt: "You criticise."
parallel for x in ["a", "b", "c"]:
  session: critic
    prompt: "Review {x}"
"""


def test_a_fan_out_estimated_above_the_cost_threshold_is_confirmed(run_prose: Any) -> None:
    from openprose.syntax import parse
    from openprose.vm.accounting import fan_out_cost

    module = parse(FAN_OUT)
    agent, loop = module.statements()
    backend = Anthropicish(Usage(10, 10))
    cost = fan_out_cost(loop, 3, {"critic": agent}, backend)
    session_text = 'session: critic\n    prompt: "Review {x}"'
    system = "You criticise."
    per_session = estimate(
        SessionRequest(prompt=session_text, step="", model="opus", system=system), backend
    )[1]
    assert cost == 3 * per_session > 0.5  # opus reserves 8,192 output tokens at $25 a million
    refused = run_prose(FAN_OUT, backend=backend, options=Options(fan_out_cost=0.5))
    assert refused.prompts == []
    assert refused.result.fatal
    assert refused.result.error == f"fan-out of 3 branches estimated at ${cost:.2f} declined " + (
        "(more than $0.50)"
    )
    under = run_prose(FAN_OUT, backend=backend, options=Options(fan_out_cost=1.0))
    assert under.result.status == "success" and len(under.prompts) == 3


def test_the_cost_confirmation_asks_and_goes_on_when_told_to(tmp_path: Path) -> None:
    path = tmp_path / "fan.prose"
    path.write_text(FAN_OUT, encoding="utf-8")
    asked: list[str] = []

    async def confirm(question: str) -> bool:
        asked.append(question)
        return True

    options = Options(fan_out_cost=0.5)
    backend = Anthropicish(Usage(10, 10))
    result = asyncio.run(run_file(path, backend=backend, options=options, confirm=confirm))
    assert result.status == "success" and result.sessions == 3
    assert len(asked) == 1
    assert asked[0].startswith('`parallel for x in ["a", "b", "c"]:` starts 3 branches, estimated')


def test_an_imported_programs_calls_are_the_runs(run_prose: Any) -> None:
    run = run_prose(
        'use "./helper" as helper\nsession "Mine"\nlet r = helper(topic: "x")\n',
        files={"helper.prose": 'input topic: "t"\nsession "One"\noutput o = "d"\n'},
    )
    assert run.result.status == "success"
    where = sorted((p, line, text) for (p, line, text) in run.result.breakdown.statements)
    assert where == [("helper.prose", 2, 'session "One"'), ("main.prose", 2, 'session "Mine"')]
    keys = [s.key for s in run.result.breakdown.sessions]
    assert keys == ["2#attempt1", "3/helper:2#attempt1"]
    database = run.root / ".prose" / "runs" / run.result.run_id / "journal.db"
    assert len(stored_entries(database, run.result.run_id) or []) == 2


def test_prices_are_parsed_and_checked() -> None:
    import pytest

    from openprose.vm.backends.pricing import Price, parse_price

    assert parse_price("local=1,2") == ("local", Price(1.0, 2.0))
    assert parse_price(" m = 1, 2, 0.1, 1.25") == ("m", Price(1.0, 2.0, 0.1, 1.25))
    for bad in ("m", "=1,2", "m=1", "m=1,2,3,4,5", "m=a,b", "m=-1,2", "m=nan,1", "m=inf,1"):
        with pytest.raises(ValueError):
            parse_price(bad)


def test_the_estimate_counts_a_multi_turn_sessions_earlier_turns() -> None:
    from openprose.vm.backends.base import Turn

    request = SessionRequest(
        prompt="x" * 40,
        step="1",
        history="h" * 20,
        turns=(Turn("p" * 12, "a" * 24, ("t" * 4,)),),
    )
    assert estimate(request, OfflineBackend()) == (25, 0.0)  # 40 + 20 + 12 + 24 + 4 characters
