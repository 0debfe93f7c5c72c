"""``prose runs list|show|rm|prune|resume``: the runs of a project and their summaries
(docs/run.md)."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

# The configuration's copy of the state backends' names: importing them from the VM would
# load the whole interpreter for every `prose` command, `prose check` included.
from openprose.config import STATE_BACKENDS as BACKENDS

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_TIMEOUT = 124  # `prose runs wait --timeout` gave up first, as timeout(1) exits
EXIT_INTERRUPTED = 130
# Without --state, `list` shows the backends that keep their runs under the runs root.
LOCAL_STATES = ("filesystem", "sqlite")


class UsageError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the runs, newest first", description=LIST_HELP)
    _common(listing)
    listing.add_argument("--json", action="store_true", help="print the runs as a JSON array")
    listing.set_defaults(handler=list_runs)

    show = actions.add_parser("show", help="one run's summary and bindings")
    show.add_argument("run_id", metavar="RUN_ID")
    _common(show)
    show.add_argument("--json", action="store_true", help="print the run as a JSON object")
    show.set_defaults(handler=show_run)

    remove = actions.add_parser("rm", help="remove a run and all its state")
    remove.add_argument("run_id", metavar="RUN_ID")
    _common(remove)
    remove.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    remove.set_defaults(handler=remove_run)

    prune = actions.add_parser(
        "prune", help="remove the runs that ended longer ago than an age", description=PRUNE_HELP
    )
    prune.add_argument(
        "--older-than",
        metavar="AGE",
        required=True,
        type=age,
        help="how long ago the runs ended: a number and a unit, s, m, h, d or w (30d, 12h)",
    )
    _common(prune)
    prune.add_argument("--dry-run", action="store_true", help="list the runs, remove nothing")
    prune.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    prune.set_defaults(handler=prune_runs)

    send = actions.add_parser(
        "send",
        help="give a waiting dbos run an input it asks for mid-program",
        description="Send NAME=VALUE to a run of the dbos engine: a mid-program `input` that "
        "nobody attached to the run could answer waits for it (docs/scale.md). A value sent "
        "before the run asks is kept until it does.",
    )
    send.add_argument("run_id", metavar="RUN_ID")
    send.add_argument("assignment", metavar="NAME=VALUE")
    _common(send)
    send.set_defaults(handler=send_input)

    cancel = actions.add_parser(
        "cancel",
        help="cancel a queued or running dbos run",
        description="Cancel a run of the dbos engine: a queued run never starts, a running "
        "one stops at its next step (docs/scale.md).",
    )
    cancel.add_argument("run_id", metavar="RUN_ID")
    _common(cancel)
    cancel.set_defaults(handler=cancel_run)

    wait = actions.add_parser(
        "wait",
        help="wait for a dbos run to end and report it as prose run does",
        description=WAIT_HELP,
    )
    wait.add_argument("run_id", metavar="RUN_ID")
    _common(wait)
    wait.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_seconds,
        help=f"give up waiting after SECONDS (exit status {EXIT_TIMEOUT}); the run goes on",
    )
    wait.add_argument("--json", action="store_true", help="print the result as prose run --json")
    wait.set_defaults(handler=wait_run)

    resume = actions.add_parser(
        "resume",
        help="continue an interrupted or failed run (the same as prose run FILE --resume RUN_ID)",
        description="Continue a run: prose run FILE --resume RUN_ID --state STATE, with FILE "
        "the run's program in the current directory (or --program FILE). Options after RUN_ID "
        "are prose run's (--force, --backend, --trace, --json, ...).",
    )
    _common(resume)
    resume.add_argument(
        "--force", action="store_true", help="resume even though the program changed"
    )
    resume.add_argument(
        "--program", metavar="FILE", help="the run's program (default: its name, here)"
    )
    resume.add_argument("run_id", metavar="RUN_ID")
    resume.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        metavar="...",
        help="more options of prose run (--force, --backend, --trace, --json, ...)",
    )
    resume.set_defaults(handler=resume_run)


PRUNE_HELP = (
    "Remove the runs that ended (completed, failed or cancelled) longer ago than AGE, with "
    "all their state and what the dbos engine holds of them, as `prose runs rm` does for one; "
    "their ids are printed. Interrupted runs are kept (they can be resumed), and so are runs "
    "the dbos engine has queued or running again. Without --state, the runs of the "
    "filesystem and sqlite backends."
)

WAIT_HELP = (
    "Wait until a run of the dbos engine (queued with prose run --engine dbos --detach, or "
    "resumed) is over, then print what prose run prints for it: its outputs on standard "
    "output, its summary on standard error, and exit with its status (0 succeeded, 1 failed "
    f"or cancelled). Meanwhile standard error says when the run is queued with no worker to "
    f"start it, which worker runs it (another one after a takeover), and which input it "
    f"waits for (prose runs send). Exit status {EXIT_TIMEOUT}: --timeout passed first; 130: "
    "interrupted; the run goes on either way."
)

LIST_HELP = (
    "The runs under the runs root, newest first: status (queued: a run of the dbos engine no "
    "worker has begun, running, completed, failed, interrupted, cancelled), program, start, "
    "duration, steps, tokens, cost and the failing statement. Without --state, the runs of "
    "the filesystem and sqlite backends together."
)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state",
        choices=BACKENDS,
        help="the state backend (default: filesystem and sqlite, which keep runs under "
        "the runs root)",
    )
    parser.add_argument(
        "--run-dir",
        metavar="DIR",
        help="where run directories are (default: .prose/runs in the current directory)",
    )


def runs_root(args: argparse.Namespace) -> Path:
    return Path(args.run_dir).resolve() if args.run_dir else Path.cwd() / ".prose" / "runs"


def chosen_states(args: argparse.Namespace) -> tuple[str, ...]:
    return (args.state,) if args.state else LOCAL_STATES


def catalogs(args: argparse.Namespace) -> list[Any]:
    """The catalogs to look in; a backend given with --state that cannot be opened is a
    usage error, one only implied is left out."""
    from openprose.vm.state import StateError, open_catalog

    found = []
    for state in chosen_states(args):
        try:
            found.append(open_catalog(state, runs_root(args)))
        except (StateError, ImportError) as error:
            if args.state:
                raise UsageError(f"the {state} state backend is not available: {error}") from None
    return found


def all_runs(args: argparse.Namespace) -> list[Any]:
    from openprose.vm.state import StateError

    infos = []
    for catalog in catalogs(args):
        try:
            infos.extend(catalog.runs())
        except (StateError, OSError) as error:
            raise UsageError(str(error)) from None
    infos.sort(key=lambda info: (info.started_at, info.run_id), reverse=True)
    return infos


def find(args: argparse.Namespace, run_id: str) -> tuple[Any, Any]:
    """The catalog that has ``run_id`` and the run's summary; a usage error naming a near
    run id when none has it."""
    from openprose.vm.state import StateError
    from openprose.vm.state.control import no_run_message

    opened = catalogs(args)
    problems = []
    for catalog in opened:
        try:
            return catalog, catalog.info(run_id)
        except StateError as error:
            problems.append(str(error))
        except OSError as error:
            raise UsageError(f"cannot read run {run_id}: {error}") from None
    # A run a catalog knows but cannot read says so; otherwise: no such run, maybe a near one.
    for problem in problems:
        if not problem.startswith("no run "):
            raise UsageError(problem)
    known: list[str] = []
    for catalog in opened:
        try:
            known.extend(info.run_id for info in catalog.runs())
        except (StateError, OSError):
            continue
    raise UsageError(no_run_message(run_id, runs_root(args), sorted(known, reverse=True)))


def _handled(action: Any) -> Any:
    def handler(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
        try:
            status: int = action(args, stdout, stderr)
        except UsageError as error:
            print(f"prose: error: {error}", file=stderr)
            return EXIT_USAGE
        return status

    handler.__name__ = action.__name__
    return handler


# ---------------------------------------------------------------------- list


def when(ts: float | None) -> str:
    if not ts:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def span(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def row(info: Any) -> list[str]:
    return [
        info.run_id,
        info.status,
        info.program_name or "-",
        when(info.started_at),
        span(info.duration),
        str(info.steps),
        str(info.input_tokens + info.output_tokens),
        f"${info.cost:.2f}",
        info.failed_statement or "",
    ]


HEADER = [
    "RUN ID",
    "STATUS",
    "PROGRAM",
    "STARTED",
    "DURATION",
    "STEPS",
    "TOKENS",
    "COST",
    "FAILED AT",
]


def table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    numeric = {4, 5, 6, 7}
    lines = []
    for cells in rows:
        parts = [
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(cells)
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


@_handled
def list_runs(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    # The dbos engine's runs that no worker has begun yet (a begun run is in the catalog),
    # read before the catalog: a run a worker begins in between is in the second.
    waiting, asking = dbos_queue(args)
    infos = all_runs(args)
    known = {info.run_id for info in infos}
    again = {w.run_id for w in waiting} & known
    infos = [
        *(w for w in waiting if w.run_id not in known),
        *(_listed(info, info.run_id in again, info.run_id in asking) for info in infos),
    ]
    if args.json:
        json.dump([info.to_json() for info in infos], stdout, ensure_ascii=False, indent=2)
        stdout.write("\n")
        return EXIT_OK
    if not infos:
        print(f"prose: no runs in {runs_root(args)}", file=stderr)
        return EXIT_OK
    print(table([HEADER, *(row(info) for info in infos)]), file=stdout)
    return EXIT_OK


# ---------------------------------------------------------------------- show


def bindings_of(info: Any, args: argparse.Namespace) -> list[dict[str, Any]] | None:
    """The run's bindings where its backend keeps them (None: in-context keeps none)."""
    from openprose.vm.state import control

    if info.state == "in-context":
        return None
    root = runs_root(args)
    place = control.RunPlace(info.run_id, info.state, root / info.run_id)
    return control.binding_list(place, control.Target(root, run_id=info.run_id))


