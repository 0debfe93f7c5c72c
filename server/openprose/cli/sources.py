"""Finding the ``.prose`` files named on the command line and reading them as text."""

from __future__ import annotations

import argparse
import codecs
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from openprose.cli.exclusion import (
    DEFAULT_EXCLUDE,
    GitIgnore,
    Patterns,
    excluded_by,
    excluded_with_parents,
)
from openprose.files import (
    DEFAULT_MAX_FILE_SIZE,
    FileTooLarge,
    NotRegularFile,
    read_at_most,
    read_bytes,
)

PROSE_SUFFIX = ".prose"
STDIN_PATH = "-"
STDIN_DISPLAY = "<stdin>"
_SIZE = re.compile(r"([0-9]+)([kmg]?)", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


class SourceError(Exception):
    """A path that cannot be read; ``str()`` is the one-line message the CLI prints."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot read {path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True, slots=True)
class SourceFile:
    display_path: str  # how the user named it, shown in every diagnostic
    fs_path: str | None  # None: standard input


@dataclass(frozen=True)
class Discovery:
    """How directories are searched: the command line's exclusion options (None: not
    given, so each directory's configuration decides) and ``--config``."""

    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool | None = None
    force_exclude: bool | None = None
    config: str | None = None  # --config: one configuration for every file

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> Discovery:
        """The options ``add_discovery_options`` defined (absent ones keep their default)."""

        def globs(values: list[str] | None) -> tuple[str, ...] | None:
            if values is None:
                return None
            return tuple(g.strip() for value in values for g in value.split(",") if g.strip())

        return cls(
            exclude=globs(getattr(args, "exclude", None)),
            extend_exclude=globs(getattr(args, "extend_exclude", None)) or (),
            respect_gitignore=getattr(args, "respect_gitignore", None),
            force_exclude=getattr(args, "force_exclude", None),
            config=getattr(args, "config", None),
        )


@dataclass
class Found:
    """What a search found: the files in order, the paths that could not be read, and the
    paths named explicitly that ``force-exclude`` left out."""

    paths: Sequence[str]
    files: list[SourceFile]
    errors: list[SourceError]
    force_excluded: list[str]

    @property
    def warning(self) -> str | None:
        """Why nothing is checked, when the paths hold no file (ruff: "No Python files
        found"); None when there are files, an error already said why, or every path was
        left out on purpose (pre-commit passing only excluded files must pass)."""
        if self.files or self.errors or self.force_excluded:
            return None
        where = ", ".join(self.paths) if self.paths else os.curdir
        return f"no .prose files found under {where} (see --exclude and .gitignore)"


def discover(
    paths: Iterable[str], discovery: Discovery | None = None
) -> tuple[list[SourceFile], list[SourceError]]:
    """``search``'s files and errors."""
    found = search(paths, discovery)
    return found.files, found.errors


def search(paths: Iterable[str], discovery: Discovery | None = None) -> Found:
    """Expand PATH arguments into files, keeping the order the user gave.

    Files are taken whatever their extension (the user named them); directories contribute
    their ``*.prose`` files recursively in sorted order so that output is deterministic,
    leaving out what the exclusion settings and ``.gitignore`` files exclude (a path named
    explicitly is kept unless ``force-exclude``). A file reached twice is checked once.

    With ``discovery`` (prose check and fmt), each directory's configuration is read for its
    exclusion settings: raises ConfigError for one that cannot be used. Without it (commands
    given one program), no configuration is read: the default excludes and .gitignore.
    """
    paths = list(paths)
    result = Found(paths, [], [], [])
    seen: set[str] = set()
    filters = _Filters(discovery)

    def add(source: SourceFile) -> None:
        key = STDIN_PATH if source.fs_path is None else os.path.realpath(source.fs_path)
        if key not in seen:
            seen.add(key)
            result.files.append(source)

    for path in paths:
        if path == STDIN_PATH:
            add(SourceFile(STDIN_DISPLAY, None))
        elif not os.path.exists(path):
            result.errors.append(SourceError(path, "No such file or directory"))
        elif filters.force_excludes(path):
            result.force_excluded.append(path)
        elif os.path.isdir(path):
            for file_path in _walk_prose_files(path, result.errors, filters):
                add(SourceFile(file_path, file_path))
        else:
            add(SourceFile(path, path))
    return result


class _Filters:
    """The exclusion decisions of one search; configurations and ``.gitignore`` files are
    read once per directory."""

    def __init__(self, discovery: Discovery | None) -> None:
        from openprose.config import ConfigFinder, load_config

        self._discovery = discovery or Discovery()
        self._cwd = os.getcwd()
        self._fixed = load_config(discovery.config) if discovery and discovery.config else None
        self._finder = ConfigFinder() if discovery is not None else None
        self._gitignore = GitIgnore()
        self._settings: dict[str, _Settings] = {}

    def force_excludes(self, path: str) -> bool:
        absolute = os.path.abspath(path)
        settings = self._for_directory(os.path.dirname(absolute))
        return settings.force_exclude and excluded_with_parents(
            absolute, settings.patterns, settings.root
        )

    def excludes(self, path: str, is_directory: bool) -> bool:
        """Whether a path met while searching a directory is left out (``path`` absolute)."""
        settings = self._for_directory(os.path.dirname(path))
        if excluded_by(path, settings.patterns) is not None:
            return True
        return settings.respect_gitignore and self._gitignore.ignores(path, is_directory)

    def _for_directory(self, directory: str) -> _Settings:
        settings = self._settings.get(directory)
        if settings is None:
            settings = self._settings[directory] = self._resolve(directory)
        return settings

    def _resolve(self, directory: str) -> _Settings:
        options = self._discovery
        config = self._fixed
        if config is None and self._finder is not None:
            config = self._finder.for_directory(directory)
        # ruff's anchors: a discovered file's globs are relative to its directory; those of
        # --config and of the command line to the current directory.
        if config is None or config.path is None or self._fixed is not None:
            anchor = self._cwd
        else:
            anchor = os.path.dirname(os.path.abspath(config.path))
        if options.exclude is not None:
            base = Patterns(options.exclude, self._cwd)
        elif config is not None and config.exclude is not None:
            base = Patterns(config.exclude, anchor)
        else:
            base = Patterns(DEFAULT_EXCLUDE, self._cwd)
        patterns = [base]
        if config is not None and config.extend_exclude:
            patterns.append(Patterns(config.extend_exclude, anchor))
        if options.extend_exclude:
            patterns.append(Patterns(options.extend_exclude, self._cwd))

        def chosen(given: bool | None, configured: bool) -> bool:
            return configured if given is None else given

        return _Settings(
            tuple(patterns),
            anchor,
            chosen(options.respect_gitignore, True if config is None else config.respect_gitignore),
            chosen(options.force_exclude, False if config is None else config.force_exclude),
        )


@dataclass(frozen=True, slots=True)
class _Settings:
    patterns: tuple[Patterns, ...]
    root: str  # the project root: --force-exclude looks at the directories below it
    respect_gitignore: bool
    force_exclude: bool


def _walk_prose_files(root: str, errors: list[SourceError], filters: _Filters) -> list[str]:
    def report(error: OSError) -> None:
        errors.append(SourceError(error.filename or root, _reason(error)))

    absolute_root = os.path.abspath(root)
    found: list[tuple[str, ...]] = []
    # os.walk does not follow symbolic links to directories, so a link cycle cannot loop.
    for directory, subdirectories, files in os.walk(root, onerror=report):
        absolute = os.path.normpath(os.path.join(absolute_root, os.path.relpath(directory, root)))
        subdirectories[:] = [
            d for d in subdirectories if not filters.excludes(os.path.join(absolute, d), True)
        ]
        relative = os.path.relpath(directory, root)
        parts = () if relative == os.curdir else tuple(relative.split(os.sep))
        found.extend(
            (*parts, name)
            for name in files
            if name.endswith(PROSE_SUFFIX)
            and not filters.excludes(os.path.join(absolute, name), False)
        )
    # Sorted by path components, so "a/z.prose" < "b.prose" on every platform and file system.
    found.sort()
    if root == os.curdir:
        # `prose check` with no argument walks "."; show "a.prose", not "./a.prose".
        return [os.path.join(*parts) for parts in found]
    return [os.path.join(root, *parts) for parts in found]


def add_discovery_options(parser: argparse.ArgumentParser) -> None:
    """``--exclude``, ``--extend-exclude``, ``--[no-]respect-gitignore``,
    ``--[no-]force-exclude`` (the same as ruff's)."""
    group = parser.add_argument_group(
        "file selection",
        "Directories are searched for *.prose files, leaving out the `exclude` globs (by "
        "default .git, .venv, venv, node_modules, build, dist, __pycache__, .prose and other "
        "tool directories), the `extend-exclude` globs and what .gitignore files ignore. A "
        "glob matches a file or directory name (fixtures) or a path from the current "
        "directory (tests/fixtures). Paths named on the command line are kept unless "
        "--force-exclude.",
    )
    group.add_argument(
        "--exclude",
        metavar="GLOBS",
        action="append",
        help="leave out these files and directories, replacing the configuration's and the "
        "default list: globs separated by commas",
    )
    group.add_argument(
        "--extend-exclude",
        metavar="GLOBS",
        action="append",
        help="leave out these as well: globs separated by commas",
    )
    group.add_argument(
        "--respect-gitignore",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="leave out what .gitignore files ignore (default: on, or the configuration's "
        "respect-gitignore)",
    )
    group.add_argument(
        "--force-exclude",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="apply the exclude and extend-exclude globs to paths named on the command line "
        "too, and to their directories up to the project root (not .gitignore, as in ruff; "
        "for pre-commit and editors that pass every changed file)",
    )


def add_size_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-file-size",
        type=parse_size,
        default=DEFAULT_MAX_FILE_SIZE,
        metavar="SIZE",
        help="refuse files (and standard input) larger than this many bytes; K, M and G "
        "multiply by 1024, 1024^2 and 1024^3 (default: 10M)",
    )


