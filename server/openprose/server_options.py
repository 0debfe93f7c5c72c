"""The language server's command-line options, shared by ``prose-ls`` and ``prose lsp``.

Defined once so that the two entry points cannot drift apart, and kept out of both ``lsp``
and ``cli``: building ``prose``'s command line loads no server code (``prose run`` imports
nothing of the language server: tests/vm/test_layering.py), and starting ``prose-ls`` loads
none of the other commands.
"""

from __future__ import annotations

import argparse

from openprose import __version__

DEFAULT_TCP = "127.0.0.1:2087"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DESCRIPTION = (
    "Run the OpenProse language server over standard input and output (the default), "
    f"or on a TCP address with --tcp [HOST:PORT] (default {DEFAULT_TCP})."
)


def add_arguments(parser: argparse.ArgumentParser, prog: str) -> None:
    parser.add_argument("--version", action="version", version=f"{prog} {__version__}")
    parser.add_argument(
        "--stdio", action="store_true", help="talk over standard input and output (the default)"
    )
    parser.add_argument(
        "--tcp",
        metavar="HOST:PORT",
        nargs="?",
        const=DEFAULT_TCP,
        type=_address,
        help=f"listen on a TCP address instead (default {DEFAULT_TCP})",
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=_log_level,
        metavar="LEVEL",
        help=f"what to log on standard error: {', '.join(LOG_LEVELS)} (default WARNING)",
    )


def _log_level(text: str) -> str:
    # A typo used to fall back to WARNING silently; an option that does nothing is a trap.
    level = text.strip().upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(
            f"invalid level {text!r} (choose from {', '.join(LOG_LEVELS)})"
        )
    return level


def _address(text: str) -> str:
    # Checked here so that a bad port is a usage error, not a traceback from int().
    host, _, port = text.rpartition(":")  # a bare PORT listens on 127.0.0.1
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"invalid address {text!r}: expected HOST:PORT")
    return f"{host or '127.0.0.1'}:{port}"
