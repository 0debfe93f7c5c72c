"""Remote programs on the dbos engine: a fetched program, and the remote programs it uses,
run attached or by a worker (child processes, a registry on 127.0.0.1 over HTTPS with the
test's certificate, the offline backend)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Fixtures: importing them makes them visible to this module's tests.
from tests.cli.test_worker_command import _log, _status, _wait_for, workers  # noqa: F401
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


FANNING = (
    'use "carol/study" as study\n'
    'let found = parallel for x in ["bees", "ants", "moths"]:\n'
    "  study(topic: x)\n"
    "output all = found\n"
)


def test_items_calling_a_remote_program_travel_and_fetch_it_where_they_run(
    prose: Any,
    tmp_path: Path,
    registry: Registry,  # noqa: F811
    workers: Callable[..., Any],  # noqa: F811
) -> None:
    from openprose.vm.engines import dbos_engine as engine

    _serve(registry)
    env = registry.env()
    (tmp_path / "main.prose").write_text(FANNING, encoding="utf-8")
    done = prose("run", "main.prose", "--allow-remote", "--engine", "dbos", "--detach", **env)
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip()
    workers("--concurrency", "1", **env)
    workers("--concurrency", "1", **env)
    _wait_for(lambda: _status(prose, run_id) == "completed", 60)
    with engine.client(f"sqlite:///{tmp_path / '.prose' / 'dbos.sqlite'}") as client:
        items = client.list_workflows(name="openprose.branch", load_input=False)
    assert sorted((w.workflow_id, w.status) for w in items) == [
        (f"{run_id}/2@{i}", "SUCCESS") for i in range(3)
    ]
    # One state a call, named after the program and numbered by the run's counter,
    # whichever worker fetched and ran it.
    imports = tmp_path / ".prose" / "runs" / run_id / "imports"
    names = sorted(path.name for path in imports.iterdir())
    assert names == ["carol--study", "carol--study-2", "carol--study-3"]
    for name in names:
        assert json.loads((imports / name / "source.json").read_text("utf-8"))["source"] == (
            "carol/study"
        )
    shown = json.loads(prose("runs", "show", run_id, "--json").stdout)
    [found] = [b["value"] for b in shown["bindings"] if b["name"] == "all"]
    local_dir = tmp_path / "local"
    local_dir.mkdir()
    (local_dir / "main.prose").write_text(FANNING, encoding="utf-8")
    local = prose("run", "main.prose", "--allow-remote", "--json", cwd=local_dir, **env)
    assert local.returncode == 0, local.stderr
    expected = [
        f"[dry run] Study {x} (agent: -; model: default)" for x in ("bees", "ants", "moths")
    ]
    assert [r["found"] for r in json.loads(local.stdout)["outputs"]["all"]] == expected
    # `runs show` renders the binding: the same records, in the items' order.
    assert found == "[" + ", ".join(f'{{found: "{answer}"}}' for answer in expected) + "]"


SURVEY = (
    'input topic: "What to survey"\n'
    'let notes = parallel for x in ["a", "b", "c", "d", "e", "f"]:\n'
    '  session "Survey {x} of {topic}"\n'
    'output found = session "Sum up {notes}"\n'
)
CALLS_SURVEY = (
    'use "carol/survey" as survey\nlet r = survey(topic: "moths")\noutput out = r.found\n'
)


def test_a_remote_program_s_fan_out_is_spread_by_the_worker_executing_its_call(
    prose: Any,
    tmp_path: Path,
    registry: Registry,  # noqa: F811
    workers: Callable[..., Any],  # noqa: F811
) -> None:
    from openprose.vm.engines import dbos_branches as branches
    from openprose.vm.engines import dbos_engine as engine

    registry.serve("/carol/survey", SURVEY)
    env = registry.env()
    # Both workers up before the run is queued: each takes items (two at once).
    for _ in range(2):
        workers("--concurrency", "1", "--branch-concurrency", "2", **env)
    _wait_for(lambda: all("takes runs" in _log(tmp_path, n) for n in range(2)))
    (tmp_path / "main.prose").write_text(CALLS_SURVEY, encoding="utf-8")
    done = prose(
        "run", "main.prose", "--allow-remote", "--engine", "dbos", "--detach",
        "--offline-delay", "0.3", **env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip()
    _wait_for(lambda: _status(prose, run_id) == "completed", 60)
    with engine.client(f"sqlite:///{tmp_path / '.prose' / 'dbos.sqlite'}") as client:
        found = client.list_workflows(name="openprose.branch", load_input=False)
    mine = {w.workflow_id: w for w in found if w.workflow_id.startswith(f"{run_id}/")}
    # The call is a workflow of the calls' queue; the fetched program's six items are
    # workflows of the items' queue (before, the call ran them all in its own worker).
    calls = [w for w in mine.values() if w.queue_name == branches.CALLS_QUEUE]
    assert [w.workflow_id for w in calls] == [f"{run_id}/2:call"]
    items = sorted(w.workflow_id for w in mine.values() if w.queue_name == branches.BRANCHES_QUEUE)
    assert len(items) == 6 and all(i.startswith(f"{run_id}/2/") for i in items), items
    assert {w.status for w in mine.values()} == {"SUCCESS"}
    # Two workers of two items each: both executed some.
    assert len({mine[i].executor_id for i in items}) == 2
    local_dir = tmp_path / "local"
    local_dir.mkdir()
    (local_dir / "main.prose").write_text(CALLS_SURVEY, encoding="utf-8")
    local = prose("run", "main.prose", "--allow-remote", "--json", cwd=local_dir, **env)
    assert local.returncode == 0, local.stderr
    shown = json.loads(prose("runs", "show", run_id, "--json").stdout)
    [out] = [b["value"] for b in shown["bindings"] if b["name"] == "out"]
    assert out == json.loads(local.stdout)["outputs"]["out"]
