"""``prose run``: check a program, then run it on the bundled VM (docs/run.md)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from openprose.cli.render import Style, format_human, format_summary, source_lines, wants_colour
from openprose.cli.sources import SourceError, add_size_option, discover, read_source
from openprose.config import ENGINES, MODEL_BACKENDS

EXIT_OK = 0
EXIT_FAILED = 1  # the program has errors, or failed while running
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
DEFAULT_FAN_OUT_COST = 1.0  # US dollars (docs/run.md, Tokens and cost)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        metavar="FILE|URL|HANDLE/SLUG",
        help="the program to run: a file, an https:// URL or a registry handle/slug",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow fetching programs over https (a URL, handle/slug, or a remote `use`)",
    )
    parser.add_argument(
        "--input",
        dest="inputs",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="give an input; NAME=@FILE reads the value from a file (repeatable)",
    )
    parser.add_argument(
        "--inputs",
        dest="inputs_file",
        metavar="FILE.json",
        help="a JSON object of inputs (--input wins over it)",
    )
    parser.add_argument(
        "--trace", action="store_true", help="print the narration on standard error as it runs"
    )
    parser.add_argument(
        "--trace-format",
        choices=("text", "json"),
        default="text",
        help="text: the narration markers (default); json: one event a line",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the run's result as one JSON object"
    )
    parser.add_argument(
        "--offline-rounds",
        type=int,
        default=2,
        metavar="N",
        help="offline backend: a loop condition is satisfied on its Nth evaluation (default 2)",
    )
    parser.add_argument(
        "--offline-delay",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="offline backend: each session takes SECONDS to answer (a dry run paced like a "
        "real one; default 0)",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        metavar="N",
        help="stop the run before its (N+1)th session attempt, imported programs included",
    )
    parser.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="stop the run once its cost passes USD, or before a call whose estimated cost "
        "would pass it (docs/run.md, Tokens and cost)",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="stop the run once it used more than N tokens, or before a call whose estimate "
        "would pass N (docs/run.md, Tokens and cost)",
    )
    parser.add_argument(
        "--resume",
        metavar="RUN_ID",
        help="continue an interrupted or failed run of FILE (its id, or its run directory), "
        "with its inputs; the steps it took are answered from its journal, not asked again",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="with --resume: continue even though the program changed since the run started "
        "(steps whose input changed run again)",
    )
    parser.add_argument(
        "--state",
        choices=("filesystem", "sqlite", "postgres", "in-context"),
        help="where the run's state is kept (default: run.state in the configuration, else "
        "filesystem; docs/run.md)",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="do not ask before a fan-out of more than 100 branches (asked only on a terminal) "
        "or one estimated above --fan-out-cost (refused when not on a terminal)",
    )
    parser.add_argument(
        "--fan-out-cost",
        type=float,
        default=DEFAULT_FAN_OUT_COST,
        metavar="USD",
        help="ask before a fan-out estimated to cost more than USD (default "
        f"{DEFAULT_FAN_OUT_COST:.2f}); off a terminal it is refused unless --yes",
    )
    parser.add_argument(
        "--record",
        metavar="FILE",
        help="record every model exchange of the run in FILE (JSON lines) for --replay",
    )
    parser.add_argument(
        "--replay",
        metavar="FILE",
        help="answer every model exchange from a recording; a step with no recorded answer "
        "stops the run, naming the step",
    )
    parser.add_argument(
        "--backend",
        choices=MODEL_BACKENDS,
        default="offline",
        help="who answers the model exchanges (default offline; replay needs --replay FILE; "
        "anthropic, openai and claude-code need a key, docs/run.md)",
    )
    parser.add_argument(
        "--model-map",
        action="append",
        default=[],
        metavar="ALIAS=MODEL_ID",
        help="map a model alias (sonnet, opus, haiku) to a provider model id (repeatable)",
    )
    parser.add_argument(
        "--price",
        action="append",
        default=[],
        metavar="MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]]",
        help="the price of a model id, US dollars per million tokens, over the built-in table "
        "(repeatable; docs/run.md)",
    )
    parser.add_argument(
        "--window",
        action="append",
        default=[],
        metavar="MODEL=TOKENS",
        help="the context window of a model id, over the built-in table (repeatable; "
        "docs/context.md)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=8,
        metavar="N",
        help="parallel for and pmap: items in flight at once (default 8)",
    )
    parser.add_argument(
        "--run-dir",
        metavar="DIR",
        help="where run directories are created (default: .prose/runs in the current directory)",
    )
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        help="what executes the run: local (this process, the default) or dbos (a durable "
        "DBOS workflow that a worker takes over if this process dies; needs the dbos extra; "
        "docs/scale.md)",
    )
    parser.add_argument(
        "--detach",
        action="store_true",
        help="with --engine dbos: put the run on the queue for `prose worker` processes, print "
        "its id and return at once",
    )
    parser.add_argument(
        "--otel",
        action="store_true",
        help="send OpenTelemetry traces and metrics where the OTEL_* variables say (needs the "
        "otel extra; docs/run.md, Traces and metrics)",
    )
    add_size_option(parser)


class UsageError(Exception):
    pass


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    try:
        return _run(args, stdout, stderr)
    except UsageError as error:
        print(f"prose: error: {error}", file=stderr)
        return EXIT_USAGE


def _run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    import asyncio

    from openprose.checking import check_text
    from openprose.config import ConfigError, ConfigFinder
    from openprose.syntax import parse
    from openprose.vm.backends.offline import OfflineBackend
    from openprose.vm.backends.replay import RecordingBackend, ReplayBackend
    from openprose.vm.interpreter import (
        MissingInput,
        Options,
        declared_inputs,
        mid_program_inputs,
    )
    from openprose.vm.progress import Progress
    from openprose.vm.state import StateError

    if args.offline_rounds < 1:
        raise UsageError("--offline-rounds must be at least 1")
    if args.offline_delay < 0:
        raise UsageError("--offline-delay must be 0 or more")
    if args.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if args.max_sessions is not None and args.max_sessions < 0:
        raise UsageError("--max-sessions must be 0 or more")
    if args.max_cost is not None and args.max_cost < 0:
        raise UsageError("--max-cost must be 0 or more")
    if args.max_tokens is not None and args.max_tokens < 0:
        raise UsageError("--max-tokens must be 0 or more")
    if args.fan_out_cost < 0:
        raise UsageError("--fan-out-cost must be 0 or more")
    _set_tables(args, None)  # the command line's, checked before anything runs
    from openprose.vm.remote import RemoteError, is_remote_target

    fetched = None
    if is_remote_target(args.path):
        try:
            config = ConfigFinder().for_directory(str(Path.cwd()))
        except ConfigError as error:
            raise UsageError(str(error)) from None
        loader = _remote_loader(args, config)
        try:
            fetched = loader.load(args.path)
        except RemoteError as error:
            raise UsageError(str(error)) from None
        text, display_path = fetched.text, fetched.url
        # Only a name: a fetched program has no directory and imports no local file.
        program = Path.cwd() / f"{fetched.location.slug}.prose"
        diagnostics = check_text(text, None, config) if config else check_text(text)
    else:
        sources, missing = discover([args.path])
        if missing or len(sources) != 1 or sources[0].fs_path is None:
            raise UsageError(str(missing[0]) if missing else f"{args.path} is not one program file")
        source = sources[0]
        program = Path(str(source.fs_path))
        display_path = source.display_path
        try:
            text = read_source(source, args.max_file_size)
            config = ConfigFinder().for_path(source.fs_path)
        except (SourceError, ConfigError) as error:
            raise UsageError(str(error)) from None
        diagnostics = (
            check_text(text, source.fs_path, config) if config else check_text(text, source.fs_path)
        )
        loader = _remote_loader(args, config, required=False)
    errors = [d for d in diagnostics if d.is_error]
    if errors:
        style = Style(colour=wants_colour("auto", stderr))
        lines = source_lines(text)
        for diagnostic in diagnostics:
            print(format_human(display_path, diagnostic, lines, style), file=stderr)
        print(format_summary(Counter(d.severity for d in diagnostics), 1, 1), file=stderr)
        return EXIT_FAILED

    _set_tables(args, config)
    module = parse(text)
    state = args.state or (config.state if config is not None else None) or "filesystem"
    engine = args.engine or (config.engine if config is not None else None) or "local"
    if engine == "dbos":
        _dbos_usable(args, state)
    elif args.detach:
        raise UsageError("--detach goes with --engine dbos (a local run lives with its process)")
    runs_root = Path(args.run_dir).resolve() if args.run_dir else Path.cwd() / ".prose" / "runs"
    if args.force and not args.resume:
        raise UsageError("--force goes with --resume RUN_ID")
    # The local engine resumes the run in this process (its store, claimed here); the dbos
    # engine starts the run's next attempt, which claims it where it executes.
    resume = None
    if args.resume:
        runs_root = _resume_root(args, runs_root)  # --resume may name the run's directory
    if args.resume and engine == "dbos":
        _resumable_on_dbos(args, text, state, runs_root, stderr)
    elif args.resume:
        resume = _resumed_run(args, text, state, runs_root, stderr)
    if state == "in-context":
        from openprose.vm.state.in_context import thresholds

        for warning in thresholds(module):
            print(f"prose: warning: {warning}", file=stderr)
    # On a terminal, an input declared mid-program is asked when the run reaches it (the
    # language pauses there); elsewhere every missing input is an error before the run.
    asks = sys.stdin.isatty() and not args.detach
    # A detached run on the dbos engine waits for its mid-program inputs as messages.
    later = mid_program_inputs(module) if asks or args.detach else set()
    declared = [item for item in declared_inputs(module) if item[0] not in later]
    inputs = _inputs(args, declared, stderr, later) if not args.resume else None
    # --model-map wins over [tool.openprose.run] model-map.
    model_map = {**(dict(config.model_map) if config else {}), **_model_map(args)}
    backend: Any
    if args.replay:
        try:
            backend = ReplayBackend(Path(args.replay))
        except (OSError, ValueError) as error:
            raise UsageError(f"cannot replay {args.replay}: {error}") from None
        print(f"prose: replaying {args.replay}: no model is called", file=stderr)
    elif args.backend == "replay":
        raise UsageError("--backend replay needs --replay FILE")
    elif args.backend != "offline":
        backend = _real_backend(args, model_map)
        print(f"prose: running on the {args.backend} backend", file=stderr)
    else:
        backend = OfflineBackend(rounds=args.offline_rounds, delay=args.offline_delay)
        print("prose: dry run on the offline backend: no model is called", file=stderr)
    if args.record:
        try:
            # A resumed run continues its recording (a dbos run's workers append to it).
            backend = RecordingBackend(backend, Path(args.record), append=bool(args.resume))
        except OSError as error:
            raise UsageError(f"cannot record to {args.record}: {error}") from None
    if args.trace or state == "in-context":
        # In-context state keeps no files: the narration is the run's record, so it is shown.
        sinks = [_tracer(args.trace_format, stderr)]
    else:
        isatty = getattr(stderr, "isatty", None)
        terminal = bool(isatty and isatty())
        sinks = [Progress(stderr, terminal, total=len(module.statements()))]
    telemetry = _telemetry(args.otel)
    from openprose.vm.engines.base import Attachment, RunSpec

    spec = RunSpec(
        program=str(program),
        text=text,
        inputs=dict(inputs or {}),
        state=state,
        runs_root=str(runs_root),
        backend="replay" if args.replay else args.backend,
        offline_rounds=args.offline_rounds,
        offline_delay=args.offline_delay,
        record=str(Path(args.record).resolve()) if args.record and engine == "dbos" else None,
        replay=str(Path(args.replay).resolve()) if args.replay else None,
        model_map=model_map,
        allow_remote=loader is not None,
        fetched=fetched,
        options=RunSpec.options_of(
            Options(
                concurrency=args.concurrency,
                max_sessions=args.max_sessions,
                max_cost=args.max_cost,
                max_tokens=args.max_tokens,
                fan_out_cost=None if args.yes else args.fan_out_cost,
            )
        ),
    )
    attachment = Attachment(
        sinks=sinks,
        ask=_input_asker(stderr) if asks else None,
        confirm=None if args.yes or not sys.stdin.isatty() else _asker(stderr),
        # On the dbos engine the run's backend is made from its spec, here as by any worker
        # that takes it over (the one made above checked the options).
        backend=None if engine == "dbos" else backend,
        telemetry=telemetry,
    )
    try:
        if engine == "dbos":
            limits = dict(config.rate_limits) if config is not None else {}
            caps = dict(config.global_concurrency) if config is not None else {}
            result = _run_on_dbos(args, spec, attachment, limits, caps, stdout, stderr)
            if result is None:  # detached
                return EXIT_OK
        else:
            from openprose.vm.engines.local import LocalExecutor

            executor = LocalExecutor(resume=resume, remote=loader, fetched=fetched)
            result = asyncio.run(executor.run(spec, None, attachment))
    except MissingInput as missing_input:  # pragma: no cover - inputs are gathered above
        raise UsageError(f"missing input {missing_input.name!r}") from None
    except KeyboardInterrupt:
        if engine == "dbos":
            # The workflow is pending on this process's executor, its items as they were.
            print(
                "prose: interrupted; the run is not over: a `prose worker` here takes it "
                "over and finishes it (`prose runs list`; `prose runs cancel RUN_ID` ends it)",
                file=stderr,
            )
        else:
            print("prose: interrupted", file=stderr)
        return EXIT_INTERRUPTED
    except OSError as error:
        raise UsageError(f"cannot write the run directory: {error}") from None
    except StateError as error:
        # The state backend cannot be reached or written: nothing more can be kept durable.
        raise UsageError(f"{state} state: {error}") from None
    finally:
        if telemetry is not None:
            telemetry.shutdown()  # exports what is left before the process ends
    return report(result, args.json, stdout, stderr)


def _telemetry(forced: bool) -> Any:
    """OpenTelemetry as the OTEL_* variables configure it (vm/telemetry.py), or None."""
    from openprose.vm.telemetry import TelemetryError, from_environment

    try:
        return from_environment(force=forced)
    except TelemetryError as error:
        raise UsageError(str(error)) from None


def _set_tables(args: argparse.Namespace, config: Any) -> None:
    """Prices and windows for this run: the configuration's (``run.prices``,
    ``run.windows``), then the command line's (``--price``, ``--window``) over them."""
    from openprose.vm.backends.pricing import Price, parse_price, set_prices
    from openprose.vm.context.windows import parse_window, set_windows

    if config is not None:
        set_prices({model: Price(*figures) for model, figures in config.prices.items()})
        set_windows(dict(config.windows))
    try:
        set_prices(dict(parse_price(text) for text in args.price))
        set_windows(dict(parse_window(text) for text in args.window))
    except ValueError as error:
        raise UsageError(str(error)) from None


