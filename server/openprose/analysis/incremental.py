"""The analysis of one document kept from edit to edit, redoing only what an edit can change.

A program is a sequence of top-level items (the module's children). For each item this
keeps its node index, the binder's record of it (``model.UnitBinding``) and its local
diagnostics (the parser's, and those of every rule's ``check_local``). After an edit:

- an item the incremental parser replaced is new; one it modified in place (an edit inside
  a block) is reported by the caller through ``changed``; both are analysed again;
- the binder replays an unchanged item's record when every lookup it made in the program
  scope still finds what it found, and binds it again otherwise (a changed definition
  reaches exactly the items that use its name);
- an unchanged item keeps its local diagnostics unless one of the names it contains names
  an agent, block, program, defined variable or imported skill that changed
  (``_fingerprints``), or they point outside the item (they are then redone every time);
  those it keeps move with the item when lines above it were added or removed;
- the checks over the whole program (``check_program``) run every time, over the model.

The result equals a full analysis (``analysis.check``): tests/analysis/test_incremental.py
compares them after random edits, and bench/incremental_analysis.py over many more.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from openprose.analysis.context import Context, NodeIndex
from openprose.analysis.model import Binder, Scope, StatementBinding, UnitBinding
from openprose.analysis.rules import local_rules, program_rules
from openprose.analysis.rules.grammar import defined_names
from openprose.analysis.rules.properties import imported_names
from openprose.diagnostics import Diagnostic
from openprose.syntax import tree as t
from openprose.syntax.issues import reported_whole, to_diagnostics

# Words a local check may look a name up by: identifiers, and the words and whole texts
# of strings (a skill is named by a string, an interpolation by a word inside one).
_WORD = re.compile(r"[A-Za-z_][\w-]*")
_T = TypeVar("_T")


class Item:
    """A run of consecutive top-level items (a few dozen: per-item bookkeeping would cost
    more than the work it saves) and what was found about them."""

    __slots__ = (
        "binding",
        "index",
        "key",
        "local",
        "memo",
        "nodes_",
        "statements",
        "unchanged",
        "version",
        "words",
    )

    def __init__(self, nodes: list[Any], version: int) -> None:
        self.nodes_ = nodes
        self.key = tuple(id(node) for node in nodes)
        self.statements = [node for node in nodes if isinstance(node, t.Statement)]
        self.version = version
        self.index = NodeIndex(nodes)
        self.binding: UnitBinding | None = None
        self.local: Local | None = None
        self.words: frozenset[str] | None = None
        self.unchanged = False
        self.memo: dict[Hashable, Any] = {}

    def nodes(self, cls: type) -> list[Any]:
        return self.index.nodes(cls)

    def first_line(self) -> int:
        line: int = self.nodes_[0].start_pos[0]
        return line

    def last_line(self) -> int:
        line: int = self.nodes_[-1].end_pos[0]
        return line


def _chunks(children: list[Any]) -> list[list[Any]]:
    """The module's items cut into runs.  Where a run ends depends on the items themselves
    (their identity), not on their count from the top, so an edit changes the runs around
    it only: the others are the same runs as before, and are reused whole."""
    chunks: list[list[Any]] = []
    current: list[Any] = []
    for child in children:
        if not hasattr(child, "children") and type(child) is not t.String:
            continue
        if len(current) >= CHUNK_MAX or (
            len(current) >= CHUNK_MIN and (id(child) >> 4) % CHUNK_SPREAD == 0
        ):
            chunks.append(current)
            current = []
        current.append(child)
    if current:
        chunks.append(current)
    return chunks


# Runs hold CHUNK_MIN to CHUNK_MAX items, about CHUNK_MIN + CHUNK_SPREAD on average.
CHUNK_MIN = 8
CHUNK_SPREAD = 16
CHUNK_MAX = 64


@dataclass(eq=False)
class Local:
    """An item's local diagnostics, as found when its first line was ``line``."""

    line: int
    diagnostics: list[Diagnostic]
    # All their places lie inside the item, so they move with it.
    movable: bool


