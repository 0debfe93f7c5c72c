"""``prose fmt``: rewrite files in the canonical form, or check and show what would change."""

from __future__ import annotations

import argparse
import codecs
import difflib
from typing import TextIO

from openprose.cli.sources import (
    STDIN_PATH,
    Discovery,
    SourceError,
    add_discovery_options,
    add_size_option,
    read_source_and_bom,
    search,
)
from openprose.cli.writeback import write_back

EXIT_OK = 0
EXIT_WOULD_CHANGE = 1  # --check or --diff found a file to reformat or with syntax errors,
# or a file was refused
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
        help="change nothing; list the files that would be reformatted and exit 1 if any "
        "(or if a file has syntax errors, which keep it from being fully formatted)",
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        help="change nothing; print a unified diff of what would change and exit 1 if any",
    )
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="use this configuration file (for its exclude settings) instead of searching "
        "upwards from each directory",
    )
    add_size_option(parser)
    add_discovery_options(parser)


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.config import ConfigError
    from openprose.format import format_text
    from openprose.syntax.parser import gc_paused

    checking = bool(args.check or args.diff)
    try:
        found = search(args.paths or ["."], Discovery.from_arguments(args))
    except ConfigError as invalid:
        print(f"prose: error: {invalid}", file=stderr)
        return EXIT_TROUBLE
    sources, status = found.files, EXIT_OK
    for error in found.errors:
        print(f"prose: error: {error}", file=stderr)
        status = EXIT_TROUBLE
    if found.warning:
        print(f"prose: warning: {found.warning}", file=stderr)
        return EXIT_TROUBLE
    reformatted = unchanged = unwritten = broken = 0
    for source in sources:
        try:
            text, bom = read_source_and_bom(source, args.max_file_size)
        except SourceError as error:
            print(f"prose: error: {error}", file=stderr)
            status = EXIT_TROUBLE
            continue
        # The tree lives until the text is printed: a collection meanwhile would only scan it.
        with gc_paused():
            result = format_text(text)
        path = source.display_path
        named = STDIN_PATH if source.fs_path is None else path  # how to name it to prose check
        if result.refused:
            print(f"prose: {path}: {result.refused}", file=stderr)
            status = max(status, EXIT_WOULD_CHANGE)
        if result.unformatted and checking:
            # --check cannot vouch for a file it could not format: a CI gate must fail.
            print(f"prose: error: {path}: {_syntax_errors(result.unformatted, named)}", file=stderr)
            broken += 1
            status = max(status, EXIT_WOULD_CHANGE)
            continue
        if result.unformatted:
            print(
                f"prose: warning: {path}: {_syntax_errors(result.unformatted, named)}; "
                "the rest is formatted",
                file=stderr,
            )
        if source.fs_path is None:  # standard input: the result goes to standard output
            if checking:
                if result.changed:
                    _report(args, path, text, result.text, stdout)
                    status = max(status, EXIT_WOULD_CHANGE)
            else:
                stdout.write(("\ufeff" if bom else "") + result.text)  # as files keep theirs
            continue
        if not result.changed:
            unchanged += 1
            continue
        if checking:
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
        counts = (
            (reformatted, "would be reformatted" if checking else "reformatted"),
            (unchanged, "already formatted" if checking else "left unchanged"),
            (broken, "with syntax errors"),
            (unwritten, "could not be written"),
        )
        parts = [f"{_files(count)} {what}" for count, what in counts if count]
        if parts:
            print(", ".join(parts) + ".", file=stderr)
    return status


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def _syntax_errors(count: int, path: str) -> str:
    statements = "1 statement has" if count == 1 else f"{count} statements have"
    return (
        f"{statements} syntax errors and cannot be formatted "
        f"(run `prose check {path}` to see {'it' if count == 1 else 'them'})"
    )


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
