"""Inputs declared mid-program: the run pauses where the input stands and asks for it."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from openprose.syntax import parse
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import MissingInput, Options, mid_program_inputs
from openprose.vm.runner import run_file
from tests.vm.vm_support import Recording

PROGRAM = """\
input topic: "What to research"
let notes = session "Research {topic}"
input angle: "Which angle to take"
output summary = session "Summarise {notes} from the {angle} angle"
"""


# Every test here runs on both engines (tests/vm/conftest.py).
pytestmark = pytest.mark.both_engines


def test_only_inputs_after_the_first_executable_statement_are_mid_program() -> None:
    module = parse('use "./lib"\ninput a: "x"\nagent w:\n  model: opus\ninput b: "y"\n' + PROGRAM)
    assert mid_program_inputs(module) == {"angle"}


def run(tmp_path: Path, inputs: dict[str, str], ask: object) -> tuple[object, Recording, list]:
    main = tmp_path / "main.prose"
    main.write_text(PROGRAM, encoding="utf-8")
    backend = Recording(OfflineBackend())
    asked: list[tuple[str, str, int]] = []

    async def answer(name: str, prompt: str) -> str:
        asked.append((name, prompt, len(backend.calls)))
        return "cost"

    result = asyncio.run(
        run_file(
            main,
            inputs,
            backend=backend,
            runs_root=tmp_path / "runs",
            options=Options(jitter=False),
            ask=answer if ask else None,
        )
    )
    return result, backend, asked


def test_the_run_asks_when_it_reaches_the_input(tmp_path: Path) -> None:
    result, backend, asked = run(tmp_path, {"topic": "bees"}, ask=True)
    assert result.status == "success"  # type: ignore[attr-defined]
    # Asked once, with its description, after the first session and before the second.
    assert asked == [("angle", "Which angle to take", 1)]
    assert [call[1] for call in backend.calls] == [
        "Research bees",
        "Summarise [dry run] Research bees (agent: -; model: default) from the cost angle",
    ]
    (run_dir,) = (tmp_path / "runs").iterdir()
    # Kept with the run's inputs (a resumed run starts with it) and as a binding.
    given = json.loads((run_dir / "inputs.json").read_text(encoding="utf-8"))
    assert given == {"topic": "bees", "angle": "cost"}
    assert (run_dir / "bindings" / "angle.md").read_text(encoding="utf-8").endswith("\ncost\n")


def test_a_supplied_mid_program_input_is_not_asked(tmp_path: Path) -> None:
    result, _backend, asked = run(tmp_path, {"topic": "bees", "angle": "risk"}, ask=True)
    assert result.status == "success"  # type: ignore[attr-defined]
    assert asked == []


def test_without_anyone_to_ask_a_missing_input_stops_the_run_before_it_starts(
    tmp_path: Path,
) -> None:
    with pytest.raises(MissingInput) as missing:
        run(tmp_path, {"topic": "bees"}, ask=False)
    assert missing.value.name == "angle"


def test_prose_run_asks_on_a_terminal_when_the_input_is_reached(tmp_path: Path) -> None:
    (tmp_path / "main.prose").write_text(PROGRAM, encoding="utf-8")
    leader, follower = pty.openpty()
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "openprose", "run", "main.prose", "--input", "topic=bees"],
            cwd=tmp_path,
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
        )
        os.write(leader, b"cost\n")
        stdout, stderr = child.communicate(timeout=60)
    finally:
        os.close(leader)
        os.close(follower)
    assert child.returncode == 0, stderr
    assert "angle (Which angle to take): " in stderr
    assert stdout.startswith("summary = [dry run] Summarise")
    assert "from the cost angle" in stdout
