"""The ``prose`` command line (also ``python -m openprose``)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from openprose import __version__
from openprose.cli import check

PROG = "prose"


def build_parser() -> argparse.ArgumentParser:
    # prog is fixed: under `python -m openprose` argv[0] would be "__main__.py".
    parser = argparse.ArgumentParser(
        prog=PROG, description="Tools for OpenProse programs (.prose files)."
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    check_parser = commands.add_parser(
        "check",
        help="report errors and warnings in .prose files",
        description="Report errors and warnings in .prose files. Exit status: 0 when there "
        "are no errors (warnings allowed), 1 when there is an error, 2 for a usage error "
        "or a path that cannot be read.",
    )
    check.add_arguments(check_parser)
    check_parser.set_defaults(handler=check.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _tolerate_unencodable_output()
    args = build_parser().parse_args(argv)
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