def _remote_loader(args: argparse.Namespace, config: Any, *, required: bool = True) -> Any:
    """The run's fetcher when remote programs are allowed; None (or a usage error when the
    target itself is remote) otherwise."""
    import os

    from openprose.vm.remote import RemoteLoader

    if args.allow_remote or (config is not None and config.allow_remote):
        return RemoteLoader(os.environ)
    if required:
        raise UsageError(
            f"{args.path} is a remote program: run it with --allow-remote "
            "(or allow-remote = true in the run configuration)"
        )
    return None


def _model_map(args: argparse.Namespace) -> dict[str, str]:
    from openprose.vm.backends.providers import parse_model_map

    try:
        return dict(parse_model_map(args.model_map))
    except ValueError as error:
        raise UsageError(str(error)) from None


def _dbos_usable(args: argparse.Namespace, state: str) -> None:
    """What the dbos engine cannot do yet, refused before anything runs."""
    from openprose.vm.engines.dbos_engine import EngineError, require_dbos

    try:
        require_dbos()
    except EngineError as error:
        raise UsageError(str(error)) from None
    if state == "in-context":
        raise UsageError(
            "--engine dbos keeps a run's state where a worker can take it over: "
            "--state in-context keeps none"
        )


def _run_on_dbos(
    args: argparse.Namespace,
    spec: Any,
    attachment: Any,
    rate_limits: dict[str, Any],
    caps: dict[str, int],
    stdout: TextIO,
    stderr: TextIO,
) -> Any:
    """The run as a DBOS workflow: executed here and waited for, or (``--detach``) put on
    the queue; None then, its id printed.  ``rate_limits`` (``run.rate-limits``) and
    ``caps`` (``run.global-concurrency``) are set for the queues no worker has set up."""
    import asyncio

    from openprose.vm.engines.dbos_engine import (
        DbosExecutor,
        EngineError,
        shown,
        system_database_url,
    )
    from openprose.vm.rundir import new_run_id
    from openprose.vm.state import StateError

    try:
        url = system_database_url(spec.state, Path(spec.runs_root))
    except StateError as error:
        raise UsageError(f"{spec.state} state: {error}") from None
    executor = DbosExecutor(url, rate_limits, caps)
    resume = bool(args.resume)
    run_id = _resume_id(args) if resume else new_run_id()
    try:
        if args.detach:
            executor.submit(spec, run_id, resume=resume)
            print(run_id, file=stdout)
            print(
                f"prose: run {run_id} is queued in {shown(url)}; `prose worker` "
                f"{'resumes' if resume else 'runs'} it",
                file=stderr,
            )
            return None
        return asyncio.run(executor.run(spec, run_id, attachment, resume=resume))
    except EngineError as error:
        raise UsageError(str(error)) from None


