"""The state control plane (seed 003): describe, reset and compact on every store of a run
and of an agent's memory, missing targets, and stores that cannot be read."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.memory import AgentMemories
from openprose.vm.runner import run_file
from openprose.vm.state import StateError, control, open_catalog
from openprose.vm.state.control import Target

HELPER = 'input topic: "A topic"\noutput facts = session "Facts about {topic}"\n'
PROGRAM = """\
use "./helper" as helper
agent scribe:
  model: sonnet
  persist: true
  prompt: "Write things down"

let notes = session "Take notes"
let more = helper(topic: "bees")
let minutes = session: scribe
  prompt: "Record the meeting"
output summary = session "Summarise"
  context: notes
"""
ADVISOR = """\
agent advisor:
  model: opus
  persist: {scope}
  prompt: "Advise"

session: advisor
  prompt: "Advice one"
resume: advisor
  prompt: "Advice two"
resume: advisor
  prompt: "Advice three"
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
STORE_FIELDS = ["name", "enabled", "exists", "counts", "metadata", "data"]


def make_run(root: Path, source: str = PROGRAM, state: str = "filesystem") -> str:
    (root / "helper.prose").write_text(HELPER, encoding="utf-8")
    main = root / "main.prose"
    main.write_text(textwrap.dedent(source), encoding="utf-8")
    result = asyncio.run(
        run_file(
            main,
            {},
            backend=OfflineBackend(),
            runs_root=root / ".prose" / "runs",
            project_root=root,
            state=state,
        )
    )
    assert result.status == "success", result.error
    return str(result.run_id)


def target(root: Path, **given: Any) -> Target:
    return Target(root / ".prose" / "runs", project_root=root, home=root / "home", **given)


def stores(report: control.StateReport) -> dict[str, control.StoreReport]:
    return {store.name: store for store in report.stores}


def visible(directory: Path) -> list[str]:
    """The files of a memory directory, without its lock and bookkeeping (dot files)."""
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith("."))


# ---------------------------------------------------------------------- runs


@pytest.mark.parametrize("state", ["filesystem", "sqlite"])
def test_describe_a_run_names_every_store_and_counts_what_it_holds(
    tmp_path: Path, state: str
) -> None:
    run_id = make_run(tmp_path, state=state)
    report = control.describe(target(tmp_path, run_id=run_id))
    assert report.operation == "describe" and report.run_id == run_id and report.agent is None
    found = stores(report)
    assert list(found) == list(control.RUN_STORES)
    assert all(store.enabled and store.exists for store in found.values())
    assert report.missing == [] and report.errors == []
    assert found["journal"].counts["steps"] == 4  # three sessions and the helper's one
    assert found["journal"].counts["commits"] >= 4
    assert all(store.data is None for store in found.values())
    assert found["bindings"].counts["bindings"] == 4
    # Run-scoped memory is kept in files or in state.db's tables: one segment either way.
    assert found["agents"].counts["segments"] + found["agents"].counts.get("agent_segments", 0) == 1
    assert found["imports"].counts["programs"] == 1


def test_describe_with_data_holds_the_values(tmp_path: Path) -> None:
    run_id = make_run(tmp_path)
    report = control.describe(target(tmp_path, run_id=run_id), include_data=True)
    found = stores(report)
    values = {b["name"]: b for b in found["bindings"].data}
    assert values["notes"]["kind"] == "let"
    assert values["notes"]["value"].startswith("[dry run] Take notes")
    assert values["summary"]["kind"] == "output"
    assert "Take notes" in found["narration"].data or "notes" in found["narration"].data
    assert {step["kind"] for step in found["journal"].data} == {"session"}
    assert list(found["agents"].data) == ["scribe"]
    assert "Record the meeting" in found["agents"].data["scribe"]["memory"]
    assert found["imports"].data == ["helper"] or len(found["imports"].data) == 1


def test_the_report_has_exactly_the_seeds_fields(tmp_path: Path) -> None:
    run_id = make_run(tmp_path)
    data = control.describe(target(tmp_path, run_id=run_id)).to_json()
    assert list(data) == REPORT_FIELDS
    assert list(data["stores"][0]) == STORE_FIELDS
    text = control.describe(target(tmp_path, run_id=run_id)).render()
    assert text.splitlines()[0] == f"describe run {run_id}"
    assert "journal" in text and "4 steps" in text


