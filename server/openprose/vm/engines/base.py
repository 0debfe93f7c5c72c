"""The seam between the VM and whatever executes a run: ``Executor``.

A run is described by a ``RunSpec``: plain, picklable data (the program's text, its inputs,
where its state lives, which backend answers it, the run's options), so that an engine can
hand it to another process or machine (``dbos``) as well as run it here (``local``).  What
cannot travel (the terminal's progress line, a prompt for a missing input) is the
``Attachment`` of the process that started the run; a run recovered elsewhere runs without
one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from openprose.vm.backends.base import Backend
    from openprose.vm.interpreter import Ask, Clock, Confirm, EventSink, Options, RunResult
    from openprose.vm.remote import Fetched, RemoteLoader
    from openprose.vm.state.base import Catalog
    from openprose.vm.values import Value


@dataclass(frozen=True)
class RunSpec:
    """Everything a process needs to run (or to take over) one run."""

    program: str  # the program file's absolute path (imports resolve from it)
    text: str  # the program's text, as checked when the run was asked for
    inputs: dict[str, Value] = field(default_factory=dict)
    state: str = "filesystem"
    runs_root: str = ""  # the project's .prose/runs
    project_root: str | None = None
    backend: str = "offline"  # offline | replay | anthropic | openai | claude-code
    offline_rounds: int = 2
    offline_delay: float = 0.0  # seconds each offline session takes
    replay: str | None = None  # the recording a replay backend answers from
    record: str | None = None  # a file every model exchange is appended to, by any worker
    model_map: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # Options' fields
    allow_remote: bool = False  # the run may fetch the remote programs it imports
    fetched: Fetched | None = None  # the program itself, as fetched when the run was asked for

    @property
    def program_path(self) -> Path:
        return Path(self.program)

    @property
    def project_dir(self) -> Path | None:
        """``project_root`` as a path (None: none was given)."""
        return Path(self.project_root) if self.project_root else None

    def catalog(self) -> Catalog:
        """The catalogue of the runs this spec's run is one of, in the process that
        executes it (or one of its items)."""
        from openprose.vm.state import open_catalog

        return open_catalog(self.state, Path(self.runs_root), project_root=self.project_dir)

    def remote(self) -> RemoteLoader | None:
        """The run's fetcher of remote programs (None: they are refused), in the process
        that executes it: the registry and certificates are that process's environment's."""
        if not self.allow_remote:
            return None
        import os

        from openprose.vm.remote import RemoteLoader

        return RemoteLoader(os.environ)

    def run_options(self) -> Options:
        from openprose.vm.interpreter import Options

        return Options(**self.options)

    @staticmethod
    def options_of(options: Options) -> dict[str, Any]:
        return asdict(options)


@dataclass
class Attachment:
    """What the process that started a run lends it while it runs there."""

    sinks: Iterable[EventSink] = ()
    ask: Ask | None = None
    confirm: Confirm | None = None
    backend: Backend | None = None  # one already made (a recording wrapper, a test's fake)
    telemetry: Any = None
    clock: Clock | None = None  # a test's fake time


class Executor(Protocol):
    """Runs programs.  ``local`` runs them in this process with asyncio (the default);
    ``dbos`` makes each run a durable DBOS workflow, executed by workers."""

    name: str

    async def run(self, spec: RunSpec, run_id: str, attachment: Attachment) -> RunResult:
        """Run ``spec`` as run ``run_id`` here, and wait for its result."""
        ...

    def submit(self, spec: RunSpec, run_id: str) -> str:
        """Hand ``spec`` over to be run by a worker, and return at once with its run id."""
        ...


def build_backend(spec: RunSpec, environ: Any = None) -> Backend:
    """The model backend a spec names, made in the process that runs it (a worker reads its
    own keys from its environment)."""
    backend = _model_backend(spec, environ)
    if spec.record is not None:
        from openprose.vm.backends.replay import RecordingBackend

        return RecordingBackend(backend, Path(spec.record), append=True)
    return backend


def _model_backend(spec: RunSpec, environ: Any) -> Backend:
    import os

    from openprose.vm.backends.offline import OfflineBackend

    if spec.backend == "offline":
        return OfflineBackend(rounds=spec.offline_rounds, delay=spec.offline_delay)
    if spec.backend == "replay":
        from openprose.vm.backends.replay import ReplayBackend

        if spec.replay is None:
            raise ValueError("the replay backend needs a recording")
        return ReplayBackend(Path(spec.replay))
    from openprose.vm.backends.providers import create_backend

    root = spec.project_dir or spec.program_path.parent
    backend: Backend = create_backend(
        spec.backend,
        environ=os.environ if environ is None else environ,
        project_root=root,
        model_map=dict(spec.model_map),
    )
    return backend
