"""Program order (openprose.analysis.flow): which executions of a statement may, or must, come
before another, through blocks, loops, branches and parallel blocks."""

from __future__ import annotations

import gc

from openprose.analysis import flow, prepare
from openprose.syntax import parse
from openprose.syntax import tree as t


def sessions(text: str) -> list[tuple[str, flow.Run]]:
    """Every execution of a session, named by its prompt, in program order."""
    ctx = prepare(parse(text))
    return [(run.node.prompt.text, run) for run in flow.runs(ctx, (t.Session,))]


def pair(text: str, first: str, second: str) -> tuple[flow.Run, flow.Run]:
    runs = dict(sessions(text))
    return runs[first], runs[second]


def test_statements_run_in_the_order_they_are_written() -> None:
    a, b = pair('session "a"\nsession "b"\n', "a", "b")
    assert flow.definitely_before(a, b) and flow.possibly_before(a, b)
    assert not flow.definitely_before(b, a) and not flow.possibly_before(b, a)


def test_a_block_runs_where_it_is_invoked_once_per_invocation() -> None:
    text = 'block twice:\n  session "inner"\nsession "first"\ndo twice\ndo twice\n'
    assert [name for name, _ in sessions(text)] == ["first", "inner", "inner"]
    keys = {run.key for name, run in sessions(text) if name == "inner"}
    assert len(keys) == 2  # two executions of one statement, told apart


def test_a_block_no_one_invokes_runs_after_the_program() -> None:
    text = 'block unused:\n  session "inner"\nsession "outer"\n'
    assert [name for name, _ in sessions(text)] == ["outer", "inner"]


def test_a_loop_runs_a_later_statement_of_its_body_before_an_earlier_one() -> None:
    text = 'repeat 3:\n  session "a"\n  session "b"\n'
    a, b = pair(text, "a", "b")
    assert flow.possibly_before(b, a)  # the second iteration's "a" follows the first's "b"
    assert not flow.definitely_before(b, a)


def test_branches_of_an_if_exclude_each_other() -> None:
    text = 'if **ready**:\n  session "a"\nelse:\n  session "b"\n'
    a, b = pair(text, "a", "b")
    assert not flow.possibly_before(a, b) and not flow.definitely_before(a, b)


def test_options_of_a_choice_exclude_each_other() -> None:
    text = 'choice **the approach**:\n  option "x":\n    session "a"\n  option "y":\n'
    text += '    session "b"\n'
    a, b = pair(text, "a", "b")
    assert not flow.possibly_before(a, b)


def test_parallel_branches_run_concurrently() -> None:
    text = 'parallel:\n  x = session "a"\n  y = session "b"\n'
    a, b = pair(text, "a", "b")
    assert flow.possibly_before(a, b) and not flow.definitely_before(a, b)


def test_a_statement_after_a_parallel_block_follows_every_branch() -> None:
    text = 'parallel:\n  x = session "a"\n  y = session "b"\nsession "c"\n'
    a, c = pair(text, "a", "c")
    assert flow.definitely_before(a, c)


def test_a_block_is_not_inlined_inside_itself() -> None:
    text = 'block again:\n  session "inner"\n  do again\ndo again\n'
    assert len(sessions(text)) == 1


def test_a_block_invoked_many_times_runs_inline_at_its_first_invocations_only() -> None:
    text = 'block b:\n  session "inner"\n' + "do b\n" * 10
    assert len(sessions(text)) == flow.MAX_CALLS


def test_a_long_program_runs_in_order_across_its_runs_of_items_up_to_the_bound() -> None:
    # More items than one run of items holds, a block inlined past the first run, and more
    # executions than the bound: the program's order holds across runs, and it stops there.
    lines = ['block b:\n  session "inner"\n']
    lines += [f'session "s{i}"\n' if i != 70 else "do b\n" for i in range(flow.MAX_RUNS + 50)]
    names = [name for name, _ in sessions("".join(lines))]
    expected = [f"s{i}" for i in range(70)] + ["inner"]
    expected += [f"s{i}" for i in range(71, flow.MAX_RUNS)]
    assert names == expected
    orders = [run.order for _, run in sessions("".join(lines))]
    assert orders == list(range(flow.MAX_RUNS))


def test_finding_the_runs_leaves_no_reference_cycle_behind() -> None:
    # An editor finds the runs on every keystroke: what it made must go as soon as it is
    # dropped, not wait for the cyclic collector (the walk's recursive closure held itself).
    ctx = prepare(parse('block b:\n  session "in b"\ndo b\nsession "after"\n'))
    gc.collect()
    gc.disable()
    try:
        assert len(flow.runs(ctx, (t.Session,))) == 2
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [o for o in gc.garbage if getattr(o, "__qualname__", "").startswith("runs.")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []
