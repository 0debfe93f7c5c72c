from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from openprose.vm import events as ev
from openprose.vm.rundir import RunDirectory, new_run_id, state_line, write_atomic


def test_run_ids_have_the_documented_form() -> None:
    assert re.fullmatch(r"\d{8}-\d{6}-[a-z0-9]{6}", new_run_id())
    assert new_run_id(0).startswith("19700101-000000-")


def test_a_new_run_directory(tmp_path: Path) -> None:
    run = RunDirectory.create(tmp_path, 'session "A"\n', "a.prose", run_id="20260115-143052-a7b3c9")
    assert (run.path / "program.prose").read_text() == 'session "A"\n'
    assert (run.path / "state.md").read_text() == "# run:20260115-143052-a7b3c9 a.prose\n\n"
    assert (run.path / "bindings").is_dir()
    run.write_binding("result", "let", 'let result = session "P"', "value", 43)
    assert (run.path / "bindings" / "result__43.md").read_text() == (
        '# result\n\nkind: let\nexecution_id: 43\n\nsource:\n```prose\nlet result = session "P"'
        "\n```\n\n---\n\nvalue\n"
    )
    with pytest.raises(FileExistsError):
        RunDirectory.create(tmp_path, "", "a.prose", run_id="20260115-143052-a7b3c9")


def test_state_markers() -> None:
    assert state_line(ev.Binding(step="1", name="research")) == "1→ research ✓"
    assert state_line(ev.Binding(step="5", name="anon_001", binding_kind="anonymous")) == "5→ ✓"
    assert state_line(ev.ParallelEnter(step="2", branches=["a", "b"])) == "2→ ∥start a,b"
    assert state_line(ev.ParallelJoin(step="2")) == "2→ ∥done"
    assert state_line(ev.LoopExit(step="3", reason="**done**", iteration=2, maximum=5)) == (
        "3→ loop:2/5 exit(**done**)"
    )
    assert state_line(ev.FramePush(step="4", block="p", execution_id=43)) == "4→ block:p#43"
    assert state_line(ev.FramePop(step="4", execution_id=43)) == "4→ #43 done"
    assert state_line(ev.Retry(step="5", attempt=2, maximum=3)) == "5→ retry:2/3"
    assert state_line(ev.ProgramEnd(ts=0)) == "---end 1970-01-01T00:00:00Z"
    assert state_line(ev.ProgramEnd(ts=0, status="error", error="x")) == (
        "---error 1970-01-01T00:00:00Z x"
    )
    assert state_line(ev.Position(step="1")) is None


def test_atomic_writes_leave_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "b.md"
    write_atomic(target, "one")
    write_atomic(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in tmp_path.iterdir()] == ["b.md"]


def test_a_staging_left_by_a_dead_process_is_removed_by_the_next(tmp_path: Path) -> None:
    import subprocess
    import sys

    from openprose.vm.rundir import staged_directory

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    left = tmp_path / f".20260101-000000-aaaaaa.{int(dead.stdout)}.new"
    left.mkdir()
    (left / "state.md").write_text("half made", encoding="utf-8")
    live = tmp_path / f".20260101-000000-bbbbbb.{os.getppid()}.new"  # a process still alive
    live.mkdir()
    staging = staged_directory(tmp_path, "20260101-000000-cccccc")
    assert staging.name == f".20260101-000000-cccccc.{os.getpid()}.new"
    assert not left.exists() and live.exists()