class ItemsIndex(NodeIndex):
    """The node index of a module made of its runs' indexes (in order, they hold what one
    walk of the module holds)."""

    __slots__ = ("_by_node", "_items")

    def __init__(self, module: Any, items: list[Item]) -> None:
        super().__init__(module)
        self._items = items
        self._by_node = {key: item for item in items for key in item.key}

    def item_memo(self, item: Any, key: Hashable, compute: Callable[[], _T]) -> _T:
        found = self._by_node.get(id(item))
        if found is None:
            return compute()
        memo_key = (key, id(item))
        if memo_key not in found.memo:
            found.memo[memo_key] = compute()
        value: _T = found.memo[memo_key]
        return value

    def _walked(self) -> dict[type, list[Any]]:
        raise AssertionError("an items index is never walked whole")

    def with_issues(self) -> list[Any]:
        found = [self.module] if self.module.issues else []
        for item in self._items:
            found.extend(item.index.with_issues())
        return found

    def strings(self) -> list[Any]:
        found: list[Any] = []
        for item in self._items:
            found.extend(item.index.strings())
        return found

    def nodes(self, *classes: type) -> list[Any]:
        cached = self._queries.get(classes)
        if cached is not None:
            return cached
        found: list[Any] = []
        if any(issubclass(t.Module, cls) for cls in classes):
            found.append(self.module)
        for item in self._items:
            found.extend(item.index.nodes(*classes))
        self._queries[classes] = found
        return found


@dataclass(frozen=True, slots=True)
class Statistics:
    """What the last analysis redid."""

    items: int
    rebound: int  # binder traces made again (items and block bodies)
    replayed: int
    rechecked: int  # items whose local checks ran
    moved: int  # items whose diagnostics were moved, not found again


