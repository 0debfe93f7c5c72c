"""``prose check``: report every diagnostic in the given files, in the chosen format."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TextIO

from openprose.cli.render import (
    Style,
    format_concise,
    format_human,
    format_summary,
    source_lines,
    to_json,
    wants_colour,
)
from openprose.cli.sources import SourceError, discover, read_source
from openprose.diagnostics import Diagnostic, Severity

# Exit statuses (documented in the README).
EXIT_CLEAN = 0  # no errors; warnings and hints allowed
EXIT_ERRORS = 1  # at least one error-severity diagnostic
EXIT_TROUBLE = 2  # usage error, or a path that could not be read

FORMATS = ("human", "concise", "json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files, or directories searched recursively for *.prose "
        "(default: the current directory; '-' reads standard input)",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="human",
        help="human: source line and carets (default); concise: one line per diagnostic; "
        "json: an array of objects",
    )
    parser.add_argument(
        "--color",
        "--colour",
        dest="color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the human format (auto: only on a terminal, and not when NO_COLOR is set)",
    )


@dataclass
class _Tally:
    counts: Counter[Severity] = field(default_factory=Counter)
    files_checked: int = 0
    files_with_diagnostics: int = 0
    unreadable: int = 0

    def add(self, diagnostics: list[Diagnostic]) -> None:
        self.files_checked += 1
        if diagnostics:
            self.files_with_diagnostics += 1
        self.counts.update(d.severity for d in diagnostics)

    def exit_status(self) -> int:
        if self.unreadable:
            return EXIT_TROUBLE
        return EXIT_ERRORS if self.counts[Severity.ERROR] else EXIT_CLEAN


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    # Imported here, not at the top: `prose --help`, `--version` and the renderer should not
    # pay for loading the parser (and later the analyzer).
    from openprose.checking import check_text

    sources, missing = discover(args.paths or ["."])
    tally = _Tally()
    style = Style(colour=wants_colour(args.color, stdout))
    json_items: list[dict[str, str | int]] = []

    def report_unreadable(error: SourceError) -> None:
        tally.unreadable += 1
        print(f"prose: error: {error}", file=stderr)

    for error in missing:
        report_unreadable(error)

    for source in sources:
        try:
            text = read_source(source)
        except SourceError as error:
            report_unreadable(error)
            continue
        diagnostics = check_text(text, source.fs_path)
        tally.add(diagnostics)
        path = source.display_path
        if args.format == "json":
            json_items.extend(to_json(path, d) for d in diagnostics)
        elif args.format == "concise":
            for d in diagnostics:
                print(format_concise(path, d), file=stdout)
        else:
            lines = source_lines(text)
            for d in diagnostics:
                print(format_human(path, d, lines, style), file=stdout)

    if args.format == "json":
        json.dump(json_items, stdout, indent=2, ensure_ascii=False)
        stdout.write("\n")
    stdout.flush()
    summary = format_summary(
        tally.counts, tally.files_checked, tally.files_with_diagnostics, tally.unreadable
    )
    print(summary, file=stderr)
    return tally.exit_status()
