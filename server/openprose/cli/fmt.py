"""``prose fmt``: rewrite files in the canonical form, or check and show what would change."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
from typing import TextIO

from openprose.cli.sources import SourceError, SourceFile, discover, read_source_and_bom

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


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.format import format_text

    sources, missing = discover(args.paths or ["."])
    status = EXIT_OK
    for error in missing:
        print(f"prose: error: {error}", file=stderr)
        status = EXIT_TROUBLE
    reformatted = unchanged = 0
    for source in sources:
        try:
            text, bom = read_source_and_bom(source)
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
        reformatted += 1
        if args.check or args.diff:
            _report(args, path, text, result.text, stdout)
            status = max(status, EXIT_WOULD_CHANGE)
        else:
            try:
                _write(source, result.text)
            except OSError as error:
                print(f"prose: error: cannot write {path}: {error.strerror}", file=stderr)
                status = EXIT_TROUBLE
    if sources and not (len(sources) == 1 and sources[0].fs_path is None):
        verb = "would be reformatted" if args.check or args.diff else "reformatted"
        print(f"{reformatted} file(s) {verb}, {unchanged} left unchanged.", file=stderr)
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


def _write(source: SourceFile, text: str) -> None:
    """Replace the file atomically, keeping a byte-order mark if it had one."""
    assert source.fs_path is not None
    with open(source.fs_path, "rb") as stream:
        bom = stream.read(3) == b"\xef\xbb\xbf"
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    directory = os.path.dirname(os.path.abspath(source.fs_path))
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".prose-fmt-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        if sys.platform != "win32":
            os.chmod(temporary, os.stat(source.fs_path).st_mode & 0o7777)
        os.replace(temporary, source.fs_path)
    except BaseException:
        os.unlink(temporary)
        raise
