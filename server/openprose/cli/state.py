"""``prose state describe|reset|compact``: the state control plane (vm/state/control.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from openprose.cli.runs import EXIT_FAILED, EXIT_OK, EXIT_USAGE, chosen_states, confirm, runs_root
from openprose.config import STATE_BACKENDS as BACKENDS  # not the VM's: it loads the interpreter

SCOPES = ("project", "user")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="state_command", metavar="ACTION", required=True)

    describe = actions.add_parser(
        "describe",
        help="what state a run, an agent or the project holds",
        description="Describe the stores of a run (bindings, narration, journal, agents, "
        "imports), of an agent's memory (--agent), or, with neither, of the project.",
    )
    describe.add_argument("run_id", nargs="?", metavar="RUN_ID")
    _agent(describe)
    describe.add_argument(
        "--include-data", action="store_true", help="include what each store holds"
    )
    _common(describe)
    describe.set_defaults(handler=run_describe)

    reset = actions.add_parser(
        "reset",
        help="clear the state of a run, an agent or the whole project",
        description="Clear the stores of a run (it stays, and starts over when resumed), an "
        "agent's memory, or with --all every run and the project's agent memory. A store that "
        "cannot be cleared precisely refuses, and then nothing is cleared.",
    )
    reset.add_argument("run_id", nargs="?", metavar="RUN_ID")
    _agent(reset)
    reset.add_argument(
        "--all",
        action="store_true",
        help="every run under the runs root and the project's agent memory",
    )
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    _common(reset)
    reset.set_defaults(handler=run_reset)

    compact = actions.add_parser(
        "compact",
        help="compact the memory of a run's agents or of an agent",
        description="Fold old memory segments into memory.md's history: keep the newest "
        "--max-messages segments (recent) or the newest that fit in --max-tokens (tokens).",
    )
    compact.add_argument("run_id", nargs="?", metavar="RUN_ID")
    _agent(compact)
    compact.add_argument("--strategy", choices=("recent", "tokens"), required=True)
    limits = compact.add_mutually_exclusive_group()
    limits.add_argument(
        "--max-messages", type=int, metavar="N", help="recent: segments kept (default 20)"
    )
    limits.add_argument(
        "--max-tokens", type=int, metavar="N", help="tokens: budget kept (default 8000)"
    )
    _common(compact)
    compact.set_defaults(handler=run_compact)


def _agent(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", metavar="NAME", help="a persistent agent's memory")
    parser.add_argument(
        "--scope",
        choices=SCOPES,
        action="append",
        help="with --agent: only this memory scope (repeatable; default project and user)",
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state",
        choices=BACKENDS,
        help="the state backend of the run (default: filesystem, then sqlite)",
    )
    parser.add_argument(
        "--run-dir",
        metavar="DIR",
        help="where run directories are (default: .prose/runs in the current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def target(args: argparse.Namespace) -> Any:
    from openprose.analysis.contracts import project_root_of
    from openprose.vm.state.control import Target

    if args.run_id is not None and args.agent is not None:
        raise _Usage("give a run id or --agent NAME, not both")
    if getattr(args, "all", False) and (args.run_id is not None or args.agent is not None):
        raise _Usage("--all takes no run id and no --agent")
    if args.scope and args.agent is None:
        raise _Usage("--scope goes with --agent NAME")
    return Target(
        runs_root(args),
        run_id=args.run_id,
        agent=args.agent,
        all=getattr(args, "all", False),
        project_root=project_root_of(Path.cwd() / "_"),
        states=chosen_states(args),
        scopes=tuple(dict.fromkeys(args.scope)) if args.scope else SCOPES,
    )


class _Usage(Exception):
    pass


def _operate(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, action: Any) -> int:
    from openprose.vm.state import StateError

    try:
        report = action(target(args))
    except (_Usage, StateError) as error:
        print(f"prose: error: {error}", file=stderr)
        return EXIT_USAGE
    if args.json:
        json.dump(report.to_json(), stdout, ensure_ascii=False, indent=2, default=str)
        stdout.write("\n")
    else:
        print(report.render(), file=stdout)
    for failure in report.errors:
        print(f"prose: error: {failure.store}: {failure.message}", file=stderr)
    return EXIT_FAILED if report.errors else EXIT_OK


def run_describe(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.vm.state import control

    return _operate(args, stdout, stderr, lambda t: control.describe(t, args.include_data))


def run_reset(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.vm.state import control

    if args.run_id is None and args.agent is None and not args.all:
        print("prose: error: reset needs a RUN_ID, --agent NAME or --all", file=stderr)
        return EXIT_USAGE
    if not args.yes:
        what = (
            f"run {args.run_id}"
            if args.run_id
            else f"agent {args.agent}"
            if args.agent
            else "every run and the project's agent memory"
        )
        if not sys.stdin.isatty():
            print(
                f"prose: error: resetting the state of {what} needs --yes when not asked "
                "on a terminal",
                file=stderr,
            )
            return EXIT_USAGE
        if not confirm(f"clear the state of {what}?", stderr):
            print("prose: nothing cleared", file=stderr)
            return EXIT_FAILED
    return _operate(args, stdout, stderr, control.reset)


def run_compact(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.vm.state import control

    if args.run_id is None and args.agent is None:
        print("prose: error: compact needs a RUN_ID or --agent NAME", file=stderr)
        return EXIT_USAGE
    if args.strategy == "recent" and args.max_tokens is not None:
        print("prose: error: --max-tokens goes with --strategy tokens", file=stderr)
        return EXIT_USAGE
    if args.strategy == "tokens" and args.max_messages is not None:
        print("prose: error: --max-messages goes with --strategy recent", file=stderr)
        return EXIT_USAGE
    return _operate(
        args,
        stdout,
        stderr,
        lambda t: control.compact(t, args.strategy, args.max_messages, args.max_tokens),
    )
