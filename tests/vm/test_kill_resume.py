"""Issue 10, "kill at random points": runs killed with SIGKILL at random instants (real
child processes), resumed until they complete, and compared with an uninterrupted run on
the replay backend: outputs, bindings, agent memory and journal identical, no journaled
step called again.  The harness is ``kill_harness.py``; ``bench/kill_resume.py`` runs it at
a larger scale.

The five bugs it found have a deterministic reproduction each below (the child kills itself
with SIGKILL at the exact point), regression tests now that they are fixed.  A bug found and
not yet fixed goes in ``kill_harness.KNOWN`` with a strict xfail reproduction; the random
campaign counts the runs it explains as "known" and fails on anything else.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.runner import run_file
from openprose.vm.state import StateError, open_catalog
from tests.postgres_cluster import session_cluster
from tests.vm.kill_harness import (
    KNOWN,
    REPO,
    Program,
    Settings,
    campaign,
    new_database,
    prepare,
    project_database,
)

SEED = int(os.environ.get("KILL_SEED", "20261123"))
# Killed-and-resumed runs per state backend, spread evenly over the harness's programs.
RUNS = {"filesystem": 300, "sqlite": 63, "postgres": 45}


def _available(state: str) -> bool:
    try:
        open_catalog(state, Path("/nonexistent/.prose/runs"))
    except (StateError, ImportError):
        return False
    return True


def _campaign(state: str, root: Path, settings: Settings | None = None) -> None:
    totals, references = campaign(state, root, RUNS[state], seed=SEED, settings=settings)
    summary = f"seed {SEED}: {totals.summary(state)}"
    print(summary)
    failures = "\n".join(outcome.describe()[:2000] for outcome in totals.failures[:5])
    assert not totals.failures, f"{summary}\n{failures}"
    assert totals.runs == RUNS[state]
    assert set(totals.per_program) == set(references)
    assert set(totals.known) <= set(KNOWN)
    # Some kills must land inside runs, or nothing was tested.
    assert totals.resumes > 0 and totals.kills > 0, summary


@pytest.mark.parametrize("state", [s for s in ("filesystem", "sqlite") if _available(s)])
def test_runs_killed_at_random_points_resume_exactly(state: str, tmp_path: Path) -> None:
    _campaign(state, tmp_path)


def test_postgres_runs_killed_at_random_points_resume_exactly(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # Each run gets a database of its own in the session's throwaway cluster (skipped
    # where there is none, failed under CI).
    admin = session_cluster(request.config).url()
    _campaign("postgres", tmp_path, Settings(postgres_admin=admin))


def test_the_harness_notices_a_journaled_step_called_again(tmp_path: Path) -> None:
    # The child's journal is made to answer nothing; each run is killed once three calls
    # are logged (the first statements are sequential: two answers are journaled by then).
    settings = Settings(kill_at_call=3, forget=True, again=0.0)
    totals, _ = campaign(
        "filesystem", tmp_path, 2, seed=SEED, programs=["loops"], settings=settings
    )
    assert totals.kills == 2 and totals.resumes == 2
    assert len(totals.failures) == 2
    for outcome in totals.failures:
        assert any("journaled before it began" in p for p in outcome.problems), outcome.problems


# ---------------------------------------------------------------------------- bugs found

HELPER = 'input topic: "What"\nlet found = session "Find {topic}"\noutput facts = found\n'
CALLER = 'use "./helper" as helper\nlet r = helper(topic: "bees")\noutput out = r.facts\n'
PLAIN = 'let a = session "One"\noutput out = session "Two"\n'

# Runs the program in a child that sends itself SIGKILL at one point of the product's code:
# ``TARGET`` is patched to die before (or after) the call whose arguments match.
_DIE = textwrap.dedent(
    """
    import asyncio, importlib, os, signal, sys
    from pathlib import Path
    module, cls, method, when, needle = sys.argv[1:6]
    # "~text": any argument whose repr contains text; else an argument equal to it.
    owner = getattr(importlib.import_module(module), cls)
    original = getattr(owner, method)

    def patched(*args, **kwargs):
        if needle.startswith("~"):
            hit = any(needle[1:] in repr(a) for a in args[1:])
        else:
            hit = needle == "*" or needle in [str(a) for a in args[1:]]
        if hit and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        result = original(*args, **kwargs)
        if hit and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(owner, method, patched)
    from openprose.vm.runner import run_file
    program, state = Path(sys.argv[6]), sys.argv[7]
    asyncio.run(run_file(program, {}, runs_root=program.parent / ".prose" / "runs", state=state))
    """
)


def _die_at(
    tmp_path: Path,
    text: str,
    state: str,
    target: str,
    when: str,
    needle: str = "*",
    database: str | None = None,
) -> Path:
    """The project, after a run of ``text`` killed at ``target`` (module:Class.method);
    ``database``: the postgres database the project's ``.prose/.env`` names."""
    program = Program("die", text, {"helper.prose": HELPER})
    main = prepare(program, tmp_path, database)
    module, _, attribute = target.partition(":")
    cls, method = attribute.split(".")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = [module, cls, method, when, needle, str(main), state]
    done = subprocess.run(
        [sys.executable, "-c", _DIE, *args], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == -9, done.stderr  # it died where it was told to
    return main


def _resume(main: Path, state: str, backend: Any = None) -> tuple[str, Any]:
    catalog = open_catalog(state, main.parent / ".prose" / "runs")
    (info,) = catalog.runs()
    store = catalog.open(info.run_id)
    result = asyncio.run(run_file(main, backend=backend or OfflineBackend(), resume=store))
    return info.run_id, result


class Slow(OfflineBackend):
    """The offline backend, taking a model's time to answer a session."""

    async def run_session(self, request: Any) -> Any:
        await asyncio.sleep(0.05)
        return await super().run_session(request)


RACE = """let x = parallel ("any", count: 2):
  p = session "Candidate p"
  q = session "Candidate q"
  r = session "Candidate r"
output out = x
"""


def test_a_race_resumed_after_a_kill_joins_what_the_uninterrupted_run_joins(
    tmp_path: Path,
) -> None:
    # Uninterrupted, the three sessions answer in one turn of the event loop and all three
    # are joined.  Killed once two are journaled, the resume answers those two at once and
    # the third takes the model's time: the race is decided again, differently.
    whole = tmp_path / "whole" / "main.prose"
    whole.parent.mkdir()
    whole.write_text(RACE, encoding="utf-8")
    uninterrupted = asyncio.run(run_file(whole, {}, runs_root=whole.parent / "runs"))
    assert uninterrupted.status == "success"
    main = _die_at(
        tmp_path,
        RACE,
        "filesystem",
        "openprose.vm.state.journal:Journal.record_step",
        "after",
        "~'1b#attempt1'",
    )
    _run_id, resumed = _resume(main, "filesystem", Slow())
    assert resumed.status == "success"
    assert resumed.outputs == uninterrupted.outputs


def _database(state: str, request: pytest.FixtureRequest) -> str | None:
    if state != "postgres":
        return None
    return new_database(session_cluster(request.config).url())


def _imports(main: Path, state: str, run_id: str) -> list[str]:
    """The directories (or, on postgres, the aliases) of the programs a run called."""
    database = project_database(main.parent)
    if database is not None:
        import psycopg

        with psycopg.connect(database) as connection:
            rows = connection.execute("SELECT alias FROM openprose.imports").fetchall()
        return sorted(alias for (alias,) in rows)
    imports = main.parent / ".prose" / "runs" / run_id / "imports"
    return sorted(p.name for p in imports.iterdir())


@pytest.mark.parametrize("state", ["filesystem", "sqlite", "postgres"])
def test_a_kill_before_an_import_is_journaled_does_not_make_a_second_directory(
    state: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    main = _die_at(
        tmp_path,
        CALLER,
        state,
        "openprose.vm.state.journal:Journal.record_commit",
        "before",
        "@import",
        _database(state, request),
    )
    run_id, result = _resume(main, state)
    assert result.status == "success"
    assert _imports(main, state, run_id) == ["local--helper-1"]


def test_sqlite_a_kill_after_an_import_is_journaled_keeps_its_imports_row(
    tmp_path: Path,
) -> None:
    main = _die_at(
        tmp_path,
        CALLER,
        "sqlite",
        "openprose.vm.state.journal:Journal.record_commit",
        "after",
        "@import",
    )
    run_id, result = _resume(main, "sqlite")
    assert result.status == "success"
    database = main.parent / ".prose" / "runs" / run_id / "state.db"
    with sqlite3.connect(database) as connection:
        rows = connection.execute("SELECT alias FROM imports").fetchall()
    assert rows == [("local--helper-1",)]


@pytest.mark.parametrize(
    ("state", "target"),
    [
        ("filesystem", "openprose.vm.state.journal:Journal.start_run"),
        ("sqlite", "openprose.vm.state.journal:Journal.start_run"),
        ("sqlite", "openprose.vm.state.journal:Journal.create_tables"),
    ],
)
def test_a_run_killed_while_it_is_made_leaves_no_run_and_the_next_one_runs(
    state: str, target: str, tmp_path: Path
) -> None:
    # Found by the campaign: a kill before the journal held the run left a run that was
    # listed but had no summary (or, on sqlite, no journal tables, and failed to resume).
    main = _die_at(tmp_path, PLAIN, state, target, "before")
    runs = main.parent / ".prose" / "runs"
    catalog = open_catalog(state, runs)
    assert catalog.runs() == []
    assert [p.name for p in runs.iterdir() if not p.name.startswith(".")] == []
    again = asyncio.run(run_file(main, {}, runs_root=runs, state=state))
    assert again.status == "success"
    assert [info.status for info in catalog.runs()] == ["completed"]
