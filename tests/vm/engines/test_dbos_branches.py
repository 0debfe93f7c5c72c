"""The dbos engine's fan-outs in process: a run's items are workflows of the branches
queue, named after the run and the item's step, and a run whose fan-out cannot travel
keeps it here.  Workers sharing items across processes: tests/cli/test_worker_fan_out.py."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.backends.base import BackendFatal, SessionRequest, SessionResult
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.engines import dbos_branches as branches
from openprose.vm.engines import dbos_engine as engine
from openprose.vm.engines.base import Attachment, RunSpec
from openprose.vm.interpreter import Options
from openprose.vm.rundir import new_run_id

# A fixture (it skips without PostgreSQL locally, and fails under CI).
from tests.postgres_cluster import postgres_db_url  # noqa: F401
from tests.support.extras import require
from tests.vm.vm_support import Recording

require("dbos", "pip install 'openprose[dbos]'")

FAN_OUT = (
    'let out = parallel for x in ["a", "b", "c"]:\n'
    '  session "Study {x}"\n'
    'let digest = ["d", "e"] | pmap:\n'
    '  session "Digest {item}"\n'
)


def _spec(here: Path, text: str, options: Options | None = None, **fields: Any) -> RunSpec:
    """``text`` as ``here``'s main.prose, its runs under ``here``'s .prose/runs."""
    main = here / "main.prose"
    main.write_text(text, encoding="utf-8")
    return RunSpec(
        str(main),
        text,
        runs_root=str(here / ".prose" / "runs"),
        options=RunSpec.options_of(options or Options(jitter=False)),
        **fields,
    )


def _run(
    tmp_path: Path,
    text: str,
    options: Options | None = None,
    rate_limits: dict[str, tuple[int, float] | None] | None = None,
    attachment: Attachment | None = None,
    state: str = "filesystem",
) -> tuple[str, str, Any]:
    spec = _spec(tmp_path, text, options, state=state)
    # The cluster's URL for the postgres state (a test sets it); nothing else of the
    # environment (a user's OPENPROSE_DBOS_URL).
    given = os.environ.get("OPENPROSE_POSTGRES_URL") if state == "postgres" else None
    environ = {"OPENPROSE_POSTGRES_URL": given} if given else {}
    url = engine.system_database_url(spec.state, Path(spec.runs_root), environ=environ)
    run_id = new_run_id()
    executor = engine.DbosExecutor(url, rate_limits)
    result = asyncio.run(executor.run(spec, run_id, attachment or Attachment()))
    return url, run_id, result


def _items(url: str, run_id: str) -> dict[str, str]:
    return {workflow_id: status for workflow_id, (status, _queue) in _queued(url, run_id).items()}


def _queued(url: str, run_id: str) -> dict[str, tuple[str, str]]:
    """The run's item and call workflows: their status and queue."""
    with engine.client(url) as client:
        found = client.list_workflows(name=branches.BRANCH_WORKFLOW, load_input=False)
    return {
        w.workflow_id: (w.status, w.queue_name)
        for w in found
        if w.workflow_id.startswith(run_id + "/")
    }


def test_every_item_of_a_fan_out_is_a_workflow_of_the_branches_queue(tmp_path: Path) -> None:
    url, run_id, result = _run(tmp_path, FAN_OUT)
    assert result.status == "success"
    # parallel for at step 1, pmap at step 2's first stage: RUN/KEY@INDEX.
    assert _items(url, run_id) == {
        f"{run_id}/1@0": "SUCCESS",
        f"{run_id}/1@1": "SUCCESS",
        f"{run_id}/1@2": "SUCCESS",
        f"{run_id}/2|1@0": "SUCCESS",
        f"{run_id}/2|1@1": "SUCCESS",
    }
    bindings = tmp_path / ".prose" / "runs" / run_id / "bindings"
    assert "Study c" in (bindings / "out.md").read_text(encoding="utf-8")
    assert "Digest e" in (bindings / "digest.md").read_text(encoding="utf-8")


def test_a_fan_out_that_cannot_travel_runs_in_the_run_s_process(tmp_path: Path) -> None:
    text = 'parallel ("first"):\n  a = session "Study a"\n  b = session "Study b"\n'
    url, run_id, result = _run(tmp_path, text)
    assert result.status == "success", result.error
    assert _items(url, run_id) == {}  # a race is decided by what one process sees


