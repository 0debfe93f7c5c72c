"""Resuming a run: the steps it took are answered from its journal, the rest run live."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from vm_support import Recording

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import Options
from openprose.vm.rundir import RunDirectory
from openprose.vm.runner import run_file

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
    run_dir = RunDirectory.open(stopped.run_dir)
    assert json.loads((run_dir.path / "inputs.json").read_text()) == {"topic": "bees"}

    second_backend = Recording(OfflineBackend())
    resumed = asyncio.run(run_file(path, backend=second_backend, resume=run_dir))
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
    state = (run_dir.path / "state.md").read_text(encoding="utf-8").splitlines()
    resume_at = next(i for i, line in enumerate(state) if line.startswith("---resume "))
    assert state[resume_at - 1].startswith("---error ")
    assert state[-1].startswith("---end ")
