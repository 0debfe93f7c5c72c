"""What every rule gets: the tree, the semantic model, where the file lives, and a way to
report a diagnostic with an exact range."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from operator import attrgetter
from pathlib import Path
from typing import Any, TypeVar

from openprose.analysis.model import Model, Part
from openprose.codes import severity_of
from openprose.diagnostics import Diagnostic, Position, Related
from openprose.syntax import tree as t
from openprose.syntax.issues import reported_whole, to_diagnostics

_T = TypeVar("_T")


def span(node: Any) -> tuple[Position, Position]:
    """The range of a node or leaf, prefixes excluded."""
    return node.start_pos, node.end_pos


class NodeIndex:
    """One walk of the tree, shared by the semantic model and every rule: the nodes of each
    class, the string leaves and the nodes that carry syntax issues, in source order."""

    __slots__ = ("_index", "_queries", "module")

    def __init__(self, module: Any) -> None:
        # The module, or the top-level items a part of an incremental analysis indexes.
        self.module = module
        self._index: dict[type, list[Any]] | None = None
        self._queries: dict[tuple[type, ...], list[Any]] = {}

    def _walked(self) -> dict[type, list[Any]]:
        if self._index is None:
            index = self._index = _index_nodes(self.module)
            if not _MET.issuperset(index):
                _meet([kind for kind in index if kind not in _MET])
        return self._index

    def with_issues(self) -> list[Any]:
        """The nodes that carry syntax issues, outside error nodes' insides."""
        return self._walked()[_ISSUES]

    def groups(self) -> list[list[Any]]:
        """The module's top-level items in runs of consecutive ones (here, one run)."""
        items = [c for c in self.module.children if hasattr(c, "children")]
        return [items] if items else []

    def item_memo(self, item: Any, key: Hashable, compute: Callable[[], _T]) -> _T:
        """A value computed from the top-level item ``item`` alone (an incremental analysis
        keeps it while the item is unchanged; here it is computed each time)."""
        return compute()

    def strings(self) -> list[Any]:
        """Every string literal outside error nodes, in source order."""
        return self._walked().get(_STRINGS, [])

    def nodes(self, *classes: type) -> list[Any]:
        """Every node of these classes in the module, in source order, outside error nodes."""
        cached = self._queries.get(classes)
        if cached is not None:
            return cached
        index = self._index
        if index is None:
            index = self._walked()
        answering = _ANSWERS.get(classes)
        if answering is None:
            answering = _answering(classes)
        # By name, so that nodes of two classes starting at the same place come in the same
        # order whatever the walk met first (an incremental analysis indexes each top-level
        # item on its own and must find what one index of the module finds).
        found: list[Any] | None = None
        several = False
        for kind in answering:
            bucket = index.get(kind)
            if bucket:
                if found is None:
                    found = list(bucket)
                else:
                    found += bucket
                    several = True
        if found is None:
            found = []
        elif several:
            found.sort(key=_start_pos)
        self._queries[classes] = found
        return found

    def by_class(self) -> dict[type, list[Any]]:
        """The nodes of each class the index holds (of that class exactly, not of classes
        derived from it), in source order, as the index keeps them (not to be changed):
        ``nodes(kind)`` of a class no other derives from, without a query.  The rules ask
        for some thirty classes, and a small file holds no node of most of them."""
        if type(self) is NodeIndex:
            return self._index if self._index is not None else self._walked()
        # An index made of others answers through its queries (slower: for a few calls).
        return {kind: [n for n in self.nodes(kind) if type(n) is kind] for kind in list(_MET)}


def _answering(classes: tuple[type, ...]) -> list[type]:
    """The classes met in any index so far that answer a query for ``classes``, by name
    (which classes answer is the same in every module: told once per query and class)."""
    found = _ANSWERS.get(classes)
    if found is None:
        found = _ANSWERS[classes] = sorted(
            (kind for kind in _MET if issubclass(kind, classes)), key=_class_name
        )
    return found


def _meet(kinds: Iterable[type]) -> None:
    """Classes an index met for the first time: the queries they answer learn of them."""
    for kind in kinds:
        _MET.add(kind)
        # New lists, not appended to: another thread may be reading the old ones.
        for classes, answering in list(_ANSWERS.items()):
            if issubclass(kind, classes):
                _ANSWERS[classes] = sorted([*answering, kind], key=_class_name)


