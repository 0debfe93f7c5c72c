"""The default engine: a run executes in this process, on asyncio, as it always has."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprose.vm.engines.base import Attachment, RunSpec, build_backend

if TYPE_CHECKING:
    from openprose.vm.interpreter import RunResult


class LocalExecutor:
    name = "local"

    def __init__(self, **resources: Any) -> None:
        # What only this process has for the run: a store to resume, a remote loader, a
        # fetched program (runner.run_file's arguments of the same names).
        self.resources = resources

    async def run(self, spec: RunSpec, run_id: str | None, attachment: Attachment) -> RunResult:
        from openprose.syntax import parse
        from openprose.vm.runner import run_file

        backend = attachment.backend if attachment.backend is not None else build_backend(spec)
        resume = self.resources.get("resume")
        return await run_file(
            spec.program_path,
            None if resume is not None else dict(spec.inputs),
            backend=backend,
            runs_root=Path(spec.runs_root) if spec.runs_root else None,
            sinks=attachment.sinks,
            options=spec.run_options(),
            checked=(spec.text, parse(spec.text)),
            confirm=attachment.confirm,
            ask=attachment.ask,
            project_root=spec.project_dir,
            state=spec.state,
            telemetry=attachment.telemetry,
            clock=attachment.clock,
            run_id=run_id,
            **self.resources,
        )

    def submit(self, spec: RunSpec, run_id: str) -> str:
        raise NotImplementedError("the local engine runs a program only while its process lives")
