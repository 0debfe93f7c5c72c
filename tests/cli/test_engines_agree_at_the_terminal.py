"""``prose run`` prints the same on both engines: a program we generate
(tests/support/runnable_programs.py), run on the offline backend with ``--engine local`` and
with ``--engine dbos``, writes the same stdout (its outputs) and the same stderr (progress,
the summary, the breakdown by agent and by statement, a failure), but for the run's id and
its directory.  tests/vm/engines/test_engines_agree_on_generated.py compares what the runs
leave; this compares what a user sees: DBOS's own warnings reached the terminal once, which
only such a comparison shows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.extras import require
from tests.support.runnable_programs import runnable_program

require("dbos", "pip install 'openprose[dbos]'")

# A third of the seeds the engines' comparison runs (it checks what they cover); each
# was run both ways through the command line and agreed.
SEEDS = range(1000, 1030, 3)
# The seeds' runs all succeed: a failed run's report too.
FAILING = (
    'let notes = session "Gather notes"\n'
    "try:\n"
    '  throw "a first problem"\n'
    "catch as err:\n"
    '  session "Handle {err} with {notes}"\n'
    'throw "stop here"\n'
)
PROGRAMS = {f"seed-{seed}": runnable_program(seed) for seed in SEEDS} | {"a-failure": FAILING}
RUN_ID = re.compile(r"\d{8}-\d{6}-[a-z0-9]{6}")


def _said(prose: Any, here: Path, text: str, engine: str) -> tuple[int, str, str]:
    here.mkdir()
    (here / "main.prose").write_text(text, encoding="utf-8")
    done = prose("run", "main.prose", "--engine", engine, cwd=here)
    stderr = RUN_ID.sub("RUN", done.stderr).replace(str(here), "HERE")
    return done.returncode, done.stdout, stderr


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_run_says_the_same_on_both_engines(
    name: str, prose: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENPROSE_DBOS_URL", raising=False)  # each run's own, beside it
    text = PROGRAMS[name]
    local = _said(prose, tmp_path / "local", text, "local")
    dbos = _said(prose, tmp_path / "dbos", text, "dbos")
    assert "Traceback" not in dbos[2] and "WARNING" not in dbos[2], dbos[2]
    assert dbos == local, text
    assert "sessions" in local[2] or "session," in local[2]  # the summary was said
    if name == "a-failure":
        assert local[0] == 1 and 'failed at `throw "stop here"`' in local[2], local[2]


def test_the_seeds_cover_fan_outs_and_failures() -> None:
    texts = [runnable_program(seed) for seed in SEEDS]
    for construct in ("parallel for", "parallel", "throw"):
        assert any(construct in text for text in texts), construct