def parse_size(text: str) -> int:
    """A size for ``--max-file-size``: bytes, or a whole number of K, M or G (binary)."""
    match = _SIZE.fullmatch(text.strip())
    size = int(match.group(1)) * _SIZE_UNITS[match.group(2).lower()] if match else 0
    if size <= 0:
        raise argparse.ArgumentTypeError(
            f"invalid size {text!r}: expected a positive number of bytes, such as 500K or 10M"
        )
    return size


def read_source(source: SourceFile, max_size: int = DEFAULT_MAX_FILE_SIZE) -> str:
    """The file's text, decoded as UTF-8 with an optional byte-order mark removed.

    Line endings are kept as they are (no newline translation) so that the positions the
    parser reports are positions in the file.  Raises SourceError, never anything else
    for an unreadable or undecodable file, for anything but a regular file, and for more
    than ``max_size`` bytes.
    """
    return read_source_and_bom(source, max_size)[0]


def read_source_and_bom(
    source: SourceFile, max_size: int = DEFAULT_MAX_FILE_SIZE
) -> tuple[str, bool]:
    """``read_source``, and whether the bytes began with a byte-order mark (standard input
    cannot be read twice, so a caller that writes the text back asks here)."""
    too_large = f"more than the limit of {max_size} bytes (see --max-file-size)"
    try:
        if source.fs_path is None:
            data = read_at_most(sys.stdin.buffer, max_size + 1)
        else:
            data = read_bytes(source.fs_path, max_size)
    except NotRegularFile:
        raise SourceError(source.display_path, "not a regular file") from None
    except FileTooLarge as error:
        if error.size is not None:
            too_large = (
                f"{error.size} bytes, more than the limit of {max_size} (see --max-file-size)"
            )
        raise SourceError(source.display_path, too_large) from None
    except OSError as error:
        raise SourceError(source.display_path, _reason(error)) from None
    if len(data) > max_size:  # standard input
        raise SourceError(source.display_path, too_large)
    return decode_source(data, source.display_path), data.startswith(codecs.BOM_UTF8)


def decode_source(data: bytes, display_path: str) -> str:
    # Not parso.utils.python_bytes_to_unicode: it reads `# coding: x` comments as encoding
    # declarations, which is Python's rule, not ours.
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
        offset = error.start + bom
        line = data.count(b"\n", 0, offset) + 1
        reason = f"not valid UTF-8 (byte 0x{data[offset]:02x} on line {line}, offset {offset})"
        raise SourceError(display_path, reason) from None


def _reason(error: OSError) -> str:
    return error.strerror or str(error)
