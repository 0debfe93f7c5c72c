"""The contracts of imported programs: what a `use` names, and the inputs and outputs of
the program it names, read from disk without ever touching the network.

What a use path may be (this decides between E011, E012 and W006, which the imports rule
reports):

- ``@handle/slug``: a registry program (the language reference's only form).  ``handle/slug``
  without the ``@`` is the registry shorthand of the VM reference (prose.md, "Remote
  Programs"), so it is a registry path too.  Handle and slug are made of letters, digits,
  ``-``, ``_`` and ``.``.
- ``./name.prose``, ``../lib/name.prose``, ``/abs/name.prose``, or any path ending in
  ``.prose``: a local program file, relative to the importing file.  A bare name such as
  ``helper`` is a local program too (prose.md: "Otherwise -> treat as local file path"):
  ``helper`` (or ``helper.prose``) next to the importing file.
- ``https://...`` (or ``http://``): a program fetched directly by URL (prose.md).  Known, but
  never fetched here, so its contract is not verified.
- any other ``scheme:...`` (``github:``, ``npm:``, ``git+ssh://``...): a source format the
  language does not know (W006, a warning: a VM might still make sense of it).
- anything else (``@acme``, ``@a/b/c``, ``a/b/c``, ``summarise tool``, surrounding spaces):
  an invalid path (E012).

Registry programs are looked up in the project's import cache and never fetched.  The state
layout (prose.md, state/filesystem.md) stores every imported program a run fetched at
``.prose/runs/{run-id}/imports/{handle}--{slug}/program.prose``; a project may also keep a
copy at ``.prose/imports/{handle}--{slug}/program.prose`` (the same directory naming, one
level up, outside any run: a vendored copy).  The vendored copy wins; otherwise the copy of
the most recent run (run ids start with the date and time, so they sort by age).  The
project root is the nearest ancestor directory of the importing file holding a ``.prose/``
directory, else the file's own directory.

Parsed contracts are cached per absolute path and revalidated by modification time and
size, so checking a directory parses each imported file once.  The cache is an object
(``ContractCache``): an editor's analysis host owns one, a command line run shares the default.

An editor's unsaved text wins over the file on disk (what rust-analyzer calls the overlay):
the analysis host gives its ``ContractCache`` an ``Overlay``, and every loader using that
cache reads a program open in the editor from it, so an importer is checked against the
inputs the imported program has in its editor now.  A loader records the files it consulted
(found or looked for in vain), so the server knows which documents to check again when one
of them changes.
"""

from __future__ import annotations

import enum
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openprose.files import DEFAULT_MAX_FILE_SIZE, FileTooLarge, read_text
from openprose.syntax import tree as t

Position = tuple[int, int]

_NAME = r"[A-Za-z0-9_.\-]+"
_REGISTRY = re.compile(rf"@?(?P<handle>{_NAME})/(?P<slug>{_NAME})")
_BARE = re.compile(_NAME)
_URL = re.compile(r"https?://\S+", re.IGNORECASE)
# A scheme of two or more characters, so that a Windows drive (`C:\x.prose`) is a path.
_SCHEME = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]+):")
_LOCAL_PREFIXES = ("./", "../", "/", "~/", ".\\", "..\\")

# Statements that may come before the inputs of a program: anything else is executable.
_DECLARATIONS = (
    t.UseStatement,
    t.ImportStatement,
    t.InputDeclaration,
    t.AgentDefinition,
    t.BlockDefinition,
)


class Kind(enum.Enum):
    EMPTY = "empty"  # E011
    INVALID = "invalid"  # E012
    REGISTRY = "registry"
    LOCAL = "local"
    URL = "url"
    SCHEME = "scheme"  # W006


