"""Which paths the CLI leaves out when it searches a directory: ``exclude`` patterns and
``.gitignore`` files, with ruff's semantics.

An exclude pattern is a glob (``*``, ``?``, ``[...]``; ``*`` also matches ``/``, as in ruff).
It matches a path when it matches the path's last component (``fixtures``, ``*.gen.prose``)
or the whole absolute path once the pattern is joined to its anchor: the directory of the
configuration file it came from, or the current directory for the command line and
``--config`` (``tests/fixtures``, ``examples/*/old``).

``.gitignore`` files count only inside a Git repository (a directory with ``.git``), as in
git, ruff and ripgrep: each one applies below its directory, a deeper file overrides a
shallower one, ``!`` re-includes, and ``.git/info/exclude`` applies under the whole
repository (found as git finds it, ``GIT_CEILING_DIRECTORIES`` included). The user's
global excludes file is not read. A rule counts for the path it
matches itself, not for what lies below (the search does not enter an ignored directory),
so a directory named on the command line is searched even when git ignores it, as ruff
does.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from openprose.files import read_text

if TYPE_CHECKING:
    # Imported where a `.gitignore` is read: most checks of named files read none.
    import pathspec

# ruff's defaults, plus what a Python or OpenProse project also keeps out of its sources:
# build output, caches and the run state of `prose run` (.prose).
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".prose",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

GITIGNORE = ".gitignore"


@dataclass(frozen=True, slots=True)
class Patterns:
    """Exclude globs and the directory their relative forms are anchored to."""

    globs: tuple[str, ...]
    anchor: str  # an absolute directory

    def match(self, path: str) -> str | None:
        """The first glob matching the absolute ``path``, or None."""
        names, paths = _compiled(self.globs, self.anchor)
        name = os.path.basename(path)
        full = _slashed(path)
        # One regular expression for all the globs: a search meets hundreds of files.
        if not names.match(name) and not paths.match(full):
            return None
        for glob in self.globs:
            if fnmatch.fnmatchcase(name, glob) or fnmatch.fnmatchcase(
                full, _anchored(glob, self.anchor)
            ):
                return glob
        return None  # not reached: the combined expressions match what one glob matches


@functools.lru_cache(maxsize=64)
def _compiled(globs: tuple[str, ...], anchor: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    never = "(?!)"  # an empty alternation would match everything
    names = "|".join(fnmatch.translate(glob) for glob in globs) or never
    paths = "|".join(fnmatch.translate(_anchored(glob, anchor)) for glob in globs) or never
    return re.compile(names), re.compile(paths)


def _anchored(glob: str, anchor: str) -> str:
    return _slashed(os.path.normpath(os.path.join(anchor, glob)))


def excluded_by(path: str, pattern_sets: Iterable[Patterns]) -> str | None:
    """The glob excluding the absolute ``path``, or None."""
    for patterns in pattern_sets:
        glob = patterns.match(path)
        if glob is not None:
            return glob
    return None


def excluded_with_parents(path: str, pattern_sets: Sequence[Patterns], root: str) -> bool:
    """Whether ``path`` or a directory between it and ``root`` (not ``root`` itself) is
    excluded: ``--force-exclude`` on a path named explicitly. Directories above ``root``
    do not count, so a project under ``~/build/`` is not excluded by ``build``."""
    current = path
    while True:
        if excluded_by(current, pattern_sets) is not None:
            return True
        parent = os.path.dirname(current)
        if parent == current or not _is_below(parent, root):
            return False
        current = parent


class GitIgnore:
    """The ``.gitignore`` rules of the repositories a search walks through; one per run
    (files are read once and cached by directory)."""

    def __init__(self) -> None:
        self._repositories: dict[str, str | None] = {}
        # As git: the search for a repository does not go up into these.
        ceilings = os.environ.get("GIT_CEILING_DIRECTORIES", "").split(os.pathsep)
        self._ceilings = {os.path.normpath(c) for c in ceilings if os.path.isabs(c)}
        self._chains: dict[str, tuple[tuple[str, pathspec.GitIgnoreSpec], ...]] = {}

    def ignores(self, path: str, is_directory: bool) -> bool:
        """Whether git would ignore the absolute ``path`` itself (its parent directories are
        not looked at: the search does not enter an ignored one, and one named explicitly
        is searched, as ruff does)."""
        directory = os.path.dirname(path)
        if self._repository(directory) is None:
            return False
        # Deepest file first: the last matching rule of the deepest file that has one
        # decides, whether it ignores or (with !) re-includes.
        for base, spec in reversed(self._chain(directory)):
            verdict = _last_verdict(spec, _slashed(os.path.relpath(path, base)), is_directory)
            if verdict is not None:
                return verdict
        return False

    def _repository(self, directory: str) -> str | None:
        if directory not in self._repositories:
            parent = os.path.dirname(directory)
            if os.path.exists(os.path.join(directory, ".git")):
                found: str | None = directory
            elif parent == directory or parent in self._ceilings:
                found = None
            else:
                found = self._repository(parent)
            self._repositories[directory] = found
        return self._repositories[directory]

    def _chain(self, directory: str) -> tuple[tuple[str, pathspec.GitIgnoreSpec], ...]:
        """The rules that apply in ``directory``, shallowest first."""
        if directory in self._chains:
            return self._chains[directory]
        root = self._repository(directory)
        chain: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]
        if directory == root:
            chain = _read_rules(directory, os.path.join(directory, ".git", "info", "exclude"))
        else:
            chain = self._chain(os.path.dirname(directory))
        chain += _read_rules(directory, os.path.join(directory, GITIGNORE))
        self._chains[directory] = chain
        return chain


def _read_rules(base: str, path: str) -> tuple[tuple[str, pathspec.GitIgnoreSpec], ...]:
    try:
        # Not open(): a FIFO named .gitignore would block the search.
        lines = read_text(path, errors="replace").splitlines()
    except OSError:
        # Missing (the usual case), not a regular file, too large or unreadable: skipped,
        # as git skips an unreadable one.
        return ()
    import pathspec

    return ((base, pathspec.GitIgnoreSpec.from_lines(lines)),)


def _last_verdict(spec: pathspec.GitIgnoreSpec, relative: str, is_directory: bool) -> bool | None:
    """Whether the last rule of one file that matches ``relative`` itself ignores it (True)
    or re-includes it (False); None when no rule matches it.

    Not ``spec.check_file``: it also counts rules that match only a parent directory (so
    that it can answer for any file of a tree), and it ranks those below the others, which
    is wrong for a directory (``!*/`` would not re-include ``sub/`` after ``*``). The
    search prunes ignored directories, so here only the entry itself counts, as in git.
    """
    verdict: bool | None = None
    for pattern in spec.patterns:
        if pattern.include is not None and _matches_itself(pattern, relative, is_directory):
            verdict = pattern.include
    return verdict


def _matches_itself(pattern: pathspec.Pattern, relative: str, is_directory: bool) -> bool:
    regex = getattr(pattern, "regex", None)
    if regex is None:
        return pattern.match_file(relative) is not None
    if "ps_d" not in regex.groupindex:
        # No directory marker (``*``, ``docs/**``): a match of the path itself, and a
        # directory is named without its slash, so that ``docs/**`` leaves ``docs`` alone.
        return regex.search(relative) is not None
    # pathspec marks a match that stops at a directory's slash with the group ps_d: it is
    # the entry itself only when that slash ends the path (``sub/`` for the directory sub).
    # Each component start is tried, so that an unanchored ``/`` is found at the end too.
    path = relative + "/" if is_directory else relative
    starts = [0] + [i + 1 for i, c in enumerate(path[:-1]) if c == "/"]
    for start in starts:
        match = regex.search(path, start)
        if match is None:
            return False
        if match.start("ps_d") == -1 or match.end("ps_d") == len(path):
            return True
    return False


def _slashed(path: str) -> str:
    return path.replace(os.sep, "/") if os.sep != "/" else path


def _is_below(path: str, root: str) -> bool:
    return path != root and path.startswith(root.rstrip(os.sep) + os.sep)