def _real_backend(args: argparse.Namespace, model_map: dict[str, str]) -> Any:
    import os

    from openprose.vm.backends.providers import MissingKey, create_backend

    try:
        return create_backend(
            args.backend, environ=os.environ, project_root=Path.cwd(), model_map=model_map
        )
    except (MissingKey, ValueError) as error:
        raise UsageError(str(error)) from None


def _resume_id(args: argparse.Namespace) -> str:
    """The id of the run --resume names (by id, or by its directory)."""
    given = Path(args.resume)
    return given.resolve().name if given.is_dir() else str(args.resume)


def _resume_root(args: argparse.Namespace, runs_root: Path) -> Path:
    given = Path(args.resume)
    return given.resolve().parent if given.is_dir() else runs_root


def _resumed_run(
    args: argparse.Namespace, text: str, state: str, runs_root: Path, stderr: TextIO
) -> Any:
    """The store of the run to continue: found by id (or by its directory), refused while
    it runs, and refused when the program changed unless --force."""
    from openprose.vm.state import StateError, open_catalog

    if args.inputs or args.inputs_file:
        raise UsageError("--resume runs with the inputs of the run it continues")
    _not_on_dbos(state, runs_root, _resume_id(args))
    try:
        catalog = open_catalog(state, runs_root)
        store = catalog.open(_resume_id(args))
    except StateError as error:
        raise UsageError(f"cannot resume {args.resume}: {error}") from None
    try:
        _same_program(args, store.program_text(), text, store.run_id, stderr)
    except UsageError:
        store.close()
        raise
    return store