def test_an_unknown_run_is_an_error_naming_a_close_one(tmp_path: Path) -> None:
    run_id = make_run(tmp_path)
    with pytest.raises(StateError) as raised:
        control.describe(target(tmp_path, run_id=run_id[:-1] + "?"))
    assert f"did you mean {run_id!r}" in str(raised.value)
    with pytest.raises(StateError, match="no run 'elsewhere'"):
        control.reset(target(tmp_path, run_id="elsewhere"))
    with pytest.raises(StateError, match="is not a run id"):
        control.describe(target(tmp_path, run_id="../etc"))


@pytest.mark.parametrize("state", ["filesystem", "sqlite"])
def test_reset_clears_every_store_of_the_run_and_keeps_the_run(tmp_path: Path, state: str) -> None:
    run_id = make_run(tmp_path, state=state)
    other = make_run(tmp_path, state=state)
    before_other = control.describe(target(tmp_path, run_id=other)).to_json()
    report = control.reset(target(tmp_path, run_id=run_id))
    assert report.errors == []
    expected = ["bindings", "narration", "journal", "agents", "imports"]
    assert report.cleared == expected
    after = control.describe(target(tmp_path, run_id=run_id))
    assert after.missing == expected
    # The run stays: listed, with its program, its steps at zero, resumable from the start.
    info = open_catalog(state, tmp_path / ".prose" / "runs").info(run_id)
    assert (info.status, info.steps, info.cost) == ("interrupted", 0, 0)
    assert (tmp_path / ".prose" / "runs" / run_id / "program.prose").is_file()
    # Precise: the other run is untouched.
    assert control.describe(target(tmp_path, run_id=other)).to_json() == before_other


def test_reset_of_a_run_that_is_running_is_refused_and_clears_nothing(tmp_path: Path) -> None:
    catalog = open_catalog("filesystem", tmp_path / ".prose" / "runs")
    store = catalog.create('session "x"\n', "main.prose", {}, backend="offline")
    try:
        store.commit_binding("1", "x", "let", 'session "x"', "value", None)
        report = control.reset(target(tmp_path, run_id=store.run_id))
        assert report.cleared == []
        assert any("still running" in error.message for error in report.errors)
        assert report.errors[-1].message == "refused: nothing was cleared"
        assert (
            control.describe(target(tmp_path, run_id=store.run_id)).missing
            == [
                "agents",
                "imports",
            ]
            or "bindings" not in control.describe(target(tmp_path, run_id=store.run_id)).missing
        )
    finally:
        store.close()


def test_an_unreadable_journal_is_a_store_error_the_others_are_described(
    tmp_path: Path,
) -> None:
    run_id = make_run(tmp_path)
    journal = tmp_path / ".prose" / "runs" / run_id / control.JOURNAL_FILE
    for suffix in ("-wal", "-shm"):
        Path(str(journal) + suffix).unlink(missing_ok=True)
    journal.write_bytes(b"this is not a database" * 100)
    report = control.describe(target(tmp_path, run_id=run_id))
    assert [error.store for error in report.errors] == ["journal"]
    assert "cannot read" in report.errors[0].message
    found = stores(report)
    assert found["bindings"].exists and found["narration"].exists
    # A reset is refused whole: a store it cannot read could not be cleared precisely.
    reset = control.reset(target(tmp_path, run_id=run_id))
    assert reset.cleared == []
    assert reset.errors[-1].message == "refused: nothing was cleared"
    assert stores(control.describe(target(tmp_path, run_id=run_id)))["bindings"].exists


def test_compact_of_a_run_compacts_its_agents_memory(tmp_path: Path) -> None:
    source = ADVISOR.format(scope="true")
    run_id = make_run(tmp_path, source)
    report = control.compact(target(tmp_path, run_id=run_id), "recent", max_messages=1)
    assert report.compacted == ["agents/advisor"]
    assert stores(report)["agents/advisor"].metadata["before"] == 3
    assert stores(report)["agents/advisor"].metadata["folded"] == [1, 2]
    directory = tmp_path / ".prose" / "runs" / run_id / "agents" / "advisor"
    assert visible(directory) == ["advisor-003.md", "memory.md"]
    memory = (directory / "memory.md").read_text(encoding="utf-8")
    # The folded segments' specifics stay in memory.md's history.
    assert "Advice one" in memory and "Advice two" in memory
    assert "## Compacted history" in memory


