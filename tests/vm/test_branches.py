"""vm/branches.py: which fan-outs may run their items in another process, and an item run
there: answered from the run's journal for what it did before, its bindings staged."""

from __future__ import annotations

import asyncio
import pickle
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from openprose.syntax import parse
from openprose.syntax import tree as t
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.branches import (
    BranchStore,
    BranchTask,
    Link,
    Worker,
    find_host,
    names_read,
    run_task,
    tasks_for,
    why_local,
)
from openprose.vm.engines.base import RunSpec
from openprose.vm.interpreter import Budget, Ctx, Interpreter, Options
from openprose.vm.scope import Scope
from openprose.vm.state import open_catalog

FAN_OUT = 'let seen = "none"\nlet out = parallel for x in ["a", "b"]:\n  session "Study {x}"\n'


class Refusing(OfflineBackend):
    async def run_session(self, request: Any) -> Any:
        raise AssertionError(f"asked again: {request.step}")


def _interpreter(text: str, tmp_path: Path, options: Options | None = None) -> Interpreter:
    catalog = open_catalog("filesystem", tmp_path / "runs")
    store = catalog.create(text, "main.prose", {})
    interpreter = Interpreter(parse(text), OfflineBackend(), store=store, options=options)
    interpreter.collect()
    return interpreter


def _host(interpreter: Interpreter) -> Any:
    return next(n for n in interpreter.module.statements() if n.start_pos[0] == 2).value


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('  session "Study {x}"\n', None),
        ("  do study(x)\n", None),
        ("  do ask(x)\n", "asks for an input"),
        ('  input angle: "Which angle"\n', "asks for an input"),
        # Agent memory is kept where every process of the run reaches it.
        ('  session: keeper\n    prompt: "Keep {x}"\n', None),
    ],
)
def test_which_fan_outs_travel(tmp_path: Path, body: str, reason: str | None) -> None:
    text = (
        'block study(x):\n  session "Study {x}"\n'
        # A block reached through another: what it does is what the item does.
        'block ask(x):\n  do pose(x)\nblock pose(x):\n  input angle: "Which angle"\n'
        "agent keeper:\n  model: sonnet\n  persist: true\n"
        f'parallel for x in ["a", "b"]:\n{body}'
    )
    interpreter = _interpreter(text, tmp_path)
    host = next(n for n in interpreter.module.statements() if n.type == "for_each")
    found = why_local(interpreter, host)
    assert (found is None) if reason is None else (found is not None and reason in found)


CALLED = {
    "plain.prose": 'input x: "x"\noutput y = session "Study {x}"\n',
    "deeper.prose": 'use "./plain" as plain\ninput x: "x"\noutput y = plain(x: x)\n',
    "keeper.prose": (
        "agent keeper:\n  model: sonnet\n  persist: true\n"
        'input x: "x"\noutput y = session: keeper\n  prompt: "Keep {x}"\n'
    ),
    "remembers.prose": 'use "./keeper" as keeper\ninput x: "x"\noutput y = keeper(x: x)\n',
    "loops.prose": 'use "./loops" as again\ninput x: "x"\noutput y = again(x: x)\n',
    "fetches.prose": 'use "alice/research" as research\ninput x: "x"\noutput y = research(x: x)\n',
}


@pytest.mark.parametrize(
    ("used", "fetched", "reason"),
    [
        ("./plain", False, None),
        ("./deeper", False, None),  # a program that calls another
        ("./loops", False, None),  # one that calls itself
        ("./missing", False, None),  # the call fails alike wherever it runs
        ("./keeper", False, None),  # its agent's memory is where the item's worker reaches it
        ("./remembers", False, None),
        ("./fetches", False, None),  # it calls a remote program, which the worker fetches
        ("alice/research", False, None),
        # A fetched program's call of a local file is refused in the run's process, and
        # would not be by a worker's loader.
        ("./plain", True, "only the run's process may load"),
        ("alice/research", True, None),
    ],
)
def test_which_program_calls_travel(
    tmp_path: Path, used: str, fetched: bool, reason: str | None
) -> None:
    from openprose.vm.runner import load_import

    for name, text in CALLED.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    text = f'use "{used}" as called\nlet out = parallel for x in ["a", "b"]:\n  called(x: x)\n'
    catalog = open_catalog("filesystem", tmp_path / "runs")
    store = catalog.create(text, "main.prose", {})
    interpreter = Interpreter(
        parse(text),
        OfflineBackend(),
        store=store,
        program_path=tmp_path / "main.prose",
        load_program=load_import,
        fetched=fetched,
    )
    interpreter.collect()
    found = why_local(interpreter, _host(interpreter))
    assert (found is None) if reason is None else (found is not None and reason in found), found


