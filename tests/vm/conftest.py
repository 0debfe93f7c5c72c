"""Running small programs on the offline backend and looking at everything they leave."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openprose.checking import check_text
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.engines.base import Attachment, RunSpec
from openprose.vm.engines.local import LocalExecutor
from openprose.vm.events import Event
from openprose.vm.interpreter import Options
from tests.vm.vm_support import FakeClock, Recording, Run

RunProse = Callable[..., Run]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # The construct suites (marked `both_engines`) run on the local and the dbos engine,
    # which must bind, output, narrate and write the run directory alike.
    if "engine" in metafunc.fixturenames and metafunc.definition.get_closest_marker("both_engines"):
        metafunc.parametrize("engine", ["local", "dbos"])


@pytest.fixture
def engine() -> str:
    return "local"


@pytest.fixture
def run_prose(tmp_path: Path, engine: str) -> RunProse:
    def run(
        source: str,
        inputs: dict[str, Any] | None = None,
        *,
        backend: Any = None,
        options: Options | None = None,
        clock: Any = None,
        files: dict[str, str] | None = None,
    ) -> Run:
        for name, text in (files or {}).items():
            (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
        main = tmp_path / "main.prose"
        text = textwrap.dedent(source)
        main.write_text(text, encoding="utf-8")
        errors = [d for d in check_text(text, str(main)) if d.is_error]
        assert not errors, errors
        recording = Recording(backend or OfflineBackend())
        events: list[Event] = []
        runs_root = tmp_path / ".prose" / "runs"
        spec = RunSpec(
            str(main),
            text,
            dict(inputs or {}),
            runs_root=str(runs_root),
            options=RunSpec.options_of(options or Options(jitter=False)),
        )
        attachment = Attachment(
            sinks=[events.append], backend=recording, clock=clock or FakeClock()
        )
        if engine == "dbos":
            result = run_on_dbos(spec, attachment)
        else:
            result = asyncio.run(LocalExecutor().run(spec, None, attachment))
        return Run(result, recording, events, tmp_path)

    return run


def run_on_dbos(spec: RunSpec, attachment: Attachment) -> Any:
    """``spec`` run as a DBOS workflow executed by this process, on a SQLite system
    database beside its runs."""
    from openprose.vm.engines.dbos_engine import DbosExecutor, system_database_url
    from openprose.vm.rundir import new_run_id

    url = system_database_url(spec.state, Path(spec.runs_root), environ={})
    return asyncio.run(DbosExecutor(url).run(spec, new_run_id(), attachment))
