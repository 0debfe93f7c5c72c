"""Programs we generate (tests/support/runnable_programs.py) leave the same things on the
dbos engine as on the local one, as the official examples do (test_engines_agree_on_corpus):
status, outputs, the model calls asked, the narration and the bindings.  Each program is made
from its seed, shown in the test's id: a failure is reproduced with
``runnable_program(SEED)``.

Running 380 of them this way found that a failed fan-out reported on the dbos engine only
what its failed item did (dbos_partials), and that a summary wanted by concurrent branches
is asked by whichever claims it first, at its step and under its name for the value
(docs/scale.md, "Summaries"), which is masked here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openprose.checking import check_text
from openprose.vm.backends.offline import OfflineBackend
from tests.support.extras import require
from tests.support.runnable_programs import FLAKY, runnable_program
from tests.vm.engines.engine_agreement import WHAT, left
from tests.vm.vm_support import Recording

require("dbos", "pip install 'openprose[dbos]'")

SEEDS = range(1000, 1030)


def _summary_anywhere(event: dict[str, Any]) -> dict[str, Any]:
    """A summary is asked by the part of the run that wants it first: at its step, under
    the name it gives the value (one branch's `big` is a block's `a`)."""
    if event.get("event") == "context_step" and event.get("action") == "summarised":
        kept = {k: v for k, v in event.items() if k not in ("step", "level")}
        return {**kept, "detail": str(kept.get("detail", "")).partition(": ")[2]}
    return event


def _summary_by_anyone(asked: tuple[Any, ...]) -> tuple[Any, ...]:
    return asked[:1] if asked[0] == "summarise" else asked


def _left(text: str, engine: str, tmp_path: Path) -> dict[str, Any]:
    here = tmp_path / engine
    here.mkdir()
    program = here / "main.prose"
    program.write_text(text, encoding="utf-8")
    backend = Recording(OfflineBackend(failures={FLAKY: 2}))
    return left(
        engine, here, program, text, {}, backend, event=_summary_anywhere, call=_summary_by_anyone
    )


@pytest.mark.parametrize("seed", SEEDS, ids=lambda seed: f"seed-{seed}")
def test_a_generated_program_leaves_the_same_on_both_engines(seed: int, tmp_path: Path) -> None:
    text = runnable_program(seed)
    assert not [d for d in check_text(text) if d.is_error], text
    local = _left(text, "local", tmp_path)
    dbos = _left(text, "dbos", tmp_path)
    for what in WHAT:
        assert dbos[what] == local[what], (what, text)


def test_the_programs_exercise_what_the_engines_do_differently() -> None:
    """The seeds cover fan-outs, blocks of branches, calls from items, failures and
    summaries (a change to the generator that lost one would leave it untested)."""
    texts = [runnable_program(seed) for seed in SEEDS]
    for construct in ("parallel for", "| pmap", "parallel", "do blk", "throw", "big", FLAKY):
        assert sum(construct in text for text in texts) >= 3, construct