class Context:
    """Built whole by ``analysis.prepare``: the model is made from the same node index the
    rules query.

    ``path`` names the document on disk (a string is taken as well: it becomes a ``Path``
    when a rule first asks for it).  ``project_root`` is the directory holding the
    project's `.prose/` state (None: not known) and ``contracts`` loads the contract of a
    program a `use` statement names (None: no cross-file).  With ``around=True`` both are
    found from ``path`` when a rule first asks for either (``analysis.surroundings``): most
    programs import nothing and keep no agent memory, and finding them took an eighth of
    checking a small file."""

    __slots__ = (
        "_contracts",
        "_memo",
        "_path",
        "_project_root",
        "diagnostics",
        "index",
        "local_part",
        "model",
        "module",
        "program",
    )

    def __init__(
        self,
        module: Any,
        model: Model,
        index: NodeIndex,
        path: Path | str | None = None,
        project_root: Path | None = None,
        contracts: Any = None,
        diagnostics: list[Diagnostic] | None = None,
        program: Context | None = None,
        local_part: Part | None = None,
        *,
        around: bool = False,
    ) -> None:
        self.module = module
        self.model = model
        self.index = index
        self._path = path
        # (What is given is kept: only what is not is found.)
        self._project_root: Any = _NOT_YET if around and project_root is None else project_root
        self._contracts: Any = _NOT_YET if around and contracts is None else contracts
        self.diagnostics: list[Diagnostic] = diagnostics if diagnostics is not None else []
        # For the context of one top-level item (an incremental analysis checks each on its
        # own): the whole program's context, which holds the program's facts.
        self.program = program
        # For the context of a run of top-level items: the model's definitions, references
        # and uses of agents and blocks made by those items (None: the whole model's).
        self.local_part = local_part
        self._memo: dict[Hashable, Any] = {}

    def __repr__(self) -> str:
        return f"<Context {self._path!s}>"

    @property
    def path(self) -> Path | None:
        path = self._path
        if isinstance(path, str):
            path = self._path = Path(path)
        return path

    @property
    def project_root(self) -> Path | None:
        if self._project_root is _NOT_YET:
            self._find_surroundings()
        root: Path | None = self._project_root
        return root

    @property
    def contracts(self) -> Any:
        if self._contracts is _NOT_YET:
            self._find_surroundings()
        return self._contracts

    def _find_surroundings(self) -> None:
        from openprose.analysis.project import surroundings

        given_root = None if self._project_root is _NOT_YET else self._project_root
        given_contracts = None if self._contracts is _NOT_YET else self._contracts
        self._project_root, self._contracts = surroundings(self.path, given_root, given_contracts)

    @property
    def part(self) -> Part | Model:
        """What the model holds of the nodes this context's index holds."""
        return self.local_part if self.local_part is not None else self.model

    def memo(self, key: str, compute: Callable[[], _T]) -> _T:
        """A value rules share within one check, computed the first time it is asked for."""
        if key not in self._memo:
            self._memo[key] = compute()
        value: _T = self._memo[key]
        return value

    def program_fact(self, compute: Callable[[Context], _T]) -> _T:
        """A fact of the whole program, ``compute(the whole program's context)``, computed
        once and shared by the contexts of its top-level items (an incremental analysis
        puts in a view of it that answers name by name: analysis/program_names.py)."""
        owner = self.program if self.program is not None else self
        value: _T = owner._memo[compute] if compute in owner._memo else compute(owner)
        owner._memo[compute] = value
        return value

    def diagnostics_sorted(self) -> list[Diagnostic]:
        return sorted(self.diagnostics, key=Diagnostic.sort_key)

    def syntax_diagnostics(self) -> list[Diagnostic]:
        """The parser's diagnostics, from the same walk as the node index."""
        nodes = [n for n in self.index.with_issues() if not reported_whole(n)]
        return to_diagnostics(issue for node in nodes for issue in node.issues)

    def strings(self) -> list[Any]:
        """Every string literal outside error nodes, in source order."""
        return self.index.strings()

    def nodes(self, *classes: type) -> list[Any]:
        """Every node of these classes in the module, in source order, outside error nodes
        (one shared walk of the tree for all the rules)."""
        return self.index.nodes(*classes)

    def report(
        self,
        code: str,
        message: str,
        at: Any,
        end: Any = None,
        related: tuple[tuple[str, Any], ...] = (),
    ) -> None:
        """Report ``code`` over ``at`` (a node or leaf, or a (start, end) pair of positions)
        through ``end``; ``related`` pairs a message with a node or leaf."""
        start, stop = _range(at)
        if end is not None:
            stop = _range(end)[1]
        self.diagnostics.append(
            Diagnostic(
                code,
                message,
                severity_of(code),
                start,
                stop,
                tuple(Related(text, *_range(node)) for text, node in related),
            )
        )


def _range(at: Any) -> tuple[Position, Position]:
    if isinstance(at, tuple):
        return at[0], at[1]
    return span(at)


def _index_nodes(root: Any) -> dict[type, list[Any]]:
    index: dict[type, list[Any]] = {}
    strings: list[Any] = []
    issues: list[Any] = []
    string = t.String
    if isinstance(root, list):
        stack = [i for i in reversed(root) if type(i) is string or hasattr(i, "children")]
    else:
        stack = [root]
    # What each class is, told once per class: the walk meets every node and leaf.  A
    # child is pushed unless its class is known to be a leaf's other than a string's (a
    # class not met yet is pushed, and told when it comes out).
    errors = _ERROR_CLASSES
    pushed = _PUSHED_CLASSES
    wanted = pushed.get
    pop = stack.pop
    push = stack.append
    found = index.get
    keep_string = strings.append
    # String leaves go through the stack with the nodes, so that both come out in source
    # order (a pre-order walk) and neither list needs sorting.
    while stack:
        node = pop()
        kind = type(node)
        if kind is string:
            keep_string(node)
            continue
        bucket = found(kind)
        if bucket is None:
            if not hasattr(node, "children"):
                pushed[kind] = False
                continue
            pushed[kind] = True
            bucket = index[kind] = []
            if kind not in errors:
                errors[kind] = issubclass(kind, t.ErrorNode)
        bucket.append(node)
        if node.issues:
            issues.append(node)
        if errors[kind]:
            continue
        for child in reversed(node.children):
            if wanted(type(child), True):
                push(child)
    index[_STRINGS] = strings
    index[_ISSUES] = issues
    return index


_ANSWERS: dict[tuple[type, ...], list[type]] = {}
# Every class an index has met (the markers of strings and issues answer no query).
_MET: set[type] = set()
_ERROR_CLASSES: dict[type, bool] = {}
# False for the classes of leaves other than strings (not pushed), True for nodes'.
_PUSHED_CLASSES: dict[type, bool] = {}


_start_pos = attrgetter("start_pos")


def _class_name(kind: type) -> str:
    return kind.__name__


_NOT_YET = object()  # surroundings not found yet


class _STRINGS:  # the index key for string leaves
    pass


class _ISSUES:  # the index key for nodes that carry syntax issues
    pass