@dataclass(frozen=True, slots=True)
class ImportPath:
    """What a use path names."""

    text: str
    kind: Kind
    handle: str | None = None  # registry paths
    slug: str | None = None
    scheme: str | None = None  # unknown source formats
    bare: bool = False  # a local path written as a bare name (`helper`)

    @property
    def key(self) -> str:
        """The same program written two ways gives the same key (`@a/b` and `a/b`)."""
        if self.kind is Kind.REGISTRY:
            return f"@{self.handle}/{self.slug}"
        if self.kind is Kind.LOCAL:
            text = self.text.replace("\\", "/")
            return text if text.endswith(".prose") else text + ".prose"
        return self.text

    @property
    def shown(self) -> str:
        return self.key if self.kind is Kind.REGISTRY else self.text


def classify(text: str) -> ImportPath:
    if not text.strip():
        return ImportPath(text, Kind.EMPTY)
    if text != text.strip() or "\n" in text or "\r" in text:
        return ImportPath(text, Kind.INVALID)
    if text.startswith("@"):
        m = _REGISTRY.fullmatch(text)
        if m and _real(m["handle"]) and _real(m["slug"]):
            return ImportPath(text, Kind.REGISTRY, m["handle"], m["slug"])
        return ImportPath(text, Kind.INVALID)
    if _URL.fullmatch(text):
        return ImportPath(text, Kind.URL)
    scheme = _SCHEME.match(text)
    if scheme:
        return ImportPath(text, Kind.SCHEME, scheme=scheme["scheme"])
    if text.startswith(_LOCAL_PREFIXES) or text.endswith(".prose"):
        return ImportPath(text, Kind.LOCAL)
    m = _REGISTRY.fullmatch(text)
    if m and _real(m["handle"]) and _real(m["slug"]):
        return ImportPath(text, Kind.REGISTRY, m["handle"], m["slug"])
    if _BARE.fullmatch(text) and _real(text):
        return ImportPath(text, Kind.LOCAL, bare=True)
    return ImportPath(text, Kind.INVALID)


def _real(part: str) -> bool:
    """Not only dots (`.` and `..` are directories, not names)."""
    return part.strip(".") != ""


# --------------------------------------------------------------------------- contracts


@dataclass(frozen=True, slots=True)
class Port:
    """An input or output of a program, where it is declared in the program's file."""

    name: str
    start: Position
    end: Position
    # Inputs: declared before any executable statement (the program's header), so the
    # caller must give them.  A later input is a runtime prompt (prose.md, "Mid-program
    # inputs"): a caller may pre-supply it, and the VM asks the user otherwise.
    required: bool = True


@dataclass(frozen=True, slots=True)
class Dependency:
    """A `use` inside a program: its path as written and where that string is."""

    text: str
    start: Position
    end: Position


@dataclass(frozen=True, slots=True)
class Contract:
    path: Path  # the file the contract was read from
    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]
    uses: tuple[Dependency, ...]

    def input(self, name: str) -> Port | None:
        return next((p for p in self.inputs if p.name == name), None)

    def output(self, name: str) -> Port | None:
        return next((p for p in self.outputs if p.name == name), None)


def contract_of(module: Any, path: Path) -> Contract:
    """The contract a parsed program offers its callers.

    Inputs: top-level ``input`` statements and those nested in control flow (not inside
    block definitions); the ones before the first executable statement are required.
    Outputs: every named ``output`` outside block definitions (a block's ``output`` is the
    block's result, not the program's).
    """
    inputs: dict[str, Port] = {}
    outputs: dict[str, Port] = {}
    uses: list[Dependency] = []
    executable = False
    for statement in module.statements():
        if isinstance(statement, t.UseStatement) and statement.path is not None:
            leaf = statement.path
            uses.append(Dependency(leaf.text, leaf.start_pos, leaf.end_pos))
        if isinstance(statement, t.BlockDefinition):
            continue
        if not isinstance(statement, (*_DECLARATIONS, t.ErrorNode)):
            executable = True
        for node in _nodes_outside_blocks(statement):
            if isinstance(node, t.InputDeclaration) and node.name is not None:
                required = node is statement and not executable
                _add(inputs, node.name, required)
            elif isinstance(node, t.OutputBinding) and node.name is not None:
                _add(outputs, node.name, True)
    return Contract(path, tuple(inputs.values()), tuple(outputs.values()), tuple(uses))


