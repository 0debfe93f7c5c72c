"""``prose run --max-tokens/--max-cost``, the end-of-run breakdown and ``prose runs show``'s,
end to end in a child process on the offline backend (which reports usage, about four
characters a token)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.postgres_cluster import postgres_db_url  # noqa: F401

PROGRAM = """\
agent writer:
  prompt: "You write."
session "Research"
let draft = session: writer
  prompt: "Draft"
output final = session: writer
  prompt: "Polish"
"""


def write(tmp_path: Path) -> None:
    (tmp_path / "main.prose").write_text(PROGRAM, encoding="utf-8")


def test_the_summary_breaks_tokens_down_by_agent_and_statement(prose: Any, tmp_path: Path) -> None:
    write(tmp_path)
    done = prose("run", "main.prose")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    start = lines.index("prose:   by agent:")
    assert lines[start + 1].startswith("prose:     writer: 2 calls, ")
    assert lines[start + 2].startswith("prose:     (no agent): 1 call, ")
    assert lines[start + 3] == "prose:   top statements by cost (of 3):"
    assert lines[start + 4].startswith("prose:     line 4: let draft = session: writer: 1 call")


def test_json_has_the_full_breakdown(prose: Any, tmp_path: Path) -> None:
    write(tmp_path)
    done = prose("run", "main.prose", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    breakdown = result["breakdown"]
    usage = result["usage"]
    assert breakdown["total"]["input_tokens"] == usage["input_tokens"]
    assert breakdown["total"]["output_tokens"] == usage["output_tokens"]
    assert [a["agent"] for a in breakdown["agents"]] == ["writer", None]
    assert [s["line"] for s in breakdown["sessions"]] == [3, 4, 6]
    assert {s["statement"] for s in breakdown["statements"]} == {
        'session "Research"',
        "let draft = session: writer",
        "output final = session: writer",
    }


def test_max_tokens_stops_the_run_and_a_higher_limit_resumes_it(prose: Any, tmp_path: Path) -> None:
    write(tmp_path)
    full = json.loads(prose("run", "main.prose", "--json").stdout)["breakdown"]["total"]
    first_two = sum(s["input_tokens"] + s["output_tokens"] for s in full_sessions(prose)[:2])
    stopped = prose("run", "main.prose", "--json", "--max-tokens", str(first_two))
    assert stopped.returncode == 1
    result = json.loads(stopped.stdout)
    run_id = result["run_id"]
    assert result["status"] == "error"
    assert result["error"].startswith(f"token limit reached ({first_two} used, the next call")
    assert result["sessions"] == 2  # the third was never asked
    assert f"--resume {run_id} --max-tokens" in stopped.stderr
    # The same limit stops it at the same place: replayed calls count toward it.
    again = prose("run", "main.prose", "--resume", run_id, "--max-tokens", str(first_two))
    assert again.returncode == 1
    assert "token limit reached" in again.stderr
    done = prose("run", "main.prose", "--resume", run_id, "--max-tokens", "100000", "--json")
    assert done.returncode == 0, done.stderr
    resumed = json.loads(done.stdout)
    assert resumed["breakdown"]["total"] == full
    assert resumed["outputs"]["final"].startswith("[dry run] Polish")
    shown = prose("runs", "show", run_id)
    assert shown.returncode == 0, shown.stderr
    assert "by agent:\n  writer: 2 calls, " in shown.stdout
    assert "top statements by cost (of 3):\n  line 4: let draft = session: writer" in shown.stdout
    as_json = json.loads(prose("runs", "show", run_id, "--json").stdout)
    assert as_json["breakdown"]["total"] == full


def full_sessions(prose: Any) -> list[dict[str, Any]]:
    done = prose("run", "main.prose", "--json")
    sessions: list[dict[str, Any]] = json.loads(done.stdout)["breakdown"]["sessions"]
    return sessions


def test_a_limit_passed_by_the_last_call_stops_the_run_after_it(prose: Any, tmp_path: Path) -> None:
    write(tmp_path)
    done = prose("run", "main.prose", "--max-tokens", "5")
    assert done.returncode == 1
    assert "prose: error: run " in done.stderr
    assert "token limit reached (" in done.stderr and " of 5 tokens)" in done.stderr


def test_sqlite_runs_show_their_breakdown(prose: Any, tmp_path: Path) -> None:
    write(tmp_path)
    done = prose("run", "main.prose", "--state", "sqlite", "--json")
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    shown = json.loads(prose("runs", "show", run_id, "--state", "sqlite", "--json").stdout)
    assert shown["breakdown"]["total"]["calls"] == 3


def test_postgres_runs_show_their_breakdown(
    prose: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    env = {"OPENPROSE_POSTGRES_URL": request.getfixturevalue("postgres_db_url")}
    write(tmp_path)
    done = prose("run", "main.prose", "--state", "postgres", "--max-tokens", "25", "--json", **env)
    assert done.returncode == 1
    stopped = json.loads(done.stdout)
    run_id = stopped["run_id"]
    shown = prose("runs", "show", run_id, "--state", "postgres", "--json", **env)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["breakdown"] == stopped["breakdown"]
    resumed = prose("run", "main.prose", "--resume", run_id, "--state", "postgres", **env)
    assert resumed.returncode == 0, resumed.stderr
    text = prose("runs", "show", run_id, "--state", "postgres", **env).stdout
    assert "by agent:\n  writer: 2 calls, " in text


def test_a_negative_token_limit_is_a_usage_error(prose: Any, tmp_path: Path) -> None:
    write(tmp_path)
    done = prose("run", "main.prose", "--max-tokens", "-1")
    assert done.returncode == 2
    assert "--max-tokens must be 0 or more" in done.stderr


FAN_OUT = """\
agent critic:
  model: opus
  prompt: "You criticise."
