"""The analysis host: the open documents, each an incrementally parsed ``Document`` with an
incremental analysis kept across its edits, and the analyses served per version.

The language server only adapts it (positions, protocol types, scheduling); another front
end (a REPL, the VM) can use it as it is.  An analysis is valid until the next edit of its
document: edits change the tree in place, and the next analysis reuses what the edit left
unchanged (``analysis.incremental``).

The host owns every cache the features keep (``caches``: imported programs' contracts read
through its overlay, completion data, input descriptions, imported files' analyses, fix-all
answers); a second host shares none of them.  The front end says what changed:
``file_changed``, ``configuration_changed``, ``clear``."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprose.analysis.contracts import Unsaved, absolute, project_root_of
from openprose.analysis.incremental import IncrementalAnalysis
from openprose.diagnostics import Diagnostic
from openprose.ide.analysis import Analysis, analyze_document
from openprose.ide.caches import Caches, default_caches
from openprose.syntax import Document


@dataclass
class OpenDocument:
    uri: str
    path: Path | None
    document: Document
    version: int | None
    _analysis: Analysis | None = field(default=None, repr=False)
    _incremental: IncrementalAnalysis | None = field(default=None, repr=False)
    # The analysis being made in steps (``analysis_steps``), until it is done or closed.
    _running: Generator[None, None, Analysis] | None = field(default=None, repr=False)
    # The diagnostics last published (or returned to a pull) and their version.
    published: tuple[int | None, list[Diagnostic]] | None = None
    pending: Any = None  # the debounce task, if one is waiting
    # Its host's caches (the default ones for a document made without a host).
    caches: Caches = field(default_factory=default_caches, repr=False)

    @property
    def text(self) -> str:
        return self.document.text

    def apply_edit(self, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
        """Replace the 0-based ``start``..``end`` range by ``text`` (an analysis being made
        in steps is given up: its version is gone)."""
        self.give_up_analysis()
        self.document.apply_edit(start, end, text)
        self._incremental_analysis().changed(self.document.touched)

    def replace(self, text: str) -> None:
        """Replace the whole text."""
        self.give_up_analysis()
        self.document.replace(text)
        self._incremental_analysis().changed(None)

    def analysis(self) -> Analysis:
        """The analysis of the current text, built once per version (one being made in
        steps is finished first: two would interleave on the same records)."""
        running = self._running
        if running is not None:
            for _ in running:
                pass
            self._running = None
        return self._current_analysis()

    def analysis_steps(self) -> Generator[None, None, Analysis]:
        """The analysis of the current version with its diagnostics, made in steps (it
        pauses between them); an edit gives it up.  Answers from ``analysis()`` meanwhile
        finish it first."""
        self.give_up_analysis()
        steps = self._steps(self._current_analysis())
        self._running = steps
        return steps

    def _steps(self, analysis: Analysis) -> Generator[None, None, Analysis]:
        yield from analysis.steps()
        return analysis

    def give_up_analysis(self) -> None:
        """Close the analysis being made in steps, if any."""
        if self._running is not None:
            self._running.close()
            self._running = None

    def _current_analysis(self) -> Analysis:
        current = self._analysis
        if current is None or current.version != self.version or current.text is not self.text:
            incremental = self._incremental_analysis()
            if self.path is not None:
                # A loader per version: it records the files this version consulted.
                incremental.contracts = self.caches.loader(project_root_of(self.path))
            current = analyze_document(
                self.text,
                self.document.module,
                self.path,
                self.version,
                incremental,
                self.caches,
            )
            self._analysis = current
        return current

    def _incremental_analysis(self) -> IncrementalAnalysis:
        if self._incremental is None:
            self._incremental = IncrementalAnalysis(self.path)
        return self._incremental

    def line_text(self, line: int) -> str:
        return self.document.line_text(line)

    def depends_on(self, file: Path) -> bool:
        """Whether this document's last checked diagnostics depended on the program ``file``
        (an absolute path): it imports it, directly or through the programs it imports, or
        looked for it in vain.  Unknown until its rules ran, and then nothing is stale."""
        analysis = self._analysis
        context = analysis.__dict__.get("context") if analysis is not None else None
        loader = getattr(context, "contracts", None)
        return file in getattr(loader, "consulted", ())

    def forget_analysis(self) -> None:
        """Another program changed under this one: the next request analyses it again."""
        self.give_up_analysis()
        self._analysis = None
        if self._incremental is not None:
            # Its contracts may have changed: what used them is found again.
            self._incremental.changed(None)


class AnalysisHost:
    def __init__(self) -> None:
        # Its contract loaders read the programs open here as they are here (unsaved).
        self.caches = Caches.with_overlay(self.unsaved)
        self._open: dict[str, OpenDocument] = {}
        # Absolute path (as contract loaders name files) -> URI, for the overlay.
        self._by_path: dict[Path, str] = {}
        # Documents whose text may differ from the editor's (an edit could not be applied):
        # not served until the editor opens them again.
        self._lost: set[str] = set()

    def open(self, uri: str, text: str, version: int | None, path: Path | None) -> OpenDocument:
        doc = OpenDocument(uri, path, Document(text), version, caches=self.caches)
        self._open[uri] = doc
        self._lost.discard(uri)
        if path is not None:
            self._by_path[absolute(path)] = uri
        return doc

    def get(self, uri: str) -> OpenDocument | None:
        return self._open.get(uri)

    def at_path(self, file: Path) -> OpenDocument | None:
        """The open document of the file at ``file`` (an absolute path), if any."""
        uri = self._by_path.get(file)
        return self._open.get(uri) if uri is not None else None

    def unsaved(self, file: Path) -> Unsaved | None:
        """The overlay this host's contract loaders read open programs from."""
        doc = self.at_path(file)
        return Unsaved(doc.text, doc.document.module) if doc is not None else None

    def lose(self, uri: str) -> bool:
        """Stop trusting ``uri``'s text: it is served as if closed until opened again.
        Whether it was not lost already."""
        if uri in self._lost:
            return False
        self.close(uri)
        self._lost.add(uri)
        return True

    def is_lost(self, uri: str) -> bool:
        return uri in self._lost

    def close(self, uri: str) -> OpenDocument | None:
        self._lost.discard(uri)
        doc = self._open.pop(uri, None)
        if doc is not None:
            doc.give_up_analysis()
        if doc is not None and doc.path is not None:
            file = absolute(doc.path)
            if self._by_path.get(file) == uri:
                del self._by_path[file]
        return doc

    def all(self) -> list[OpenDocument]:
        return list(self._open.values())

    # Invalidation ---------------------------------------------------------------

    def file_changed(self, path: Path) -> list[OpenDocument]:
        """The program at ``path`` changed (in the editor, on disk, or its unsaved text was
        dropped): its contracts, input descriptions and file analysis are dropped, and the
        open documents (other than its own) whose analyses depended on it forget them.
        Those documents, whose diagnostics are to be made again."""
        file = absolute(path)
        self.caches.file_changed(file)
        importers = [d for d in self._open.values() if d.path != path and d.depends_on(file)]
        for doc in importers:
            doc.forget_analysis()
        return importers

    def configuration_changed(self) -> None:
        """The settings choosing the rules changed: the fix-all answers are found again."""
        self.caches.configuration_changed()

    def clear(self) -> None:
        """Drop every cache (the open documents and their analyses stay)."""
        self.caches.clear()