def _add(ports: dict[str, Port], leaf: Any, required: bool) -> None:
    if leaf.value not in ports:
        ports[leaf.value] = Port(leaf.value, leaf.start_pos, leaf.end_pos, required)


def _nodes_outside_blocks(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, t.BlockDefinition):
            continue
        yield current
        stack.extend(child for child in reversed(current.children) if hasattr(child, "children"))


# --------------------------------------------------------------------------- resolution


class Status(enum.Enum):
    FOUND = "found"
    MISSING = "missing"  # a local file that does not exist or cannot be read (E072)
    OFFLINE = "offline"  # a registry program not in the cache, or a URL (I001)
    UNRESOLVED = "unresolved"  # nothing to look up: an invalid path, no importing file...


@dataclass(frozen=True, slots=True)
class Resolution:
    path: ImportPath
    status: Status
    contract: Contract | None = None
    file: Path | None = None  # the file found, or where a local program was looked for
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Link:
    """One step of an import cycle: ``file`` uses ``dependency``."""

    file: Path
    dependency: Dependency


@dataclass(frozen=True, slots=True)
class Unsaved:
    """A program open in an editor: its text there, which may differ from the file's."""

    text: str
    module: Any = None  # its tree, when the editor has parsed the text already


# The unsaved program at an absolute (resolved) path, or None to read the file.
Overlay = Callable[[Path], Unsaved | None]


class ContractCache:
    """The parsed contracts a front end keeps: of files by path (revalidated by modification
    time and size) and of its unsaved programs by text, and the ``overlay`` giving those
    unsaved programs.  The loaders sharing one read each file once; an editor's host owns
    its own (``file_changed`` drops a file's), a command line run shares the default one
    (``shared_cache``).  Thread safe: formatting and checks may run off the event loop."""

    def __init__(self, overlay: Overlay | None = None) -> None:
        self.overlay = overlay
        self._lock = threading.Lock()
        # Absolute path -> (modification time, size, contract).
        self._files: dict[Path, tuple[int, int, Contract]] = {}
        # Absolute path -> (unsaved text, contract): the last unsaved version of a program.
        self._unsaved: dict[Path, tuple[str, Contract]] = {}

    def read(self, file: Path, max_size: int = DEFAULT_MAX_FILE_SIZE) -> Contract:
        """The contract of the program in ``file``, parsed once per version of the file.

        Raises ``OSError`` (or ``UnicodeDecodeError``) when the file cannot be read, and
        ``openprose.files.NotRegularFile`` or ``FileTooLarge`` (both ``OSError``) when it is
        not a regular file or is larger than ``max_size`` bytes.
        """
        from openprose.syntax import parse

        stat = file.stat()
        if stat.st_size > max_size:  # a loader with a smaller limit than the one that cached it
            raise FileTooLarge(str(file), max_size, stat.st_size)
        with self._lock:
            cached = self._files.get(file)
        if cached is not None and cached[0] == stat.st_mtime_ns and cached[1] == stat.st_size:
            return cached[2]
        text = read_text(file, max_size)
        contract = contract_of(parse(text), file)
        with self._lock:
            self._files[file] = (stat.st_mtime_ns, stat.st_size, contract)
        return contract

    def unsaved(self, file: Path, unsaved: Unsaved) -> Contract:
        """The contract of an open program's unsaved text, parsed once per text."""
        with self._lock:
            cached = self._unsaved.get(file)
        if cached is not None and (cached[0] is unsaved.text or cached[0] == unsaved.text):
            return cached[1]
        if unsaved.module is not None:
            module = unsaved.module
        else:
            from openprose.syntax import parse

            module = parse(unsaved.text)
        contract = contract_of(module, file)
        with self._lock:
            self._unsaved[file] = (unsaved.text, contract)
        return contract

    def drop(self, file: Path) -> None:
        """Forget the contracts of ``file`` (an absolute path), on disk and unsaved."""
        with self._lock:
            self._files.pop(file, None)
            self._unsaved.pop(file, None)

    def clear(self) -> None:
        with self._lock:
            self._files.clear()
            self._unsaved.clear()

    def holds(self, file: Path) -> bool:
        """Whether a contract of ``file`` is kept (for tests and statistics)."""
        with self._lock:
            return file in self._files or file in self._unsaved


