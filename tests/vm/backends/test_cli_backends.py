"""``prose run --backend openai|anthropic`` end to end, in a child process, against a
loopback fake server."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.vm.backends.provider_fakes import FakeProvider, openai_completion, openai_stream

PROGRAM = """\
agent writer:
  model: haiku
  prompt: "You write."
let notes = session: writer
  prompt: "Research bees"
if **the notes are good**:
  output summary = session "Summarise"
    context: notes
"""


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


def prose(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # The suite's guard has removed the provider variables from os.environ already.
    environment = {**os.environ, "PYTHONIOENCODING": "utf-8", **env}
    return subprocess.run(
        [sys.executable, "-m", "openprose", "run", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=environment,
        timeout=60,
    )


def test_a_run_on_an_openai_compatible_server(fake: FakeProvider, tmp_path: Path) -> None:
    (tmp_path / "prog.prose").write_text(PROGRAM, encoding="utf-8")
    fake.script(
        openai_stream(["bees ", "dance"], ref="chatcmpl-1"),
        openai_completion("true", ref="chatcmpl-2"),
        openai_stream(["they dance"], ref="chatcmpl-3"),
    )
    done = prose(
        tmp_path,
        "prog.prose",
        "--backend",
        "openai",
        "--model-map",
        "haiku=tiny-local",
        OPENAI_API_KEY="test-key",
        OPENAI_BASE_URL=fake.url + "/v1",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "summary = they dance\n"
    assert "running on the openai backend" in done.stderr
    models = [request.body["model"] for request in fake.requests]
    assert models == ["tiny-local", "gpt-5-mini", "gpt-5-mini"]
    assert fake.requests[0].body["messages"][0] == {"role": "system", "content": "You write."}
    assert "bees dance" in fake.requests[2].body["messages"][-1]["content"]


def test_a_missing_key_is_one_line_and_exit_2_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "prog.prose").write_text(PROGRAM, encoding="utf-8")
    done = prose(tmp_path, "prog.prose", "--backend", "anthropic")
    assert done.returncode == 2
    assert done.stderr == (
        "prose: error: the anthropic backend needs ANTHROPIC_API_KEY in the environment "
        "or .prose/.env\n"
    )
    assert not (tmp_path / ".prose" / "runs").exists()


def test_a_server_error_fails_the_run_naming_the_step(fake: FakeProvider, tmp_path: Path) -> None:
    from tests.vm.backends.provider_fakes import error_reply

    (tmp_path / "prog.prose").write_text(PROGRAM, encoding="utf-8")
    fake.script(error_reply(500, "boom"))
    done = prose(
        tmp_path,
        "prog.prose",
        "--backend",
        "openai",
        OPENAI_API_KEY="test-key",
        OPENAI_BASE_URL=fake.url + "/v1",
    )
    assert done.returncode == 1, done.stderr
    assert "HTTP 500" in done.stderr and "Traceback" not in done.stderr


def test_the_model_map_of_pyproject_and_the_command_line_wins(
    fake: FakeProvider, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.openprose.run]\nmodel-map = { haiku = "from-config", sonnet = "also-config" }\n',
        encoding="utf-8",
    )
    (tmp_path / "prog.prose").write_text(PROGRAM, encoding="utf-8")
    fake.script(openai_stream(["notes"]), openai_completion("false"), openai_stream(["unused"]))
    done = prose(
        tmp_path,
        "prog.prose",
        "--backend",
        "openai",
        "--model-map",
        "sonnet=from-flag",
        OPENAI_API_KEY="test-key",
        OPENAI_BASE_URL=fake.url + "/v1",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # the condition was false: no output
    assert [request.body["model"] for request in fake.requests] == ["from-config", "from-flag"]


def test_a_run_on_the_claude_code_backend(fake: FakeProvider, tmp_path: Path) -> None:
    pytest.importorskip("claude_agent_sdk")
    from openprose.vm.backends.claude_code_backend import session_id
    from tests.vm.backends.provider_fakes import anthropic_stream

    (tmp_path / "prog.prose").write_text(PROGRAM, encoding="utf-8")
    fake.script(
        anthropic_stream(["bees dance"]),
        anthropic_stream(["true"]),
        anthropic_stream(["they dance"]),
    )
    config = tmp_path / "claude"
    done = prose(
        tmp_path,
        "prog.prose",
        "--backend",
        "claude-code",
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=fake.url,
        CLAUDE_CONFIG_DIR=str(config),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "summary = they dance\n"
    assert "running on the claude-code backend" in done.stderr
    assert fake.requests[0].body["model"] == "claude-haiku-4-5"
    # Each session's transcript is named by the run and the step: a resumed run finds it.
    [run] = (tmp_path / ".prose" / "runs").iterdir()
    journal = sqlite3.connect(run / "journal.db")
    [(result,)] = journal.execute(
        "SELECT result FROM journal_steps WHERE kind = 'session' AND key = '2#attempt1'"
    )
    journal.close()
    assert json.loads(result)["session_ref"] == session_id(run.name, "2")  # statement 2
    assert session_id(run.name, "2") in {p.stem for p in config.glob("projects/*/*.jsonl")}
