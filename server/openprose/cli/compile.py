"""``prose compile``: validate a program, then print its compiled (canonical) form."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import TextIO

from openprose.cli.render import Style, format_human, format_summary, source_lines, wants_colour
from openprose.cli.sources import SourceError, add_size_option, discover, read_source

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_TROUBLE = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="FILE", help="the program ('-' reads standard input)")
    add_size_option(parser)


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from openprose.checking import check_text
    from openprose.format import compile_text

    sources, missing = discover([args.path])
    if missing or len(sources) != 1:
        reason = str(missing[0]) if missing else f"{args.path} is not one .prose file"
        print(f"prose: error: {reason}", file=stderr)
        return EXIT_TROUBLE
    source = sources[0]
    try:
        text = read_source(source, args.max_file_size)
    except SourceError as error:
        print(f"prose: error: {error}", file=stderr)
        return EXIT_TROUBLE
    diagnostics = check_text(text, source.fs_path)
    if diagnostics:
        style = Style(colour=wants_colour("auto", stderr))
        lines = source_lines(text)
        for diagnostic in diagnostics:
            print(format_human(source.display_path, diagnostic, lines, style), file=stderr)
    if any(d.is_error for d in diagnostics):
        counts = Counter(d.severity for d in diagnostics)
        print(format_summary(counts, 1, 1), file=stderr)
        return EXIT_INVALID
    stdout.write(compile_text(text).text)
    return EXIT_OK