CALLS = (
    "block study(x):\n"
    '  let note = session "Study {x}"\n'
    "  do polish(note)\n"
    "block polish(text):\n"
    '  let done = session "Polish {text}"\n'
    'let out = parallel for x in ["a", "b", "c"]:\n'
    "  do study(x)\n"
    "do study(out)\n"
)


def test_items_that_call_blocks_travel_with_execution_ids_of_their_own(tmp_path: Path) -> None:
    url, run_id, result = _run(tmp_path, CALLS)
    assert result.status == "success"
    assert set(_items(url, run_id).values()) == {"SUCCESS"} and len(_items(url, run_id)) == 3
    bindings = tmp_path / ".prose" / "runs" / run_id / "bindings"
    # Three items call study and polish, then the run calls them once more: eight
    # executions, numbered by the run's journal whichever process made them.
    notes = sorted(p.name for p in bindings.glob("note__*.md"))
    done = sorted(p.name for p in bindings.glob("done__*.md"))
    ids = sorted(int(name.split("__")[1].removesuffix(".md")) for name in notes + done)
    assert ids == list(range(1, 9)) and len(notes) == 4
    assert "Study c" in (bindings / "out.md").read_text(encoding="utf-8")
    narration = (tmp_path / ".prose" / "runs" / run_id / "state.md").read_text("utf-8")
    assert narration.count("block:study#") == 4 and narration.count("block:polish#") == 4


def test_a_failing_item_fails_the_fan_out_as_here(tmp_path: Path) -> None:
    text = 'parallel for x in ["a", "b"]:\n  throw "no {x}"\nsession "never"\n'
    _url, _run_id, result = _run(tmp_path, text)
    assert result.status == "error"
    assert "no a" in result.error or "no b" in result.error


def test_items_queued_while_the_system_database_is_locked_are_queued_once_it_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    import sqlalchemy as sa

    made = branches._client
    refused: list[str] = []

    def locked_once(engine: Any) -> Any:
        client = made(engine)

        class Locked:
            def enqueue_in_transaction(self, connection: Any, options: Any, *args: Any) -> Any:
                if not refused:  # the first window's first item, once
                    refused.append(options["workflow_id"])
                    raise sa.exc.OperationalError(
                        "INSERT", {}, sqlite3.OperationalError("database is locked")
                    )
                return client.enqueue_in_transaction(connection, options, *args)

        return Locked()

    monkeypatch.setattr(branches, "_client", locked_once)
    url, run_id, result = _run(tmp_path, FAN_OUT)
    assert result.status == "success", result.error
    assert refused == [f"{run_id}/1@0"]
    # The window was queued again, whole, and each item ran once.
    assert set(_items(url, run_id).values()) == {"SUCCESS"}
    assert len(_items(url, run_id)) == 5


def test_the_worker_s_default_is_the_engine_s() -> None:
    from openprose.cli import worker

    assert worker.DEFAULT_BRANCH_CONCURRENCY == branches.DEFAULT_BRANCH_CONCURRENCY
    assert worker.DEFAULT_CONCURRENCY == branches.DEFAULT_CONCURRENCY


def test_an_item_s_workflow_carries_neither_the_program_nor_the_collection(
    tmp_path: Path,
) -> None:
    pile = ", ".join(f'"entry {n}"' for n in range(200))
    text = (
        f"let pile = [{pile}]\n"
        'let angle = "briefly"\n'
        "let out = parallel for x in pile:\n"
        '  session "Study {x} {angle}"\n'
    )
    url, run_id, result = _run(tmp_path, text)
    assert result.status == "success"
    with engine.client(url) as client:
        found = client.list_workflows(name=branches.BRANCH_WORKFLOW, load_input=True)
    items = [w for w in found if w.workflow_id.startswith(run_id + "/")]
    assert len(items) == 200
    for workflow in items:
        spec, _run_id, task = workflow.input["args"]
        assert spec.text == "" and spec.inputs == {}  # read from the run's own workflow
        [root, *_] = task.chain
        assert root.values == {"angle": "briefly"}  # not the 200 entries of `pile`
    # ... and each item still read the program and the names it needs.
    bindings = tmp_path / ".prose" / "runs" / run_id / "bindings"
    assert "Study entry 199 briefly" in (bindings / "out.md").read_text(encoding="utf-8")


