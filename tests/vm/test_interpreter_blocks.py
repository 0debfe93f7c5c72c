"""Blocks, recursion and frames, do, ->, and calls of local programs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from openprose.vm import events as ev
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import Options
from openprose.vm.runner import ProgramInvalid, run_file

RECURSIVE = """\
block shrink(chunk, depth):
  let parts = session "Split {chunk} at {depth}"
  if **small enough**:
    output parts
  else:
    output do shrink(parts, depth)

let result = do shrink("text", 1)
"""


# Every test here runs on both engines (tests/vm/conftest.py).
pytestmark = pytest.mark.both_engines


def test_recursion_gets_a_fresh_execution_id_per_invocation(run_prose: Any) -> None:
    backend = OfflineBackend(conditions={"small enough": [False, False, True]})
    run = run_prose(RECURSIVE, backend=backend)
    assert run.result.status == "success"
    pushes = [e for e in run.events if isinstance(e, ev.FramePush)]
    assert [(p.execution_id, p.depth, p.parent) for p in pushes] == [
        (1, 1, None),
        (2, 2, 1),
        (3, 3, 2),
    ]
    pops = [e.execution_id for e in run.events if isinstance(e, ev.FramePop)]
    assert pops == [3, 2, 1]
    bindings = sorted(p.name for p in (run.run_dir / "bindings").iterdir())
    assert bindings == ["parts__1.md", "parts__2.md", "parts__3.md", "result.md"]
    text = (run.run_dir / "bindings" / "parts__2.md").read_text(encoding="utf-8")
    assert text.startswith("# parts\n\nkind: let\nexecution_id: 2\n\nsource:\n")
    assert run.state()[:3] == ["2→ block:shrink#1", "2→ parts ✓", "2→ block:shrink#2"]
    assert "[Frame+] Entering block: shrink (execution_id: 2, depth: 2)" in run.text
    assert "      Parent: execution_id 1" in run.text
    # The innermost result travels back out.
    assert run.binding("result").startswith("[dry run] Split [dry run] Split [dry run] Split")


def test_recursion_stops_at_the_depth_limit(run_prose: Any) -> None:
    run = run_prose(
        RECURSIVE,
        backend=OfflineBackend(conditions={"small enough": False}),
        options=Options(max_depth=5, jitter=False),
    )
    assert run.result.status == "error"
    assert run.result.error == "block 'shrink' nested deeper than 5 invocations"
    assert len(run.prompts) == 5
    pushes = sum(isinstance(e, ev.FramePush) for e in run.events)
    pops = sum(isinstance(e, ev.FramePop) for e in run.events)
    assert pushes == pops == 5


def test_do_blocks_and_arrows_run_in_order(run_prose: Any) -> None:
    run = run_prose(
        """\
        block greet:
          session "Hello"
        do greet
        let seq = session "A" -> session "B"
        do:
          session "C"
        """
    )
    assert run.prompts == ["Hello", "A", "B", "C"]
    assert run.binding("seq") == "[dry run] B (agent: -; model: default)"


HELPER = """\
input topic: "What to look up"
let found = session "Find facts about {topic}"
output facts = found
output verdict = "fine"
"""


def test_a_local_program_call_runs_it_with_keyword_inputs(run_prose: Any) -> None:
    run = run_prose(
        """\
        use "./helper" as helper
        let r = helper(topic: "bees")
        let { facts, verdict } = helper(topic: "ants")
        session "Use {r.verdict} and {facts}"
        """,
        files={"helper.prose": HELPER},
    )
    assert run.result.status == "success"
    assert run.prompts == [
        "Find facts about bees",
        "Find facts about ants",
        "Use fine and [dry run] Find facts about ants (agent: -; model: default)",
    ]
    imports = sorted(p.name for p in (run.run_dir / "imports").iterdir())
    assert imports == ["local--helper-1", "local--helper-2"]
    nested = run.run_dir / "imports" / "local--helper-1"
    assert (nested / "program.prose").read_text(encoding="utf-8") == HELPER
    assert (nested / "bindings" / "facts.md").is_file()
    assert "[Import] Invoking ./helper as helper" in run.text
    # The callee's narration shows nested under the call.
    assert '   [Binding] input topic = "bees"' in run.text


FANNING = """\
input topic: "What to study"
let notes = parallel for x in ["a", "b", "c"]:
  session "Study {x} of {topic}"
output studied = notes
"""


def test_a_called_program_fans_out_as_the_run_would(run_prose: Any) -> None:
    run = run_prose(
        """\
        use "./fanning" as fanning
        let r = fanning(topic: "bees")
        session "Use {r.studied}"
        """,
        files={"fanning.prose": FANNING},
    )
    assert run.result.status == "success"
    # (On the dbos engine the items are workflows: the order they reach the model may vary.)
    assert sorted(run.prompts[:3]) == [f"Study {x} of bees" for x in "abc"]
    assert run.prompts[3].startswith("Use [") and "Study c of bees" in run.prompts[3]
    nested = run.run_dir / "imports" / "local--fanning-1"
    notes = (nested / "bindings" / "notes.md").read_text(encoding="utf-8")
    assert notes.index("Study a") < notes.index("Study b") < notes.index("Study c")
    assert '   [Binding] input topic = "bees"' in run.text


def test_a_program_with_errors_does_not_run(tmp_path: Path) -> None:
    path = tmp_path / "bad.prose"
    path.write_text('session "A"\nlet x = session: nobody\n', encoding="utf-8")
    with pytest.raises(ProgramInvalid) as invalid:
        asyncio.run(run_file(path))
    assert any(d.is_error for d in invalid.value.diagnostics)


def test_output_ends_a_block_and_arithmetic_counts_down(run_prose: Any) -> None:
    run = run_prose(
        """\
        block refine(content, depth):
          if depth <= 0:
            output content
          let better = session "Improve {content} ({depth} left)"
          output do refine(better, depth - 1)

        let result = do refine("draft", 2)
        """
    )
    assert run.result.status == "success"
    assert run.prompts == [
        "Improve draft (2 left)",
        "Improve [dry run] Improve draft (2 left) (agent: -; model: default) (1 left)",
    ]
    # No judge call: a comparison is decided by the VM, not the backend.
    assert [c[0] for c in run.calls] == ["session", "session"]


def test_a_blocks_bindings_stay_visible_to_its_caller(run_prose: Any) -> None:
    run = run_prose(
        """\
        block sweep(topic):
          parallel:
            docs = session "Docs for {topic}"
            code = session "Code for {topic}"

        do sweep("auth")
        session "Plan from {docs}"
          context: { docs, code }
        """
    )
    assert run.prompts[-1] == "Plan from [dry run] Docs for auth (agent: -; model: default)"
    assert (run.run_dir / "bindings" / "docs__1.md").is_file()


def test_object_context_entries_and_json_fields(run_prose: Any) -> None:
    from tests.vm.vm_support import Answering

    run = run_prose(
        """\
        let scored = session "Score it"
        session "Next"
          context: { verdict: scored.verdict, raw: scored }
        """,
        backend=Answering({"Score it": '{"verdict": "good", "score": 90}'}),
    )
    assert run.backend.sessions[-1].context == (
        ("verdict", "good"),
        ("raw", '{"verdict": "good", "score": 90}'),
    )