def test_judging_a_fan_out_loads_none_of_the_programs_its_items_call(tmp_path: Path) -> None:
    (tmp_path / "fetches.prose").write_text(CALLED["fetches.prose"], encoding="utf-8")
    text = 'use "./fetches" as called\nlet out = parallel for x in ["a", "b"]:\n  called(x: x)\n'
    loaded: list[Path] = []

    def counted(path: Path) -> tuple[str, Any]:
        loaded.append(path)
        raise AssertionError("judging a fan-out loads no program")

    store = open_catalog("filesystem", tmp_path / "runs").create(text, "main.prose", {})
    interpreter = Interpreter(
        parse(text), OfflineBackend(), store=store, program_path=tmp_path / "main.prose",
        load_program=counted,
    )  # fmt: skip
    interpreter.collect()
    host = _host(interpreter)
    assert [why_local(interpreter, host) for _ in range(3)] == [None] * 3
    assert loaded == []
    # A fan-out inside a loop is judged once.
    assert list(interpreter.travel_verdicts) == [host]
    store.close()


def test_which_program_calls_of_the_run_go_to_a_worker(tmp_path: Path) -> None:
    from openprose.vm.branches import why_call_local

    interpreter = _interpreter(FAN_OUT, tmp_path)
    programs = {"study.prose": 'session "Study"\n', "fanning.prose": FAN_OUT}
    interpreter.load_program = lambda path: ("", parse(programs[path.name]))
    assert why_call_local(interpreter, "./study") is None
    assert why_call_local(interpreter, "alice/research") is None
    # A program that fans out goes too: the worker executing its call spreads its items
    # (program calls have a queue of their own, engines/dbos_branches.py CALLS_QUEUE).
    assert why_call_local(interpreter, "./fanning") is None
    nested = _interpreter(FAN_OUT, tmp_path / "nested")
    nested.key_prefix = "3/study:"  # a called program's calls run where it runs
    assert "imported program" in (why_call_local(nested, "./study") or "")
    limited = _interpreter(FAN_OUT, tmp_path / "limited", Options(max_cost=1.0))
    assert "spending limit" in (why_call_local(limited, "./study") or "")
    fetched = _interpreter(FAN_OUT, tmp_path / "fetched")
    fetched.fetched = True
    assert "only the run's process" in (why_call_local(fetched, "./study") or "")
    assert why_call_local(fetched, "alice/research") is None


def test_a_run_with_a_spending_limit_keeps_its_items_unless_every_process_counts_it(
    tmp_path: Path,
) -> None:
    from openprose.vm.branches import why_call_local

    interpreter = _interpreter(FAN_OUT, tmp_path, Options(max_sessions=10))
    assert "spending limit" in (why_local(interpreter, _host(interpreter)) or "")

    class Shared(Budget):
        shared = True  # (the dbos engine's: engines/dbos_budget.py)

    interpreter.budget = Shared()
    assert why_local(interpreter, _host(interpreter)) is None
    interpreter.load_program = lambda path: ("", parse(""))
    assert why_call_local(interpreter, "./study") is None


def _task(text: str, index: int, item: str) -> BranchTask:
    host = find_host(parse(text), (2, 10))
    return BranchTask(
        host=host.start_pos,
        index=index,
        item=item,
        chain=(Link({"seen": "none"}, frozenset(), None),),
        step="2",
        key="2",
        level=0,
        options=RunSpec.options_of(Options(jitter=False)),
        program_name="main.prose",
    )


def test_an_item_run_again_is_answered_from_the_run_s_journal(tmp_path: Path) -> None:
    catalog = open_catalog("filesystem", tmp_path / "runs")
    run_id = catalog.create(FAN_OUT, "main.prose", {}).run_id
    task = _task(FAN_OUT, 1, "b")
    assert pickle.loads(pickle.dumps(task)) == task  # it travels as DBOS's pickle

    def run(backend: Any) -> Any:
        journal = catalog.branch_journal(run_id, task.branch_key)
        store = BranchStore(journal, run_id, "filesystem", partial(catalog.branch_store, run_id))
        try:
            return asyncio.run(run_task(task, Worker(parse(FAN_OUT), backend, store)))
        finally:
            store.close()

    first = run(OfflineBackend())
    again = run(Refusing())  # its worker died after the item's session: nothing is asked
    assert first.error is None and first.live and not again.live
    assert again.value == first.value and "Study b" in str(first.value)
    [binding] = first.bindings
    # Anonymous, named when the run joins; staged under the item's own step key.
    assert (binding.name, binding.kind, binding.key) == ("", "anonymous", "2@1.1")
    assert [type(e).__name__ for e in first.events][:1] == ["Position"]
    assert first.sessions == 1 and again.sessions == 1


