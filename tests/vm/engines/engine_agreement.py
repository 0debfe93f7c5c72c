"""What a run leaves on one engine, without what may differ between any two runs, for the
tests that run one program on both engines and compare (tests/vm/engines/test_engines_agree_*).

The one difference allowed is documented (docs/scale.md, "Fan-outs"): the numbers the run
hands out to concurrent items (the execution ids of their block calls, the names of their
anonymous bindings) follow the order in which the items asked, which the dbos engine does
not keep, so they are masked (binding files are compared by content, their numbers masked)."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from openprose.vm.engines.base import Attachment, RunSpec
from openprose.vm.engines.local import LocalExecutor
from openprose.vm.interpreter import Options
from tests.vm.vm_support import Recording

# What differs between any two runs (times, ids; the offline backend numbers its sessions
# in the order they are asked), and the execution ids (see above).
VARYING = {"ts", "time", "at", "elapsed", "duration", "started_at", "ended_at", "run_id"}
VARYING |= {"session_ref"}
NUMBERED = {"execution_id", "parent"}
HANDED_OUT = re.compile(r"(__|#|execution_id: |anon_)\d+")
WHAT = ("status", "outputs", "calls", "events", "narration", "bindings")


def left(
    engine: str,
    here: Path,
    program: Path,
    text: str,
    inputs: dict[str, Any],
    backend: Recording,
    ask: Callable[[str, str], Awaitable[str]] | None = None,
    event: Callable[[dict[str, Any]], dict[str, Any]] = lambda kept: kept,
    call: Callable[[tuple[Any, ...]], tuple[Any, ...]] = lambda asked: asked,
) -> dict[str, Any]:
    """What a run of ``text`` (the program at ``program``) on ``engine`` leaves, its state
    under ``here``; ``event`` and ``call`` may mask more of each event and model call."""
    from openprose.vm.engines.dbos_engine import DbosExecutor, system_database_url
    from openprose.vm.rundir import new_run_id

    spec = RunSpec(
        str(program),
        text,
        inputs,
        runs_root=str(here / "runs"),
        project_root=str(here),  # `persist: project` memory goes here
        options=RunSpec.options_of(Options(jitter=False, retry_base_delay=0.0)),
    )
    attachment = Attachment(backend=backend, ask=ask)
    if engine == "dbos":
        url = system_database_url(spec.state, Path(spec.runs_root), environ={})
        result = asyncio.run(DbosExecutor(url).run(spec, new_run_id(), attachment))
    else:
        result = asyncio.run(LocalExecutor().run(spec, None, attachment))
    run_dir = Path(spec.runs_root) / result.run_id
    events = []
    for line in (run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines():
        kept = {k: v for k, v in json.loads(line).items() if k not in VARYING | NUMBERED}
        events.append(json.dumps(event(kept), sort_keys=True))
    narration = (run_dir / "state.md").read_text(encoding="utf-8").splitlines()
    return {
        "status": (result.status, result.error),
        "outputs": result.outputs,
        "calls": Counter(repr(call(asked)) for asked in backend.calls),
        # Concurrent branches narrate in the order they finish, on either engine.
        "events": Counter(events),
        "narration": sorted(HANDED_OUT.sub(r"\1N", line) for line in narration[1:-1]),
        "bindings": sorted(
            (HANDED_OUT.sub(r"\1N", p.name), HANDED_OUT.sub(r"\1N", p.read_text("utf-8")))
            for p in (run_dir / "bindings").iterdir()
        ),
    }
