"""Two runs (two real processes) updating one project agent at once: every segment is
kept under a number of its own, and memory.md is never seen torn."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from openprose.vm.memory import AgentMemories, split_memory

RECORDS = 40  # per process

WORKER = """
import sys, time
from pathlib import Path
from openprose.vm.memory import AgentMemories

project, name, state, go = Path(sys.argv[1]), sys.argv[2], sys.argv[3], Path(sys.argv[4])
memories = AgentMemories(
    project / ".prose" / "runs" / name, project, home=project / "home", state=state
)
(go.parent / f"ready-{name}").touch()
while not go.exists():
    time.sleep(0.001)
for i in range(int(sys.argv[5])):
    memories.current.clear()  # read what the other process wrote, as a new run would
    memories.read("shared", "project")
    memories.record("shared", "project", f"{name} {i}", f"{name} answer {i} " + "x" * 2000,
                    0.0, key=f"step/{i}")
"""


def hammer(project: Path, state: str) -> list[str]:
    """Two processes record RECORDS segments each; returns every memory.md read meanwhile
    (files only: a database has no file to tear)."""
    go = project / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(project), name, state, str(go), str(RECORDS)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("run-a", "run-b")
    ]
    seen: list[str] = []
    memory = project / ".prose" / "agents" / "shared" / "memory.md"
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if state == "filesystem":
                with contextlib.suppress(FileNotFoundError):
                    seen.append(memory.read_text(encoding="utf-8"))
            time.sleep(0.0005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    while not all((project / f"ready-{name}").exists() for name in ("run-a", "run-b")):
        assert all(worker.poll() is None for worker in workers), "a worker died"
        time.sleep(0.001)
    go.touch()
    try:
        for worker in workers:
            _, errors = worker.communicate(timeout=120)
            assert worker.returncode == 0, errors
    finally:
        done.set()
        watcher.join()
    return seen


ANSWER = re.compile(r"(run-[ab]) answer (\d+) x{2000}")


@pytest.mark.parametrize("state", ["filesystem", "sqlite"])
def test_two_processes_never_share_a_number_or_tear_memory(tmp_path: Path, state: str) -> None:
    seen = hammer(tmp_path, state)
    memories = AgentMemories(tmp_path / "elsewhere", tmp_path, home=tmp_path / "home", state=state)
    report = memories.describe("shared", "project", include_data=True)
    segments = report["data"]["segments"]
    assert [s["number"] for s in segments] == list(range(1, 2 * RECORDS + 1))
    recorded = sorted((s["run"], int(s["step"].split("/")[1])) for s in segments)
    assert recorded == [(n, i) for n in ("run-a", "run-b") for i in range(RECORDS)]
    for segment in segments:
        match = ANSWER.fullmatch(segment["summary"])
        assert match and segment["prompt"] == f"{match.group(1)} {match.group(2)}"
    # memory.md holds the answer of the last segment, whole.
    understanding, history = split_memory(report["data"]["memory"])
    assert understanding == segments[-1]["summary"] and history == ""
    for text in seen:
        assert text.startswith("# Agent Memory: shared\n\n## Current Understanding\n\n")
        assert ANSWER.fullmatch(split_memory(text)[0]) and text.endswith("\n")
    if state == "filesystem":
        assert seen, "the watcher read memory.md at least once"