# The cache of loaders made without one: a command line run's, and tests'.
_shared = ContractCache()


def shared_cache() -> ContractCache:
    return _shared


def clear_cache() -> None:
    """Forget the contracts the shared cache holds."""
    _shared.clear()


def read_contract(file: Path, max_size: int = DEFAULT_MAX_FILE_SIZE) -> Contract:
    """The contract of the program in ``file``, through the shared cache."""
    return _shared.read(file, max_size)


def project_root_of(file: Path) -> Path:
    """The nearest ancestor of ``file`` holding a ``.prose/`` directory, else its directory."""
    directory = file.parent
    for candidate in (directory, *directory.parents):
        if (candidate / ".prose").is_dir():
            return candidate
    return directory


class ContractLoader:
    """Resolves use paths to contracts, from the importing file's point of view.

    ``project_root`` fixes the directory whose ``.prose/`` holds the import cache; by default
    it is found from each importing file (``project_root_of``).  ``cache`` keeps the parsed
    contracts (by default the shared one) and gives the unsaved programs (its ``overlay``,
    unless ``overlay`` is given).  ``consulted`` collects
    the absolute paths of the program files every resolution so far depended on: those it
    read, and those it looked for and did not find.
    """

    def __init__(
        self,
        project_root: Path | None = None,
        overlay: Overlay | None = None,
        max_size: int = DEFAULT_MAX_FILE_SIZE,
        cache: ContractCache | None = None,
    ) -> None:
        self.project_root = project_root
        self.cache = cache if cache is not None else _shared
        self.overlay = overlay if overlay is not None else self.cache.overlay
        self.max_size = max_size  # larger program files are not read (E072)
        self.consulted: set[Path] = set()
        self._roots: dict[Path, Path] = {}
        # A loader serves one analysis: what it found out about the file system is kept for
        # its resolutions (a program with many registry imports resolved its own path and
        # listed its project's runs once per import).
        self._importers: dict[Path, Path] = {}
        self._states: dict[Path | None, tuple[str, list[str]] | None] = {}

    def resolve(self, importer: Path | None, text: str) -> Resolution:
        return self.resolve_path(importer, classify(text))

    def resolve_path(self, importer: Path | None, path: ImportPath) -> Resolution:
        """``resolve`` of a use path already classified."""
        if path.kind is Kind.LOCAL:
            return self._local(importer, path)
        if path.kind is Kind.REGISTRY:
            return self._registry(importer, path)
        if path.kind is Kind.URL:
            return Resolution(path, Status.OFFLINE, reason="programs are not fetched by URL")
        return Resolution(path, Status.UNRESOLVED)

    def _local(self, importer: Path | None, path: ImportPath) -> Resolution:
        if importer is None:
            return Resolution(path, Status.UNRESOLVED, reason="the importing file is not saved")
        text = path.text.replace("\\", "/")
        base = Path(text).expanduser() if text.startswith("~/") else Path(text)
        if not base.is_absolute():
            base = self._absolute(importer).parent / base
        candidates = [base]
        if not base.name.endswith(".prose"):
            candidates.append(base.with_name(base.name + ".prose"))
        for candidate in candidates:
            file = absolute(candidate)
            self.consulted.add(file)
            if self._unsaved(file) is not None or candidate.is_file():
                return self._read(path, file)
        for candidate in candidates:
            # There, but not a regular file (a FIFO, a device): read, so that it is refused
            # with that reason rather than said not to exist.
            if candidate.exists() and not candidate.is_dir():
                return self._read(path, absolute(candidate))
        return Resolution(path, Status.MISSING, file=candidates[-1], reason="no such file")

    def _registry(self, importer: Path | None, path: ImportPath) -> Resolution:
        found = self._state_of(importer)
        if found is not None:
            state, run_ids = found
            directory = f"{path.handle}--{path.slug}"
            for candidate in _cached_copies(state, directory, run_ids):
                return self._read(path, absolute(candidate))
        return Resolution(path, Status.OFFLINE, reason="not in the local import cache")

    def _state_of(self, importer: Path | None) -> tuple[str, list[str]] | None:
        """The project state directory the registry imports of ``importer`` are looked for
        in, and its runs newest first (None: no project); found once per importer (an
        analysis asks for every registry import, nearly always for the same importer,
        whose hash a path keeps)."""
        if importer in self._states:
            return self._states[importer]
        root = self.project_root
        if root is None and importer is not None:
            root = self._root(self._absolute(importer))
        found = None
        if root is not None:
            state = root / ".prose"
            found = (os.fspath(state), _run_ids(state / "runs"))
        self._states[importer] = found
        return found

    def _absolute(self, importer: Path) -> Path:
        found = self._importers.get(importer)
        if found is None:
            found = self._importers[importer] = absolute(importer)
        return found

    def _root(self, importer: Path) -> Path:
        directory = importer.parent
        root = self._roots.get(directory)
        if root is None:
            root = self._roots[directory] = project_root_of(importer)
        return root

    def _unsaved(self, file: Path) -> Unsaved | None:
        return self.overlay(file) if self.overlay is not None else None

    def _read(self, path: ImportPath, file: Path) -> Resolution:
        self.consulted.add(file)
        unsaved = self._unsaved(file)
        if unsaved is not None:
            return Resolution(path, Status.FOUND, self.cache.unsaved(file, unsaved), file)
        try:
            contract = self.cache.read(file, self.max_size)
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            return Resolution(path, Status.MISSING, file=file, reason=f"cannot be read: {reason}")
        return Resolution(path, Status.FOUND, contract, file)

    def cycle(self, importer: Path, resolution: Resolution) -> list[Link] | None:
        """The uses leading from the program ``resolution`` found back to ``importer``
        (``[]`` when it is ``importer`` itself), or None when there is no such cycle."""
        if resolution.status is not Status.FOUND or resolution.contract is None:
            return None
        target = absolute(importer)
        start = resolution.contract
        if start.path == target:
            return []
        # Depth first over the programs reachable from the imported one.
        seen = {start.path}
        stack: list[tuple[Contract, list[Link]]] = [(start, [])]
        while stack:
            contract, chain = stack.pop()
            for dependency in contract.uses:
                found = self.resolve(contract.path, dependency.text)
                if found.status is not Status.FOUND or found.contract is None:
                    continue
                step = [*chain, Link(contract.path, dependency)]
                if found.contract.path == target:
                    return step
                if found.contract.path not in seen:
                    seen.add(found.contract.path)
                    stack.append((found.contract, step))
        return None


def _cached_copies(base: str, directory: str, run_ids: list[str]) -> Iterator[Path]:
    # Strings, not paths: this runs for every registry import of every analysis.
    vendored = os.path.join(base, "imports", directory, "program.prose")
    if os.path.isfile(vendored):
        yield Path(vendored)
    runs = os.path.join(base, "runs")
    for run in run_ids:
        copy = os.path.join(runs, run, "imports", directory, "program.prose")
        if os.path.isfile(copy):
            yield Path(copy)


def _run_ids(runs: Path) -> list[str]:
    if not runs.is_dir():
        return []
    try:
        return sorted((entry.name for entry in runs.iterdir()), reverse=True)
    except OSError:
        return []


def absolute(path: Path) -> Path:
    """``path`` as loaders name files (symbolic links resolved where possible)."""
    try:
        return path.resolve()
    except OSError:
        return path.absolute()