STUDY = 'input topic: "What to study"\nlet notes = session "Study {topic}"\noutput found = notes\n'
CALLING = (
    'use "./study" as study\n'
    'let out = parallel for x in ["a", "b", "c"]:\n'
    "  study(topic: x)\n"
    "output all = out\n"
)


@pytest.mark.parametrize("state", ["filesystem", "sqlite", "postgres"])
def test_items_that_call_a_program_travel_and_make_its_state_under_the_run_s(
    tmp_path: Path, state: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openprose.vm.engines.local import LocalExecutor

    if state == "postgres":
        monkeypatch.setenv("OPENPROSE_POSTGRES_URL", request.getfixturevalue("postgres_db_url"))

    (tmp_path / "study.prose").write_text(STUDY, encoding="utf-8")
    url, run_id, result = _run(tmp_path, CALLING, state=state)
    assert result.status == "success", result.error
    assert sorted(_items(url, run_id)) == [f"{run_id}/2@{i}" for i in range(3)]
    # One state per call, numbered by the run's counter whichever process made it.
    assert _called_states(tmp_path, state, run_id) == [f"local--study-{n}" for n in (1, 2, 3)]
    here = RunSpec(
        str(tmp_path / "main.prose"),
        CALLING,
        state=state,
        runs_root=str(tmp_path / "local" / "runs"),
        options=RunSpec.options_of(Options(jitter=False)),
    )
    local = asyncio.run(LocalExecutor().run(here, None, Attachment()))
    assert result.outputs == local.outputs
    if state == "filesystem":
        # The called programs' narration is in their own states, not in the run's: only
        # the run's own end ends it (a called program's end once ended the run early).
        narration = (tmp_path / ".prose/runs" / run_id / "state.md").read_text("utf-8")
        assert narration.count("---end") == 1 and "Study a" not in narration
        called = tmp_path / ".prose/runs" / run_id / "imports" / "local--study-1" / "state.md"
        assert called.read_text("utf-8").count("---end") == 1
    assert [r["found"] for r in result.outputs["all"]] == [
        f"[dry run] Study {x} (agent: -; model: default)" for x in "abc"
    ]


def _called_states(tmp_path: Path, state: str, run_id: str) -> list[str]:
    if state != "postgres":
        return sorted(p.name for p in (tmp_path / ".prose/runs" / run_id / "imports").iterdir())
    import psycopg

    with psycopg.connect(os.environ["OPENPROSE_POSTGRES_URL"]) as connection:
        rows = connection.execute(
            "SELECT alias FROM openprose.imports WHERE run_id = %s ORDER BY alias", (run_id,)
        ).fetchall()
    return [alias for (alias,) in rows]


BLOCK = (
    'let seen = "none"\n'
    "parallel:\n"
    '  security = session "Check security"\n'
    "  do:\n"
    '    let perf = session "Check performance"\n'
    '    seen = "both"\n'
    '  session "Unnamed"\n'
    'session "Report {seen}"\n'
    "  context: [security, perf]\n"
)


def test_every_branch_of_a_parallel_block_is_a_workflow_too(tmp_path: Path) -> None:
    url, run_id, result = _run(tmp_path, BLOCK)
    assert result.status == "success"
    # The block at step 2: RUN/KEY then the branch's letter, as its steps' keys are.
    assert _items(url, run_id) == {
        f"{run_id}/2a": "SUCCESS",
        f"{run_id}/2b": "SUCCESS",
        f"{run_id}/2c": "SUCCESS",
    }
    bindings = tmp_path / ".prose" / "runs" / run_id / "bindings"
    # A named branch, a name bound inside a branch, an outer name a branch assigned: all
    # visible after the join, as on the local engine.
    assert "Check security" in (bindings / "security.md").read_text(encoding="utf-8")
    assert "Check performance" in (bindings / "perf.md").read_text(encoding="utf-8")
    assert "Report both" in (bindings / "anon_002.md").read_text(encoding="utf-8")


def test_a_race_keeps_its_branches_in_the_run_s_process(tmp_path: Path) -> None:
    text = 'let winner = parallel ("first"):\n  session "one way"\n  session "another"\n'
    url, run_id, result = _run(tmp_path, text)
    assert result.status == "success"
    assert _items(url, run_id) == {}


def _item_rows(url: str, run_id: str) -> list[Any]:
    with engine.client(url) as client:
        found = client.list_workflows(name=branches.BRANCH_WORKFLOW, load_input=False)
    return [w for w in found if w.workflow_id.startswith(run_id + "/")]


def test_without_a_rate_limit_items_share_the_branches_queue(tmp_path: Path) -> None:
    url, run_id, _result = _run(tmp_path, FAN_OUT)
    assert {w.queue_name for w in _item_rows(url, run_id)} == {"openprose-branches"}


def test_a_provider_s_rate_limit_is_its_items_queue_s_limiter(tmp_path: Path) -> None:
    pile = ", ".join(f'"{n}"' for n in range(12))
    text = f'let out = parallel for x in [{pile}]:\n  session "Study {{x}}"\n'
    options = Options(jitter=False, concurrency=12)
    url, run_id, result = _run(tmp_path, text, options, rate_limits={"offline": (4, 1.0)})
    assert result.status == "success"
    rows = _item_rows(url, run_id)
    assert {w.queue_name for w in rows} == {"openprose-branches-offline"}
    starts = sorted(w.dequeued_at for w in rows)
    assert len(starts) == 12 and None not in starts
    # DBOS's limiter: never more than 4 starts in any rolling second, so the twelve
    # instant items took at least two seconds to start, where they would start at once.
    assert all(sum(s <= t < s + 1000 for t in starts) <= 4 for s in starts), starts
    assert starts[-1] - starts[0] >= 2000, starts


FAILS_FAST = {
    "fan-out": (
        'parallel for x in ["a", "b", "c", "d"]:\n'
        '  if x == "b":\n    throw "no {x}"\n'
        '  session "Study {x}"\n'
    ),
    "block": (
        'parallel:\n  session "Study a"\n  throw "no b"\n  session "Study c"\n  session "Study d"\n'
    ),
}


@pytest.mark.parametrize("shape", sorted(FAILS_FAST))
def test_a_run_taken_over_after_a_fail_fast_fails_with_the_item_s_error(
    tmp_path: Path, shape: str
) -> None:
    # offline_delay: the other items are still at their session when b throws.
    spec = _spec(tmp_path, FAILS_FAST[shape], offline_delay=2.0)
    url = engine.system_database_url(spec.state, Path(spec.runs_root), environ={})
    run_id = new_run_id()
    first = asyncio.run(engine.DbosExecutor(url).run(spec, run_id, Attachment()))
    assert first.status == "error" and "no b" in first.error
    assert sorted(_items(url, run_id).values()) == ["CANCELLED"] * 3 + ["SUCCESS"]
    _lose_its_executor(url, run_id)
    again = asyncio.run(_taken_over(url, run_id))
    # The run finds its items as they ended: b's failure, not a cancellation, is its error.
    assert again.status == "error" and again.error == first.error


def _lose_its_executor(url: str, run_id: str) -> None:
    """As if the run's executor had died after fail-fast cancelled the other items, before
    the run's end was recorded: the run is pending on an executor that is gone."""
    import socket
    import sqlite3
    import subprocess
    import sys

    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    database = engine.sqlite_file(url)
    assert database is not None
    with sqlite3.connect(database) as connection:
        connection.execute(
            "UPDATE workflow_status SET status = 'PENDING', executor_id = ?, "
            "output = NULL, error = NULL WHERE workflow_uuid = ?",
            (f"{socket.gethostname()}:{int(ended.stdout)}", run_id),
        )


async def _taken_over(url: str, run_id: str) -> Any:
    """The run's result once a worker has recovered it and executed it again."""

    def ended() -> Any:
        with engine.client(url) as client:
            [run] = client.list_workflows(workflow_ids=[run_id], load_input=False)
        return run.output if run.status in ("SUCCESS", "ERROR") else None

    stop = asyncio.Event()
    worker = asyncio.create_task(engine.work(url, concurrency=1, stop=stop))
    try:
        for _ in range(600):
            await asyncio.sleep(0.1)
            if (result := await asyncio.to_thread(ended)) is not None:
                return result
        raise AssertionError("the run was not taken over")
    finally:
        stop.set()
        await worker


class _FailingOnce(OfflineBackend):
    """The offline backend, but for one prompt, which fails (fatally) after the others of
    its fan-out have had time to be answered."""

    def __init__(self, prompt: str) -> None:
        super().__init__()
        self.prompt = prompt

    async def run_session(self, request: SessionRequest) -> SessionResult:
        if request.prompt == self.prompt:
            await asyncio.sleep(1.0)
            raise BackendFatal(f"{self.prompt}: the provider is down")
        return await super().run_session(request)


RESUMED = (
    'let notes = session "Take notes"\n'
    'let out = parallel for x in ["a", "b", "c"]:\n'
    '  session "Study {x}"\n'
    'output summary = session "Summarise {notes}"\n'
)


def _resumed_on(engine_name: str, tmp_path: Path) -> tuple[Any, Recording, str, Any]:
    """RESUMED run until "Study b" fails, then resumed with a backend that answers it, on
    ``engine_name``: the result, the second backend, the narration and the run id."""
    from openprose.vm.engines.local import LocalExecutor
    from openprose.vm.state import open_catalog

    here = tmp_path / engine_name
    here.mkdir()
    spec = _spec(here, RESUMED)
    second = Recording(OfflineBackend())
    if engine_name == "dbos":
        url = engine.system_database_url(spec.state, Path(spec.runs_root), environ={})
        run_id = new_run_id()
        executor = engine.DbosExecutor(url)
        first = asyncio.run(executor.run(spec, run_id, Attachment(backend=_FailingOnce("Study b"))))
        assert first.status == "error" and "the provider is down" in first.error
        result = asyncio.run(executor.run(spec, run_id, Attachment(backend=second), resume=True))
    else:
        first = asyncio.run(
            LocalExecutor().run(spec, None, Attachment(backend=_FailingOnce("Study b")))
        )
        run_id = first.run_id
        store = open_catalog("filesystem", Path(spec.runs_root)).open(run_id)
        result = asyncio.run(
            LocalExecutor(resume=store).run(spec, None, Attachment(backend=second))
        )
    narration = (Path(spec.runs_root) / run_id / "state.md").read_text(encoding="utf-8")
    return result, second, narration, run_id


def test_a_resumed_run_executes_its_items_again_under_its_next_attempt(
    tmp_path: Path,
) -> None:
    result, second, narration, run_id = _resumed_on("dbos", tmp_path)
    assert result.status == "success", result.error
    # Only what the first attempt never answered reaches the backend: its items ran again
    # (the failed one's workflow would have answered with its failure), from the journal.
    asked = sorted(prompt for _kind, prompt, *_ in second.calls)
    assert [prompt.split(" [")[0] for prompt in asked] == ["Study b", "Summarise"]
    url = engine.system_database_url(
        "filesystem", tmp_path / "dbos" / ".prose" / "runs", environ={}
    )
    attempt = f"{run_id}/attempt-2"
    items = _items(url, run_id)
    assert {k: v for k, v in items.items() if k.startswith(attempt + "/")} == {
        f"{attempt}/2@{i}": "SUCCESS" for i in range(3)
    }
    # The same outputs, bindings and narration after the resume as the local engine's.
    local, _, local_narration, _ = _resumed_on("local", tmp_path)
    assert result.outputs == local.outputs

    def after_resume(text: str) -> list[str]:
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("---resume "))
        return [line for line in lines[start + 1 :] if not line.startswith("---end ")]

    assert after_resume(narration) == after_resume(local_narration)
    assert "2→ ✓" in after_resume(narration)  # the item that failed is narrated this time


