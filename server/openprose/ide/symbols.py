"""Document symbols (the outline) and the workspace symbol index.

The outline follows the statements: agents (their properties as children), blocks
(parameters, then what their bodies define and the control flow in them), inputs,
outputs, ``let``/``const`` variables, imports, sessions and every construct that owns
a block (``parallel`` with its named branches, loops, ``try``/``catch``/``finally``,
``choice`` with its options, ``if``/``elif``/``else``, ``do:``, pipeline stages).  A
symbol's range is the whole construct without the line break ending it; its selection
range is its name (or its keyword when it has none).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from openprose.analysis.model import import_alias
from openprose.files import read_text
from openprose.ide.folding import content_end, leaf_end
from openprose.ide.types import Range, Symbol, SymbolKind
from openprose.syntax import parse
from openprose.syntax import tree as t

if TYPE_CHECKING:
    from openprose.ide.analysis import Analysis

log = logging.getLogger(__name__)

_NAME_LIMIT = 48
_DETAIL_LIMIT = 60


def document_symbols(analysis: Analysis) -> list[Symbol]:
    return module_symbols(analysis.module)


def module_symbols(module: t.Module) -> list[Symbol]:
    """The outline of a parsed module."""
    return _statements(module.statements())


# --------------------------------------------------------------------------- text


def _range(node: Any) -> Range:
    start = node.start_pos
    end = content_end(node)
    return Range((start[0] - 1, start[1]), (end[0] - 1, end[1]))


def _leaf_range(leaf: Any) -> Range:
    end = leaf_end(leaf)
    return Range((leaf.line - 1, leaf.column), (end[0] - 1, end[1]))


def shorten(text: str, limit: int = _NAME_LIMIT) -> str:
    """``text`` on one line, whitespace collapsed, cut to ``limit`` with an ellipsis."""
    text = " ".join(text.split())
    if len(text) > limit:
        return text[: limit - 1].rstrip() + "…"
    return text


def head_text(node: Any, limit: int = _NAME_LIMIT, stop_at_colon: bool = False) -> str:
    """The source of ``node`` up to its first line break (or, with ``stop_at_colon``, the
    ``:`` opening its block), on one line and shortened; reads only the leaves it needs."""
    if node is None:
        return ""
    if not hasattr(node, "children"):
        return shorten(node.value, limit)
    pieces: list[str] = []
    _head(node, pieces, limit * 2, stop_at_colon)
    text = "".join(pieces)
    if stop_at_colon and text.endswith(":"):
        text = text[:-1]
    return shorten(text, limit)


def _head(node: Any, pieces: list[str], budget: int, stop_at_block: bool) -> int:
    """Append the leaves of ``node`` to ``pieces`` until a line break, a block (when
    ``stop_at_block``) or the budget runs out; returns the budget left (-1: stop)."""
    for child in node.children:
        if hasattr(child, "children"):
            if stop_at_block and isinstance(child, t.Suite | t.PropertyBlock):
                return -1
            budget = _head(child, pieces, budget, stop_at_block)
            if budget < 0:
                return -1
            continue
        if type(child) is t.Newline or type(child) is t.EndMarker:
            return -1
        value = child.value
        if pieces and child.prefix:
            pieces.append(" ")
        pieces.append(value)
        budget -= len(value) + 1
        if budget < 0:
            return -1
    return budget


def _string_text(leaf: Any) -> str:
    return shorten(leaf.text, _NAME_LIMIT) if isinstance(leaf, t.String) else ""


# --------------------------------------------------------------------------- outline


def _statements(statements: list[Any]) -> list[Symbol]:
    result: list[Symbol] = []
    for statement in statements:
        result.extend(_statement(statement))
    return result


def _body(node: Any) -> list[Symbol]:
    body = node.body
    return _statements(body.statements()) if body is not None else []


def _control(node: Any, children: list[Symbol], name: str | None = None) -> Symbol:
    """A control-flow construct, named by its header (``for item in items``)."""
    keyword = node.children[0]
    return Symbol(
        name or head_text(node, stop_at_colon=True) or str(keyword.value),
        "statement",
        _range(node),
        _leaf_range(keyword),
        children=tuple(children),
    )


def _properties(properties: list[t.Property]) -> tuple[Symbol, ...]:
    return tuple(
        Symbol(
            prop.name,
            "property",
            _range(prop),
            _leaf_range(prop.name_leaf),
            head_text(prop.value, _DETAIL_LIMIT),
            _properties(prop.block.properties()) if prop.block is not None else (),
        )
        for prop in properties
    )


def _session(node: Any) -> Symbol:
    keyword = node.children[0]
    agent = node.agent
    if isinstance(node, t.Session) and node.name is not None:
        name, selection = node.name.value, node.name
        detail = agent.value if agent is not None else ""
    elif isinstance(node, t.Session) and agent is None and node.prompt is not None:
        name, selection, detail = _string_text(node.prompt) or "session", keyword, "session"
    else:
        word = "resume" if isinstance(node, t.Resume) else "session"
        name = f"{word}: {agent.value}" if agent is not None else word
        selection, detail = keyword, ""
    return Symbol(name, "session", _range(node), _leaf_range(selection), detail)


def _expression(node: Any, bare: bool) -> list[Symbol]:
    """Symbols for the constructs inside an expression; sessions only when ``bare`` (a
    statement of their own: as a value, the variable stands for them)."""
    if node is None or isinstance(node, t.ProseLeaf):
        return []
    if isinstance(node, t.Session | t.Resume):
        return [_session(node)] if bare else []
    if isinstance(node, t.ArrowSequence):
        return [s for step in node.steps() for s in _expression(step, bare)]
    if isinstance(node, t.Pipeline):
        result = _expression(node.source, False)
        for stage in node.stages():
            op = stage.operation
            name = head_text(stage, stop_at_colon=True).lstrip("| ") or "stage"
            children = _body(stage)
            result.append(
                Symbol(
                    name,
                    "statement",
                    _range(stage),
                    _leaf_range(op if op is not None else stage.children[0]),
                    children=tuple(children),
                )
            )
        return result
    if isinstance(node, t.Parallel | t.DoBlock | t.Repeat | t.ForEach | t.Loop | t.TryStatement):
        return _statement(node)
    return []


def _binding(name: t.Name, kind: SymbolKind, node: Any, value: Any) -> Symbol:
    return Symbol(
        name.value,
        kind,
        _range(node),
        _leaf_range(name),
        head_text(value, _DETAIL_LIMIT),
        tuple(_expression(value, False)),
    )


def _statement(node: Any) -> list[Symbol]:
    handler = _HANDLERS.get(type(node))
    return handler(node) if handler is not None else []


def _agent(node: t.AgentDefinition) -> list[Symbol]:
    name_leaf = node.name_leaf
    model = node.get_property("model")
    return [
        Symbol(
            name_leaf.value if name_leaf is not None else "agent",
            "agent",
            _range(node),
            _leaf_range(name_leaf if name_leaf is not None else node.children[0]),
            head_text(model.value, _DETAIL_LIMIT) if model is not None else "",
            _properties(node.properties()),
        )
    ]


def _block(node: t.BlockDefinition) -> list[Symbol]:
    name_leaf = node.name_leaf
    plist = node.parameter_list
    children = []
    if plist is not None:
        children = [
            Symbol(p.value, "parameter", _leaf_range(p), _leaf_range(p)) for p in plist.names()
        ]
    children.extend(_body(node))
    return [
        Symbol(
            name_leaf.value if name_leaf is not None else "block",
            "block",
            _range(node),
            _leaf_range(name_leaf if name_leaf is not None else node.children[0]),
            head_text(plist) if plist is not None else "",
            tuple(children),
        )
    ]


def _let(node: t.LetBinding) -> list[Symbol]:  # and ConstBinding
    kind: SymbolKind = "constant" if isinstance(node, t.ConstBinding) else "variable"
    names = node.target_names()
    if not names:
        return _expression(node.value, False)
    value = node.value
    return [_binding(name, kind, node, value) for name in names]


def _assignment(node: t.Assignment) -> list[Symbol]:
    target = node.target
    parent = node.parent
    if target is not None and isinstance(parent, t.Suite) and isinstance(parent.parent, t.Parallel):
        return [_binding(target, "variable", node, node.value)]  # a named branch
    return _expression(node.value, False)


def _input(node: t.InputDeclaration) -> list[Symbol]:
    name = node.name
    if name is None:
        return []
    description = node.description
    detail = _string_text(description) if isinstance(description, t.String) else ""
    return [Symbol(name.value, "input", _range(node), _leaf_range(name), detail)]


def _output(node: t.OutputBinding) -> list[Symbol]:
    name = node.name
    if name is not None:
        return [_binding(name, "output", node, node.value)]
    value = node.value  # a block's result: `output expression`
    return [
        Symbol(
            "output",
            "output",
            _range(node),
            _leaf_range(node.children[0]),
            head_text(value, _DETAIL_LIMIT),
            tuple(_expression(value, False)),
        )
    ]


def _use(node: t.UseStatement) -> list[Symbol]:
    alias = import_alias(node)
    path = node.path
    selection = node.alias or path or node.children[0]
    detail = path.text if path is not None else ""
    return [Symbol(alias or "use", "program", _range(node), _leaf_range(selection), detail)]


def _import(node: t.ImportStatement) -> list[Symbol]:
    string = node.name
    source = node.source
    return [
        Symbol(
            _string_text(string) or "import",
            "program",
            _range(node),
            _leaf_range(string if string is not None else node.children[0]),
            source.text if source is not None else "",
        )
    ]


def _bare(node: Any) -> list[Symbol]:
    return _expression(node, True)


def _try(node: t.TryStatement) -> list[Symbol]:
    children = _body(node)
    for clause in node.children:
        if isinstance(clause, t.CatchClause | t.FinallyClause):
            children.extend(_statement(clause))
    return [_control(node, children, "try")]


def _if(node: t.IfStatement) -> list[Symbol]:
    children = _body(node)
    for clause in node.children:
        if isinstance(clause, t.ElifClause | t.ElseClause):
            children.extend(_statement(clause))
    return [_control(node, children)]


def _option(node: t.OptionClause) -> list[Symbol]:
    label = node.label
    return [
        Symbol(
            (_string_text(label) if label is not None else "") or "option",
            "option",
            _range(node),
            _leaf_range(label if label is not None else node.children[0]),
            children=tuple(_body(node)),
        )
    ]


def _clause(node: Any) -> list[Symbol]:
    return [_control(node, _body(node))]


def _error_block(node: t.ErrorBlock) -> list[Symbol]:
    return _statements(node.statements())


_HANDLERS: dict[type, Callable[[Any], list[Symbol]]] = {
    t.AgentDefinition: _agent,
    t.BlockDefinition: _block,
    t.LetBinding: _let,
    t.ConstBinding: _let,
    t.Assignment: _assignment,
    t.InputDeclaration: _input,
    t.OutputBinding: _output,
    t.UseStatement: _use,
    t.ImportStatement: _import,
    t.Session: _bare,
    t.Resume: _bare,
    t.ArrowSequence: _bare,
    t.Pipeline: _bare,
    t.TryStatement: _try,
    t.IfStatement: _if,
    t.OptionClause: _option,
    t.UnsupportedStatement: _body,
    t.ErrorBlock: _error_block,
}
for _construct in (
    t.Parallel,
    t.DoBlock,
    t.Repeat,
    t.ForEach,
    t.Loop,
    t.ChoiceStatement,
    t.CatchClause,
    t.FinallyClause,
    t.ElifClause,
    t.ElseClause,
):
    _HANDLERS[_construct] = _clause


# --------------------------------------------------------------------------- workspace

# Kinds a workspace symbol search offers.
_WORKSPACE_KINDS = frozenset(
    ("agent", "block", "input", "output", "variable", "constant", "program")
)
_LIMIT = 200


def workspace_symbols(module: t.Module) -> list[Symbol]:
    """The agents, blocks, inputs, outputs, variables and imports of a module, flat,
    without children; ``detail`` names the block holding a symbol (empty at top level)."""
    found: list[Symbol] = []

    def collect(symbols: tuple[Symbol, ...] | list[Symbol], container: str) -> None:
        for symbol in symbols:
            if symbol.kind in _WORKSPACE_KINDS:
                found.append(
                    Symbol(
                        symbol.name, symbol.kind, symbol.range, symbol.selection_range, container
                    )
                )
            if symbol.kind == "block":
                collect(symbol.children, f"block {symbol.name}")
            elif symbol.kind != "agent":
                collect(symbol.children, container)

    collect(module_symbols(module), "")
    return found


def _word_starts(name: str) -> set[int]:
    """Indices that start a word: after ``_``, ``-``, ``.`` ..., at a capital after a
    lower-case letter, and where digits start or stop."""
    starts = {0}
    for i in range(1, len(name)):
        before, char = name[i - 1], name[i]
        if (
            not before.isalnum()
            or (char.isupper() and before.islower())
            or (char.isdigit() != before.isdigit())
        ) and char.isalnum():
            starts.add(i)
    return starts


def _is_subsequence(query: str, text: str, start: int) -> bool:
    for char in query:
        start = text.find(char, start)
        if start < 0:
            return False
        start += 1
    return True


def _match(query: str, name: str) -> tuple[int, int, int] | None:
    """How well a lower-case ``query`` matches ``name`` (lower is better), or None.

    Tiers: exact, prefix, a substring starting a word, letters that each start a word
    or follow the previous match (``gr`` in ``gather_results``), a substring inside a
    word, any subsequence; within a tier, fewer scattered letters and tighter matches.
    """
    lower = name.lower()
    if not query or lower == query:
        return 0, 0, 0
    if lower.startswith(query):
        return 1, 0, 0
    if not _is_subsequence(query, lower, 0):
        return None
    starts = _word_starts(name)
    index = lower.find(query)
    while index >= 0:
        if index in starts:
            return 2, 0, index
        index = lower.find(query, index + 1)
    positions: list[int] = []
    position = 0
    for k, char in enumerate(query):
        if positions and position < len(lower) and lower[position] == char:
            chosen = position  # continues the previous match
        else:
            chosen = -1
            for candidate in sorted(i for i in starts if i >= position and lower[i] == char):
                if _is_subsequence(query[k + 1 :], lower, candidate + 1):
                    chosen = candidate
                    break
            if chosen < 0:
                chosen = lower.find(char, position)
        positions.append(chosen)
        position = chosen + 1
    scattered = sum(
        1
        for k, p in enumerate(positions)
        if p not in starts and not (k and positions[k - 1] == p - 1)
    )
    span = positions[-1] - positions[0]
    if scattered == 0:
        return 3, 0, span
    substring = lower.find(query)
    if substring >= 0:
        return 4, 0, substring
    return 5, scattered, span


class WorkspaceIndex:
    """The workspace symbols of every ``.prose`` file, by path; thread-safe.

    Paths are normalised (absolute, ``os.path.normpath``) so that the background
    directory scan and editor updates name a file the same way.  A file updated or
    removed while ``index_directory`` runs keeps the editor's version.
    """

    def __init__(self, limit: int = _LIMIT) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._files: dict[str, list[Symbol]] = {}
        self._clock = 0
        self._stamps: dict[str, int] = {}

    @staticmethod
    def _key(path: str) -> str:
        return os.path.normpath(os.path.abspath(path))

    def _store(self, path: str, symbols: list[Symbol] | None, since: int | None = None) -> bool:
        with self._lock:
            if since is not None and self._stamps.get(path, -1) > since:
                return False  # changed by the editor after the scan began
            self._clock += 1
            self._stamps[path] = self._clock
            if symbols is None:
                self._files.pop(path, None)
            else:
                self._files[path] = symbols
            return True

    def update(self, path: str, text: str) -> None:
        self._store(self._key(path), workspace_symbols(parse(text)))

    def update_module(self, path: str, module: Any) -> None:
        """Index an already parsed document (an editor's open file)."""
        self._store(self._key(path), workspace_symbols(module))

    def remove(self, path: str) -> None:
        self._store(self._key(path), None)

    def paths(self) -> list[str]:
        with self._lock:
            return sorted(self._files)

    def index_directory(self, root: str, progress: Callable[[int, int], None] | None = None) -> int:
        """Index every ``*.prose`` file under ``root`` (hidden directories skipped);
        ``progress(done, total)`` is called before the first file and after each one.
        Returns the number of files indexed."""
        with self._lock:
            since = self._clock
        files = list(_prose_files(root))
        total = len(files)
        if progress is not None:
            progress(0, total)
        indexed = 0
        for done, path in enumerate(files, 1):
            try:
                # A FIFO named *.prose would block the scan for ever, /dev/zero fill memory.
                text: str | None = read_text(path, errors="replace")
            except OSError as error:
                log.debug("workspace index: skipped %s: %s", path, error.strerror or error)
                text = None
            if text is not None and self._store(
                self._key(path), workspace_symbols(parse(text)), since
            ):
                indexed += 1
            if progress is not None:
                progress(done, total)
        return indexed

    def symbols(self, query: str) -> list[tuple[str, Symbol]]:
        """Symbols whose name contains the letters of ``query`` in order (case-insensitive),
        best matches first, at most ``limit``."""
        with self._lock:
            files = list(self._files.items())
        query = query.strip()
        needle = query.lower()
        scored: list[tuple[Any, ...]] = []
        for path, symbols in files:
            for symbol in symbols:
                score = _match(needle, symbol.name)
                if score is not None:
                    name = symbol.name
                    exact_case = 0 if name.startswith(query) else 1
                    key = (score, exact_case, len(name), name.lower(), path, symbol.range.start)
                    scored.append((key, path, symbol))
        scored.sort(key=lambda item: item[0])
        return [(path, symbol) for _key, path, symbol in scored[: self.limit]]


def _prose_files(root: str) -> Iterator[str]:
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".prose"):
                yield os.path.join(directory, name)