class IncrementalAnalysis:
    """The analysis of one document across its edits (one per document: it holds the
    items of the last tree it analysed)."""

    def __init__(
        self,
        path: Path | None = None,
        project_root: Path | None = None,
        contracts: Any = None,
    ) -> None:
        self.path = path
        self.project_root = project_root
        self.contracts = contracts
        self._items: dict[tuple[int, ...], Item] = {}
        self._changed: set[int] = set()
        self._changed_since_bind: set[int] = set()
        # The binder's record of each top-level statement seen, by id (kept while the
        # statement is the same object and no edit modified it in place).
        self._records: dict[int, StatementBinding] = {}
        self._scope = Scope("program", None, None)
        self._fingerprints: dict[str, tuple[Any, ...]] | None = None
        self._versions = 0
        self._current: list[Item] = []
        self._traces = (0, 0)
        self.statistics = Statistics(0, 0, 0, 0, 0)

    def changed(self, nodes: Iterable[Any] | None) -> None:
        """Top-level items an edit modified in place (None: forget everything)."""
        if nodes is None:
            self._items.clear()
            self._records.clear()
            self._changed.clear()
            return
        for node in nodes:
            self._changed.add(id(node))
            self._changed_since_bind.add(id(node))

    # ------------------------------------------------------------ the model

    def prepare(self, module: Any) -> Context:
        """The context of ``module`` with its model built, no rule run yet."""
        items: list[Item] = []
        kept: dict[tuple[int, ...], Item] = {}
        changed = self._changed
        for nodes in _chunks(module.children):
            key = tuple(id(node) for node in nodes)
            item = self._items.get(key)
            if (
                item is None
                or any(a is not b for a, b in zip(item.nodes_, nodes, strict=True))
                or (changed and not changed.isdisjoint(key))
            ):
                self._versions += 1
                item = Item(nodes, self._versions)
            else:
                item.unchanged = True
            kept[key] = item
            items.append(item)
        self._items = kept
        self._changed.clear()
        self._current = items
        index = ItemsIndex(module, items)
        for touched in self._changed_since_bind:
            self._records.pop(touched, None)
        self._changed_since_bind.clear()
        binder = Binder(module, index.nodes, list(items), self._scope, self._records)
        model = binder.bind()
        self._traces = (binder.rebound, binder.replayed)
        return Context(module, model, index, self.path, self.project_root, self.contracts)

    # ------------------------------------------------------------ diagnostics

    def diagnostics(self, ctx: Context) -> list[Diagnostic]:
        """Syntax and semantic diagnostics of a context ``prepare`` made (sorted)."""
        if not ctx.memo("rules.ran", lambda: False):
            ctx._memo["rules.ran"] = True
            for rule in program_rules():
                rule(ctx)
        changed = self._changed_names(ctx)
        found: list[Diagnostic] = []
        if ctx.module.issues:
            found.extend(to_diagnostics(ctx.module.issues))
        rechecked = moved = 0
        for item in self._current:
            local = item.local
            if (
                local is None
                or not item.unchanged
                or not local.movable
                or (changed and not changed.isdisjoint(self._words(item)))
            ):
                local = item.local = self._check(ctx, item)
                rechecked += 1
                found.extend(local.diagnostics)
                continue
            lines = item.first_line() - local.line
            if lines:
                local.diagnostics = [d.moved(lines) for d in local.diagnostics]
                local.line += lines
                moved += 1
            found.extend(local.diagnostics)
        found.extend(ctx.diagnostics)
        found.sort(key=Diagnostic.sort_key)
        self.statistics = Statistics(len(self._current), *self._traces, rechecked, moved)
        return found

    def _check(self, ctx: Context, item: Item) -> Local:
        nodes = [n for n in item.index.with_issues() if not reported_whole(n)]
        diagnostics = to_diagnostics(i for n in nodes for i in n.issues)
        local = Context(
            ctx.module,
            ctx.model,
            item.index,
            ctx.path,
            ctx.project_root,
            ctx.contracts,
            program=ctx,
        )
        for rule in local_rules():
            rule(local)
        diagnostics.extend(local.diagnostics)
        first, last = item.first_line(), item.last_line()
        movable = all(_inside(d, first, last) for d in diagnostics)
        return Local(first, diagnostics, movable)

    def _words(self, item: Item) -> frozenset[str]:
        if item.words is None:
            words: set[str] = set()
            for leaf in (leaf for node in item.nodes_ for leaf in t.iter_leaves(node)):
                value = leaf.value
                if type(leaf) is t.String:
                    words.add(leaf.text.strip())
                    words.update(_WORD.findall(value))
                else:
                    words.add(value)
            item.words = frozenset(words)
        return item.words

    def _changed_names(self, ctx: Context) -> set[str]:
        """Names whose meaning to a local check changed since the last analysis."""
        model = ctx.model
        versions = {key: i.version for i in self._current for key in i.key}

        def version(node: Any) -> int:
            while node.parent is not None and not isinstance(node.parent, t.Module):
                node = node.parent
            return versions.get(id(node), -1)

        prints: dict[str, tuple[Any, ...]] = {}
        for table, tag in ((model.agents, "a"), (model.blocks, "b"), (model.programs, "p")):
            for name, nodes in table.items():
                prints[name] = (*prints.get(name, ()), tag, *(version(n) for n in nodes))
        for name in ctx.program_fact("grammar.defined", defined_names):
            prints[name] = (*prints.get(name, ()), "d")
        for name in ctx.program_fact("skills.imported", imported_names):
            prints[name] = (*prints.get(name, ()), "i")
        old = self._fingerprints
        self._fingerprints = prints
        if old is None:
            return set()  # the first analysis: every item is new
        return {n for n in prints.keys() | old.keys() if prints.get(n) != old.get(n)}


def _inside(diagnostic: Diagnostic, first: int, last: int) -> bool:
    places = [(diagnostic.start, diagnostic.end)]
    places += [(r.start, r.end) for r in diagnostic.related if r.path is None]
    return all(first <= a[0] and b[0] <= last for a, b in places)
