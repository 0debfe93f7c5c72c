"""Programs run with each state backend: the same outputs everywhere, every binding in the
backend's record, and a stopped run resumed without asking the model again."""

from __future__ import annotations

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import Options
from openprose.vm.state import Catalog
from tests.vm.state.state_support import RunInState, binding_text
from tests.vm.vm_support import Recording

PROGRAM = """\
input topic: "t"
let a = session "One {topic}"
parallel:
  b = session "Two"
  c = session "Three"
block shout(x):
  let y = session "Shout {x}"
do shout("hi")
output out = session "Four"
  context: [a, b, c]
"""


def test_a_program_runs_alike_on_every_backend(catalog: Catalog, run_in_state: RunInState) -> None:
    run = run_in_state(catalog, PROGRAM, {"topic": "bees"})
    assert run.result.status == "success", run.result.error
    assert run.result.outputs["out"].startswith("[dry run] Four")
    assert binding_text(run.store, "topic") == "bees"
    for name in ("a", "b", "c", "out"):
        text = binding_text(run.store, name)
        assert text is not None and text.startswith("[dry run]"), (name, text)
    assert (binding_text(run.store, "y", 1) or "").startswith("[dry run] Shout hi")
    if catalog.state != "in-context":
        assert catalog.info(run.result.run_id).status == "completed"


def test_a_stopped_run_resumes_without_asking_again(
    durable_catalog: Catalog, run_in_state: RunInState
) -> None:
    first = Recording(OfflineBackend())
    stopped = run_in_state(
        durable_catalog,
        PROGRAM,
        {"topic": "bees"},
        backend=first,
        options=Options(max_sessions=3, jitter=False),
    )
    assert stopped.result.status == "error"
    assert [c[1] for c in first.calls] == ["One bees", "Two", "Three"]
    stopped.store.close()
    second = Recording(OfflineBackend())
    resumed = run_in_state(
        durable_catalog,
        PROGRAM,
        backend=second,
        resume=durable_catalog.open(stopped.result.run_id),
    )
    assert resumed.result.status == "success", resumed.result.error
    assert [c[1] for c in second.calls] == ["Shout hi", "Four"]
    assert binding_text(resumed.store, "topic") == "bees"
    assert durable_catalog.info(stopped.result.run_id).status == "completed"