parallel for x in ["a", "b", "c"]:
  session: critic
    prompt: "Review {x}"
"""

# No request is made in these runs (the fan-out is refused, or the session limit is 0), so the
# address is never reached.
ANTHROPIC = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}


def test_a_costly_fan_out_is_refused_off_a_terminal(prose: Any, tmp_path: Path) -> None:
    (tmp_path / "fan.prose").write_text(FAN_OUT, encoding="utf-8")
    args = ("run", "fan.prose", "--backend", "anthropic", "--fan-out-cost", "0.5")
    done = prose(*args, stdin="", **ANTHROPIC)
    assert done.returncode == 1
    assert "fan-out of 3 branches estimated at $0." in done.stderr
    assert "declined (more than $0.50)" in done.stderr
    assert "--resume " in done.stderr and " --yes" in done.stderr
    # Under the default threshold ($1.00) it is not asked: the run goes on to its sessions,
    # which --max-sessions 0 stops before any request.
    below = prose("run", "fan.prose", "--backend", "anthropic", "--max-sessions", "0", **ANTHROPIC)
    assert "session limit reached (0 sessions)" in below.stderr
    # --yes goes ahead without asking.
    told = prose(*args, "--yes", "--max-sessions", "0", stdin="", **ANTHROPIC)
    assert told.returncode == 1
    assert "session limit reached (0 sessions)" in told.stderr
    assert "declined" not in told.stderr


def test_a_price_given_on_the_command_line_replaces_the_tables(prose: Any, tmp_path: Path) -> None:
    (tmp_path / "fan.prose").write_text(FAN_OUT, encoding="utf-8")
    args = ("run", "fan.prose", "--backend", "anthropic", "--fan-out-cost", "0.5")
    free = ("--price", "claude-opus-4-8=0,0", "--max-sessions", "0")
    done = prose(*args, *free, stdin="", **ANTHROPIC)
    assert "declined" not in done.stderr  # estimated at $0 now
    assert "session limit reached (0 sessions)" in done.stderr
    dear = prose(*args, "--price", "claude-opus-4-8=1000,1000", "--max-sessions", "0", **ANTHROPIC)
    assert "fan-out of 3 branches estimated at $24" in dear.stderr  # 3 x 8,2xx tokens
    bad = prose("run", "fan.prose", "--price", "claude-opus-4-8=1")
    assert bad.returncode == 2
    assert "--price needs MODEL=INPUT,OUTPUT[,CACHE_READ[,CACHE_WRITE]]" in bad.stderr


def test_a_negative_fan_out_cost_is_a_usage_error(prose: Any, tmp_path: Path) -> None:
    write(tmp_path)
    done = prose("run", "main.prose", "--fan-out-cost", "-1")
    assert done.returncode == 2
    assert "--fan-out-cost must be 0 or more" in done.stderr
