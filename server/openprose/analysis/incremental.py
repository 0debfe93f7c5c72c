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
from bisect import bisect_right
from collections.abc import Callable, Generator, Hashable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from openprose.analysis import surroundings
from openprose.analysis.context import _ISSUES, _STRINGS, Context, NodeIndex
from openprose.analysis.model import (
    Binder,
    Scope,
    StatementBinding,
    UnitBinding,
    part_of,
    record_names,
)
from openprose.analysis.program_names import (
    DefinitionsByName,
    NameIndex,
    NestedByName,
    ProgramNames,
    RunNames,
    defined_set,
    imported_set,
    run_names,
)
from openprose.analysis.rules import local_rules, program_rules
from openprose.analysis.rules.grammar import defined_names
from openprose.analysis.rules.names import definitions_by_name, nested_by_name
from openprose.analysis.rules.properties import imported_names
from openprose.diagnostics import Diagnostic, Position, Related
from openprose.syntax import tree as t
from openprose.syntax.issues import reported_whole, to_diagnostics

# Words a local check may look a name up by: identifiers, and the words and whole texts
# of strings (a skill is named by a string, an interpolation by a word inside one).
_WORD = re.compile(r"[A-Za-z_][\w-]*")
# Leaves that are never a name (their values are not kept among a run's words).
_PUNCTUATION = (t.Operator, t.Newline, t.EndMarker)
_SPACE = re.compile(r"\s")


def _kept_word(text: str) -> bool:
    """Whether a string's whole text is kept among its run's words (a prompt is not:
    keeping a copy of every prompt took more memory than the rest of the bookkeeping)."""
    return len(text) <= 64 and _SPACE.search(text) is None


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
        "names",
        "nodes_",
        "statements",
        "unchanged",
        "versions",
        "words",
    )

    def __init__(self, nodes: list[Any]) -> None:
        self.nodes_ = nodes
        self.key = tuple(id(node) for node in nodes)
        self.statements = [node for node in nodes if isinstance(node, t.Statement)]
        # The version of each of its items (by id).
        self.versions: dict[int, int] = {}
        self.index = NodeIndex(nodes)
        self.binding: UnitBinding | None = None
        self.local: Local | None = None
        self.words: frozenset[str] | None = None
        self.unchanged = False
        self.memo: dict[Hashable, Any] = {}
        self.names: RunNames | None = None

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
        if not _is_item(child):
            continue
        if current and _cut_before(len(current), child):
            chunks.append(current)
            current = []
        current.append(child)
    if current:
        chunks.append(current)
    return chunks


def _is_item(child: Any) -> bool:
    """Whether a child of the module is an item runs hold (a node or a string)."""
    return hasattr(child, "children") or type(child) is t.String


def _cut_before(length: int, child: Any) -> bool:
    """Whether a run of ``length`` items ends before ``child`` (the rule both ways of
    cutting share: ``_chunks`` and ``IncrementalAnalysis._runs``)."""
    return length >= CHUNK_MAX or (length >= CHUNK_MIN and (id(child) >> 4) % CHUNK_SPREAD == 0)


def _spanned(children: list[Any]) -> Iterator[tuple[list[Any], Item | None, tuple[int, int]]]:
    """``_chunks(children)`` with each run's span among the children."""
    index = {id(child): k for k, child in enumerate(children)}
    for nodes in _chunks(children):
        yield nodes, None, (index[id(nodes[0])], index[id(nodes[-1])])


# Runs hold CHUNK_MIN to CHUNK_MAX items, about CHUNK_MIN + CHUNK_SPREAD on average.
CHUNK_MIN = 8
CHUNK_SPREAD = 16
CHUNK_MAX = 64


@dataclass(eq=False)
class Local:
    """A run's local diagnostics, and where their places lie: ``anchors`` are the runs
    holding them (the run itself first) with each one's first line when they were found,
    ``places`` for each diagnostic the anchor of each of its places (start, end, then each
    related place's start and end; -1 for a place in another file).  A place moves with the
    run it lies in.  ``anchors`` is None when a place lies in no run: redone every time."""

    diagnostics: list[Diagnostic]
    anchors: list[list[Any]] | None
    places: list[tuple[int, ...]]


