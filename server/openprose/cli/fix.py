"""``prose check --fix`` and ``--diff``: the language server's safe fixes, from the shell.

The fixes are the ones the editor applies with "fix all" (``ide.fixes.fix_all``),
which keeps only fixes whose result it has checked: each fixed diagnostic gone, nothing
new, every comment kept.  Fixing repeats while a pass still finds something (one fix can
make another possible), up to a few passes.  A file with syntax errors is left as it is,
as ruff does: a fix computed from a tree with errors in it is a guess.
"""

from __future__ import annotations

import argparse
import codecs
import difflib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from openprose.cli.render import format_summary
from openprose.cli.sources import SourceFile
from openprose.cli.writeback import write_back
from openprose.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from openprose.config import Config

Check = Callable[[str], list[Diagnostic]]

# One pass applies every fix that does not overlap another; what a fix makes possible, or
# what overlapped, waits for the next.  Each pass removes at least one diagnostic.
_MAX_PASSES = 10

EXIT_WOULD_FIX = 1  # --diff: some file would change
EXIT_TROUBLE = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("fixes")
    group.add_argument(
        "--fix",
        action="store_true",
        help="apply the fixes that are safe (the editor's 'fix all'), then report what is "
        "left; with '-', print the fixed text on standard output and the report on "
        "standard error",
    )
    group.add_argument(
        "--diff",
        action="store_true",
        help="change nothing; print a unified diff of what --fix would change and exit 1 if "
        "anything would",
    )
    group.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff, also apply the fixes that guess what was meant (the "
        "editor's preferred quick fix of a problem without a safe one); review them",
    )


def wanted(args: argparse.Namespace) -> bool:
    return bool(args.fix or args.diff)


@dataclass(frozen=True, slots=True)
class Outcome:
    text: str  # the fixed text (the text itself when nothing was fixed)
    diagnostics: list[Diagnostic]  # what is left in it
    fixed: int  # how many diagnostics the fixes removed
    syntax_errors: int = 0  # why nothing was tried, when not 0
    hidden: int = 0  # how many more --unsafe-fixes would fix


def checker(
    check_text: Callable[..., list[Diagnostic]], path: str | None, config: Config | None
) -> Check:
    """``check_text`` for one file, called as ``prose check`` calls it (without a
    configuration, with just the text and the path)."""
    if config is None:
        return lambda text: check_text(text, path)
    return lambda text: check_text(text, path, config)


def fix_text(
    text: str,
    path: str | None,
    config: Config | None,
    before: list[Diagnostic],
    check: Check,
    unsafe: bool = False,
) -> Outcome:
    """``text`` with its safe fixes applied (and the unsafe ones with ``unsafe``), and
    what is left.  ``before`` is what ``check`` found in ``text``; ``check`` is the checking
    the report uses, so what is counted as fixed is what the report no longer shows."""
    from openprose.codes import SYNTAX_CODES

    syntax_errors = sum(d.code in SYNTAX_CODES for d in before)
    if syntax_errors:
        return Outcome(text, before, 0, syntax_errors)
    current, diagnostics = text, before
    for _ in range(_MAX_PASSES):
        step = _one_pass(current, path, config, diagnostics, check, unsafe)
        if step is None:
            break
        current, diagnostics = step
    hidden = 0
    if diagnostics and not unsafe:
        step = _one_pass(current, path, config, diagnostics, check, unsafe=True)
        hidden = 0 if step is None else len(diagnostics) - len(step[1])
    return Outcome(current, diagnostics, len(before) - len(diagnostics), hidden=hidden)


def _one_pass(
    text: str,
    path: str | None,
    config: Config | None,
    diagnostics: list[Diagnostic],
    check: Check,
    unsafe: bool,
) -> tuple[str, list[Diagnostic]] | None:
    """The text after one "fix all", and what is left in it; None when nothing was fixed."""
    from openprose.ide.analysis import analyze_document
    from openprose.ide.fixes.edits import apply_edits
    from openprose.ide.fixes.fix_all import fix_all

    if not diagnostics:
        return None
    actions = fix_all(analyze_document(text, path=path), config, unsafe)
    if not actions:
        return None
    fixed = apply_edits(text, actions[0].edits)
    after = check(fixed)
    if fixed == text or len(after) >= len(diagnostics):
        return None  # fix_all checked its result: this cannot happen, and must not loop
    return fixed, after


