"""Resuming a run: the steps it took are answered from its journal, the rest run live."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from openprose.vm.backends.base import SessionRequest, SessionResult
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import Options
from openprose.vm.runner import run_file
from openprose.vm.state.filesystem import FilesystemCatalog
from tests.vm.vm_support import Recording

PROGRAM = """\
input topic: "t"
let a = session "One {topic}"
parallel:
  b = session "Two"
  c = session "Three"
loop until **done** (max: 3):
  session "Four"
output out = session "Five"
  context: [a, b, c]
"""


def test_a_stopped_run_resumes_without_asking_again(tmp_path: Path) -> None:
    path = tmp_path / "main.prose"
    path.write_text(PROGRAM, encoding="utf-8")
    runs = tmp_path / ".prose" / "runs"
    first_backend = Recording(OfflineBackend())
    stopped = asyncio.run(
        run_file(
            path,
            {"topic": "bees"},
            backend=first_backend,
            runs_root=runs,
            options=Options(max_sessions=3),
        )
    )
    assert stopped.status == "error"
    assert [c[1] for c in first_backend.calls if c[0] == "session"] == ["One bees", "Two", "Three"]
    assert stopped.run_dir is not None
    assert json.loads((stopped.run_dir / "inputs.json").read_text()) == {"topic": "bees"}
    bindings_before = {p.name: p.stat().st_mtime_ns for p in stopped.run_dir.glob("bindings/*")}
    store = FilesystemCatalog(runs).open(stopped.run_id)

    second_backend = Recording(OfflineBackend())
    resumed = asyncio.run(run_file(path, backend=second_backend, resume=store))
    assert resumed.status == "success"
    assert resumed.run_id == stopped.run_id
    # Only what the first run never did reaches the backend (it had judged the loop's
    # first check before the limit stopped it).
    assert second_backend.calls == [
        ("session", "Four"),
        ("judge", "done", "until", 2),
        ("session", "Five"),
    ]
    assert resumed.outputs["out"].startswith("[dry run] Five")
    state = (stopped.run_dir / "state.md").read_text(encoding="utf-8").splitlines()
    resume_at = next(i for i, line in enumerate(state) if line.startswith("---resume "))
    assert state[resume_at - 1].startswith("---error ")
    assert state[-1].startswith("---end ")
    # The replayed steps are narrated once: after the resume marker, only what is new.
    assert state[resume_at + 1 :] == [
        "4→ ✓",
        "4→ loop:1/3 exit(**done**)",
        "5→ out ✓",
        state[-1],
    ]
    assert [line for line in state if line.endswith(" a ✓")] == ["2→ a ✓"]
    # Bindings the first run committed are not written again.
    after = {p.name: p.stat().st_mtime_ns for p in stopped.run_dir.glob("bindings/*")}
    assert {n: after[n] for n in bindings_before} == bindings_before
    assert FilesystemCatalog(runs).info(stopped.run_id).status == "completed"


def test_the_run_summary_names_the_failing_statement(tmp_path: Path) -> None:
    path = tmp_path / "main.prose"
    path.write_text('session "Fine"\nthrow "boom"\n', encoding="utf-8")
    runs = tmp_path / ".prose" / "runs"
    failed = asyncio.run(run_file(path, backend=OfflineBackend(), runs_root=runs))
    assert failed.status == "error"
    info = FilesystemCatalog(runs).info(failed.run_id)
    assert (info.status, info.failed_statement, info.error) == ("failed", 'throw "boom"', "boom")
    assert (info.steps, info.sessions) == (1, 1)


def test_a_committed_binding_whose_file_was_lost_is_written_again(tmp_path: Path) -> None:
    path = tmp_path / "main.prose"
    path.write_text(PROGRAM, encoding="utf-8")
    runs = tmp_path / ".prose" / "runs"
    stopped = asyncio.run(
        run_file(path, {"topic": "bees"}, runs_root=runs, options=Options(max_sessions=3))
    )
    assert stopped.run_dir is not None
    lost = stopped.run_dir / "bindings" / "a.md"
    kept = lost.read_text(encoding="utf-8")
    lost.unlink()  # as if a power cut undid the rename
    store = FilesystemCatalog(runs).open(stopped.run_id)
    resumed = asyncio.run(run_file(path, resume=store))
    assert resumed.status == "success"
    assert lost.read_text(encoding="utf-8") == kept


class _SlowOn(OfflineBackend):
    """The offline backend, taking a model's time for the sessions named."""

    def __init__(self, slow: set[str]) -> None:
        super().__init__()
        self.slow = slow

    async def run_session(self, request: SessionRequest) -> SessionResult:
        if request.prompt in self.slow:
            await asyncio.sleep(0.05)
        return await super().run_session(request)


def test_a_race_decided_before_the_run_stopped_is_not_run_again(tmp_path: Path) -> None:
    path = tmp_path / "main.prose"
    path.write_text(
        'let x = parallel ("first"):\n  a = session "A"\n  b = session "B"\n'
        'output out = session "After"\n  context: x\n',
        encoding="utf-8",
    )
    runs = tmp_path / ".prose" / "runs"
    stopped = asyncio.run(
        run_file(path, backend=_SlowOn({"A"}), runs_root=runs, options=Options(max_sessions=2))
    )
    assert stopped.status == "error"  # B won the race; the limit stopped "After"
    second = Recording(OfflineBackend())  # here A would win: it answers at once
    store = FilesystemCatalog(runs).open(stopped.run_id)
    resumed = asyncio.run(run_file(path, backend=second, resume=store))
    assert resumed.status == "success", resumed.error
    assert second.calls == [("session", "After")]  # the race is not run again
    [(name, value)] = [c for c in second.sessions[0].context]
    assert (name, value.startswith("[dry run] B")) == ("x", True)
