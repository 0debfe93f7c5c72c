"""``prose state describe|reset|compact`` in a child process, on runs made by ``prose run`` on
the offline backend."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

PROGRAM = """\
agent advisor:
  model: opus
  persist: project
  prompt: "Advise"

agent scribe:
  model: sonnet
  persist: true
  prompt: "Write down"

let notes = session "Take notes"
session: advisor
  prompt: "Advice one"
resume: advisor
  prompt: "Advice two"
resume: advisor
  prompt: "Advice three"
let minutes = session: scribe
  prompt: "Minutes"
"""
REPORT_FIELDS = [
    "operation",
    "run_id",
    "agent",
    "stores",
    "cleared",
    "compacted",
    "missing",
    "errors",
]


def make_run(prose: Any, tmp_path: Path, *extra: str) -> str:
    (tmp_path / "main.prose").write_text(PROGRAM, encoding="utf-8")
    done = prose("run", "main.prose", *extra, HOME=str(tmp_path / "home"))
    assert done.returncode == 0, done.stderr
    match = re.search(r"run (\d{8}-\d{6}-[a-z0-9]{6})", done.stderr)
    assert match, done.stderr
    return match.group(1)


def state(prose: Any, tmp_path: Path, *args: str) -> Any:
    return prose("state", *args, HOME=str(tmp_path / "home"))


def test_describe_a_run_as_text_and_json(prose: Any, tmp_path: Path) -> None:
    run_id = make_run(prose, tmp_path)
    done = state(prose, tmp_path, "describe", run_id)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"describe run {run_id}"
    assert [line.split()[0] for line in lines[1:6]] == [
        "bindings", "narration", "journal", "agents", "imports",
    ]  # fmt: skip
    assert re.search(r"\n  journal +\d+ steps, \d+ commits  \(", done.stdout)
    assert lines[-1] == "missing: imports"
    report = json.loads(state(prose, tmp_path, "describe", run_id, "--json").stdout)
    assert list(report) == REPORT_FIELDS
    assert report["operation"] == "describe" and report["run_id"] == run_id
    assert all(store["data"] is None for store in report["stores"])
    full = json.loads(state(prose, tmp_path, "describe", run_id, "--json", "--include-data").stdout)
    bindings = next(s for s in full["stores"] if s["name"] == "bindings")
    assert {b["name"] for b in bindings["data"]} >= {"notes", "minutes"}


def test_describe_an_agent_and_the_project(prose: Any, tmp_path: Path) -> None:
    make_run(prose, tmp_path)
    report = json.loads(state(prose, tmp_path, "describe", "--agent", "advisor", "--json").stdout)
    assert report["agent"] == "advisor" and report["run_id"] is None
    project = next(s for s in report["stores"] if s["name"] == "memory:project")
    assert project["exists"] and project["counts"]["segments"] == 3
    whole = state(prose, tmp_path, "describe")
    assert whole.returncode == 0 and whole.stdout.startswith("describe the project")


def test_usage_errors(prose: Any, tmp_path: Path) -> None:
    run_id = make_run(prose, tmp_path)
    near = state(prose, tmp_path, "describe", run_id[:-1] + "_")
    assert near.returncode == 2 and f"did you mean '{run_id}'?" in near.stderr
    both = state(prose, tmp_path, "describe", run_id, "--agent", "advisor")
    assert both.returncode == 2 and "not both" in both.stderr
    assert state(prose, tmp_path, "reset", "--yes").returncode == 2
    assert state(prose, tmp_path, "compact", "--strategy", "recent").returncode == 2
    wrong = state(
        prose,
        tmp_path,
        "compact",
        "--agent",
        "advisor",
        "--strategy",
        "recent",
        "--max-tokens",
        "9",
    )
    assert wrong.returncode == 2 and "--max-tokens goes with --strategy tokens" in wrong.stderr
    bad = state(prose, tmp_path, "describe", "--agent", "../x")
    assert bad.returncode == 2 and "not an agent name" in bad.stderr


def test_reset_a_run_needs_yes_then_clears_it(prose: Any, tmp_path: Path) -> None:
    run_id = make_run(prose, tmp_path)
    steps = json.loads(prose("runs", "show", run_id, "--json").stdout)["steps"]
    refused = state(prose, tmp_path, "reset", run_id)
    assert refused.returncode == 2 and "needs --yes" in refused.stderr
    done = state(prose, tmp_path, "reset", run_id, "--yes", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["cleared"] == ["bindings", "narration", "journal", "agents"]
    assert report["errors"] == []
    after = json.loads(state(prose, tmp_path, "describe", run_id, "--json").stdout)
    assert after["missing"] == ["bindings", "narration", "journal", "agents", "imports"]
    # The run is still there; resumed, it starts over.
    again = prose("runs", "resume", run_id, HOME=str(tmp_path / "home"))
    assert again.returncode == 0, again.stderr
    shown = json.loads(prose("runs", "show", run_id, "--json").stdout)
    assert shown["status"] == "completed" and shown["steps"] == steps


def test_a_store_error_exits_1_and_clears_nothing(prose: Any, tmp_path: Path) -> None:
    run_id = make_run(prose, tmp_path)
    run_dir = tmp_path / ".prose" / "runs" / run_id
    for name in ("journal.db-wal", "journal.db-shm"):
        (run_dir / name).unlink(missing_ok=True)
    (run_dir / "journal.db").write_bytes(b"not a database" * 100)
    described = state(prose, tmp_path, "describe", run_id)
    assert described.returncode == 1
    assert "prose: error: journal: cannot read" in described.stderr
    reset = state(prose, tmp_path, "reset", run_id, "--yes", "--json")
    assert reset.returncode == 1
    report = json.loads(reset.stdout)
    assert report["cleared"] == [] and report["errors"][-1]["message"].startswith("refused")
    assert (run_dir / "bindings" / "notes.md").is_file()


def test_reset_all_and_an_agent(prose: Any, tmp_path: Path) -> None:
    run_id = make_run(prose, tmp_path)
    agent = json.loads(
        state(
            prose, tmp_path, "reset", "--agent", "advisor", "--scope", "project", "--yes", "--json"
        ).stdout
    )
    assert agent["cleared"] == ["memory:project"]
    make_run(prose, tmp_path)
    everything = state(prose, tmp_path, "reset", "--all", "--yes", "--json")
    assert everything.returncode == 0, everything.stderr
    report = json.loads(everything.stdout)
    assert f"{run_id}/journal" in report["cleared"]
    assert "agent advisor/memory:project" in report["cleared"]


def test_compact_an_agent_and_a_run(prose: Any, tmp_path: Path) -> None:
    run_id = make_run(prose, tmp_path)
    done = state(
        prose,
        tmp_path,
        "compact",
        "--agent",
        "advisor",
        "--strategy",
        "recent",
        "--max-messages",
        "1",
    )
    assert done.returncode == 0, done.stderr
    assert "compacted: memory:project" in done.stdout
    memory = (tmp_path / ".prose" / "agents" / "advisor" / "memory.md").read_text(encoding="utf-8")
    assert "Advice one" in memory
    run = json.loads(
        state(prose, tmp_path, "compact", run_id, "--strategy", "tokens", "--json").stdout
    )
    assert run["operation"] == "compact" and run["compacted"] == []  # one segment: nothing to fold
    assert [s["name"] for s in run["stores"]] == ["agents/scribe"]
