"""``prose fmt``: rewrite files in the canonical form, or check and show what would change."""

from __future__ import annotations

import argparse
import codecs
import difflib
from typing import TextIO

from openprose.cli.sources import (
    SourceError,
    add_size_option,
    discover,
    read_source_and_bom,
)
from openprose.cli.writeback import write_back

EXIT_OK = 0
EXIT_WOULD_CHANGE = 1  # --check or --diff found a file to reformat, or a file was refused
EXIT_TROUBLE = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files, or directories searched recursively for *.prose (default: the current "
        "directory); '-' reads standard input and writes the result to standard output",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="change nothing; list the files that would be reformatted and exit 1 if any",
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        help="change nothing; print a unified diff of what would change and exit 1 if any",
    )
    add_size_option(parser)


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.format import format_text

    sources, missing = discover(args.paths or ["."])
    status = EXIT_OK
    for error in missing:
        print(f"prose: error: {error}", file=stderr)
        status = EXIT_TROUBLE
    reformatted = unchanged = unwritten = 0
    for source in sources:
        try:
            text, bom = read_source_and_bom(source, args.max_file_size)
        except SourceError as error:
            print(f"prose: error: {error}", file=stderr)
            status = EXIT_TROUBLE
            continue
        result = format_text(text)
        path = source.display_path
        if result.refused:
            print(f"prose: {path}: {result.refused}", file=stderr)
            status = max(status, EXIT_WOULD_CHANGE)
        if result.unformatted:
            print(
                f"prose: {path}: {result.unformatted} statement(s) with syntax errors "
                "left as written (run `prose check` to see them)",
                file=stderr,
            )
        if source.fs_path is None:  # standard input: the result goes to standard output
            if args.check or args.diff:
                if result.changed:
                    _report(args, path, text, result.text, stdout)
                    status = max(status, EXIT_WOULD_CHANGE)
            else:
                stdout.write(("\ufeff" if bom else "") + result.text)  # as files keep theirs
            continue
        if not result.changed:
            unchanged += 1
            continue
        if args.check or args.diff:
            reformatted += 1
            _report(args, path, text, result.text, stdout)
            status = max(status, EXIT_WOULD_CHANGE)
            continue
        try:
            data = (codecs.BOM_UTF8 if bom else b"") + result.text.encode("utf-8")
            write_back(source.fs_path, data)
        except OSError as error:
            # Like an unreadable file: reported, the others still formatted, exit status 2.
            print(f"prose: error: cannot write {path}: {error.strerror or error}", file=stderr)
            unwritten += 1
            status = EXIT_TROUBLE
        else:
            reformatted += 1
    if sources and not (len(sources) == 1 and sources[0].fs_path is None):
        verb = "would be reformatted" if args.check or args.diff else "reformatted"
        failed = f", {unwritten} could not be written" if unwritten else ""
        print(f"{reformatted} file(s) {verb}, {unchanged} left unchanged{failed}.", file=stderr)
    return status


def _report(args: argparse.Namespace, path: str, old: str, new: str, stdout: TextIO) -> None:
    if args.diff:
        stdout.writelines(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                f"{path} (original)",
                f"{path} (formatted)",
            )
        )
    else:
        print(f"Would reformat: {path}", file=stdout)
