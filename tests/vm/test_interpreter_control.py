"""Conditions, choices, loops and pipelines."""

from __future__ import annotations

from typing import Any

import pytest

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import Options
from tests.vm.vm_support import Answering

IF_CHAIN = """\
if **the tests pass**:
  session "Ship"
elif **only lint fails**:
  session "Fix lint"
else:
  session "Debug"
"""


# Every test here runs on both engines (tests/vm/conftest.py).
pytestmark = pytest.mark.both_engines


def test_if_runs_the_first_branch_whose_condition_holds(run_prose: Any) -> None:
    run = run_prose(IF_CHAIN)
    assert run.calls == [("judge", "the tests pass", "if", 1), ("session", "Ship")]
    assert "[Flow] **the tests pass**: true" in run.text


def test_elif_and_else(run_prose: Any) -> None:
    run = run_prose(IF_CHAIN, backend=OfflineBackend(conditions={"the tests pass": False}))
    assert run.calls == [
        ("judge", "the tests pass", "if", 1),
        ("judge", "only lint fails", "elif", 1),
        ("session", "Fix lint"),
    ]
    backend = OfflineBackend(conditions={"the tests pass": False, "only lint fails": False})
    run = run_prose(IF_CHAIN, backend=backend)
    assert run.prompts == ["Debug"]


CHOICE = """\
choice **the best next step**:
  option "Write":
    session "Write it"
  option "Review":
    session "Review it"
"""


def test_choice_takes_the_first_option_offline(run_prose: Any) -> None:
    run = run_prose(CHOICE)
    assert run.calls == [
        ("choose", "the best next step", ("Write", "Review")),
        ("session", "Write it"),
    ]
    assert '[Flow] **the best next step**: chose "Write"' in run.text


def test_choice_follows_a_scripted_answer(run_prose: Any) -> None:
    run = run_prose(CHOICE, backend=OfflineBackend(choices={"the best next step": 1}))
    assert run.prompts == ["Review it"]


def test_repeat_binds_its_index_from_zero(run_prose: Any) -> None:
    run = run_prose('repeat 3 as i:\n  session "Pass {i}"\n')
    assert run.prompts == ["Pass 0", "Pass 1", "Pass 2"]
    assert run.state()[:6] == ["1→ loop:1/3", "1→ ✓", "1→ loop:2/3", "1→ ✓", "1→ loop:3/3", "1→ ✓"]


def test_for_each_with_index_and_a_text_collection(run_prose: Any) -> None:
    backend = Answering({"List them": "alpha\n\nbeta\n"})
    run = run_prose(
        'let names = session "List them"\nfor n, i in names:\n  session "{i}: {n}"\n',
        backend=backend,
    )
    # A text is iterated as its non-empty lines.
    assert run.prompts == ["List them", "0: alpha", "1: beta"]


def test_loop_until_is_checked_before_each_iteration(run_prose: Any) -> None:
    source = 'loop until **done** (max: 5):\n  session "Work"\n'
    run = run_prose(source)  # offline rounds 2: satisfied on the second evaluation
    assert run.calls == [
        ("judge", "done", "until", 1),
        ("session", "Work"),
        ("judge", "done", "until", 2),
    ]
    assert run.state()[:3] == ["1→ loop:1/5", "1→ ✓", "1→ loop:1/5 exit(**done**)"]
    run = run_prose(source, backend=OfflineBackend(rounds=4))
    assert run.prompts == ["Work"] * 3


def test_loop_while_holds_until_the_last_round(run_prose: Any) -> None:
    run = run_prose(
        'loop while **work remains** (max: 9):\n  session "Work"\n',
        backend=OfflineBackend(rounds=3),
    )
    assert run.prompts == ["Work", "Work"]
    assert run.calls[-1] == ("judge", "work remains", "while", 3)


def test_loop_stops_at_its_max(run_prose: Any) -> None:
    run = run_prose(
        'loop until **never** (max: 2) as k:\n  session "Try {k}"\n',
        backend=OfflineBackend(conditions={"never": False}),
    )
    assert run.prompts == ["Try 0", "Try 1"]
    assert "1→ loop:2/2 exit(max)" in run.state()


def test_a_plain_loop_without_max_stops_at_the_safety_limit(run_prose: Any) -> None:
    run = run_prose(
        'loop:\n  session "Again"\n', options=Options(unbounded_loop_limit=3, jitter=False)
    )
    assert run.prompts == ["Again"] * 3
    assert "[Warning] loop stopped at the VM's safety limit of 3 iterations" in run.text


def test_pipeline_map_filter_reduce(run_prose: Any) -> None:
    backend = Answering({"Keep b?": "No, drop it."})
    run = run_prose(
        """\
        let items = ["a", "b", "c"]
        let kept = items
          | filter:
              session "Keep {item}?"
          | map:
              session "Shout {item}"
          | reduce(acc, x):
              session "Join {acc} + {x}"
        """,
        backend=backend,
    )
    assert run.prompts[:3] == ["Keep a?", "Keep b?", "Keep c?"]
    # Answers other than yes/no are judged by the backend (offline: keep).
    assert run.calls[1][0] == "judge" and run.calls[1][2] == "filter"
    assert run.prompts[3:5] == ["Shout a", "Shout c"]
    assert run.prompts[5] == (
        "Join [dry run] Shout a (agent: -; model: default) + "
        "[dry run] Shout c (agent: -; model: default)"
    )
    assert "[Pipeline] Stage 2: map over 2 items" in run.text


def test_pmap_keeps_item_order(run_prose: Any) -> None:
    run = run_prose(
        'let out = ["x", "y"] | pmap:\n  session "P {item}"\nsession "End"\n  context: out\n'
    )
    assert run.backend.sessions[-1].context[0][1] == (
        '["[dry run] P x (agent: -; model: default)", "[dry run] P y (agent: -; model: default)"]'
    )