def _not_on_dbos(state: str, runs_root: Path, run_id: str) -> None:
    """Refuses to resume here a run the dbos engine has not finished (a worker would take
    it over too).  Nothing of DBOS is imported where it never ran."""
    if state == "in-context":
        return
    from openprose.vm.state import StateError

    try:
        from openprose.vm.engines.dbos_engine import (
            EngineError,
            NotOver,
            require_dbos,
            require_over,
            sqlite_file,
            system_database_url,
        )

        url = system_database_url(state, runs_root)
        file = sqlite_file(url)
        if file is not None and not file.is_file():
            return
        require_dbos()
        require_over(url, run_id)
    except NotOver as error:
        raise UsageError(f"cannot resume {run_id}: {error}") from None
    except (EngineError, StateError):
        return  # the dbos engine has no run here


def _resumable_on_dbos(
    args: argparse.Namespace, text: str, state: str, runs_root: Path, stderr: TextIO
) -> None:
    """The checks of ``_resumed_run`` for a run the dbos engine resumes: it exists, is not
    running in a process, and its program is the same (or --force); the engine refuses a
    run whose workflow is not over (``dbos_engine.next_attempt``)."""
    from openprose.vm.state import StateError, open_catalog

    if args.inputs or args.inputs_file:
        raise UsageError("--resume runs with the inputs of the run it continues")
    run_id = _resume_id(args)
    try:
        catalog = open_catalog(state, runs_root)
        info = catalog.info(run_id)
        if info.status == "running":
            raise StateError(f"run {run_id} is still running (process {info.pid})")
        stored = catalog.program_text(run_id)
    except StateError as error:
        raise UsageError(f"cannot resume {args.resume}: {error}") from None
    _same_program(args, stored, text, run_id, stderr)