def test_compact_of_a_run_without_agents_reports_them_missing(tmp_path: Path) -> None:
    run_id = make_run(tmp_path, 'session "Alone"\n')
    report = control.compact(target(tmp_path, run_id=run_id), "tokens", max_tokens=10)
    assert (report.compacted, report.missing, report.errors) == ([], ["agents"], [])


# ---------------------------------------------------------------------- agents


def test_describe_an_agent_in_the_project_and_user_scopes(tmp_path: Path) -> None:
    make_run(tmp_path, ADVISOR.format(scope="project"))
    report = control.describe(target(tmp_path, agent="advisor"), include_data=True)
    assert report.agent == "advisor" and report.run_id is None
    found = stores(report)
    assert list(found) == [
        "memory:project",
        "memory:project:sqlite",
        "memory:user",
        "memory:user:sqlite",
    ]
    assert found["memory:project"].exists and found["memory:project"].counts["segments"] == 3
    assert found["memory:project"].metadata["last_segment"] == 3
    assert found["memory:project"].metadata["layout"] == "filesystem"
    assert "Advice three" in found["memory:project"].data["memory"]
    assert [s["prompt"] for s in found["memory:project"].data["segments"]] == [
        "Advice one",
        "Advice two",
        "Advice three",
    ]
    assert report.missing == ["memory:project:sqlite", "memory:user", "memory:user:sqlite"]


def test_an_agent_that_does_not_exist_is_missing_everywhere(tmp_path: Path) -> None:
    report = control.describe(target(tmp_path, agent="nobody"))
    assert report.errors == [] and len(report.missing) == 4
    reset = control.reset(target(tmp_path, agent="nobody"))
    assert reset.cleared == [] and reset.errors == [] and len(reset.missing) == 4
    with pytest.raises(StateError, match="not an agent name"):
        control.describe(target(tmp_path, agent="../up"))


def test_compact_keeps_the_newest_segments_and_the_agent_reads_what_was_folded(
    tmp_path: Path,
) -> None:
    make_run(tmp_path, ADVISOR.format(scope="project"))
    directory = tmp_path / ".prose" / "agents" / "advisor"
    understanding = AgentMemories(None, tmp_path).read("advisor", "project")
    report = control.compact(target(tmp_path, agent="advisor"), "recent", max_messages=2)
    assert report.compacted == ["memory:project"]
    assert visible(directory) == [
        "advisor-002.md",
        "advisor-003.md",
        "memory.md",
    ]
    # The agent still reads its understanding first, now followed by the folded specifics.
    memory = AgentMemories(None, tmp_path).read("advisor", "project")
    assert understanding is not None and memory is not None
    assert memory.startswith(understanding) and "Advice one" in memory
    # Compacting again with room to spare changes nothing.
    again = control.compact(target(tmp_path, agent="advisor"), "recent", max_messages=5)
    assert again.compacted == []
    # A later run numbers its segment after the last one kept.
    make_run(tmp_path, ADVISOR.format(scope="project"))
    assert (directory / "advisor-006.md").is_file()


def test_compact_by_tokens_keeps_the_newest_that_fit(tmp_path: Path) -> None:
    make_run(tmp_path, ADVISOR.format(scope="project"))
    directory = tmp_path / ".prose" / "agents" / "advisor"
    newest = (directory / "advisor-003.md").read_text(encoding="utf-8")
    budget = (len(newest) + 3) // 4  # room for the newest segment only
    report = control.compact(target(tmp_path, agent="advisor"), "tokens", max_tokens=budget)
    assert report.compacted == ["memory:project"]
    assert stores(report)["memory:project"].metadata["kept"] == [3]
    assert visible(directory) == ["advisor-003.md", "memory.md"]
    with pytest.raises(StateError, match="cannot be negative"):
        control.compact(target(tmp_path, agent="advisor"), "tokens", max_tokens=-1)
    with pytest.raises(StateError, match="unknown strategy"):
        control.compact(target(tmp_path, agent="advisor"), "oldest")