def test_the_run_s_view_of_an_agent_s_memory_is_what_its_item_left(tmp_path: Path) -> None:
    from openprose.vm.branches import BranchOutcome, apply
    from openprose.vm.interpreter import Ctx, Stage

    interpreter = _interpreter(FAN_OUT, tmp_path)
    interpreter.memories.current["keeper"] = "before the fan-out"
    scope = Scope()
    outcome = BranchOutcome(value="done", memories={"keeper": "the item's record"})
    value = apply(interpreter, Ctx(scope, "2", "2", 0), Stage(scope), outcome, replayed=False)
    # As when the item ran in the run's process and recorded into the run's own view.
    assert value == "done" and interpreter.memories.current == {"keeper": "the item's record"}


def test_a_host_that_is_not_there_is_a_lookup_error() -> None:
    with pytest.raises(LookupError, match="line 1, column 1"):
        find_host(parse('session "x"\n'), (1, 0))


SLIM = (
    'agent critic:\n  model: sonnet\n  prompt: "You judge {style}"\n'
    "parallel for x in pile:\n"
    '  let note = "{x} for {reader.name}"\n'
    "  tally = tally\n"
    '  session: critic\n    prompt: "Judge {note}"\n    context: { topic }\n'
)


def test_an_item_carries_only_the_names_its_body_and_the_agents_mention(tmp_path: Path) -> None:
    interpreter = _interpreter(SLIM, tmp_path)
    host = next(n for n in interpreter.module.statements() if n.type == "for_each")
    read = names_read(interpreter, host)
    # Identifiers, interpolation heads (a path's first name), the agents' interpolations.
    assert {"x", "note", "reader", "tally", "topic", "style", "critic"} <= read
    assert "pile" not in read  # the collection is evaluated by the run, not by an item

    root = Scope()
    pile = [f"item {i}" for i in range(1_000)]
    root.values.update(pile=pile, reader={"name": "Ada"}, style="plainly", unused="x" * 10_000)
    root.values.update(topic="graphs", tally=0)
    root.consts.update({"pile", "style"})
    inner = root.child()
    inner.values["note"] = "shadowed"
    tasks = tasks_for(interpreter, host, Ctx(inner, "2", "2", 0), pile[:3])
    [outer, own] = tasks[0].chain
    assert set(outer.values) == {"reader", "style", "topic", "tally"}
    assert outer.consts == frozenset({"style"})
    assert own.values == {"note": "shadowed"}
    assert [task.item for task in tasks] == pile[:3]
    # What DBOS stores per item no longer grows with the collection.
    assert len(pickle.dumps(tasks[0])) < 2_000


@pytest.mark.parametrize(
    ("header", "travels"),
    [
        ("parallel:", True),
        ('parallel ("all", on-fail: "continue"):', True),
        ('parallel ("first"):', False),
        ('parallel ("any", count: 2):', False),
        ("parallel (how):", False),  # decided at run time: taken for a race
    ],
)
def test_a_block_travels_unless_it_races(tmp_path: Path, header: str, travels: bool) -> None:
    text = f'let how = "all"\n{header}\n  session "one"\n  session "two"\n'
    interpreter = _interpreter(text, tmp_path)
    host = next(n for n in interpreter.module.statements() if n.type == "parallel")
    found = why_local(interpreter, host)
    assert (found is None) if travels else ("race" in (found or ""))


def test_which_fan_outs_of_a_called_program_travel(tmp_path: Path) -> None:
    def verdict(text: str, name: str) -> str | None:
        interpreter = _interpreter(text, tmp_path / name)
        interpreter.key_prefix = "3/study:"  # a called program's, in the run's process
        host = next(n for n in t.iter_nodes(interpreter.module) if isinstance(n, t.ForEach))
        return why_local(interpreter, host)

    assert verdict(FAN_OUT, "plain") is None
    calling = 'use "./helper" as helper\nlet out = parallel for x in ["a"]:\n  helper(topic: x)\n'
    assert "calls a program" in (verdict(calling, "calling") or "")
    keeping = (
        "agent keeper:\n  persist: true\n"
        'let out = parallel for x in ["a"]:\n  session: keeper\n    prompt: "Keep {x}"\n'
    )
    assert "memory" in (verdict(keeping, "keeping") or "")
    # The run's own items with memory travel (they record it in the run's state).
    own = _interpreter(keeping, tmp_path / "own")
    host = next(n for n in t.iter_nodes(own.module) if isinstance(n, t.ForEach))
    assert why_local(own, host) is None
