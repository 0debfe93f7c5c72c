"""``prose run`` end to end, in a child process, on the offline backend."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

PROGRAM = """\
input topic: "What to research"
let notes = session "Research {topic}"
output summary = session "Summarise"
  context: notes
"""


def write(tmp_path: Path, text: str, name: str = "main.prose") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_run_prints_outputs_and_leaves_a_run_directory(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, PROGRAM)
    done = prose("run", "main.prose", "--input", "topic=bees")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "summary = [dry run] Summarise (agent: -; model: default; context: notes)\n"
    )
    assert "dry run on the offline backend" in done.stderr
    # Not a terminal: progress is one plain line per top-level statement.
    assert 'prose: [2/3] let notes = session "Research {topic}"\n' in done.stderr
    runs = list((tmp_path / ".prose" / "runs").iterdir())
    assert len(runs) == 1
    state = (runs[0] / "state.md").read_text(encoding="utf-8").splitlines()
    assert state[2:4] == ["2→ notes ✓", "3→ summary ✓"]
    assert state[-1].startswith("---end ")


def test_json_result_and_inputs_file(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, PROGRAM)
    (tmp_path / "in.json").write_text('{"topic": "ants"}', encoding="utf-8")
    done = prose("run", "main.prose", "--inputs", "in.json", "--json", "--run-dir", "runs")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "success" and result["dry_run"] is True
    assert result["sessions"] == 2
    assert Path(result["run_dir"]).parent == (tmp_path / "runs").resolve()
    assert result["outputs"]["summary"].startswith("[dry run] Summarise")


def test_input_from_a_file(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, PROGRAM)
    (tmp_path / "topic.txt").write_text("moths", encoding="utf-8")
    done = prose("run", "main.prose", "--input", "topic=@topic.txt", "--trace")
    assert done.returncode == 0, done.stderr
    assert '[Position] Executing: let notes = session "Research {topic}"' in done.stderr
    assert '"[dry run] Research moths' in done.stderr


def test_the_json_trace_is_one_event_a_line(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, 'session "Hi"\n')
    done = prose("run", "main.prose", "--trace", "--trace-format", "json")
    events = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert [e["event"] for e in events] == [
        "program_start",
        "position",
        "success",
        "binding",
        "program_end",
    ]
    assert all(isinstance(e["ts"], float) for e in events)


def test_a_missing_input_without_a_terminal_is_one_line(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, PROGRAM)
    done = prose("run", "main.prose", stdin="")
    assert done.returncode == 2
    assert done.stderr == (
        "prose: error: missing input 'topic' (give it with --input topic=VALUE)\n"
    )
    assert not (tmp_path / ".prose").exists()


def test_an_unknown_input_is_a_usage_error(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, PROGRAM)
    done = prose("run", "main.prose", "--input", "topic=a", "--input", "other=b")
    assert done.returncode == 2
    assert done.stderr == "prose: error: the program has no input 'other'\n"


def test_a_program_with_errors_prints_them_like_check_and_does_not_run(
    prose: Any, tmp_path: Path
) -> None:
    write(tmp_path, "let x = session: nobody\n")
    done = prose("run", "main.prose")
    checked = prose("check", "main.prose")
    assert done.returncode == 1
    assert done.stderr.startswith(checked.stdout)
    assert not (tmp_path / ".prose").exists()


def test_a_failing_program_names_the_run_and_the_statement(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, 'session "A"\nthrow "gave up"\n')
    done = prose("run", "main.prose")
    assert done.returncode == 1
    assert 'failed at `throw "gave up"`: gave up' in done.stderr
    runs = list((tmp_path / ".prose" / "runs").iterdir())
    assert runs[0].name in done.stderr


def test_offline_rounds(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, 'loop until **done** (max: 9):\n  session "Work"\n')
    done = prose("run", "main.prose", "--offline-rounds", "4", "--json")
    assert json.loads(done.stdout)["sessions"] == 3
    bad = prose("run", "main.prose", "--offline-rounds", "0")
    assert bad.returncode == 2


def test_a_missing_file_is_a_usage_error(prose: Any) -> None:
    done = prose("run", "nowhere.prose")
    assert done.returncode == 2
    assert done.stderr.startswith("prose: error: cannot read nowhere.prose")


def test_ctrl_c_stops_the_run_with_130_and_records_it(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    write(tmp_path, 'repeat 100000000:\n  session "Spin"\n')
    child = subprocess.Popen(
        [sys.executable, "-m", "openprose", "run", "main.prose"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        runs = tmp_path / ".prose" / "runs"
        # Wait until the run has really started (a session recorded), not a fixed time.
        while time.monotonic() < deadline:
            states = list(runs.glob("[!.]*/state.md")) if runs.is_dir() else []
            if states and "1→ ✓" in states[0].read_text(encoding="utf-8"):
                break
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
    assert child.returncode == 130, stderr
    assert "prose: interrupted" in stderr
    last = states[0].read_text(encoding="utf-8").splitlines()[-1]
    assert last.startswith("---error ") and last.endswith(" interrupted")


def test_a_missing_input_is_asked_for_on_a_terminal(tmp_path: Path) -> None:
    import os
    import pty
    import subprocess
    import sys

    write(tmp_path, PROGRAM)
    leader, follower = pty.openpty()
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "openprose", "run", "main.prose"],
            cwd=tmp_path,
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.write(leader, b"wasps\n")
        stdout, stderr = child.communicate(timeout=60)
    finally:
        os.close(leader)
        os.close(follower)
    assert child.returncode == 0, stderr
    assert "topic (What to research): " in stderr
    assert stdout.startswith("summary = [dry run] Summarise")
    runs = list((tmp_path / ".prose" / "runs").iterdir())
    topic = (runs[0] / "bindings" / "topic.md").read_text(encoding="utf-8")
    assert topic.endswith("---\n\nwasps\n")


def test_record_then_replay_gives_the_same_outputs(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, PROGRAM)
    recorded = prose("run", "main.prose", "--input", "topic=bees", "--record", "rec.jsonl")
    assert recorded.returncode == 0, recorded.stderr
    replayed = prose("run", "main.prose", "--input", "topic=bees", "--replay", "rec.jsonl")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == recorded.stdout
    assert "prose: replaying rec.jsonl: no model is called" in replayed.stderr
    changed = prose("run", "main.prose", "--input", "topic=ants", "--replay", "rec.jsonl")
    assert changed.returncode == 1
    assert "replay: the session at step 2#attempt1 differs from the recording" in changed.stderr
    missing = prose("run", "main.prose", "--input", "topic=bees", "--replay", "nowhere.jsonl")
    assert missing.returncode == 2


def test_max_sessions(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, 'session "A"\nsession "B"\n')
    done = prose("run", "main.prose", "--max-sessions", "1")
    assert done.returncode == 1
    assert "session limit reached (1 session)" in done.stderr
    assert prose("run", "main.prose", "--max-sessions", "-1").returncode == 2


def test_a_large_fan_out_is_confirmed_on_a_terminal(tmp_path: Path) -> None:
    import os
    import pty
    import subprocess
    import sys

    items = ", ".join(f'"i{n}"' for n in range(101))
    write(tmp_path, f'parallel for x in [{items}]:\n  session "Do {{x}}"\n')
    results = []
    for extra, answer in (([], b"n\n"), (["--yes"], b"")):
        leader, follower = pty.openpty()
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", "openprose", "run", "main.prose", "--json", *extra],
                cwd=tmp_path,
                stdin=follower,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            os.write(leader, answer)
            stdout, stderr = child.communicate(timeout=60)
        finally:
            os.close(leader)
            os.close(follower)
        results.append((child.returncode, stdout, stderr))
    (declined_status, _, declined_err), (yes_status, yes_out, _) = results
    assert declined_status == 1
    assert "starts 101 branches; continue? [y/N]" in declined_err
    assert "fan-out of 101 branches declined" in declined_err
    assert yes_status == 0
    assert json.loads(yes_out)["sessions"] == 101


def test_a_resumed_run_continues_its_recording(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, PROGRAM)
    stopped = prose(
        "run", "main.prose", "--input", "topic=bees", "--max-sessions", "1", "--record", "rec.jsonl"
    )
    assert stopped.returncode == 1
    run_dir = next((tmp_path / ".prose" / "runs").iterdir())
    resumed = prose("run", "main.prose", "--resume", run_dir.name, "--record", "rec.jsonl")
    assert resumed.returncode == 0, resumed.stderr
    # The recording holds both attempts' exchanges: a fresh run replays from it whole.
    replayed = prose("run", "main.prose", "--input", "topic=bees", "--replay", "rec.jsonl")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == resumed.stdout


def test_resume_continues_a_stopped_run(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, PROGRAM)
    stopped = prose("run", "main.prose", "--input", "topic=bees", "--max-sessions", "1")
    assert stopped.returncode == 1
    run_dir = next((tmp_path / ".prose" / "runs").iterdir())
    resumed = prose("run", "main.prose", "--resume", run_dir.name, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming run {run_dir.name}" in resumed.stderr
    result = json.loads(resumed.stdout)
    assert result["run_id"] == run_dir.name
    assert result["outputs"]["summary"].startswith("[dry run] Summarise")
    journal = sqlite3.connect(run_dir / "journal.db")
    keys = [k for (k,) in journal.execute("SELECT key FROM journal_steps ORDER BY recorded_at")]
    journal.close()
    assert keys == ["2#attempt1", "3#attempt1"]
    again = prose("run", "main.prose", "--resume", str(run_dir))  # a directory works too
    assert again.returncode == 0, again.stderr
    write(tmp_path, PROGRAM + 'session "More"\n')
    changed = prose("run", "main.prose", "--resume", run_dir.name)
    assert changed.returncode == 2
    assert "changed since run" in changed.stderr
    assert '+session "More"' in changed.stderr
    assert "--force" in changed.stderr
    forced = prose("run", "main.prose", "--resume", run_dir.name, "--force", "--json")
    assert forced.returncode == 0, forced.stderr
    assert "resuming with a changed program" in forced.stderr
    journal = sqlite3.connect(run_dir / "journal.db")
    rows = journal.execute("SELECT key, COUNT(*) FROM journal_steps GROUP BY key").fetchall()
    journal.close()
    assert sorted(rows) == [("2#attempt1", 1), ("3#attempt1", 1), ("4#attempt1", 1)]
    unknown = prose("run", "main.prose", "--resume", "20990101-000000-nosuch")
    assert unknown.returncode == 2
    assert "no run '20990101-000000-nosuch'" in unknown.stderr


def test_state_sqlite_keeps_the_run_in_state_db_and_resumes_it(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, PROGRAM)
    stopped = prose(
        "run", "main.prose", "--input", "topic=bees", "--state", "sqlite", "--max-sessions", "1"
    )
    assert stopped.returncode == 1
    [run_dir] = (tmp_path / ".prose" / "runs").iterdir()
    assert (run_dir / "state.db").is_file() and not (run_dir / "bindings").exists()
    resumed = prose("run", "main.prose", "--resume", run_dir.name, "--state", "sqlite", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["outputs"]["summary"].startswith("[dry run] Summarise")
    # Without --state, the run is looked for among filesystem runs and not found.
    elsewhere = prose("run", "main.prose", "--resume", run_dir.name)
    assert elsewhere.returncode == 2
    assert f"no run {run_dir.name!r}" in elsewhere.stderr


def test_state_from_the_configuration(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, PROGRAM)
    (tmp_path / "prose.toml").write_text('run = { state = "sqlite" }\n', encoding="utf-8")
    done = prose("run", "main.prose", "--input", "topic=bees")
    assert done.returncode == 0, done.stderr
    [run_dir] = (tmp_path / ".prose" / "runs").iterdir()
    assert (run_dir / "state.db").is_file()
    (tmp_path / "prose.toml").write_text('run = { state = "paper" }\n', encoding="utf-8")
    bad = prose("run", "main.prose", "--input", "topic=bees")
    assert bad.returncode == 2
    assert "`run.state` must be one of filesystem, sqlite, postgres, in-context" in bad.stderr


def test_state_in_context_leaves_no_files_and_shows_its_narration(
    prose: Any, tmp_path: Path
) -> None:
    write(tmp_path, PROGRAM)
    done = prose("run", "main.prose", "--input", "topic=bees", "--state", "in-context")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / ".prose").exists()
    assert "State mode: in-context" in done.stderr
    assert "[Binding] let notes = " in done.stderr  # the narration is the record


def test_state_postgres_without_a_url_is_a_usage_error(prose: Any, tmp_path: Path) -> None:
    write(tmp_path, PROGRAM)
    done = prose("run", "main.prose", "--input", "topic=bees", "--state", "postgres")
    assert done.returncode == 2
    assert "needs a PostgreSQL URL" in done.stderr
    assert "Traceback" not in done.stderr
