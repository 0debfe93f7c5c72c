"""What the editor features keep between requests, owned by whoever serves them: an
``AnalysisHost`` owns one ``Caches`` per front end (no state shared between two hosts), and an
analysis made without a host (the command line, tests) uses the default one
(``default_caches``).  The features reach them through the analysis they are given
(``analysis.caches``), never through module globals; the owner says what changed
(``file_changed``, ``configuration_changed``, ``clear``).  Every cache takes a lock: formatting
and code actions may run off the event loop."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from openprose.analysis.contracts import ContractCache, ContractLoader, Overlay, shared_cache

V = TypeVar("V")

# A file's version as caches see it: its modification time (ns) and size.
Stamp = tuple[int, int]


def stamp_of(file: Path) -> Stamp:
    """The version of ``file`` (raises ``OSError`` when it cannot be read)."""
    stat = file.stat()
    return stat.st_mtime_ns, stat.st_size


class ByFile(Generic[V]):
    """Values made from files, served while the file's stamp is the one they were made from;
    with ``limit``, the oldest entry makes room for a new one."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._items: dict[Path, tuple[Stamp, V]] = {}

    def get(self, file: Path, stamp: Stamp) -> V | None:
        with self._lock:
            found = self._items.get(file)
        return found[1] if found is not None and found[0] == stamp else None

    def put(self, file: Path, stamp: Stamp, value: V) -> None:
        with self._lock:
            self._items.pop(file, None)
            if self.limit is not None and len(self._items) >= self.limit:
                self._items.pop(next(iter(self._items)))
            self._items[file] = (stamp, value)

    def drop(self, file: Path) -> None:
        with self._lock:
            self._items.pop(file, None)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __contains__(self, file: object) -> bool:
        with self._lock:
            return file in self._items


class ByModel(Generic[V]):
    """A value per semantic model, made on first use and dropped with the model."""

    def __init__(self, make: Callable[[Any], V]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._items: weakref.WeakKeyDictionary[Any, V] = weakref.WeakKeyDictionary()

    def get(self, model: Any) -> V:
        with self._lock:
            found = self._items.get(model)
            if found is None:
                found = self._items[model] = self._make(model)
            return found

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __contains__(self, model: object) -> bool:
        with self._lock:
            return model in self._items


class Recent(Generic[V]):
    """The last ``size`` answers by key (the least recently used one goes first)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[Hashable, V] = OrderedDict()

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


def _completion_data(model: Any) -> Any:
    from openprose.ide.completion.scopes import ModelData

    return ModelData(model)


# Imported files' analyses kept (each holds a tree and a model).
FILES_KEPT = 32
# Fix-all answers kept (the server asks with every code action request).
FIX_ALL_KEPT = 8


@dataclass(eq=False)
class Caches:
    # Imported programs' contracts, and the unsaved programs of the front end (overlay).
    contracts: ContractCache = field(default_factory=ContractCache)
    # Completion's data per model: scopes by construct, variables in program order.
    completion: ByModel[Any] = field(default_factory=lambda: ByModel(_completion_data))
    # The descriptions of an imported program's inputs, by file.
    descriptions: ByFile[dict[str, str]] = field(default_factory=ByFile)
    # Analyses of imported program files read from disk (``ide.ports.analysis_of_file``).
    files: ByFile[Any] = field(default_factory=lambda: ByFile(FILES_KEPT))
    # Fix-all answers by text, path, enabled codes and unsafe.
    fix_all: Recent[Any] = field(default_factory=lambda: Recent(FIX_ALL_KEPT))

    @classmethod
    def with_overlay(cls, overlay: Overlay | None) -> Caches:
        """Caches whose contract loaders read the programs ``overlay`` knows from it."""
        return cls(contracts=ContractCache(overlay))

    def loader(self, project_root: Path | None = None) -> ContractLoader:
        """A contract loader using these caches (one per analysis: it records the files it
        consulted)."""
        return ContractLoader(project_root, cache=self.contracts)

    def file_changed(self, file: Path) -> None:
        """The program at ``file`` (an absolute path) changed: its contracts, the
        descriptions of its inputs and its analysis are made again when next asked for."""
        self.contracts.drop(file)
        self.descriptions.drop(file)
        self.files.drop(file)

    def configuration_changed(self) -> None:
        """The rule selection may have changed: the fix-all answers are found again."""
        self.fix_all.clear()

    def clear(self) -> None:
        self.contracts.clear()
        self.completion.clear()
        self.descriptions.clear()
        self.files.clear()
        self.fix_all.clear()


_default = Caches(contracts=shared_cache())


def default_caches() -> Caches:
    """The caches of analyses made without a host (a command line run, tests); its contract
    cache is the one loaders made without a cache share."""
    return _default