def breakdown_of(info: Any, args: argparse.Namespace, catalog: Any) -> Any:
    """The run's tokens and cost by agent and statement (``vm/accounting.py``), read from
    its journal; None where there is none (in-context, a run made before the VM accounted
    by statement)."""
    from openprose.vm.accounting import Breakdown, entries_from, stored_entries
    from openprose.vm.state.control_local import JOURNAL_FILE, SQLITE_FILE, SQLITE_PREFIX

    path = runs_root(args) / info.run_id
    entries: list[Any] | None = None
    if info.state == "filesystem":
        entries = stored_entries(path / JOURNAL_FILE, info.run_id)
    elif info.state == "sqlite":
        entries = stored_entries(path / SQLITE_FILE, info.run_id, SQLITE_PREFIX)
    elif info.state == "postgres":
        entries = catalog.read_commits(info.run_id, entries_from)
    return Breakdown.of(entries) if entries else None


def budgets_of(info: Any, args: argparse.Namespace, catalog: Any) -> list[Any] | None:
    """The run's context budgets, one per session attempt (``vm/context/record.py``), read
    from its journal; None where there is none."""
    from openprose.vm.context.record import budgets_from, stored_budgets
    from openprose.vm.state.control_local import JOURNAL_FILE, SQLITE_FILE, SQLITE_PREFIX

    path = runs_root(args) / info.run_id
    if info.state == "filesystem":
        return stored_budgets(path / JOURNAL_FILE, info.run_id)
    if info.state == "sqlite":
        return stored_budgets(path / SQLITE_FILE, info.run_id, SQLITE_PREFIX)
    if info.state == "postgres":
        found: list[Any] = catalog.read_commits(info.run_id, budgets_from)
        return found
    return None