class ItemsIndex(NodeIndex):
    """The node index of a module made of its runs' indexes (in order, they hold what one
    walk of the module holds)."""

    __slots__ = ("_by_class", "_by_node", "_items")

    def __init__(self, module: Any, items: list[Item]) -> None:
        super().__init__(module)
        self._items = items
        self._by_node = {key: item for item in items for key in item.key}
        self._by_class: dict[type, list[Any]] | None = None

    def by_class(self) -> dict[type, list[Any]]:
        """The runs' lists by exact class joined in order (the module itself first, as one
        walk of the module finds it), made once."""
        merged = self._by_class
        if merged is None:
            merged = self._by_class = {t.Module: [self.module]}
            for item in self._items:
                for kind, nodes in item.index.by_class().items():
                    if kind is _STRINGS or kind is _ISSUES:
                        continue
                    found = merged.get(kind)
                    if found is None:
                        merged[kind] = list(nodes)
                    else:
                        found += nodes
            merged[_STRINGS] = self.strings()
            merged[_ISSUES] = self.with_issues()
        return merged

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

    def groups(self) -> list[list[Any]]:
        return [item.nodes_ for item in self._items]

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
        # The top-level items (by id) edits modified in place since the last analysis.
        self._changed: set[int] = set()
        # The binder's record of each top-level statement seen, by id (kept while the
        # statement is the same object and no edit modified it in place).
        self._records: dict[int, StatementBinding] = {}
        self._scope = Scope("program", None, None)
        self._fingerprints: dict[str, tuple[Any, ...]] | None = None
        # Names declared by the runs made, redone or dropped since the last diagnostics.
        self._candidates: set[str] = set()
        # Names whose program-scope definitions changed in a binding that was closed
        # midway, or in statements dropped since the last binding.
        self._touched: set[str] = set()
        # The units of a binding closed before it let go of its dropped units' records.
        self._dropped: list[UnitBinding] = []
        self._name_index = NameIndex()
        self._names = ProgramNames([], self._name_index)
        self._versions = 0
        self._current: list[Item] = []
        # The run holding each top-level item (by id), which knows the item's version: a
        # new one whenever the item is new or modified.
        self._owners: dict[int, Item] = {}
        self._starts: list[int] | None = None
        # The module's children at the last ``prepare``, and where each current run lies
        # among them (its first and last child's index).
        self._children: tuple[Any, list[Any]] | None = None
        self._spans: list[tuple[int, int]] = []
        self._traces = (0, 0)
        self.statistics = Statistics(0, 0, 0, 0, 0)

    def changed(self, nodes: Iterable[Any] | None) -> None:
        """Top-level items an edit modified in place (None: forget everything)."""
        if nodes is None:
            self._children = None
            self._items.clear()
            self._records.clear()
            self._name_index.clear()
            self._dropped = []
            self._changed.clear()
            return
        for node in nodes:
            self._changed.add(id(node))

    # ------------------------------------------------------------ the model

    def prepare(self, module: Any) -> Context:
        """The context of ``module`` with its model built, no rule run yet (the rules run
        when its diagnostics are asked for: before the next ``prepare``, or never)."""
        return _drained(self.prepare_steps(module))

    def prepare_steps(self, module: Any) -> Generator[None, None, Context]:
        """``prepare`` in steps: it pauses (yields) after each run it binds, and may be
        closed at a pause (an edit came): what it did is then kept as far as it is valid."""
        items: list[Item] = []
        kept: dict[tuple[int, ...], Item] = {}
        changed = self._changed
        owners = self._owners
        made: list[Item] = []
        new_nodes: list[Any] = []
        spans: list[tuple[int, int]] = []
        for nodes, same, span in self._runs(module):
            spans.append(span)
            found: Item | None = same
            if same is not None:
                key = same.key
            else:
                key = tuple(map(id, nodes))
                # A run holds its nodes, so an id it knows still names the same object.
                found = self._items.get(key)
            if found is not None and not (changed and not changed.isdisjoint(key)):
                item = found
                item.unchanged = True
            else:
                item = Item(nodes)
                for node in nodes:
                    owner = owners.get(id(node))
                    if owner is None or id(node) in changed:
                        self._versions += 1
                        item.versions[id(node)] = self._versions
                        if owner is None:
                            new_nodes.append((node, item))
                    else:
                        item.versions[id(node)] = owner.versions[id(node)]
                made.append(item)
            kept[key] = item
            items.append(item)
        previous = self._predecessors(new_nodes, kept) if new_nodes else {}
        dropped, self._dropped = self._dropped, []
        for key, old in self._items.items():
            if key not in kept:
                if old.binding is not None:
                    dropped.append(old.binding)
                for node_id in key:
                    if owners.get(node_id) is old:
                        del owners[node_id]
                if old.names is not None:
                    self._candidates |= old.names.declared
                    self._name_index.remove(old.names)
        for item in made:
            for node_id in item.key:
                owners[node_id] = item
        self._items = kept
        self._current = items
        self._children = (module, list(module.children))
        self._spans = spans
        index = ItemsIndex(module, items)
        changed_names = self._touched
        self._touched = set()
        for touched in changed:
            record = self._records.pop(touched, None)
            if record is not None:
                changed_names |= record_names(record)
        changed.clear()
        binder = Binder(
            module,
            index.nodes,
            list(items),
            self._scope,
            self._records,
            changed_names,
            dropped,
            previous,
        )
        try:
            yield from binder.steps()
        except GeneratorExit:
            # What it found changed is still changed for the next binding.
            self._touched |= binder.touched
            units = binder.abandoned()
            if not binder.pruned:
                self._dropped = binder.dropped
            for item in units:
                item.local = None
                if item.names is not None:
                    self._candidates |= item.names.declared
                    self._name_index.remove(item.names)
                    item.names = None
            raise
        model = binder.model
        self._traces = (binder.rebound, binder.replayed)
        runs: list[RunNames] = []
        for item in items:
            assert item.binding is not None  # the binder made or kept one for each
            if id(item) in binder.redone or item.names is None:
                item.local = None  # its part of the model changed
                if item.names is not None:
                    self._candidates |= item.names.declared
                    self._name_index.remove(item.names)
                item.names = run_names(item.binding, item.index.nodes)
                self._candidates |= item.names.declared
                self._name_index.add(item.names)
            runs.append(item.names)
        names = self._names = ProgramNames(runs, self._name_index)
        project_root, contracts = surroundings(self.path, self.project_root, self.contracts)
        ctx = Context(module, model, index, self.path, project_root, contracts)
        # The program facts the local checks read, answered name by name.
        ctx._memo[definitions_by_name] = DefinitionsByName(names)
        ctx._memo[nested_by_name] = NestedByName(names)
        ctx._memo[defined_names] = defined_set(names)
        ctx._memo[imported_names] = imported_set(names)
        return ctx

    def runs(self) -> list[list[Any]]:
        """The items of each run of the last ``prepare``, in order."""
        return [item.nodes_ for item in self._current]

    def _runs(self, module: Any) -> Iterator[tuple[list[Any], Item | None, tuple[int, int]]]:
        """The module's items in runs (``_chunks``), each with the current run that holds
        exactly its items, when known without looking (None: look it up by its key), and
        its span among the children.  The children an edit left alone at both ends keep
        their runs: only those between are cut into runs again, from the run where the
        edit starts until a cut falls where a run of the unchanged end starts (from there
        on, cutting is what it was)."""
        children = module.children
        last = self._children
        if last is None or last[0] is not module or not self._current:
            yield from _spanned(children)
            return
        before = last[1]
        n, m = len(before), len(children)
        lo = 0
        limit = min(n, m)
        while lo < limit and before[lo] is children[lo]:
            lo += 1
        hi = 0
        while hi < limit - lo and before[n - 1 - hi] is children[m - 1 - hi]:
            hi += 1
        shift = m - n
        olds, spans = self._current, self._spans
        k = 0
        # Where a run ends depends on the item after it too: a run is kept when the next
        # one starts among the children kept at the start.
        while k + 1 < len(olds) and spans[k + 1][0] < lo:
            yield olds[k].nodes_, olds[k], spans[k]
            k += 1
        start = spans[k][0]
        firsts = {span[0]: r for r, span in enumerate(spans) if span[0] >= n - hi}
        current: list[Any] = []
        first = latest = start
        for j in range(start, m):
            child = children[j]
            if not _is_item(child):
                continue
            if current and _cut_before(len(current), child):
                yield current, None, (first, latest)
                current = []
                r = firsts.get(j - shift) if j >= m - hi else None
                if r is not None:
                    for old, (a, b) in zip(olds[r:], spans[r:], strict=True):
                        yield old.nodes_, old, (a + shift, b + shift)
                    return
            if not current:
                first = j
            current.append(child)
            latest = j
        if current:
            yield current, None, (first, latest)

    def _predecessors(
        self, new_nodes: list[tuple[Any, Item]], kept: dict[tuple[int, ...], Item]
    ) -> dict[int, StatementBinding]:
        """The new top-level items that have the same text as an item they replaced (the
        incremental parser reparses the statement before an edit too): each keeps the
        version of the one it replaced, and the binder's record of that one (by the new
        item's id), whose symbols its own take over.  An item with the same text means the
        same to every check, wherever the rest of the program refers to it."""
        present = {id(node) for node, _ in new_nodes}
        for item in kept.values():
            present.update(item.key)
        gone: dict[tuple[type, str], list[tuple[Any, Item]]] = {}
        for key, old in self._items.items():
            if key in kept:
                continue
            for node in old.nodes_:
                if id(node) not in present and self._owners.get(id(node)) is old:
                    gone.setdefault((type(node), node.get_code()), []).append((node, old))
        if not gone:
            return {}
        previous: dict[int, StatementBinding] = {}
        for node, item in new_nodes:
            same = gone.get((type(node), node.get_code()))
            if not same:
                continue
            old_node, old_item = same.pop(0)
            item.versions[id(node)] = old_item.versions[id(old_node)]
            record = self._records.get(id(old_node))
            if record is not None and record.statement is old_node:
                previous[id(node)] = record
        return previous

    # ------------------------------------------------------------ diagnostics

    def diagnostics(self, ctx: Context) -> list[Diagnostic]:
        """Syntax and semantic diagnostics of a context ``prepare`` made (sorted)."""
        return _drained(self.diagnostics_steps(ctx))

    def diagnostics_steps(self, ctx: Context) -> Generator[None, None, list[Diagnostic]]:
        """``diagnostics`` in steps: it pauses (yields) after each program rule and each run
        it checks, and may be closed at a pause."""
        if not ctx.memo("rules.ran", lambda: False):
            for rule in program_rules():
                rule(ctx)
                yield
            ctx._memo["rules.ran"] = True
        changed = self._changed_names(ctx)
        # A name no run keeps among its words (a long text, or one with spaces, that a
        # string may name a skill by) may be anywhere.
        everywhere = any(not _kept_word(name) for name in changed)
        live = {id(item) for item in self._current}
        # Decided before any pause: a run that must be checked again is marked so now, and
        # stays marked if this is closed before its turn.
        for item in self._current:
            local = item.local
            if local is not None and (
                local.anchors is None
                or (changed and (everywhere or not changed.isdisjoint(self._words(item))))
                or any(id(anchor[0]) not in live for anchor in local.anchors)
            ):
                item.local = None
        found: list[Diagnostic] = []
        if ctx.module.issues:
            found.extend(to_diagnostics(ctx.module.issues))
        rechecked = moved = 0
        self._starts = None
        for item in self._current:
            local = item.local
            if local is None:
                local = item.local = self._check(ctx, item)
                rechecked += 1
                found.extend(local.diagnostics)
                yield
                continue
            assert local.anchors is not None
            deltas = [anchor[0].first_line() - anchor[1] for anchor in local.anchors]
            if any(deltas):
                local.diagnostics = [
                    _relocated(d, places, deltas)
                    for d, places in zip(local.diagnostics, local.places, strict=True)
                ]
                for anchor, delta in zip(local.anchors, deltas, strict=True):
                    anchor[1] += delta
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
            local_part=part_of(item.binding) if item.binding is not None else None,
        )
        self._words(item)
        for rule in local_rules():
            rule(local)
        diagnostics.extend(local.diagnostics)
        first, last = item.first_line(), item.last_line()
        anchors: list[list[Any]] = [[item, first]]
        places: list[tuple[int, ...]] = []
        for diagnostic in diagnostics:
            found: list[int] = []
            for start, end, elsewhere in _places(diagnostic):
                if elsewhere:
                    found += (-1, -1)
                    continue
                for line in (start[0], end[0]):
                    if first <= line <= last:
                        found.append(0)
                        continue
                    other = self._run_at(line)
                    if other is None:
                        return Local(diagnostics, None, [])
                    k = next((k for k, a in enumerate(anchors) if a[0] is other), None)
                    if k is None:
                        k = len(anchors)
                        anchors.append([other, other.first_line()])
                    found.append(k)
            places.append(tuple(found))
        return Local(diagnostics, anchors, places)

    def _run_at(self, line: int) -> Item | None:
        """The current run whose lines hold ``line``."""
        if self._starts is None:
            self._starts = [item.first_line() for item in self._current]
        k = bisect_right(self._starts, line) - 1
        if k < 0:
            return None
        item = self._current[k]
        return item if line <= item.last_line() else None

    def _words(self, item: Item) -> frozenset[str]:
        if item.words is None:
            words: set[str] = set()
            for leaf in (leaf for node in item.nodes_ for leaf in t.iter_leaves(node)):
                if type(leaf) is t.String:
                    words.update(_WORD.findall(leaf.value))
                    text = leaf.text.strip()
                    if _kept_word(text):
                        words.add(text)
                elif type(leaf) not in _PUNCTUATION:
                    words.add(leaf.value)
            item.words = frozenset(words)
        return item.words

    def _changed_names(self, ctx: Context) -> set[str]:
        """Names whose meaning to a local check changed since the last analysis: of the
        names the runs made or dropped since then declare, those whose fingerprint (what
        agent, block or program they name, in which version; their variables and what the
        program scope binds them to; whether they are defined, imported, a nested agent)
        is not the one it was."""
        prints = self._fingerprints
        if prints is None:
            self._fingerprints = {n: self._fingerprint(ctx, n) for n in self._names.all_declared()}
            self._candidates = set()
            return set()  # the first analysis: every run is new
        changed = set()
        for name in self._candidates:
            now = self._fingerprint(ctx, name)
            if prints.get(name) != now:
                changed.add(name)
                prints[name] = now
        self._candidates = set()
        return changed

    def _fingerprint(self, ctx: Context, name: str) -> tuple[Any, ...]:
        model = ctx.model
        names = self._names
        owners = self._owners

        def version(node: Any) -> int:
            node = t.top_level(node)
            owner = owners.get(id(node))
            return owner.versions[id(node)] if owner is not None else -1

        nested = names.nested(name)
        return (
            tuple(version(node) for node in model.agents.get(name, ())),
            tuple(version(node) for node in model.blocks.get(name, ())),
            tuple(version(node) for node in model.programs.get(name, ())),
            names.is_defined(name),
            names.is_imported(name),
            version(nested) if nested is not None else None,
            # What the program scope binds it to, and the variables of the flat namespace
            # (those a loop, a pipeline, a block's parameters or a catch bind are seen only
            # inside it, in its own run): the symbols themselves, compared by identity (a
            # symbol freed since could have left its id to a new one).
            model.program_scope.symbols.get(name),
            *(s for s in names.definitions(name) if not s.kind.is_scoped),
        )


def _drained(steps: Generator[None, None, _T]) -> _T:
    """What a generator of steps returns, all its steps taken."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            value: _T = done.value
            return value


def _places(diagnostic: Diagnostic) -> list[tuple[Position, Position, bool]]:
    """A diagnostic's ranges, its own first: (start, end, in another file)."""
    found = [(diagnostic.start, diagnostic.end, False)]
    found += [(r.start, r.end, r.path is not None) for r in diagnostic.related]
    return found


def _relocated(diagnostic: Diagnostic, places: tuple[int, ...], deltas: list[int]) -> Diagnostic:
    """``diagnostic`` with each place moved by the delta of the run it lies in."""

    def moved(position: Position, anchor: int) -> Position:
        return position if anchor < 0 else (position[0] + deltas[anchor], position[1])

    return Diagnostic(
        diagnostic.code,
        diagnostic.message,
        diagnostic.severity,
        moved(diagnostic.start, places[0]),
        moved(diagnostic.end, places[1]),
        tuple(
            Related(
                r.message,
                moved(r.start, places[2 + 2 * k]),
                moved(r.end, places[3 + 2 * k]),
                r.path,
            )
            for k, r in enumerate(diagnostic.related)
        ),
    )
