"""``prose check``: report every diagnostic in the given files, in the chosen format."""

from __future__ import annotations

import argparse
import gc
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from openprose.cli import fix
from openprose.cli.github import format_github
from openprose.cli.hints import NearNames
from openprose.cli.lines import text_lines
from openprose.cli.render import (
    Style,
    format_concise,
    format_human,
    format_summary,
    to_json,
    wants_colour,
)
from openprose.cli.sarif import SarifLog
from openprose.cli.sources import (
    Discovery,
    SourceError,
    SourceFile,
    add_discovery_options,
    add_size_option,
    read_source_and_bom,
    search,
)
from openprose.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from openprose.config import Config
    from openprose.ide.analysis import Analysis

# Exit statuses (documented in the README).
EXIT_CLEAN = 0  # no errors; warnings and hints allowed
EXIT_ERRORS = 1  # at least one error-severity diagnostic
EXIT_TROUBLE = 2  # usage error, a path that could not be read, or no .prose file found

FORMATS = ("human", "concise", "json", "github", "sarif")


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
        "json: an array of objects; github: GitHub Actions annotations; sarif: a SARIF 2.1.0 "
        "log for code scanning",
    )
    parser.add_argument(
        "--color",
        "--colour",
        dest="color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the human format (auto: only on a terminal, and not when NO_COLOR is set)",
    )
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="use this configuration file (prose.toml-style, or a pyproject.toml with a "
        "[tool.openprose] table) instead of searching upwards from each file",
    )
    add_size_option(parser)
    add_discovery_options(parser)
    fix.add_arguments(parser)
    for option, meaning in (
        ("--select", "check only these rules (replaces the configuration's selection)"),
        ("--extend-select", "check these rules as well"),
        ("--ignore", "do not check these rules"),
    ):
        parser.add_argument(
            option,
            metavar="CODES",
            action="append",
            help=f"{meaning}: codes or prefixes separated by commas, such as W015,E04",
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
    from openprose.analysis import project_roots_remembered
    from openprose.checking import check_text
    from openprose.config import ConfigError
    from openprose.syntax.parser import gc_paused

    try:
        # Every configuration is found before any output, so a bad one is the only message.
        found = search(args.paths or ["."], Discovery.from_arguments(args))
        sources, missing = found.files, found.errors
        configs = _configurations(args, sources)
    except ConfigError as invalid:
        print(f"prose: error: {invalid}", file=stderr)
        return EXIT_TROUBLE
    if found.warning:
        print(f"prose: warning: {found.warning}", file=stderr)
        return EXIT_TROUBLE
    fixer = fix.Fixer(args, stdout, stderr) if fix.wanted(args) else None
    if fixer is not None:
        stdout = fixer.report_stream(sources, stdout)
    tally = _Tally()
    style = Style(colour=wants_colour(args.color, stdout))
    json_items: list[dict[str, str | int]] = []
    sarif = SarifLog() if args.format == "sarif" else None

    def report_unreadable(error: SourceError) -> None:
        tally.unreadable += 1
        print(f"prose: error: {error}", file=stderr)
        if sarif is not None:
            sarif.add_unreadable(str(error))

    def check_and_report(source: SourceFile, text: str, bom: bool) -> None:
        config = configs[source]
        analysis: Analysis | None = None
        if fixer is None and args.format == "human":
            from openprose.ide.analysis import analyze_document

            # The hints under the diagnostics need the analysis the diagnostics came from;
            # analysing a big file a second time for them took as long as checking it.
            analysis = analyze_document(text, path=source.fs_path or None)
            diagnostics = analysis.diagnostics_with(config)
        elif exit_fast and source is sources[-1]:
            diagnostics = check_text(text, source.fs_path, config, process_ends=True)
        else:
            check = fix.checker(check_text, source.fs_path, config)
            diagnostics = check(text)
            if fixer is not None:
                text, diagnostics = fixer.fix(source, text, bom, config, diagnostics, check)
        tally.add(diagnostics)
        path = source.display_path
        if fixer is not None and not fixer.shows_diagnostics:
            return
        if args.format == "json":
            json_items.extend(to_json(path, d) for d in diagnostics)
        elif args.format == "concise":
            for d in diagnostics:
                print(format_concise(path, d), file=stdout)
        elif args.format == "github":
            for d in diagnostics:
                print(format_github(path, d), file=stdout)
        elif sarif is not None:
            sarif.add(path, source.fs_path, diagnostics)
        else:
            lines = text_lines(text)
            if analysis is not None:
                # Its hints read the same lines: a big program was split into all of its
                # lines for the few that have diagnostics (``lines`` is a cached property).
                analysis.__dict__["lines"] = lines
            near = NearNames(text, source.fs_path, analysis, diagnostics)
            for d in diagnostics:
                print(format_human(path, d, lines, style, near(d)), file=stdout)

    for error in missing:
        report_unreadable(error)

    # The process ends after the report: the last file's tree and model are left as they
    # are (collecting them took a fifth of the check of a big program).
    exit_fast = getattr(args, "exit_fast", False) and fixer is None
    # The files are checked at one moment: each directory's project root is found once.
    with project_roots_remembered():
        for index, source in enumerate(sources):
            try:
                text, bom = read_source_and_bom(source, args.max_file_size)
            except SourceError as error:
                report_unreadable(error)
                continue
            if exit_fast and index == len(sources) - 1:
                gc.disable()
                check_and_report(source, text, bom)
                continue
            # A file's tree and model stay alive until its report is written: a collection
            # in between would only scan them, and the hints of a big file allocate a lot.
            with gc_paused():
                check_and_report(source, text, bom)

    if args.format == "json":
        json.dump(json_items, stdout, indent=2, ensure_ascii=False)
        stdout.write("\n")
    if sarif is not None:
        sarif.write(stdout)
    stdout.flush()
    if fixer is not None:
        print(fixer.summary(tally.counts, tally.files_checked, tally.unreadable), file=stderr)
        return fixer.exit_status(tally.exit_status())
    summary = format_summary(
        tally.counts, tally.files_checked, tally.files_with_diagnostics, tally.unreadable
    )
    print(summary, file=stderr)
    if exit_fast:
        stdout.flush()
        stderr.flush()
        os._exit(tally.exit_status())
    return tally.exit_status()


def _configurations(
    args: argparse.Namespace, sources: list[SourceFile]
) -> dict[SourceFile, Config | None]:
    """The configuration of each source: ``--config``, or the one found upwards from it,
    with the command line's rule selection on top. Raises ConfigError."""
    from openprose.config import (
        Config,
        ConfigFinder,
        RuleSelection,
        load_config,
        parse_selectors,
    )

    def codes(option: str, *, ignoring: bool = False) -> list[str] | None:
        values = getattr(args, option.lstrip("-").replace("-", "_"))
        if values is None:
            return None
        listed = [code.strip() for value in values for code in value.split(",") if code.strip()]
        return parse_selectors(option, option, listed, ignoring=ignoring)

    select = codes("--select")
    overrides: RuleSelection | None = RuleSelection(
        select=None if select is None else tuple(select),
        extend_select=tuple(codes("--extend-select") or ()),
        ignore=tuple(codes("--ignore", ignoring=True) or ()),
    )
    if overrides == RuleSelection():
        overrides = None  # nothing on the command line

    finder = ConfigFinder()
    fixed = load_config(args.config) if args.config else None
    result: dict[SourceFile, Config | None] = {}
    for source in sources:
        config = fixed or finder.for_path(source.fs_path)
        if overrides is not None:
            config = (config or Config()).with_selection(overrides)
        result[source] = config
    return result