CONTEXT_SHOWN = 5  # sessions listed by the share of their window they took


def context_lines(budgets: list[Any]) -> list[str]:
    """The sessions that took the most of their window, and every one the VM had to fit."""
    if not budgets:
        return []
    ranked = sorted(budgets, key=lambda b: -(b.layers.total / b.window if b.window else 0))
    shown = ranked[:CONTEXT_SHOWN] + [b for b in ranked[CONTEXT_SHOWN:] if b.actions]
    out = [f"context (the largest of {len(budgets)} session attempts):"]
    for budget in shown:
        layers = budget.layers
        share = 100 * layers.total / budget.window if budget.window else 0
        parts = ", ".join(
            f"{name} {getattr(layers, name):,}"
            for name in ("system", "memory", "history", "context", "prompt")
            if getattr(layers, name)
        )
        out.append(
            f"  line {budget.line}: {budget.statement}: {layers.total:,} of {budget.window:,} "
            f"tokens ({share:.0f} %; {parts or 'empty'}; reserve {layers.reserve:,})"
        )
        out.extend(f"    {action}" for action in budget.actions)
    return out


@_handled
def show_run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    import sqlite3

    from openprose.vm.state import StateError

    try:
        catalog, info = find(args, args.run_id)
    except UsageError:
        # A run on the dbos engine's queue has no state until a worker begins it.
        waiting = [w for w in queued_runs(args) if w.run_id == args.run_id]
        if not waiting:
            raise
        return _show_queued(waiting[0], args.json, stdout)
    try:
        bindings = bindings_of(info, args)
    except (StateError, OSError, sqlite3.Error, UnicodeDecodeError) as error:
        print(f"prose: warning: cannot read the bindings of {info.run_id}: {error}", file=stderr)
        bindings = None
    try:
        breakdown = breakdown_of(info, args, catalog)
    except StateError as error:
        print(f"prose: warning: cannot read the costs of {info.run_id}: {error}", file=stderr)
        breakdown = None
    try:
        budgets = budgets_of(info, args, catalog)
    except StateError as error:
        print(f"prose: warning: cannot read the budgets of {info.run_id}: {error}", file=stderr)
        budgets = None
    engine = _on_dbos(args, info)
    if args.json:
        payload = info.to_json()
        payload["dbos"] = engine
        payload["bindings"] = bindings
        payload["breakdown"] = breakdown.to_json() if breakdown is not None else None
        payload["context"] = [b.to_json() for b in budgets] if budgets is not None else None
        json.dump(payload, stdout, ensure_ascii=False, indent=2, default=str)
        stdout.write("\n")
        return EXIT_OK
    fields = [
        ("run", info.run_id),
        ("status", info.status),
        ("program", info.program_name or "-"),
        ("state", info.state),
        ("location", info.location or "-"),
        ("backend", info.backend or "-"),
        ("started", when(info.started_at)),
        ("ended", when(info.ended_at)),
        ("duration", span(info.duration)),
        ("steps", str(info.steps)),
        ("sessions", str(info.sessions)),
        ("tokens", f"{info.input_tokens} in, {info.output_tokens} out"),
        ("cost", f"${info.cost:.4f}"),
        ("process", f"{info.pid} on {info.host}" if info.pid else "-"),
    ]
    if engine is not None:
        fields += _engine_fields(engine, info.run_id)
    if info.failed_statement:
        fields.append(("failed at", info.failed_statement))
    if info.error:
        fields.append(("error", info.error))
    width = max(len(name) for name, _ in fields)
    for name, value in fields:
        print(f"{name + ':':<{width + 1}} {value}", file=stdout)
    for line in breakdown.lines(top=5) if breakdown is not None else []:
        print(line, file=stdout)
    for line in context_lines(budgets or []):
        print(line, file=stdout)
    if bindings:
        print("bindings:", file=stdout)
        for binding in bindings:
            scope = (
                f"__{binding['execution_id']}" if binding.get("execution_id") is not None else ""
            )
            kind = f" ({binding['kind']})" if binding.get("kind") else ""
            value = " ".join(str(binding.get("value", "")).split())
            value = value if len(value) <= 80 else value[:79] + "…"
            print(f"  {binding['name']}{scope}{kind} = {value}", file=stdout)
    return EXIT_OK


