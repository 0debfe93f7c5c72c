from __future__ import annotations

import json

from openprose.vm import events as ev


def test_frame_markers_follow_the_seed() -> None:
    push = ev.FramePush(
        level=1, block="process", execution_id=2, depth=2, parent=1, arguments={"chunk": "p"}
    )
    assert ev.render_text(push) == (
        "   [Frame+] Entering block: process (execution_id: 2, depth: 2)\n"
        "      Arguments: chunk=p\n"
        "      Parent: execution_id 1"
    )
    pop = ev.FramePop(block="process", execution_id=2)
    assert ev.render_text(pop) == "[Frame-] Exiting block: process (execution_id: 2)"


def test_binding_markers() -> None:
    assert ev.render_text(ev.Binding(name="r", value='"v"', execution_id=43)) == (
        '[Binding] let r = "v" (mutable) (execution_id: 43)'
    )
    assert ev.render_text(ev.Binding(name="c", binding_kind="const", value="1")) == (
        "[Binding] const c = 1 (immutable)"
    )


def test_parallel_and_loop_markers() -> None:
    enter = ev.ParallelEnter(branches=["a", "b"])
    assert ev.render_text(enter).splitlines() == [
        "[Parallel] Entering parallel block (2 branches, strategy: all, on-fail: fail-fast)",
        "   - a: pending",
        "   - b: pending",
    ]
    assert ev.render_text(ev.LoopIteration(iteration=2, maximum=5)) == (
        "[Loop] Iteration 2 of max 5"
    )


def test_json_lines_carry_the_kind_and_a_timestamp() -> None:
    data = json.loads(ev.render_json(ev.Position(step="3", ts=12.5, statement="x", line=4)))
    assert data == {
        "event": "position",
        "step": "3",
        "level": 0,
        "ts": 12.5,
        "statement": "x",
        "line": 4,
    }


def test_a_large_fan_out_lists_the_first_branches_only() -> None:
    lines = ev.render_text(ev.ParallelEnter(branches=[f"b{i}" for i in range(25)])).splitlines()
    assert len(lines) == 1 + ev.PENDING_SHOWN + 1
    assert lines[-1] == "     ... and 5 more"
