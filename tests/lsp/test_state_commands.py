"""``prose.runs.list`` and ``prose.state.describe|reset|compact`` through the real server:
answers for runs made on the offline backend, and refusals shown as messages, never as
internal errors."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.runner import run_file

Session = Any  # the conftest's Session: a live client plus position helpers

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROGRAM = """\
agent advisor:
  model: opus
  persist: project
  prompt: "Advise"

let notes = session "Take notes"
session: advisor
  prompt: "Advice one"
resume: advisor
  prompt: "Advice two"
"""
COMMANDS = ["prose.runs.list", "prose.state.describe", "prose.state.reset", "prose.state.compact"]

_folders = itertools.count()


async def project(session: Session, runs: int = 1) -> tuple[Path, str, list[str]]:
    """A folder with main.prose run ``runs`` times and other.prose run once."""
    folder = session.root / f"state-{next(_folders)}"
    folder.mkdir()
    made = []
    for name, count in (("main.prose", runs), ("other.prose", 1)):
        path = folder / name
        path.write_text(PROGRAM, encoding="utf-8")
        for _ in range(count):
            result = await run_file(
                path,
                {},
                backend=OfflineBackend(),
                runs_root=folder / ".prose" / "runs",
                project_root=folder,
            )
            assert result.status == "success"
            if name == "main.prose":
                made.append(str(result.run_id))
    return folder, (folder / "main.prose").as_uri(), made


async def execute(session: Session, command: str, *arguments: Any) -> Any:
    return await asyncio.wait_for(
        session.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=list(arguments))
        ),
        30,
    )


async def refused(session: Session, command: str, *arguments: Any) -> str:
    """Run a command that must be refused: its answer is None and a message says why."""
    shown = len(session.client.messages)
    assert await execute(session, command, *arguments) is None
    for _ in range(250):
        if len(session.client.messages) > shown:
            break
        await asyncio.sleep(0.02)
    message = session.client.messages[shown]
    assert message.type == types.MessageType.Error
    return str(message.message)


async def test_the_commands_are_advertised(session: Session) -> None:
    provider = session.server.execute_command_provider
    assert provider is not None
    assert set(COMMANDS) <= set(provider.commands)


async def test_runs_list_answers_the_programs_runs_newest_first(session: Session) -> None:
    _, uri, made = await project(session, runs=2)
    runs = await execute(session, "prose.runs.list", uri)
    assert [run["run_id"] for run in runs] == made[::-1]
    assert all(run["program_name"] == "main.prose" for run in runs)
    assert runs[0]["status"] == "completed" and runs[0]["state"] == "filesystem"
    every = await execute(session, "prose.runs.list", uri, {"allPrograms": True})
    assert len(every) == 3


async def test_describe_a_run_and_an_agent(session: Session) -> None:
    _, uri, (run_id,) = await project(session)
    report = await execute(session, "prose.state.describe", uri, {"runId": run_id})
    assert report["operation"] == "describe" and report["run_id"] == run_id
    assert [store["name"] for store in report["stores"]] == [
        "bindings", "narration", "journal", "agents", "imports",
    ]  # fmt: skip
    assert report["errors"] == []
    full = await execute(
        session, "prose.state.describe", uri, {"runId": run_id, "includeData": True}
    )
    assert "notes" in [binding["name"] for binding in full["stores"][0]["data"]]
    agent = await execute(session, "prose.state.describe", uri, {"agent": "advisor"})
    project_memory = next(s for s in agent["stores"] if s["name"] == "memory:project")
    assert project_memory["exists"] and project_memory["counts"]["segments"] == 4


async def test_reset_and_compact(session: Session) -> None:
    folder, uri, (run_id,) = await project(session)
    compacted = await execute(
        session,
        "prose.state.compact",
        uri,
        {"agent": "advisor", "strategy": "recent", "maxMessages": 1},
    )
    assert compacted["compacted"] == ["memory:project"]
    report = await execute(session, "prose.state.reset", uri, {"runId": run_id})
    assert report["cleared"] == ["bindings", "narration", "journal"]
    assert not list((folder / ".prose" / "runs" / run_id / "bindings").iterdir())
    everything = await execute(session, "prose.state.reset", uri, {"all": True})
    assert everything["errors"] == [] and "agent advisor/memory:project" in everything["cleared"]


async def test_refusals_are_messages(session: Session) -> None:
    _, uri, (run_id,) = await project(session)
    near = await refused(session, "prose.state.describe", uri, {"runId": run_id[:-1] + "_"})
    assert f"did you mean '{run_id}'?" in near
    assert "needs a program's URI" in await refused(session, "prose.state.describe")
    assert "needs a program's URI" in await refused(session, "prose.runs.list", uri, [1])
    assert "not an agent name" in await refused(
        session, "prose.state.reset", uri, {"agent": "../x"}
    )
    assert "unknown strategy" in await refused(
        session, "prose.state.compact", uri, {"agent": "advisor", "strategy": "oldest"}
    )
    assert "whole number" in await refused(
        session, "prose.state.compact", uri, {"agent": "advisor", "maxMessages": "two"}
    )
    assert "Unknown state backend" in await refused(
        session, "prose.runs.list", uri, {"state": "floppy"}
    )


async def test_a_store_error_is_in_the_report_and_shown_as_a_warning(session: Session) -> None:
    folder, uri, (run_id,) = await project(session)
    journal = folder / ".prose" / "runs" / run_id / "journal.db"
    for suffix in ("-wal", "-shm"):
        Path(str(journal) + suffix).unlink(missing_ok=True)
    journal.write_bytes(b"not a database" * 100)
    shown = len(session.client.messages)
    report = await execute(session, "prose.state.reset", uri, {"runId": run_id})
    assert report["cleared"] == []
    assert [error["store"] for error in report["errors"]] == ["journal", "reset"]
    for _ in range(250):
        if len(session.client.messages) > shown:
            break
        await asyncio.sleep(0.02)
    warning = session.client.messages[shown]
    assert warning.type == types.MessageType.Warning
    assert "refused: nothing was cleared" in warning.message