REMEMBERING = (
    "agent keeper:\n  model: sonnet\n  persist: {scope}\n"
    'session: keeper\n  prompt: "Start"\n'
    'let out = parallel for x in ["a", "b", "c", "d"]:\n'
    "  session: keeper\n"
    '    prompt: "Keep {{x}}"\n'
    "output after = resume: keeper\n"
    '  prompt: "Sum up"\n'
)


def _segments(tmp_path: Path, state: str, scope: str, run_id: str) -> list[Any]:
    """The keeper's memory segments, as the run's state keeps them."""
    from openprose.vm.memory import AgentMemories

    connect = None
    if state == "postgres":
        import psycopg

        url = os.environ["OPENPROSE_POSTGRES_URL"]

        def connect() -> Any:
            return psycopg.connect(url)

    run_dir = tmp_path / ".prose" / "runs" / run_id
    memories = AgentMemories(
        None if state == "postgres" else run_dir,
        tmp_path,
        state=state,
        run_id=run_id,
        connect=connect,
    )
    found: list[Any] = memories.segments("keeper", scope)
    return found


@pytest.mark.parametrize("state", ["filesystem", "sqlite", "postgres"])
@pytest.mark.parametrize("scope", ["true", "project"])
def test_items_whose_agent_has_memory_travel_and_record_it_where_the_run_does(
    tmp_path: Path,
    state: str,
    scope: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if state == "postgres":
        monkeypatch.setenv("OPENPROSE_POSTGRES_URL", request.getfixturevalue("postgres_db_url"))
    (tmp_path / ".prose").mkdir()  # the project's root, where project memory lives
    backend = Recording(OfflineBackend())
    url, run_id, result = _run(
        tmp_path,
        REMEMBERING.format(scope=scope),
        state=state,
        attachment=Attachment(backend=backend),
    )
    assert result.status == "success", result.error
    assert sorted(_items(url, run_id)) == [f"{run_id}/3@{i}" for i in range(4)]
    segments = _segments(tmp_path, state, scope, run_id)
    # One segment an invocation, numbered without a gap by whichever process recorded it,
    # each once: the run's first, its items', and its last.
    assert [s.number for s in segments] == [1, 2, 3, 4, 5, 6]
    assert [segments[0].prompt, segments[5].prompt] == ["Start", "Sum up"]
    assert sorted(s.prompt for s in segments[1:5]) == [f"Keep {x}" for x in "abcd"]
    # The run resumes the keeper with the turns its items recorded, in their order.
    [last] = [r for r in backend.sessions if r.prompt == "Sum up"]
    assert [turn.prompt for turn in last.turns] == [s.prompt for s in segments[:5]]


HELPER = 'input topic: "t"\noutput facts = session "Find facts about {topic}"\n'
CALLER = (
    'use "./helper" as helper\n'
    'let r = helper(topic: "bees")\n'
    'let s = helper(topic: "ants")\n'
    'output both = session "Use {r.facts} and {s.facts}"\n'
)


@pytest.mark.parametrize("state", ["filesystem", "sqlite", "postgres"])
def test_a_program_call_of_the_run_is_a_workflow_any_worker_executes(
    tmp_path: Path, state: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openprose.vm.engines.local import LocalExecutor

    if state == "postgres":
        monkeypatch.setenv("OPENPROSE_POSTGRES_URL", request.getfixturevalue("postgres_db_url"))
    (tmp_path / "helper.prose").write_text(HELPER, encoding="utf-8")
    url, run_id, result = _run(tmp_path, CALLER, state=state)
    assert result.status == "success", result.error
    # RUN/STEP:call, on the calls' queue; its state made under the run's by its worker.
    assert _queued(url, run_id) == {
        f"{run_id}/2:call": ("SUCCESS", branches.CALLS_QUEUE),
        f"{run_id}/3:call": ("SUCCESS", branches.CALLS_QUEUE),
    }
    assert _called_states(tmp_path, state, run_id) == ["local--helper-1", "local--helper-2"]
    here = tmp_path / "local"
    here.mkdir()
    (here / "helper.prose").write_text(HELPER, encoding="utf-8")
    local = asyncio.run(LocalExecutor().run(_spec(here, CALLER, state=state), None, Attachment()))
    assert result.outputs == local.outputs
    assert result.sessions == local.sessions == 3
    if state == "filesystem":
        runs = [tmp_path / ".prose" / "runs" / run_id, here / ".prose" / "runs" / local.run_id]
        # The same narration after its heading (the run's id), its end's time aside.
        narrations = [(run / "state.md").read_text("utf-8").splitlines()[1:-1] for run in runs]
        assert narrations[0] == narrations[1] and len(narrations[0]) >= 4


def test_a_program_call_fails_as_here_when_its_program_cannot_run(tmp_path: Path) -> None:
    (tmp_path / "helper.prose").write_text("session: nobody\n", encoding="utf-8")
    _url, _run_id, result = _run(tmp_path, CALLER)
    assert result.status == "error"
    assert "helper.prose has errors" in result.error
    assert result.failed_statement.startswith("let r = helper")


def test_a_program_call_missing_an_input_fails_as_here(tmp_path: Path) -> None:
    from openprose.vm.engines.local import LocalExecutor

    text = 'use "./helper" as helper\nlet r = helper()\n'
    (tmp_path / "helper.prose").write_text(HELPER, encoding="utf-8")
    url, run_id, result = _run(tmp_path, text)
    here = tmp_path / "local"
    here.mkdir()
    (here / "helper.prose").write_text(HELPER, encoding="utf-8")
    local = asyncio.run(LocalExecutor().run(_spec(here, text), None, Attachment()))
    assert (result.status, result.error, result.failed_statement) == (
        local.status,
        local.error,
        local.failed_statement,
    )
    assert result.error == "./helper: missing input 'topic'"
    assert result.failed_statement == "helper()"  # the call expression, as on the local engine
    assert _items(url, run_id) == {f"{run_id}/2:call": "SUCCESS"}  # it ran in a worker


FANNING = (
    'input topic: "t"\n'
    "block note(x):\n"
    '  let line = session "Note {x} on {topic}"\n'
    'let studied = parallel for x in ["a", "b", "c"]:\n'
    '  session "Study {x} of {topic}"\n'
    "parallel:\n"
    '  one = session "One on {topic}"\n'
    "  do note(topic)\n"
    'output facts = session "Sum up {studied} and {one}"\n'
)
CALLS_FANNING = (
    'use "./fanning" as fanning\n'
    'let r = fanning(topic: "bees")\n'
    'output both = session "Use {r.facts}"\n'
)


@pytest.mark.parametrize("state", ["filesystem", "sqlite", "postgres"])
def test_a_called_program_s_fan_outs_are_spread_by_the_worker_executing_the_call(
    tmp_path: Path, state: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openprose.vm.engines.local import LocalExecutor

    if state == "postgres":
        monkeypatch.setenv("OPENPROSE_POSTGRES_URL", request.getfixturevalue("postgres_db_url"))
    (tmp_path / "fanning.prose").write_text(FANNING, encoding="utf-8")
    url, run_id, result = _run(tmp_path, CALLS_FANNING, state=state)
    assert result.status == "success", result.error
    # The call is a workflow on the calls' queue (it waits for its items, which are on
    # the items' queue), its items and branches workflows under the call's keys.
    items = branches.BRANCHES_QUEUE
    assert _queued(url, run_id) == {
        f"{run_id}/2:call": ("SUCCESS", branches.CALLS_QUEUE),
        f"{run_id}/2/fanning:3@0": ("SUCCESS", items),
        f"{run_id}/2/fanning:3@1": ("SUCCESS", items),
        f"{run_id}/2/fanning:3@2": ("SUCCESS", items),
        f"{run_id}/2/fanning:4a": ("SUCCESS", items),
        f"{run_id}/2/fanning:4b": ("SUCCESS", items),
    }
    here = tmp_path / "local"
    here.mkdir()
    (here / "fanning.prose").write_text(FANNING, encoding="utf-8")
    local_spec = _spec(here, CALLS_FANNING, state=state)
    local = asyncio.run(LocalExecutor().run(local_spec, None, Attachment()))
    assert result.outputs == local.outputs
    assert result.sessions == local.sessions == 7
    assert _called_states(tmp_path, state, run_id) == ["local--fanning-1"]
    if state == "filesystem":
        runs = [tmp_path / ".prose" / "runs" / run_id, here / ".prose" / "runs" / local.run_id]
        called = [run / "imports" / "local--fanning-1" for run in runs]
        # The called program's narration and bindings, written by the call's worker from
        # what its items brought back, are the local engine's.
        narrations = [(c / "state.md").read_text("utf-8").splitlines()[1:-1] for c in called]
        assert narrations[0] == narrations[1] and len(narrations[0]) >= 8
        assert _bindings(called[0]) == _bindings(called[1])
        assert "line__1.md" in _bindings(called[0])  # the block call of branch b, numbered


def _bindings(run_dir: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((run_dir / "bindings").iterdir())}
