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
from openprose.vm.events import Event
from openprose.vm.interpreter import Options
from openprose.vm.runner import run_file
from tests.vm.vm_support import FakeClock, Recording, Run

RunProse = Callable[..., Run]


@pytest.fixture
def run_prose(tmp_path: Path) -> RunProse:
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
        result = asyncio.run(
            run_file(
                main,
                inputs,
                backend=recording,
                runs_root=tmp_path / ".prose" / "runs",
                sinks=[events.append],
                options=options or Options(jitter=False),
                clock=clock or FakeClock(),
            )
        )
        return Run(result, recording, events, tmp_path)

    return run