def test_reset_an_agent_clears_only_the_scopes_asked(tmp_path: Path) -> None:
    make_run(tmp_path, ADVISOR.format(scope="project"))
    user = tmp_path / "home" / ".prose" / "agents" / "advisor"
    user.mkdir(parents=True)
    (user / "memory.md").write_text("# Agent Memory: advisor\n\nkept\n", encoding="utf-8")
    report = control.reset(target(tmp_path, agent="advisor", scopes=("project",)))
    assert report.cleared == ["memory:project"]
    assert visible(tmp_path / ".prose" / "agents" / "advisor") == []
    assert (user / "memory.md").is_file()
    everywhere = control.reset(target(tmp_path, agent="advisor"))
    assert everywhere.cleared == ["memory:user"]
    assert not (user / "memory.md").exists()
    assert control.describe(target(tmp_path, agent="advisor")).missing == [
        "memory:project",
        "memory:project:sqlite",
        "memory:user",
        "memory:user:sqlite",
    ]


def test_agent_memory_in_sqlite_is_described_compacted_and_reset_by_agent(
    tmp_path: Path,
) -> None:
    kept = AgentMemories(None, tmp_path, tmp_path / "home", state="sqlite")
    for number in range(1, 5):
        kept.record("advisor", "project", f"ask {number}", f"answer {number}", 0.0)
    kept.record("other", "project", "ask", "the other's answer", 0.0)
    project = target(tmp_path, agent="advisor", scopes=("project",))
    report = control.describe(project)
    assert stores(report)["memory:project:sqlite"].counts["segments"] == 4
    assert stores(report)["memory:project:sqlite"].metadata["layout"] == "sqlite"
    compacted = control.compact(project, "recent", max_messages=1)
    assert compacted.compacted == ["memory:project:sqlite"]
    again = AgentMemories(None, tmp_path, tmp_path / "home", state="sqlite")
    assert str(again.read("advisor", "project")).startswith("answer 4\n")
    described = again.describe("advisor", "project", include_data=True)
    assert [s["number"] for s in described["data"]["segments"]] == [4]
    assert "answer 1" in described["data"]["memory"]
    reset = control.reset(project)
    assert reset.cleared == ["memory:project:sqlite"]
    # Precisely the agent asked for: the other stays.
    assert again.describe("other", "project")["exists"] is True
    assert again.describe("advisor", "project")["exists"] is False


def test_a_broken_agents_database_is_a_store_error(tmp_path: Path) -> None:
    database = tmp_path / ".prose" / "agents.db"
    database.parent.mkdir(parents=True)
    database.write_bytes(b"garbage" * 200)
    report = control.describe(target(tmp_path, agent="advisor", scopes=("project",)))
    assert [error.store for error in report.errors] == ["memory:project:sqlite"]
    reset = control.reset(target(tmp_path, agent="advisor", scopes=("project",)))
    assert reset.cleared == [] and reset.errors[-1].message == "refused: nothing was cleared"


# ---------------------------------------------------------------------- everything


def test_reset_all_clears_every_run_and_the_project_memory_not_the_users(
    tmp_path: Path,
) -> None:
    first = make_run(tmp_path)
    second = make_run(tmp_path, ADVISOR.format(scope="project"), state="sqlite")
    user = tmp_path / "home" / ".prose" / "agents" / "mentor"
    user.mkdir(parents=True)
    (user / "memory.md").write_text("mine\n", encoding="utf-8")
    report = control.reset(target(tmp_path, all=True))
    assert report.errors == []
    assert f"{first}/bindings" in report.cleared and f"{second}/bindings" in report.cleared
    # The sqlite run kept its project agent in .prose/agents.db.
    assert "agent advisor/memory:project:sqlite" in report.cleared
    project = control.describe(target(tmp_path, agent="advisor", scopes=("project",)))
    assert project.missing == ["memory:project", "memory:project:sqlite"]
    assert (user / "memory.md").is_file()
    for run_id in (first, second):
        assert control.describe(target(tmp_path, run_id=run_id)).missing == list(control.RUN_STORES)


def test_reset_all_is_refused_whole_when_a_run_is_running(tmp_path: Path) -> None:
    done = make_run(tmp_path)
    catalog = open_catalog("filesystem", tmp_path / ".prose" / "runs")
    live = catalog.create('session "x"\n', "main.prose", {})
    try:
        report = control.reset(target(tmp_path, all=True))
    finally:
        live.close()
    assert report.cleared == []
    assert any(live.run_id in error.store for error in report.errors)
    assert stores(control.describe(target(tmp_path, run_id=done)))["bindings"].exists