def _show_queued(info: Any, as_json: bool, stdout: TextIO) -> int:
    if as_json:
        json.dump({**info.to_json(), "bindings": []}, stdout, ensure_ascii=False, indent=2)
        stdout.write("\n")
        return EXIT_OK
    fields = [
        ("run", info.run_id),
        ("status", "queued (no worker has begun it)"),
        ("program", info.program_name or "-"),
        ("state", info.state),
        ("queued", when(info.started_at)),
    ]
    for name, value in fields:
        print(f"{name + ':':<8} {value}", file=stdout)
    return EXIT_OK


def _on_dbos(args: argparse.Namespace, info: Any) -> dict[str, Any] | None:
    """What the dbos engine's system database holds of the run (None: it never ran it, or
    there is none to ask)."""
    url = dbos_url(args, info.state)
    if url is None:
        return None
    from openprose.vm.engines.dbos_engine import EngineError, require_dbos, workflows_of

    try:
        require_dbos()
        return workflows_of(url, info.run_id)
    except EngineError:
        return None


def _engine_fields(engine: dict[str, Any], run_id: str) -> list[tuple[str, str]]:
    """The dbos engine's lines of ``runs show``: the last attempt, the input it waits for,
    the exchanges it checkpointed, and the fan-out items."""
    attempts = engine["attempts"]
    last = attempts[-1]
    where = f", executor {last['executor']}" if last["executor"] else ""
    fields = [
        ("engine", f"dbos (workflow {last['workflow_id']}, DBOS status {last['status']}{where})")
    ]
    if len(attempts) > 1:
        fields.append(("attempts", f"{len(attempts)} (prose runs resume)"))
    asked = engine.get("awaiting_input")
    if asked:
        fields.append(("waits for", awaited(run_id, asked["name"], asked["prompt"])))
    exchanges = engine.get("exchanges")
    if exchanges and exchanges["count"]:
        from openprose.vm.engines.dbos_steps import STEP_PREFIX

        last = exchanges["last"].removeprefix(STEP_PREFIX)
        fields.append(
            ("exchanges", f"{exchanges['count']} checkpointed as DBOS steps, the last `{last}`")
        )
    for label, counted in (("items", engine["items"]), ("calls", engine.get("calls"))):
        if counted and counted["count"]:
            fields.append((label, _counted_line(counted)))
    return fields


