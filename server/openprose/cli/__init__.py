"""The ``prose`` command line (also ``python -m openprose``)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from openprose import __version__
from openprose import server_options as lsp_options
from openprose.cli import check, compile, fmt, run, runs, state, worker

PROG = "prose"


def build_parser() -> argparse.ArgumentParser:
    # prog is fixed: under `python -m openprose` argv[0] would be "__main__.py".
    parser = argparse.ArgumentParser(
        prog=PROG, description="Tools for OpenProse programs (.prose files)."
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=_CommandParser
    )

    check_parser = commands.add_parser(
        "check",
        help="report errors and warnings in .prose files",
        description="Report errors and warnings in .prose files. Exit status: 0 when there "
        "are no errors (warnings allowed), 1 when there is an error, 2 for a usage error, "
        "a path that cannot be read, or no .prose file found.",
    )
    check.add_arguments(check_parser)
    check_parser.set_defaults(handler=check.run)

    fmt_parser = commands.add_parser(
        "fmt",
        help="rewrite .prose files in the canonical form",
        description="Rewrite .prose files in the canonical form. Statements with syntax "
        "errors are left as written. Exit status: 0 when done (or nothing to change), 1 "
        "when --check or --diff found a file to reformat or a file with syntax errors, 2 "
        "for a usage error, a path that cannot be read or written, or no .prose file found.",
    )
    fmt.add_arguments(fmt_parser)
    fmt_parser.set_defaults(handler=fmt.run)

    compile_parser = commands.add_parser(
        "compile",
        help="validate a program and print its compiled form",
        description="Validate a program, then print its compiled form: the canonical form "
        "without comments. Exit status: 0 with the compiled program on standard output, 1 "
        "when the program has errors (printed on standard error), 2 for a usage error.",
    )
    compile.add_arguments(compile_parser)
    compile_parser.set_defaults(handler=compile.run)

    run_parser = commands.add_parser(
        "run",
        help="run a program on the bundled VM",
        description="Check a program, then run it on the bundled VM (by default the offline "
        "backend: a deterministic dry run that calls no model). Exit status: 0 when the run "
        "succeeded, 1 when the program has errors or failed, 2 for a usage error (a missing "
        "input, an unreadable file), 130 when interrupted.",
    )
    run.add_arguments(run_parser)
    run_parser.set_defaults(handler=run.run)

    runs_parser = commands.add_parser(
        "runs",
        help="list, show, remove or resume the runs of a project",
        description="The runs of a project (.prose/runs): list them, show one, remove one, "
        "or resume one. Exit status: 0 when done, 1 when a resumed run failed or a removal was "
        "declined, 2 for a usage error (an unknown run id, a run still running).",
    )
    runs.add_arguments(runs_parser)

    worker_parser = commands.add_parser(
        "worker",
        help="execute the runs queued for the dbos engine",
        description="Execute the runs that `prose run --engine dbos --detach` queued, and take "
        "over the runs of workers whose process is gone (docs/scale.md). Runs until "
        "interrupted (SIGINT or SIGTERM). Exit status: 0 when stopped, 2 for a usage error "
        "(the dbos extra missing, a system database it cannot reach).",
    )
    worker.add_arguments(worker_parser)
    worker_parser.set_defaults(handler=worker.run)

    state_parser = commands.add_parser(
        "state",
        help="describe, reset or compact the state of a run or an agent",
        description="The state control plane: describe, reset or compact the stores of a run "
        "(bindings, narration, journal, agents, imports) or the memory of a persistent agent. "
        "Exit status: 0 when done, 1 when a store refused or failed (see errors), 2 for a "
        "usage error.",
    )
    state.add_arguments(state_parser)

    lsp_parser = commands.add_parser(
        "lsp",
        help="run the language server (the same as prose-ls)",
        description=lsp_options.DESCRIPTION + " The same options as prose-ls.",
    )
    lsp_options.add_arguments(lsp_parser, "prose-ls")
    lsp_parser.set_defaults(handler=_run_lsp)
    return parser


class _CommandParser(argparse.ArgumentParser):
    """A subcommand's parser: an argument it does not know is reported with its own usage
    (``usage: prose check ...``), not the top-level one.

    argparse hands a subcommand's leftovers back to the top-level parser, which would
    report them; erroring here instead keeps the usage next to the command that was wrong.
    Nested actions (``prose runs list``) get this class too, so the innermost one reports.
    """

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


def _run_lsp(args: argparse.Namespace, stdout: object, stderr: object) -> int:
    from openprose.lsp.server import serve

    # The server's status: 1 when the client exits without shutting it down first.
    return serve(args)


def command() -> None:
    """The ``prose`` executable and ``python -m openprose``: ``main``, in a process that ends
    with it (a command may then exit without taking its objects apart)."""
    raise SystemExit(main(exit_fast=True))


def main(argv: Sequence[str] | None = None, exit_fast: bool = False) -> int:
    """Run the command line ``argv`` (default: the process's).  ``exit_fast``: the process
    ends with this call, so a command that has written everything may end it at once
    (``prose check`` does: taking a big program's tree and model apart at exit took a
    fifth of its time, as mypy found for its own)."""
    _tolerate_unencodable_output()
    args = build_parser().parse_args(argv)
    args.exit_fast = exit_fast
    try:
        status: int = args.handler(args, sys.stdout, sys.stderr)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`prose check | head`): not our failure, and Python would
        # otherwise print a traceback while flushing stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return status


def _tolerate_unencodable_output() -> None:
    # A program may contain any character; a terminal whose encoding cannot show one must
    # still get the rest of the report rather than a UnicodeEncodeError.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