def test_describe_the_project(tmp_path: Path) -> None:
    make_run(tmp_path, ADVISOR.format(scope="project"))
    report = control.describe(target(tmp_path))
    found = stores(report)
    assert found["runs"].counts == {"runs": 1, "filesystem": 1}
    assert found["memory:project"].metadata["agents"] == ["advisor"]
    assert report.missing == ["memory:user"]
    with pytest.raises(StateError):
        control.describe(target(tmp_path, all=True))
    with pytest.raises(StateError):
        control.compact(target(tmp_path), "recent")


# ---------------------------------------------------------------------- postgres


def test_every_operation_on_a_postgres_run_touches_only_its_rows(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = request.getfixturevalue("postgres_db_url")  # skips without a cluster
    monkeypatch.setenv("OPENPROSE_POSTGRES_URL", url)
    run_id = make_run(tmp_path, state="postgres")
    other = make_run(tmp_path, state="postgres")
    chosen = {"states": ("postgres",)}
    report = control.describe(target(tmp_path, run_id=run_id, **chosen), include_data=True)
    assert report.errors == []
    found = stores(report)
    assert list(found) == list(control.RUN_STORES)
    assert found["bindings"].counts["bindings"] >= 4
    assert found["journal"].counts["steps"] == 4
    assert url.split("@")[0] not in str(report.to_json())  # never the password
    # Agent memory in PostgreSQL (the project scope: a postgres run's own agents are not
    # kept there yet), compacted and reset by agent.
    from openprose.vm.state.postgres import connect

    kept = AgentMemories(None, tmp_path, state="postgres", connect=lambda: connect(url))
    for number in range(1, 4):
        kept.record("advisor", "project", f"ask {number}", f"answer {number}", 0.0)
    agent = target(tmp_path, agent="advisor", scopes=("project",), **chosen)
    compacted = control.compact(agent, "recent", max_messages=1)
    assert compacted.compacted == ["memory:project:postgres"]
    assert stores(control.describe(agent))["memory:project:postgres"].counts["segments"] == 1
    assert control.reset(agent).cleared == ["memory:project:postgres"]
    before = control.describe(target(tmp_path, run_id=other, **chosen)).to_json()
    reset = control.reset(target(tmp_path, run_id=run_id, **chosen))
    assert reset.errors == []
    assert "bindings" in reset.cleared and "journal" in reset.cleared
    assert control.describe(target(tmp_path, run_id=run_id, **chosen)).missing == list(
        control.RUN_STORES
    )
    info = open_catalog("postgres", tmp_path / ".prose" / "runs", project_root=tmp_path).info(
        run_id
    )
    assert (info.status, info.steps) == ("interrupted", 0)
    assert control.describe(target(tmp_path, run_id=other, **chosen)).to_json() == before
    with pytest.raises(StateError, match="did you mean"):
        control.describe(target(tmp_path, run_id=run_id[:-1] + "?", **chosen))
    refused = control.reset(target(tmp_path, all=True, **chosen))
    assert refused.cleared == [] and refused.errors[0].store == "postgres"


def test_in_context_state_has_nothing_to_manage(tmp_path: Path) -> None:
    with pytest.raises(StateError, match="in-context state keeps nothing"):
        control.describe(target(tmp_path, run_id="20260101-000000-abcdef", states=("in-context",)))


def test_an_unreadable_state_db_is_an_error_of_each_store_it_holds(tmp_path: Path) -> None:
    run_id = make_run(tmp_path, state="sqlite")
    database = tmp_path / ".prose" / "runs" / run_id / "state.db"
    for suffix in ("-wal", "-shm"):
        Path(str(database) + suffix).unlink(missing_ok=True)
    database.write_bytes(b"not a database either" * 100)
    report = control.describe(target(tmp_path, run_id=run_id))
    failing = {error.store for error in report.errors}
    assert {"bindings", "narration", "journal", "imports"} <= failing
    assert all("not a database" in error.message for error in report.errors)
    reset = control.reset(target(tmp_path, run_id=run_id))
    assert reset.cleared == [] and reset.errors[-1].message == "refused: nothing was cleared"
    assert (tmp_path / ".prose" / "runs" / run_id / "imports").is_dir()
