"""What only the in-context backend does: the narration is the record (spec/state/
in-context.md), nothing is written anywhere, and programs beyond the document's table are
warned about."""

from __future__ import annotations

import gc
import textwrap
from pathlib import Path

import pytest

from openprose.syntax import parse
from openprose.vm import events as ev
from openprose.vm.state import StateError
from openprose.vm.state.in_context import InContextCatalog, InContextStore, shape, thresholds
from tests.vm.state.state_support import RunInState


@pytest.fixture
def store() -> InContextStore:
    return InContextCatalog().create('let a = session "One"\n', "main.prose", {})


def test_the_narration_uses_the_documents_markers(store: InContextStore) -> None:
    for event in [
        ev.Binding(step="1", name="research"),
        ev.ParallelEnter(step="2", branches=["a", "b", "c"]),
        ev.ParallelBranch(step="2a", level=0, branch="a"),
        ev.ParallelBranch(step="2", branch="b", status="failed"),
        ev.ParallelJoin(step="2"),
        ev.LoopIteration(step="3", iteration=1, maximum=3),
        ev.Binding(step="3", level=1, name="anon_001", binding_kind="anonymous"),
        ev.LoopExit(step="3", iteration=2, maximum=3, reason="**complete**"),
        ev.FramePush(step="4", block="process", execution_id=43),
        ev.Binding(step="4", level=1, name="result", execution_id=43),
        ev.FramePop(step="4", block="process", execution_id=43),
        ev.Try(step="5"),
        ev.Failure(step="5", level=1, message="timeout"),
        ev.Try(step="5", phase="catch"),
        ev.Try(step="5", phase="finally"),
        ev.Binding(step="6", name="topic", binding_kind="input"),
        ev.ProgramEnd(step="0"),
    ]:
        store.record(event)
    assert store.lines == [
        "1→ research ✓",
        "∥ [a b c]",
        "∥ [a✓ b✗ c→] done",
        "loop:1/3",
        "  3→ ✓",
        "loop:2/3 exit(**complete**)",
        "#43 process",
        "  4→ result ✓",
        "#43 done",
        "try→",
        "  5→ ✗ timeout",
        "catch→",
        "finally→",
        "---end",
    ]


def test_values_are_kept_by_value(store: InContextStore) -> None:
    value = ["one", {"two": 2}]
    assert store.commit_binding("1", "a", "let", "let a = ...", value, None)
    assert store.binding("a") is value
    assert not store.commit_binding("1", "a", "let", "let a = ...", value, None)


def test_a_called_programs_narration_nests_under_its_call(store: InContextStore) -> None:
    store.record(ev.Import(step="2", source="./lib.prose", alias="lib"))
    called = store.child("2", "local--lib-1", "output y = 1\n", "lib.prose")
    called.record(ev.Binding(step="1", name="y", binding_kind="output"))
    called.record(ev.ProgramEnd(step="0"))
    store.record(ev.Import(step="2", source="./lib.prose", alias="lib", status="returned"))
    assert store.lines == ["use ./lib.prose → lib", "  1→ y ✓", "  ---end", "lib ✓"]
    assert called.path is None and called.lines is store.lines
    # The called program's end is not the run's.
    assert store.info().status == "running"


def test_a_program_runs_in_context_and_writes_nothing(
    tmp_path: Path, run_in_state: RunInState
) -> None:
    catalog = InContextCatalog()
    run = run_in_state(
        catalog,
        """\
        input topic: "t"
        let a = session "One {topic}"
        parallel:
          b = session "Two"
          c = session "Three"
        output out = session "Four"
          context: [a, b, c]
        """,
        {"topic": "bees"},
    )
    assert run.result.status == "success" and run.result.run_dir is None
    assert run.result.outputs["out"].startswith("[dry run] Four")
    assert isinstance(run.store, InContextStore)
    assert run.store.lines == [
        "2→ a ✓",
        "∥ [b c]",
        "3a→ b ✓",
        "3b→ c ✓",
        "∥ [b✓ c✓] done",
        "4→ out ✓",
        "---end",
    ]
    assert run.store.binding("topic") == "bees"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["main.prose"]
    assert catalog.runs() == []


# ------------------------------------------------------------------ thresholds


def program(text: str) -> list[str]:
    return thresholds(parse(textwrap.dedent(text)))


def test_a_small_program_is_fine_in_context() -> None:
    assert (
        program(
            """\
            use "a/one" as one
            use "a/two" as two
            agent writer:
              model: sonnet
            let research = session: writer
              prompt: "Research"
            parallel:
              a = session "A"
              b = session "B"
              c = session "C"
              d = session "D"
            loop until **done** (max: 3):
              if **good**:
                session "Deep enough"
            """
        )
        == []
    )


def test_thirty_statements_are_too_many() -> None:
    lines = [f'session "Step {n}"' for n in range(30)]
    assert program("\n".join(lines[:29]) + "\n") == []
    (warning,) = program("\n".join(lines) + "\n")
    assert "30 statements" in warning and "fewer than 30" in warning


def test_five_parallel_branches_are_too_many() -> None:
    (warning,) = program("parallel:\n" + "".join(f'  b{n} = session "{n}"\n' for n in range(5)))
    assert "5 branches" in warning
    (warning,) = program('parallel for x in ["a", "b", "c", "d", "e", "f"]:\n  session "x"\n')
    assert "6 branches" in warning
    # A collection known only at run time is not counted.
    assert program('let xs = session "List"\nparallel for x in xs:\n  session "x"\n') == []


def test_three_imports_are_too_many() -> None:
    (warning,) = program('use "a/one" as one\nuse "a/two" as two\nuse "a/three" as three\n')
    assert "imports 3 programs" in warning


def test_three_levels_of_nesting_are_too_deep() -> None:
    (warning,) = program(
        """\
        loop until **done** (max: 3):
          if **ready**:
            repeat 2:
              session "Too deep"
        """
    )
    assert "nested 3 levels" in warning
    # An else, catch or option opens a level like the block it belongs to.
    assert (
        shape(
            parse(
                textwrap.dedent(
                    """\
                    try:
                      session "A"
                    catch as e:
                      if **bad**:
                        session "B"
                      else:
                        session "C"
                    choice **best**:
                      option "one":
                        session "D"
                    """
                )
            )
        ).depth
        == 2
    )


def test_the_catalogue_answers_for_a_run_only_while_it_is_held() -> None:
    catalog = InContextCatalog()
    store = catalog.create('session "x"\n', "main.prose", {})
    run_id = store.run_id
    store.record(ev.ProgramEnd(step="0"))
    store.close()
    assert catalog.info(run_id).status == "completed"
    del store
    gc.collect()
    with pytest.raises(StateError, match="no run"):
        catalog.info(run_id)