def awaited(run_id: str, name: str, prompt: str) -> str:
    """``the input `angle` (Which angle?): prose runs send RUN angle=VALUE``."""
    about = f" ({prompt})" if prompt else ""
    return f"the input `{name}`{about}: prose runs send {run_id} {name}=VALUE"


def _counted_line(counted: dict[str, Any]) -> str:
    """``4 workflows: 3 CANCELLED, 1 SUCCESS; 1 worker``."""
    statuses = ", ".join(f"{n} {status}" for status, n in counted["statuses"].items())
    workers = counted["executors"]
    return f"{counted['count']} workflows: {statuses}; {workers} worker{'s' * (workers != 1)}"


# ---------------------------------------------------------------------- rm


def confirm(question: str, stderr: TextIO) -> bool:
    print(f"prose: {question} [y/N] ", end="", file=stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


@_handled
def remove_run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.vm.state import StateError
    from openprose.vm.state.journal import process_alive

    run_id = args.run_id
    try:
        catalog, info = find(args, run_id)
    except UsageError:
        # A run only the dbos engine has: queued, then cancelled before a worker began it.
        url = _engine_of(args, None)
        if url is None or not _on_engine(url, run_id):
            raise
        catalog = info = None
    else:
        if info.status == "running" and process_alive(info.pid, info.host):
            raise UsageError(f"run {run_id} is still running (process {info.pid}): stop it first")
        url = _engine_of(args, info.state)
    if url is not None and not _require_over(url, run_id):
        url = None
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError(f"removing run {run_id} needs --yes when not asked on a terminal")
        if not confirm(f"remove run {run_id} and all its state?", stderr):
            print("prose: nothing removed", file=stderr)
            return EXIT_FAILED
    if catalog is not None:
        try:
            catalog.remove(run_id)
        except (StateError, OSError) as error:
            raise UsageError(f"cannot remove run {run_id}: {error}") from None
    if url is not None:
        _forget(url, run_id, removed=catalog is not None)
    print(f"prose: removed run {run_id}", file=stderr)
    return EXIT_OK


def _engine_of(args: argparse.Namespace, state: str | None) -> str | None:
    """The dbos engine's system database of a run kept in ``state`` (None: there is none
    here, or DBOS is not installed: then no run here was ever on it)."""
    from openprose.vm.engines.dbos_engine import EngineError, require_dbos

    url = dbos_url(args, state)
    if url is None:
        return None
    try:
        require_dbos()
    except EngineError:
        return None
    return url


def _on_engine(url: str, run_id: str) -> bool:
    from openprose.vm.engines.dbos_engine import EngineError, workflows_of

    try:
        return workflows_of(url, run_id) is not None
    except EngineError:
        return False


def _require_over(url: str, run_id: str) -> bool:
    """A usage error while the dbos engine has an attempt of the run queued or running
    (removing its state would fail the worker taking it over); False: the database has
    nothing of DBOS (it was never used here)."""
    from openprose.vm.engines.dbos_engine import EngineError, NotOver, require_over

    try:
        require_over(url, run_id)
    except NotOver as error:
        raise UsageError(str(error)) from None
    except EngineError:
        return False
    return True


def _forget(url: str, run_id: str, *, removed: bool) -> None:
    """Remove what the dbos engine holds of the run, after its state (``removed``)."""
    from openprose.vm.engines.dbos_engine import EngineError, forget

    try:
        forget(url, run_id)
    except EngineError as error:
        done = f"removed run {run_id}'s state, but not" if removed else "cannot remove"
        raise UsageError(f"{done} what the dbos engine holds of it: {error}") from None


# ---------------------------------------------------------------------- prune

AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
ENDED = ("completed", "failed", "cancelled")


def age(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``1.5w``: seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an age: a number and a unit, s, m, h, d or w (30d, 12h, 90m)"
        )
    return float(match.group(1)) * AGE_UNITS[match.group(2)]


@_handled
def prune_runs(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.vm.state import StateError

    cutoff = time.time() - args.older_than
    old: list[tuple[Any, Any, str | None]] = []
    engines: dict[str, str | None] = {}  # each state's dbos system database, if used
    live: dict[str | None, set[str]] = {None: set()}  # the runs each has queued or running
    for catalog in catalogs(args):
        try:
            infos = catalog.runs()
        except (StateError, OSError) as error:
            raise UsageError(str(error)) from None
        for info in infos:
            ended = info.ended_at if info.ended_at is not None else info.started_at
            if info.status not in ENDED or ended >= cutoff:
                continue
            if info.state not in engines:
                engines[info.state] = _used_engine(args, info.state, live)
            url = engines[info.state]
            if info.run_id in live[url]:
                message = "the dbos engine has it queued or running"
                print(f"prose: kept run {info.run_id}: {message}", file=stderr)
                continue
            old.append((catalog, info, url))
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(cutoff))
    if not old:
        print(f"prose: no run ended before {when}", file=stderr)
        return EXIT_OK
    if args.dry_run:
        for _catalog, info, _url in old:
            print(info.run_id, file=stdout)
        print(f"prose: {len(old)} runs ended before {when}; nothing removed", file=stderr)
        return EXIT_OK
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError("removing runs needs --yes when not asked on a terminal")
        if not confirm(f"remove {len(old)} runs that ended before {when}?", stderr):
            print("prose: nothing removed", file=stderr)
            return EXIT_FAILED
    failed = 0
    on_engine: dict[str, list[str]] = {}
    for catalog, info, url in old:
        try:
            catalog.remove(info.run_id)
        except (StateError, OSError) as error:
            failed += 1
            print(f"prose: error: cannot remove run {info.run_id}: {error}", file=stderr)
            continue
        print(info.run_id, file=stdout)
        if url is not None:
            on_engine.setdefault(url, []).append(info.run_id)
    for url, run_ids in on_engine.items():
        for run_id, problem in _forget_all(url, run_ids).items():
            failed += 1
            print(
                f"prose: error: removed run {run_id}'s state, but not what the dbos engine "
                f"holds of it: {problem}",
                file=stderr,
            )
    print(f"prose: removed {len(old) - failed} runs that ended before {when}", file=stderr)
    return EXIT_FAILED if failed else EXIT_OK


def _used_engine(
    args: argparse.Namespace, state: str, live: dict[str | None, set[str]]
) -> str | None:
    """The dbos system database of runs kept in ``state``, if DBOS used it (None: there
    is none), its runs queued or running put in ``live``: one look for all the runs."""
    from openprose.vm.engines.dbos_engine import EngineError, not_over

    url = _engine_of(args, state)
    if url is not None and url not in live:
        try:
            live[url] = not_over(url)
        except EngineError:
            return None  # a database DBOS never used: nothing of the runs there
    return url


def _forget_all(url: str, run_ids: list[str]) -> dict[str, Exception]:
    """Remove what the dbos engine holds of each run; the problems, by run."""
    from openprose.vm.engines.dbos_engine import EngineError, forget_all

    try:
        done = forget_all(url, run_ids)
    except EngineError as error:
        return {run_id: error for run_id in run_ids}
    return {run_id: outcome for run_id, outcome in done.items() if isinstance(outcome, Exception)}


# ---------------------------------------------------------------------- resume


def resume_argv(args: argparse.Namespace, info: Any) -> list[str]:
    """``prose run FILE --resume RUN_ID --state STATE`` with this command's options."""
    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--program")
    given, rest = extra.parse_known_args(list(args.rest or []))
    program = given.program or args.program
    if program is None:
        here = Path(info.program_name) if info.program_name else None
        if here is None or not here.is_file():
            raise UsageError(
                f"run {info.run_id} ran {info.program_name or 'a program'}, which is not in "
                "the current directory: give it with --program FILE"
            )
        program = str(here)
    argv = [program, "--resume", info.run_id, "--state", info.state]
    if args.force:
        argv.append("--force")
    if args.run_dir:
        argv += ["--run-dir", args.run_dir]
    if rest and rest[0] == "--":
        rest = rest[1:]
    if (
        not any(option.partition("=")[0] == "--engine" for option in rest)
        and _on_dbos(args, info) is not None
    ):
        argv += ["--engine", "dbos"]  # a run goes on on the engine it ran on
    return argv + rest


@_handled
def resume_run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """The very function ``prose run`` calls, with the arguments it would get."""
    from openprose.cli import run

    _, info = find(args, args.run_id)
    parser = argparse.ArgumentParser(prog="prose run", add_help=False)
    run.add_arguments(parser)
    try:
        run_args = parser.parse_args(resume_argv(args, info))
    except SystemExit as stop:  # argparse printed why
        return int(stop.code or EXIT_USAGE)
    return run.run(run_args, stdout, stderr)


# ---------------------------------------------------------------------- the dbos engine


def dbos_url(args: argparse.Namespace, state: str | None = None) -> str | None:
    """The DBOS system database of these runs (of ``state``, else --state's), when the dbos
    engine has one (None: no run was ever queued here; nothing of DBOS is imported then)."""
    from openprose.vm.engines.dbos_engine import sqlite_file, system_database_url
    from openprose.vm.state import StateError

    try:
        url = system_database_url(state or args.state or "filesystem", runs_root(args))
    except StateError:
        return None
    file = sqlite_file(url)
    return url if file is None or file.is_file() else None


def queued_runs(args: argparse.Namespace) -> list[Any]:
    """The dbos engine's runs waiting on its queue, as summaries (status ``queued``)."""
    url = dbos_url(args)
    if url is None:
        return []
    from openprose.vm.engines.dbos_engine import EngineError, queued

    try:
        return _queued_infos(queued(url))
    except EngineError:
        return []


def dbos_queue(args: argparse.Namespace) -> tuple[list[Any], dict[str, str]]:
    """``queued_runs``, and the dbos engine's runs executing that wait for a mid-program
    input by message: the input's name, by run id (one more read of each executing run,
    which only ``list`` shows)."""
    url = dbos_url(args)
    if url is None:
        return [], {}
    from openprose.vm.engines.dbos_engine import EngineError, queue_view

    try:
        waiting, asking = queue_view(url)
    except EngineError:
        return [], {}
    return _queued_infos(waiting), asking


def _queued_infos(waiting: list[tuple[str, Any, float]]) -> list[Any]:
    from openprose.vm.state.base import RunInfo

    return [
        RunInfo(
            run_id,
            spec.state,
            program_name=Path(spec.program).name,
            status="queued",
            started_at=when_queued,
        )
        for run_id, spec, when_queued in waiting
    ]


def _listed(info: Any, queued_again: bool, asking: bool) -> Any:
    """A run as listed.  One that ended and is queued to resume (its next attempt,
    dbos_engine) is ``queued`` until a worker claims it; one running, or interrupted (its
    worker died; the queue holds it for the worker that takes it over), is listed as it is.
    A dbos run executing that waits for a mid-program input by message is ``waiting``
    (``prose runs show`` names the input)."""
    from dataclasses import replace

    if queued_again and info.status in ("completed", "failed", "cancelled"):
        return replace(info, status="queued")
    if asking and info.status == "running":
        return replace(info, status="waiting")
    return info


def _engine_url(args: argparse.Namespace) -> str:
    from openprose.vm.engines.dbos_engine import EngineError, require_dbos

    try:
        require_dbos()
    except EngineError as error:
        raise UsageError(str(error)) from None
    url = dbos_url(args)
    if url is None:
        raise UsageError(
            f"no run of the dbos engine in {runs_root(args)} (prose run --engine dbos makes one)"
        )
    return url


@_handled
def send_input(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.vm.engines.dbos_engine import EngineError, send_input

    name, equals, value = args.assignment.partition("=")
    if not equals or not name.strip():
        raise UsageError(f"expected NAME=VALUE, got {args.assignment!r}")
    url = _engine_url(args)
    try:
        send_input(url, args.run_id, name.strip(), value)
    except EngineError as error:
        raise UsageError(str(error)) from None
    print(f"prose: sent {name.strip()} to run {args.run_id}", file=stderr)
    return EXIT_OK


@_handled
def cancel_run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.vm.engines.dbos_engine import EngineError, cancel

    url = _engine_url(args)
    try:
        cancel(url, args.run_id)
    except EngineError as error:
        raise UsageError(str(error)) from None
    print(f"prose: run {args.run_id} cancelled", file=stderr)
    return EXIT_OK


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"expected a number of seconds, 0 or more, got {text!r}")
    return seconds


@_handled
def wait_run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.cli.run import report
    from openprose.vm.engines.dbos_engine import EngineError, NoRun
    from openprose.vm.engines.dbos_wait import Seen, wait

    run_id = args.run_id
    info = None
    try:
        _, info = find(args, run_id)
    except UsageError as error:
        # A run queued that no worker has begun has no state yet: the engine may have it.
        unknown, url = error, _engine_of(args, None)
    else:
        unknown = UsageError(
            f"run {run_id} ran on the local engine, which reports it where it runs: there "
            f"is nothing to wait for here (it is {info.status}; `prose runs show {run_id}`)"
        )
        url = _engine_of(args, info.state)
    if url is None:
        raise unknown

    def tell(seen: Seen) -> None:
        if seen.status == "queued":
            said = "is queued: a `prose worker` starts it"
        elif seen.status == "awaiting-input":
            said = "waits for " + awaited(run_id, seen.name, seen.prompt)
        else:
            said = f"is running on executor {seen.executor}" if seen.executor else "is running"
        print(f"prose: run {run_id} {said}", file=stderr, flush=True)

    try:
        result = wait(url, run_id, timeout=args.timeout, tell=tell)
    except NoRun:
        raise unknown from None
    except EngineError as error:
        if info is not None:  # as `rm`: a database without DBOS's tables never had a run
            raise unknown from None
        raise UsageError(str(error)) from None
    except KeyboardInterrupt:
        print(f"prose: stopped waiting; run {run_id} goes on", file=stderr)
        return EXIT_INTERRUPTED
    if result is None:
        print(
            f"prose: run {run_id} is not over after {args.timeout:g} s; it goes on",
            file=stderr,
        )
        return EXIT_TIMEOUT
    return report(result, args.json, stdout, stderr)
