"""Remote programs on the dbos engine: a fetched program, and the remote programs it uses,
run attached or by a worker (child processes, a registry on 127.0.0.1 over HTTPS with the
test's certificate, the offline backend)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Fixtures: importing them makes them visible to this module's tests.
from tests.cli.test_worker_command import _status, _wait_for, workers  # noqa: F401
from tests.support.extras import require
from tests.vm.test_remote import Registry, registry  # noqa: F401

require("dbos", "pip install 'openprose[dbos]'")

STUDY = 'input topic: "What to study"\noutput found = session "Study {topic}"\n'
CALLER = (
    'use "carol/study" as study\n'
    'let bees = study(topic: "bees")\n'
    'output both = "{bees.found} / done"\n'
)


def _serve(registry: Registry) -> None:  # noqa: F811
    registry.serve("/carol/study", STUDY)
    registry.serve("/carol/caller", CALLER)


def test_an_attached_run_of_a_fetched_program_uses_remote_programs(
    prose: Any,
    tmp_path: Path,
    registry: Registry,  # noqa: F811
) -> None:
    _serve(registry)
    done = prose(
        "run", "carol/caller", "--allow-remote", "--engine", "dbos", "--json", **registry.env()
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["outputs"]["both"].endswith("Study bees (agent: -; model: default) / done")
    run_dir = Path(result["run_dir"])
    assert json.loads((run_dir / "source.json").read_text("utf-8"))["source"] == "carol/caller"
    called = run_dir / "imports" / "carol--study"
    assert (called / "program.prose").read_text(encoding="utf-8") == STUDY


def test_a_worker_runs_a_queued_fetched_program_as_it_was_fetched(
    prose: Any,
    tmp_path: Path,
    registry: Registry,  # noqa: F811
    workers: Callable[..., Any],  # noqa: F811
) -> None:
    _serve(registry)
    env = registry.env()
    done = prose("run", "carol/caller", "--allow-remote", "--engine", "dbos", "--detach", **env)
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip()
    # The program the registry serves now is not the one the run was asked for.
    registry.serve("/carol/caller", 'output both = "changed"\n')
    workers(**env)
    _wait_for(lambda: _status(prose, run_id) == "completed", 60)
    shown = prose("runs", "show", run_id, "--json")
    assert shown.returncode == 0, shown.stderr
    [both] = [b for b in json.loads(shown.stdout)["bindings"] if b["name"] == "both"]
    assert str(both["value"]).endswith("Study bees (agent: -; model: default) / done")
    run_dir = tmp_path / ".prose" / "runs" / run_id
    assert (run_dir / "program.prose").read_text(encoding="utf-8") == CALLER
    assert (run_dir / "imports" / "carol--study" / "bindings" / "found.md").is_file()


def test_a_queued_run_not_allowed_remote_programs_is_refused_them_by_the_worker(
    prose: Any,
    tmp_path: Path,
    registry: Registry,  # noqa: F811
    workers: Callable[..., Any],  # noqa: F811
) -> None:
    _serve(registry)
    (tmp_path / "main.prose").write_text(CALLER, encoding="utf-8")
    done = prose("run", "main.prose", "--engine", "dbos", "--detach", **registry.env())
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip()
    workers(**registry.env())
    _wait_for(lambda: _status(prose, run_id) == "failed", 60)
    shown = json.loads(prose("runs", "show", run_id, "--json").stdout)
    assert "remote programs need --allow-remote" in shown["error"]
