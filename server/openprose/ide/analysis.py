"""A snapshot of one document for the editor features: text, tree, model, diagnostics."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprose.analysis import Context, Model, prepare
from openprose.diagnostics import Diagnostic
from openprose.ide.caches import Caches, default_caches
from openprose.syntax import parse
from openprose.syntax import tree as t

if TYPE_CHECKING:
    # Only an editor's host makes one: a command line analysis does without the module.
    from openprose.analysis.incremental import IncrementalAnalysis

    # The types are made when a range is (prose check's human format never makes one, and
    # making them took as long as the rest of what it imports beyond the check).
    from openprose.ide.types import Pos, Range


@dataclass
class Analysis:
    text: str
    module: t.Module
    path: Path | None = None
    version: int | None = None
    # An open document's analysis across its edits: this snapshot's model and diagnostics
    # are made by it, redoing only what the edits changed (None: analysed from scratch).
    incremental: IncrementalAnalysis | None = field(default=None, repr=False)
    # Filled on demand (a completion request does not need the rules to run).
    _diagnostics: list[Diagnostic] | None = field(default=None, repr=False)
    _found: list[Diagnostic] | None = field(default=None, repr=False)
    # What the features keep between requests: the host's, else the default ones.
    caches: Caches = field(default_factory=default_caches, repr=False)

    @cached_property
    def context(self) -> Context:
        """The analyzer's context: the shared node index and the semantic model (the rules
        run on the same context when diagnostics are asked for)."""
        if self.incremental is not None:
            return self.incremental.prepare(self.module)
        return self._prepare()

    def _prepare(self) -> Context:
        if self.path is None:
            return prepare(self.module, None)
        from openprose.analysis.contracts import project_root_of

        loader = self.caches.loader(project_root_of(self.path))
        return prepare(self.module, self.path, contracts=loader)

    @property
    def model(self) -> Model:
        return self.context.model

    @property
    def diagnostics(self) -> list[Diagnostic]:
        if self._diagnostics is None:
            self._diagnostics = self.diagnostics_with(None)
        return self._diagnostics

    def diagnostics_with(self, config: Any) -> list[Diagnostic]:
        """The diagnostics under a configuration (rules run once per analysis)."""
        from openprose.checking import finish

        if self._found is None:
            for _ in self.steps():
                pass
        assert self._found is not None
        return finish(self._found, self.module, config, self.text)

    def steps(self) -> Generator[None, None, None]:
        """Make the model and the diagnostics in steps, pausing (yielding) between them, so
        that a front end can answer other requests meanwhile; closing it at a pause leaves
        the document's incremental analysis fit for the next one."""
        if "context" not in self.__dict__:
            if self.incremental is not None:
                context = yield from self.incremental.prepare_steps(self.module)
            else:
                context = self._prepare()
            self.__dict__["context"] = context  # what the cached property would hold
        if self._found is None:
            if self.incremental is not None:
                self._found = yield from self.incremental.diagnostics_steps(self.context)
            else:
                from openprose.analysis import diagnostics_of

                self._found = diagnostics_of(self.context)

    @cached_property
    def lines(self) -> list[str]:
        """The document's lines without their line breaks (as the parser counts lines)."""
        from parso.utils import split_lines

        return split_lines(self.text)

    # Positions --------------------------------------------------------------

    def leaf_at(self, position: Pos, before: bool = False) -> Any:
        """The leaf under a 0-based position (the one ending there when ``before``)."""
        line, character = position
        target = (line + 1, character)
        try:
            leaf = self.module.get_leaf_for_position(target, include_prefixes=True)
        except ValueError:
            return None
        if leaf is None:
            return None
        if before and leaf.start_pos >= target:
            previous = leaf.get_previous_leaf()
            if previous is not None and previous.end_pos >= target:
                return previous
        return leaf


def to_pos(parso_position: tuple[int, int]) -> Pos:
    """A parso (1-based line, column) position as a 0-based ide position."""
    return parso_position[0] - 1, parso_position[1]


def node_range(node: Any) -> Range:
    """The range of a node or leaf, prefix excluded."""
    from openprose.ide.types import Range

    return Range(to_pos(node.start_pos), to_pos(node.end_pos))


def analyze_document(
    text: str,
    module: t.Module | None = None,
    path: str | Path | None = None,
    version: int | None = None,
    incremental: IncrementalAnalysis | None = None,
    caches: Caches | None = None,
) -> Analysis:
    """A snapshot of ``text`` (pass the already parsed ``module`` when there is one, the
    document's ``incremental`` analysis when it is kept across edits, and the ``caches`` of
    the host serving it: by default, the default ones)."""
    return Analysis(
        text,
        module if module is not None else parse(text),
        Path(path) if path is not None else None,
        version,
        incremental,
        caches=caches if caches is not None else default_caches(),
    )