def _same_program(
    args: argparse.Namespace, stored: str, text: str, run_id: str, stderr: TextIO
) -> None:
    """Refuses to resume a run whose program changed, unless --force; says it resumes."""
    if stored != text:
        summary = program_changes(stored, text)
        if not args.force:
            raise UsageError(
                f"{args.path} changed since run {run_id} started, so it cannot be "
                f"resumed exactly:\n{summary}\n(--force resumes anyway: the steps whose "
                "input changed run again)"
            )
        print(f"prose: warning: resuming with a changed program:\n{summary}", file=stderr)
    print(f"prose: resuming run {run_id}", file=stderr)


def program_changes(before: str, after: str, limit: int = 12) -> str:
    """What changed between two versions of a program, as a short unified diff."""
    import difflib

    lines = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), "run", "now", n=0, lineterm=""
        )
    )[2:]
    changed = sum(1 for line in lines if line[:1] in "+-")
    shown = [f"  {line}" for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"  ... ({len(lines) - limit} more lines)")
    lines_changed = "1 line changed" if changed == 1 else f"{changed} lines changed"
    return f"  {lines_changed}:\n" + "\n".join(shown)


def _inputs(
    args: argparse.Namespace,
    declared: list[tuple[str, str]],
    stderr: TextIO,
    later: Iterable[str] = (),
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if args.inputs_file:
        try:
            loaded = json.loads(Path(args.inputs_file).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise UsageError(f"cannot read inputs from {args.inputs_file}: {error}") from None
        if not isinstance(loaded, dict):
            raise UsageError(f"{args.inputs_file} must hold a JSON object of inputs")
        values.update(loaded)
    for item in args.inputs:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--input needs NAME=VALUE, got {item!r}")
        if value.startswith("@"):
            try:
                value = Path(value[1:]).read_text(encoding="utf-8")
            except OSError as error:
                raise UsageError(f"cannot read input {name} from {value[1:]}: {error}") from None
        values[name] = value
    names = {name for name, _ in declared} | set(later)
    unknown = sorted(set(values) - names)
    if unknown:
        raise UsageError(f"the program has no input {unknown[0]!r}")
    for name, description in declared:
        if name in values:
            continue
        if not sys.stdin.isatty():
            raise UsageError(f"missing input {name!r} (give it with --input {name}=VALUE)")
        hint = f" ({description})" if description else ""
        print(f"{name}{hint}: ", end="", file=stderr, flush=True)
        values[name] = sys.stdin.readline().rstrip("\n")
    return values


def _asker(stream: TextIO) -> Any:
    import asyncio

    async def ask(question: str) -> bool:
        def prompt() -> str:
            print(f"\nprose: {question}; continue? [y/N] ", end="", file=stream, flush=True)
            return sys.stdin.readline()

        # In a thread, so that branches already running carry on while the user decides.
        answer = await asyncio.to_thread(prompt)
        return answer.strip().lower() in ("y", "yes")

    return ask


def _input_asker(stream: TextIO) -> Any:
    import asyncio

    async def ask(name: str, prompt: str) -> str:
        def read() -> str:
            print(f"\n{name} ({prompt}): ", end="", file=stream, flush=True)
            return sys.stdin.readline().rstrip("\n")

        # In a thread: branches already running carry on while the user answers.
        return await asyncio.to_thread(read)

    return ask


def _tracer(fmt: str, stream: TextIO) -> Any:
    from openprose.vm.events import render_json, render_text

    render = render_json if fmt == "json" else render_text

    def trace(event: Any) -> None:
        print(render(event), file=stream, flush=True)

    return trace


def report(result: Any, as_json: bool, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.vm.values import render

    usage = result.usage
    if as_json:
        payload = {
            "run_id": result.run_id,
            "run_dir": str(result.run_dir) if result.run_dir else None,
            "status": result.status,
            "dry_run": result.dry_run,
            "outputs": {name: _jsonable(value) for name, value in result.outputs.items()},
            "error": result.error or None,
            "failed_statement": result.failed_statement or None,
            "sessions": result.sessions,
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
            },
            "cost_usd": result.cost,
            "breakdown": result.breakdown.to_json(),
        }
        json.dump(payload, stdout, ensure_ascii=False, indent=2)
        stdout.write("\n")
    else:
        for name, value in result.outputs.items():
            print(f"{name} = {render(value)}", file=stdout)
    label = " (dry run)" if result.dry_run else ""
    summary = (
        f"{result.sessions} session{'' if result.sessions == 1 else 's'}, "
        f"{usage.input_tokens} token{'' if usage.input_tokens == 1 else 's'} in, "
        f"{usage.output_tokens} out, ${result.cost:.2f}{label}"
    )
    breakdown = [f"prose:   {line}" for line in result.breakdown.lines()]
    if result.status != "success":
        where = f" at `{result.failed_statement}`" if result.failed_statement else ""
        print(f"prose: error: run {result.run_id} failed{where}: {result.error}", file=stderr)
        print(f"prose: {summary}; state in {result.run_dir}", file=stderr)
        for line in breakdown:
            print(line, file=stderr)
        flag = _limit_flag(result)
        if flag and result.run_id:
            how = "with a higher limit" if flag != "--yes" else "going ahead"
            more = " ..." if flag != "--yes" else ""
            print(
                f"prose: resume it {how}: prose run FILE --resume {result.run_id} {flag}{more}",
                file=stderr,
            )
        return EXIT_FAILED
    print(f"prose: run {result.run_id} succeeded: {summary}", file=stderr)
    for line in breakdown:
        print(line, file=stderr)
    return EXIT_OK


def _limit_flag(result: Any) -> str:
    """The option whose limit stopped the run, if one did."""
    if not result.fatal:
        return ""
    for prefix, flag in (
        ("token limit", "--max-tokens"),
        ("cost limit", "--max-cost"),
        ("fan-out of", "--yes"),
    ):
        if result.error.startswith(prefix):
            return flag
    return ""


def _jsonable(value: Any) -> Any:
    from collections.abc import Mapping

    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value
