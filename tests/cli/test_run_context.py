"""``prose run --window`` and ``run.windows``/``run.prices`` in the configuration, and the
context budgets ``prose runs show`` reads back, end to end in a child process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.postgres_cluster import postgres_db_url  # noqa: F401

PROGRAM = """\
agent scribe:
  model: opus
  persist: true
  prompt: "You keep notes"

let doc = "{doc}"
session: scribe
  prompt: "Read it"
  context: doc
resume: scribe
  prompt: "Again"
"""


def write(tmp_path: Path, size: int = 3_000) -> None:
    (tmp_path / ".prose").mkdir(exist_ok=True)
    text = PROGRAM.format(doc="w" * size)
    (tmp_path / "main.prose").write_text(text, encoding="utf-8")


def shown(prose: Any) -> dict[str, Any]:
    """The only run's ``prose runs show --json``."""
    listed = prose("runs", "list", "--json")
    (run,) = json.loads(listed.stdout)
    run_id = run["run_id"]
    done = prose("runs", "show", run_id, "--json")
    assert done.returncode == 0, done.stderr
    payload: dict[str, Any] = json.loads(done.stdout)
    return payload


def test_window_sets_a_models_window_for_the_run(prose: Any, tmp_path: Path) -> None:
    write(tmp_path)
    done = prose("run", "main.prose", "--window", "claude-opus-4-8=50_000")
    assert done.returncode == 0, done.stderr
    budgets = shown(prose)["context"]
    assert [b["window"] for b in budgets] == [50_000, 50_000]
    first, second = budgets
    assert first["statement"] == "session: scribe" and first["line"] == 7
    assert first["layers"]["context"] > 0 and first["layers"]["history"] == 0
    assert second["layers"]["history"] > 0  # the resume: sends the first turn
    assert first["actions"] == []


def test_runs_show_lists_the_largest_budgets(prose: Any, tmp_path: Path) -> None:
    write(tmp_path)
    assert prose("run", "main.prose").returncode == 0
    run_id = json.loads(prose("runs", "list", "--json").stdout)[0]["run_id"]
    text = prose("runs", "show", run_id).stdout
    assert "context (the largest of 2 session attempts):" in text
    assert "  line 7: session: scribe: " in text and "of 1,000,000 tokens" in text


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("opus", "--window needs MODEL=TOKENS"),
        ("m=lots", "the window is a whole number of tokens"),
        ("m=10", "a window is at least 1000 tokens"),
    ],
)
def test_a_bad_window_is_a_usage_error(
    prose: Any, tmp_path: Path, given: str, message: str
) -> None:
    write(tmp_path)
    done = prose("run", "main.prose", "--window", given)
    assert done.returncode == 2
    assert message in done.stderr


def test_the_configuration_sets_windows_and_prices(prose: Any, tmp_path: Path) -> None:
    write(tmp_path)
    (tmp_path / "prose.toml").write_text(
        '[run.windows]\n"claude-opus-4-8" = 60000\n[run.prices]\n"m" = [1.0, 2.0]\n',
        encoding="utf-8",
    )
    assert prose("run", "main.prose").returncode == 0
    assert {b["window"] for b in shown(prose)["context"]} == {60_000}
    # The command line wins over the configuration.
    assert prose("run", "main.prose", "--window", "claude-opus-4-8=70000").returncode == 0
    found = []
    for run in json.loads(prose("runs", "list", "--json").stdout):
        payload = json.loads(prose("runs", "show", run["run_id"], "--json").stdout)
        found.append({b["window"] for b in payload["context"]})
    assert sorted(found, key=min) == [{60_000}, {70_000}]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('[run.windows]\n"m" = 10\n', "`run.windows` must map model ids"),
        ('[run.prices]\n"m" = [1.0]\n', "`run.prices` must map model ids"),
    ],
)
def test_a_bad_table_in_the_configuration_is_an_error(
    prose: Any, tmp_path: Path, table: str, message: str
) -> None:
    write(tmp_path)
    (tmp_path / "prose.toml").write_text(table, encoding="utf-8")
    done = prose("run", "main.prose")
    assert done.returncode == 2
    assert message in done.stderr


def test_postgres_runs_show_their_budgets(
    prose: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    env = {"OPENPROSE_POSTGRES_URL": request.getfixturevalue("postgres_db_url")}
    write(tmp_path)
    done = prose("run", "main.prose", "--state", "postgres", "--json", **env)
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    shown = prose("runs", "show", run_id, "--state", "postgres", "--json", **env)
    assert shown.returncode == 0, shown.stderr
    budgets = json.loads(shown.stdout)["context"]
    assert [b["line"] for b in budgets] == [7, 10]
    assert budgets[0]["layers"]["context"] > 0