class Fixer:
    """Fixes one file after another for ``prose check``, writing them back (``--fix``) or
    printing what would change (``--diff``), and sums up."""

    def __init__(self, args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> None:
        self.diff = bool(args.diff)
        self.unsafe = bool(args.unsafe_fixes)
        self.hidden = 0
        self.stdout = stdout
        self.stderr = stderr
        self.fixed = 0
        self.files_fixed = 0
        self.files_with_problems = 0
        self.unwritten = 0

    def report_stream(self, sources: Iterable[SourceFile], stdout: TextIO) -> TextIO:
        """Where the diagnostics go: standard error when the fixed text of standard input
        takes standard output (as ruff does)."""
        if not self.diff and any(source.fs_path is None for source in sources):
            return self.stderr
        return stdout

    @property
    def shows_diagnostics(self) -> bool:
        return not self.diff  # --diff prints only the diff, as ruff does

    def fix(
        self,
        source: SourceFile,
        text: str,
        bom: bool,
        config: Config | None,
        diagnostics: list[Diagnostic],
        check: Check,
    ) -> tuple[str, list[Diagnostic]]:
        """Fix ``source``, whose ``text`` has ``diagnostics``; return the text as it now is
        (or would be, with --diff) and what is left in it."""
        outcome = fix_text(text, source.fs_path, config, diagnostics, check, self.unsafe)
        self.hidden += outcome.hidden
        path = source.display_path
        if outcome.fixed or outcome.diagnostics:
            self.files_with_problems += 1
        if outcome.syntax_errors:
            errors = _plural(outcome.syntax_errors, "syntax error", "syntax errors")
            them = "it" if outcome.syntax_errors == 1 else "them"
            print(f"prose: {path}: not fixed: {errors} (fix {them} first)", file=self.stderr)
        changed = outcome.text != text
        if self.diff:
            if changed:
                self.stdout.writelines(_unified_diff(path, text, outcome.text))
                self._count(outcome)
            return outcome.text, outcome.diagnostics
        if source.fs_path is None:  # standard input: the text goes out whatever was fixed
            self.stdout.write(("\ufeff" if bom else "") + outcome.text)
            self.stdout.flush()
            self._count(outcome)
            return outcome.text, outcome.diagnostics
        if not changed:
            return outcome.text, outcome.diagnostics
        try:
            write_back(source.fs_path, (codecs.BOM_UTF8 if bom else b"") + outcome.text.encode())
        except OSError as error:
            print(f"prose: error: cannot write {path}: {error.strerror or error}", file=self.stderr)
            self.unwritten += 1
            return text, diagnostics  # nothing was written: all of it is still there
        self._count(outcome)
        return outcome.text, outcome.diagnostics

    def _count(self, outcome: Outcome) -> None:
        if outcome.fixed:
            self.fixed += outcome.fixed
            self.files_fixed += 1

    def exit_status(self, status: int) -> int:
        """The exit status, given the one ``prose check`` would give for what is left."""
        if self.unwritten:
            return EXIT_TROUBLE
        if self.diff:
            if status == EXIT_TROUBLE:
                return status
            return EXIT_WOULD_FIX if self.fixed else 0
        return status

    def summary(self, remaining: Counter[Severity], files_checked: int, unreadable: int) -> str:
        """The closing line, ruff's "Found N errors (M fixed, K remaining)" in our words."""
        left = sum(remaining.values())
        notes: list[str] = []
        if self.unwritten:
            notes.append(f"{_plural(self.unwritten, 'file', 'files')} could not be written")
        if self.hidden:
            notes.append(f"{self.hidden} more fixable with --unsafe-fixes")
        tail = "".join(f"; {note}" for note in notes) + "."
        if not self.fixed and not self.diff:  # the usual summary, as ruff does
            usual = format_summary(remaining, files_checked, self.files_with_problems, unreadable)
            return usual[:-1] + tail
        if unreadable:
            tail = f"; {_plural(unreadable, 'path', 'paths')} could not be read{tail}"
        if not self.fixed and not left:
            return f"All checks passed ({_plural(files_checked, 'file', 'files')}){tail}"
        breakdown = f" ({_breakdown(remaining)})" if left else ""
        if self.diff:
            files = _plural(self.files_fixed, "file", "files")
            would = _plural(self.fixed, "problem", "problems")
            fixing = f"Would fix {would} in {files}" if self.fixed else "No fixes available"
            return f"{fixing} ({files_checked} checked); {left} would remain{breakdown}{tail}"
        found = _plural(self.fixed + left, "problem", "problems")
        files = _plural(self.files_with_problems, "file", "files")
        return (
            f"Found {found} in {files} ({files_checked} checked): "
            f"{self.fixed} fixed, {left} remaining{breakdown}{tail}"
        )


def _unified_diff(path: str, old: str, new: str) -> list[str]:
    from parso.utils import split_lines  # the parser's lines (str.splitlines has more breaks)

    lines = list(
        difflib.unified_diff(
            split_lines(old, keepends=True),
            split_lines(new, keepends=True),
            f"{path} (original)",
            f"{path} (fixed)",
        )
    )
    # A last line without a line break would run into the next line of the diff.
    return [
        line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
        for line in lines
    ]


_NOUNS = {
    Severity.ERROR: ("error", "errors"),
    Severity.WARNING: ("warning", "warnings"),
    Severity.INFORMATION: ("info", "info"),
    Severity.HINT: ("hint", "hints"),
}


def _breakdown(counts: Counter[Severity]) -> str:
    parts = [_plural(counts[s], *_NOUNS[s]) for s in sorted(_NOUNS) if counts.get(s, 0)]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _plural(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"
