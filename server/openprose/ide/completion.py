"""Completion at a position, on text that is usually incomplete.

The line being typed rarely parses cleanly, so the context is read from the leaves of the
current logical line before the word at the cursor (the parser keeps every token, even in
error nodes), and from the statements above it (by indentation) for what encloses a new
line.  Names come from the semantic model: agents and blocks (hoisted), imported programs,
and the variables of the scopes enclosing the position that are defined before it.

Nothing here walks the whole tree: a request looks at one logical line, the ancestors of
one leaf and the model's dictionaries, so it stays fast on long programs.
"""

from __future__ import annotations

import re
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openprose.analysis.contracts import Contract, ContractLoader, Status
from openprose.analysis.model import RESERVED_WORDS, Kind, Scope, Symbol
from openprose.analysis.rules.control import JOIN_STRATEGIES, ON_FAIL_POLICIES
from openprose.analysis.rules.properties import (
    ACCESS,
    ACCESS_PERMISSIONS,
    AGENT_PROPERTIES,
    BACKOFFS,
    MODELS,
    PERMISSIONS,
    SESSION_PROPERTIES,
)
from openprose.files import read_text
from openprose.ide.analysis import Analysis
from openprose.ide.types import CompletionItem, Pos, Range
from openprose.syntax import tree as t

PERSIST_VALUES = ("true", "project", "user")
PIPE_OPERATIONS = ("map", "filter", "pmap", "reduce")

# The most leaves of one logical line looked at (a longer line only loses context).
_MAX_TOKENS = 512


# --------------------------------------------------------------------------- the cursor


@dataclass
class Cursor:
    """Where a request stands: the word at the position and the tokens before it."""

    analysis: Analysis
    line: int
    character: int
    text: str  # the cursor's line, without its line break
    word_start: int
    word_end: int
    leaf: Any  # the leaf under the position (its prefix included), or None
    previous: Any  # the last leaf ending at or before the word, or None
    tokens: list[Any]  # the leaves of the logical line before the word, in order

    @property
    def word(self) -> str:
        return self.text[self.word_start : self.character]

    @property
    def target(self) -> tuple[int, int]:
        """The word's start as a parso (1-based line) position."""
        return self.line + 1, self.word_start

    @property
    def replace(self) -> Range:
        return Range((self.line, self.word_start), (self.line, self.word_end))

    @property
    def position(self) -> tuple[int, int]:
        """The cursor as a parso position."""
        return self.line + 1, self.character

    @property
    def indent(self) -> int:
        """The indentation of the logical line holding the cursor."""
        if self.tokens:
            return line_indent(self.analysis, self.tokens[0].start_pos[0] - 1)
        return line_indent(self.analysis, self.line)

    @property
    def anchor(self) -> Any:
        """A leaf whose ancestors enclose the cursor's line."""
        return self.tokens[-1] if self.tokens else self.previous

    def in_string(self) -> t.String | None:
        """The string literal the cursor is inside (after its opening quote), if any."""
        leaf = self.leaf
        if not isinstance(leaf, t.String):
            return None
        here = self.position
        if leaf.start_pos >= here:
            return None
        if here < leaf.end_pos or (here == leaf.end_pos and not leaf.is_terminated):
            return leaf
        return None

    def in_comment_or_condition(self) -> bool:
        leaf = self.leaf
        if leaf is None:
            return False
        here = self.position
        if isinstance(leaf, t.Discretion) and leaf.start_pos < here:
            return here < leaf.end_pos or not leaf.is_terminated
        if here > leaf.start_pos:
            return False
        # In the leaf's prefix: a comment if a `#` stands before the cursor on this line.
        start_line, start_column = leaf.get_start_pos_of_prefix()
        column = start_column if start_line == here[0] else 0
        return "#" in self.text[column : self.character]


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_" or char == "-"


def line_indent(analysis: Analysis, line: int) -> int:
    lines = analysis.lines
    if not 0 <= line < len(lines):
        return 0
    text = lines[line]
    return len(text) - len(text.lstrip(" \t\f"))


def leaf_at(module: Any, position: tuple[int, int]) -> Any:
    """The leaf whose prefix or value holds a parso position (the left one at a boundary)."""
    try:
        return module.get_leaf_for_position(position, include_prefixes=True)
    except ValueError:
        return None


def leaf_before(module: Any, position: tuple[int, int]) -> Any:
    """The last non-empty leaf ending at or before a parso position."""
    leaf = leaf_at(module, position)
    while leaf is not None and (leaf.end_pos > position or not leaf.value):
        leaf = leaf.get_previous_leaf()
    return leaf


def locate(analysis: Analysis, position: Pos) -> Cursor | None:
    """The cursor at a 0-based position, or None when the position is outside the text."""
    line, character = position
    lines = analysis.lines
    if line < 0 or character < 0 or line >= len(lines):
        return None
    text = lines[line]
    if character > len(text):
        return None
    start = character
    while start > 0 and _is_word_char(text[start - 1]):
        start -= 1
    while start < character and text[start] == "-":
        start += 1  # a name never starts with a hyphen (`->`, `-1`)
    end = character
    while end < len(text) and _is_word_char(text[end]):
        end += 1
    module = analysis.module
    previous = leaf_before(module, (line + 1, start))
    tokens = _logical_line(previous)
    if not tokens and isinstance(previous, t.Newline):
        # A blank line inside brackets left open on the line above (`[a,` then Enter):
        # the tokenizer ended that line, but the cursor continues it when indented deeper.
        above = _logical_line(previous.get_previous_leaf())
        if (
            above
            and open_bracket(above) is not None
            and line_indent(analysis, line) > line_indent(analysis, above[0].start_pos[0] - 1)
        ):
            tokens = above
    return Cursor(
        analysis,
        line,
        character,
        text,
        start,
        end,
        leaf_at(module, (line + 1, character)),
        previous,
        tokens,
    )


def _logical_line(last: Any) -> list[Any]:
    """The leaves of a logical line up to ``last``, in order."""
    tokens: list[Any] = []
    leaf = last
    while leaf is not None and not isinstance(leaf, t.Newline) and len(tokens) < _MAX_TOKENS:
        tokens.append(leaf)
        leaf = leaf.get_previous_leaf()
    tokens.reverse()
    return tokens


def open_bracket(tokens: list[Any], openers: str = "([{") -> int | None:
    """The index of the innermost bracket among ``openers`` still open at the end."""
    stack: list[int] = []
    for i, tok in enumerate(tokens):
        if not isinstance(tok, t.Operator):
            continue
        value = tok.value
        if value in "([{":
            stack.append(i)
        elif value in ")]}" and stack:
            stack.pop()
    for i in reversed(stack):
        if tokens[i].value in openers:
            return i
    return None


def segments(tokens: list[Any]) -> list[list[Any]]:
    """The tokens inside a bracket split at its top-level commas."""
    parts: list[list[Any]] = [[]]
    depth = 0
    for tok in tokens:
        if isinstance(tok, t.Operator):
            if tok.value in "([{":
                depth += 1
            elif tok.value in ")]}":
                depth -= 1
            elif tok.value == "," and depth == 0:
                parts.append([])
                continue
        parts[-1].append(tok)
    return parts


# --------------------------------------------------------------------------- scopes


_BINDING_KINDS = frozenset((Kind.LET, Kind.CONST, Kind.OUTPUT, Kind.BRANCH))

# A variable of a scope, ready for filtering: (start, name, symbol, binding).
_Entry = tuple[tuple[int, int], str, Symbol, bool]


class _ModelCache:
    """What requests on one model share: scopes by construct, each scope's variables in
    program order, and the variables' descriptions."""

    def __init__(self, model: Any) -> None:
        self.scopes: dict[int, Scope] = {id(scope.node): scope for scope in model.scopes}
        self.entries: dict[int, tuple[list[_Entry], list[_Entry]]] = {}
        self.symbols: dict[int, tuple[str, str, str]] = {}

    def scope_entries(self, scope: Scope) -> tuple[list[_Entry], list[_Entry]]:
        """A scope's variables sorted by position, and its exported ones (seen anywhere)."""
        found = self.entries.get(id(scope))
        if found is None:
            ordered: list[_Entry] = []
            exported: list[_Entry] = []
            for name, symbol in scope.symbols.items():
                if not symbol.kind.is_variable:
                    continue
                entry = (symbol.start, name, symbol, symbol.kind in _BINDING_KINDS)
                (exported if symbol.exported else ordered).append(entry)
            ordered.sort(key=lambda e: e[0])
            found = self.entries[id(scope)] = (ordered, exported)
        return found


_caches_lock = threading.Lock()
_caches: weakref.WeakKeyDictionary[Any, _ModelCache] = weakref.WeakKeyDictionary()


def _cache(model: Any) -> _ModelCache:
    with _caches_lock:
        cache = _caches.get(model)
        if cache is None:
            cache = _caches[model] = _ModelCache(model)
        return cache


def enclosing_scope(cursor: Cursor) -> Scope:
    """The innermost scope whose construct encloses the cursor's line (by indentation)."""
    model = cursor.analysis.model
    index = _cache(model).scopes
    indent = cursor.indent
    anchor = cursor.anchor
    node = anchor.parent if anchor is not None else None
    while node is not None:
        scope = index.get(id(node))
        if (
            scope is not None
            and scope.kind != "program"
            and line_indent(cursor.analysis, node.start_pos[0] - 1) < indent
        ):
            return scope
        node = node.parent
    program: Scope = model.program_scope
    return program


def visible_symbols(cursor: Cursor, word: str = "") -> list[Symbol]:
    """The variables in scope at the cursor, defined before it (or exported by a block);
    with ``word``, only those whose name holds its letters in order."""
    target = cursor.target
    cache = _cache(cursor.analysis.model)
    # The statements holding the cursor: `let x = <here>` does not see `x` yet.
    enclosing: set[int] = set()
    node = cursor.anchor
    while node is not None:
        enclosing.add(id(node))
        node = node.parent
    needle = word.lower()
    seen: set[str] = set()
    found: list[Symbol] = []
    scope: Scope | None = enclosing_scope(cursor)
    while scope is not None:
        ordered, exported = cache.scope_entries(scope)
        for entries, check_start in ((ordered, True), (exported, False)):
            for start, name, symbol, binding in entries:
                if check_start and start >= target:
                    break
                if name in seen:
                    continue
                if binding and id(symbol.node) in enclosing:
                    continue
                if needle and not matches(needle, name):
                    continue
                seen.add(name)
                found.append(symbol)
        scope = scope.parent
    return found


def matches(needle: str, label: str) -> bool:
    """Whether the (lower-case) letters of ``needle`` appear in ``label`` in order."""
    label = label.lower()
    if needle in label:
        return True
    position = 0
    for char in needle:
        position = label.find(char, position) + 1
        if position == 0:
            return False
    return True


# --------------------------------------------------------------------------- contracts


def program_contract(analysis: Analysis, alias: str) -> Contract | None:
    """The contract of the program imported as ``alias`` (None without a saved file)."""
    if analysis.path is None:
        return None
    uses = analysis.model.programs.get(alias)
    if not uses or uses[0].path is None:
        return None
    resolution = ContractLoader().resolve(analysis.path, uses[0].path.text)
    if resolution.status is not Status.FOUND:
        return None
    contract: Contract | None = resolution.contract
    return contract


_descriptions_lock = threading.Lock()
_descriptions: dict[Path, tuple[int, int, dict[str, str]]] = {}


def input_descriptions(contract: Contract) -> dict[str, str]:
    """The descriptions of a contract's inputs, read from its file (cached by version)."""
    from openprose.syntax import parse

    file = contract.path
    try:
        stat = file.stat()
        with _descriptions_lock:
            cached = _descriptions.get(file)
        if cached is not None and cached[:2] == (stat.st_mtime_ns, stat.st_size):
            return cached[2]
        module = parse(read_text(file))
    except (OSError, UnicodeDecodeError):
        return {}
    found: dict[str, str] = {}
    for node in t.iter_nodes(module):
        if isinstance(node, t.InputDeclaration) and node.name is not None:
            description = node.description
            if isinstance(description, t.String):
                found.setdefault(node.name.value, description.text)
    with _descriptions_lock:
        _descriptions[file] = (stat.st_mtime_ns, stat.st_size, found)
    return found


# --------------------------------------------------------------------------- items


class _Items:
    """Collects items once per label, each replacing the word at the cursor."""

    def __init__(self, replace: Range, word: str = "") -> None:
        self.replace = replace
        self.needle = word.lower()  # what is typed: items that cannot match it are left out
        self.items: list[CompletionItem] = []
        self.labels: set[str] = set()

    def add(
        self,
        label: str,
        kind: str,
        detail: str = "",
        documentation: str = "",
        insert: str | None = None,
        snippet: bool = False,
        group: int = 5,
        replace: Range | None = None,
    ) -> None:
        if label in self.labels or (self.needle and not matches(self.needle, label)):
            return
        self.labels.add(label)
        self.items.append(
            CompletionItem(
                label,
                kind,
                detail,
                documentation,
                insert,
                snippet,
                f"{group}{label}",
                replace if replace is not None else self.replace,
            )
        )


_STATEMENT_KEYWORDS: dict[str, str] = {
    "session": "run a task in a new subagent session",
    "let": "bind a result to a variable",
    "const": "bind a result to a constant",
    "agent": "define a reusable agent",
    "block": "define a reusable block of statements",
    "do": "run a block, or statements in sequence",
    "parallel": "run branches at the same time",
    "repeat": "run a body a fixed number of times",
    "for": "run a body for each element",
    "loop": "run a body until a condition holds",
    "try": "handle failures of a body",
    "choice": "let the model pick one option",
    "if": "run a body when a condition holds",
    "use": "import a program",
    "input": "declare an input of the program",
    "output": "declare an output of the program",
    "throw": "fail with a message",
    "resume": "continue a persistent agent with its memory",
}
_TOP_LEVEL_ONLY = frozenset(("agent", "block", "use", "input"))
_EXPRESSION_KEYWORDS = ("session", "resume", "do", "parallel", "repeat", "for", "loop")

# (label, body, detail, top level only)
_SNIPPETS: tuple[tuple[str, str, str, bool], ...] = (
    (
        "agent name:",
        'agent ${1:name}:\n  model: ${2|sonnet,opus,haiku|}\n  prompt: "$3"\n$0',
        "agent with model and prompt",
        True,
    ),
    ("session: agent", 'session: ${1:agent}\n  prompt: "$2"\n$0', "session with an agent", False),
    (
        "parallel: branches",
        'parallel:\n  ${1:a} = session "$2"\n  ${3:b} = session "$4"\n$0',
        "parallel with named branches",
        False,
    ),
    (
        "loop until (max)",
        "loop until **${1:condition}** (max: ${2:5}):\n  $0",
        "loop until a condition, at most N times",
        False,
    ),
    ("for item in items", "for ${1:item} in ${2:items}:\n  $0", "for each element", False),
    (
        "try/catch/finally",
        "try:\n  $1\ncatch as ${2:err}:\n  $3\nfinally:\n  $0",
        "handle failures and clean up",
        False,
    ),
    (
        "choice/option",
        'choice **${1:criteria}**:\n  option "${2:first}":\n    $3\n'
        '  option "${4:second}":\n    $0',
        "choice between options",
        False,
    ),
    (
        "if/elif/else",
        "if **${1:condition}**:\n  $2\nelif **${3:condition}**:\n  $4\nelse:\n  $0",
        "conditional branches",
        False,
    ),
    ("block name(params)", "block ${1:name}(${2:param}):\n  $0", "block with parameters", True),
)
_EXPRESSION_SNIPPETS = ("session: agent", "parallel: branches", "loop until (max)")
_PIPELINE_SNIPPET = ("items | map:", "${1:items} | map:\n  $0", "pipeline over a collection")

_PROPERTY_DOCS: dict[str, str] = {
    "model": "The model that runs it: `sonnet` (balanced), `opus` (deepest reasoning) or "
    "`haiku` (fastest).",
    "prompt": "The instructions, as a string.",
    "persist": "Keep the agent's memory between calls: `true` (this run), `project` "
    "(across runs), `user`, or a path string.",
    "skills": 'The imported skills the agent may use: `["name", ...]`.',
    "permissions": "What the agent may touch: `read`, `write`, `execute` (glob patterns), "
    "`bash`, `network` (allow, deny or prompt).",
    "context": "Earlier results the session sees: a variable, `[a, b]`, `{ a, b }`, or `[]` "
    "for a fresh start.",
    "retry": "How many times to retry the session when it fails.",
    "backoff": "The delay between retries: `none`, `linear` or `exponential`.",
    "read": "Glob patterns of files the agent may read.",
    "write": "Glob patterns of files the agent may write.",
    "execute": "Glob patterns of files the agent may execute.",
    "bash": "Shell access: `allow`, `deny` or `prompt` (ask the user).",
    "network": "Network access: `allow`, `deny` or `prompt` (ask the user).",
}
_PROPERTY_SNIPPETS: dict[str, str] = {
    "model": "model: ${1|sonnet,opus,haiku|}",
    "prompt": 'prompt: "$1"',
    "persist": "persist: ${1|true,project,user|}",
    "skills": 'skills: ["$1"]',
    "permissions": "permissions:\n  $0",
    "context": "context: $1",
    "retry": "retry: ${1:3}",
    "backoff": "backoff: ${1|none,linear,exponential|}",
    "read": 'read: ["${1:*}"]',
    "write": 'write: ["${1:*}"]',
    "execute": 'execute: ["${1:*}"]',
    "bash": "bash: ${1|allow,deny,prompt|}",
    "network": "network: ${1|allow,deny,prompt|}",
}
_VALUE_DOCS: dict[str, str] = {
    "sonnet": "Balanced speed and capability: the general-purpose choice.",
    "opus": "The most capable model, for complex reasoning.",
    "haiku": "The fastest model, for simple tasks.",
    "true": "Memory for this run only.",
    "project": "Memory kept in the project across runs.",
    "user": "Memory kept for the user across projects.",
    "none": "Retry at once.",
    "linear": "Wait a little longer before each retry.",
    "exponential": "Double the wait before each retry.",
    "allow": "Granted.",
    "deny": "Refused.",
    "prompt": "Ask the user each time.",
    "all": "Wait for every branch (the default).",
    "first": "Take the first branch to finish and cancel the others.",
    "any": "Take the first branch to succeed (or `count:` of them).",
    "fail-fast": "Stop everything at the first failure (the default).",
    "continue": "Let the other branches finish, then report the failure.",
    "ignore": "Treat failed branches as done.",
}
_VALUES: dict[str, tuple[str, ...]] = {
    "model": MODELS,
    "persist": PERSIST_VALUES,
    "backoff": BACKOFFS,
    **{name: ACCESS for name in ACCESS_PERMISSIONS},
}


# --------------------------------------------------------------------------- entry point


def completion(analysis: Analysis, position: Pos) -> list[CompletionItem]:
    """The completion items at ``position`` (0-based line and code point)."""
    cursor = locate(analysis, position)
    if cursor is None:
        return []
    items = _Items(cursor.replace, cursor.word)
    string = cursor.in_string()
    if string is not None:
        _in_string(cursor, string, items)
    elif not cursor.in_comment_or_condition():
        _in_code(cursor, items)
    return items.items


def _in_code(cursor: Cursor, items: _Items) -> None:
    tokens = cursor.tokens
    if not tokens:
        _line_start(cursor, items)
        return
    bracket = open_bracket(tokens)
    if bracket is not None:
        _in_brackets(cursor, bracket, items)
        return
    last = tokens[-1]
    value = last.value
    if isinstance(last, t.Operator):
        if value == ":":
            _after_colon(cursor, items)
        elif value == "=":
            _expression(cursor, items)
        elif value == "->":
            for word in ("session", "resume"):
                items.add(word, "keyword", _STATEMENT_KEYWORDS[word], group=1)
            _snippet(items, "session: agent", 2)
        elif value == "|":
            _pipe_operations(items)
        elif value == "." and len(tokens) >= 2 and isinstance(tokens[-2], t.Name):
            _outputs(cursor, tokens[-2].value, items)
        if value != ")":
            return
    # The tokens of the statement after any `name =` or `->`.
    start = 0
    for i, tok in enumerate(tokens):
        if isinstance(tok, t.Operator) and tok.value in ("=", "->"):
            start = i + 1
    words = [tok.value for tok in tokens[start:]]
    if words == ["do"]:
        _blocks(cursor, items)
    elif words and words[0] == "parallel" and words[1:2] == ["for"]:
        _for_clause(cursor, words[1:], items)
    elif words and words[0] == "for":
        _for_clause(cursor, words, items)
    else:
        _trailing_keywords(tokens[start:], items)


def _for_clause(cursor: Cursor, words: list[str], items: _Items) -> None:
    if words[-1] == "in":
        _variables(cursor, items, group=1)
    elif len(words) == 2 or (len(words) == 4 and words[2] == ","):
        items.add("in", "keyword", "the collection to iterate", group=1)


def _trailing_keywords(tokens: list[Any], items: _Items) -> None:
    """``as``, ``until``, ``while``, ``for`` where they fit after what is written."""
    words = [tok.value for tok in tokens]
    last = tokens[-1]
    first = words[0]
    if words == ["loop"]:
        items.add("until", "keyword", "loop until a condition holds", group=1)
        items.add("while", "keyword", "loop while a condition holds", group=1)
        items.add("as", "keyword", "name the iteration counter", group=2)
    elif (first == "loop" and (isinstance(last, t.Discretion) or words[-1] == ")")) or (
        first == "repeat" and len(words) == 2
    ):
        items.add("as", "keyword", "name the iteration counter", group=1)
    elif words == ["catch"]:
        items.add("as", "keyword", "name the error", group=1)
    elif first == "use" and len(words) == 2 and isinstance(last, t.String):
        items.add("as", "keyword", "an alias for the program", group=1)
    elif words == ["parallel"]:
        items.add("for", "keyword", "parallel for each", group=1)


# --------------------------------------------------------------------------- line starts


_SUITE_OWNERS = (
    t.BlockDefinition,
    t.DoBlock,
    t.Parallel,
    t.Repeat,
    t.ForEach,
    t.Loop,
    t.PipeStage,
    t.TryStatement,
    t.CatchClause,
    t.FinallyClause,
    t.OptionClause,
    t.IfStatement,
    t.ElifClause,
    t.ElseClause,
)
_BINDINGS = (t.LetBinding, t.Assignment, t.OutputBinding)


def _owner(node: Any) -> tuple[str, Any] | None:
    """What a construct holding indented lines holds: properties or statements."""
    if isinstance(node, _BINDINGS):
        value = node.value
        if isinstance(value, t.Pipeline):
            stages = value.stages()
            value = stages[-1] if stages else None
        return _owner(value) if value is not None else None
    if isinstance(node, t.AgentDefinition):
        return "agent", node
    if isinstance(node, t.Session | t.Resume):
        return "session", node
    if isinstance(node, t.Property):
        return ("permissions", node) if node.name == "permissions" else None
    if isinstance(node, t.ChoiceStatement):
        return "choice", node
    if isinstance(node, _SUITE_OWNERS):
        return "suite", node
    return None


def _line_start(cursor: Cursor, items: _Items) -> None:
    """A word at the start of a line: properties or statements, by the enclosing block."""
    analysis = cursor.analysis
    indent = line_indent(analysis, cursor.line)
    owner: tuple[str, Any] | None = None
    sibling = None  # the statement above at the same indentation
    node = cursor.previous.parent if cursor.previous is not None else None
    while node is not None and not isinstance(node, t.Module):
        node_indent = line_indent(analysis, node.start_pos[0] - 1)
        if node_indent < indent:
            owner = _owner(node)
            if owner is not None:
                break
        elif (
            node_indent == indent
            and sibling is None
            and not isinstance(node, t.Suite)
            and isinstance(node.parent, t.Module | t.Suite | t.IfStatement | t.TryStatement)
        ):
            sibling = node
        node = node.parent
    kind = owner[0] if owner is not None else "top"
    if kind in ("agent", "session", "permissions"):
        assert owner is not None
        _property_names(cursor, kind, owner[1], items)
        return
    if kind == "choice":
        items.add("option", "keyword", "an option of the choice", group=1)
        items.add(
            'option "label":',
            "snippet",
            "option with a body",
            insert='option "${1:label}":\n  $0',
            snippet=True,
            group=2,
        )
        return
    _clauses(cursor, sibling, items)
    top = kind == "top"
    for word, detail in _STATEMENT_KEYWORDS.items():
        if top or word not in _TOP_LEVEL_ONLY:
            items.add(word, "keyword", detail, group=1)
    for label, body, detail, top_only in _SNIPPETS:
        if top or not top_only:
            items.add(label, "snippet", detail, insert=body, snippet=True, group=2)
    _programs(cursor, items, group=3)
    # Reassigning a `let` is a statement too.
    for symbol in visible_symbols(cursor, cursor.word):
        if symbol.kind is Kind.LET:
            _variable_item(cursor, symbol, items, group=4)


def _clauses(cursor: Cursor, sibling: Any, items: _Items) -> None:
    """``elif``/``else`` after an ``if`` body, ``catch``/``finally`` after a ``try`` body."""
    if isinstance(sibling, t.ElifClause | t.ElseClause):
        sibling = sibling.parent
    if isinstance(sibling, t.CatchClause | t.FinallyClause):
        sibling = sibling.parent
    target = cursor.target
    if isinstance(sibling, t.IfStatement):
        other = sibling.else_clause
        if other is None or other.start_pos > target:
            items.add("elif", "keyword", "another condition", group=0)
        if other is None:
            items.add("else", "keyword", "when no condition holds", group=0)
    elif isinstance(sibling, t.TryStatement):
        final = sibling.finally_clause
        if not sibling.catch_clauses() and (final is None or final.start_pos > target):
            items.add("catch", "keyword", "handle a failure of the try body", group=0)
        if final is None:
            items.add("finally", "keyword", "run whether or not the body failed", group=0)


def _property_names(cursor: Cursor, kind: str, owner: Any, items: _Items) -> None:
    if kind == "agent":
        names, detail = AGENT_PROPERTIES, "agent property"
    elif kind == "session":
        names, detail = SESSION_PROPERTIES, "session property"
    else:
        names, detail = PERMISSIONS, "permission"
    block = owner.block if isinstance(owner, t.Property) else owner.property_block
    present = set()
    if block is not None:
        for prop in block.properties():
            if prop.start_pos[0] - 1 != cursor.line:
                present.add(prop.name)
    # Only the name when the line already has its colon (`mo|del: opus`).
    has_colon = cursor.text[cursor.word_end :].lstrip().startswith(":")
    for name in names:
        if name in present:
            continue
        if has_colon:
            items.add(name, "property", detail, _PROPERTY_DOCS.get(name, ""), group=0)
        else:
            items.add(
                name,
                "property",
                detail,
                _PROPERTY_DOCS.get(name, ""),
                insert=_PROPERTY_SNIPPETS.get(name, f"{name}: $1"),
                snippet=True,
                group=0,
            )


# --------------------------------------------------------------------------- after tokens


def _after_colon(cursor: Cursor, items: _Items) -> None:
    tokens = cursor.tokens
    if len(tokens) < 2:
        return
    before = tokens[-2]
    if before.value in ("session", "resume") and not isinstance(before, t.String):
        _agents(cursor, items, resume=before.value == "resume")
        return
    if len(tokens) >= 3 and tokens[-3].value == "session" and isinstance(before, t.Name):
        _agents(cursor, items, resume=False)  # `session name: agent`
        return
    if len(tokens) == 2 and isinstance(before, t.Name) and before.value not in RESERVED_WORDS:
        _property_value(cursor, before.value, items)


def _property_value(cursor: Cursor, name: str, items: _Items) -> None:
    if name == "context":
        _variables(cursor, items, group=1)
        return
    for value in _VALUES.get(name, ()):
        items.add(value, "value", name, _VALUE_DOCS.get(value, ""), group=0)


def _expression(cursor: Cursor, items: _Items) -> None:
    """A value after ``=``: a variable (a pipeline's source), a call, a session..."""
    _variables(cursor, items, group=1)
    _programs(cursor, items, group=2)
    for word in _EXPRESSION_KEYWORDS:
        items.add(word, "keyword", _STATEMENT_KEYWORDS[word], group=3)
    for label in _EXPRESSION_SNIPPETS:
        _snippet(items, label, 4)
    label, body, detail = _PIPELINE_SNIPPET
    items.add(label, "snippet", detail, insert=body, snippet=True, group=4)


def _snippet(items: _Items, label: str, group: int) -> None:
    for name, body, detail, _top in _SNIPPETS:
        if name == label:
            items.add(name, "snippet", detail, insert=body, snippet=True, group=group)


def _pipe_operations(items: _Items) -> None:
    docs = {
        "map": "transform each element (`item`)",
        "filter": "keep the elements (`item`) that pass",
        "pmap": "transform each element (`item`) in parallel",
        "reduce": "combine the elements into one result",
    }
    for op in PIPE_OPERATIONS:
        body = "reduce(${1:acc}, ${2:item}):\n  $0" if op == "reduce" else f"{op}:\n  $0"
        items.add(op, "keyword", docs[op], insert=body, snippet=True, group=0)


def _in_brackets(cursor: Cursor, index: int, items: _Items) -> None:
    tokens = cursor.tokens
    opener = tokens[index].value
    inner = tokens[index + 1 :]
    segment = segments(inner)[-1]
    before = tokens[index - 1] if index > 0 else None
    head = tokens[index - 2].value if index > 1 else None
    if opener == "(":
        if before is None:
            return
        name = before.value
        if name == "parallel":
            _parallel_modifiers(inner, segment, items)
        elif name == "loop" or isinstance(before, t.Discretion):
            if not segment and not any(tok.value == "max" for tok in inner):
                items.add("max:", "property", "the most iterations", insert="max: ", group=0)
        elif head == "do" and isinstance(before, t.Name):
            if not segment:
                _variables(cursor, items, group=1)
        elif head in ("block", "|") or name == "reduce":
            return  # naming parameters
        elif isinstance(before, t.Name) and name in cursor.analysis.model.programs:
            _program_arguments(cursor, name, inner, segment, items)
        return
    # `[` and `{`: arrays of variables, context lists, object context.
    if segment:
        return
    if opener == "{" and index == 1 and tokens[0].value in ("let", "const"):
        return  # destructuring: names being defined
    if (
        len(tokens) > 1
        and tokens[1].value == ":"
        and isinstance(tokens[0], t.Name)
        and tokens[0].value != "context"
    ):
        return  # `skills: [...]`, `read: [...]`
    listed = {tok.value for tok in inner if isinstance(tok, t.Name)}
    for symbol in visible_symbols(cursor, cursor.word):
        if symbol.name not in listed:
            _variable_item(cursor, symbol, items, group=1)


def _parallel_modifiers(inner: list[Any], segment: list[Any], items: _Items) -> None:
    if not segment:
        keys = {tok.value for tok in inner if isinstance(tok, t.Name)}
        has_strategy = any(
            (isinstance(tok, t.String) and tok.text in JOIN_STRATEGIES)
            or (isinstance(tok, t.Name) and tok.value in JOIN_STRATEGIES)
            for tok in inner
        )
        if not has_strategy:
            for strategy in JOIN_STRATEGIES:
                items.add(
                    f'"{strategy}"',
                    "value",
                    "join strategy",
                    _VALUE_DOCS[strategy],
                    group=0,
                )
        if "on-fail" not in keys:
            items.add(
                "on-fail:",
                "property",
                "what a failing branch does",
                "`fail-fast`, `continue` or `ignore`.",
                insert="on-fail: ",
                group=1,
            )
        if "count" not in keys:
            items.add(
                "count:",
                "property",
                'how many branches "any" waits for',
                insert="count: ",
                group=1,
            )
    elif len(segment) == 2 and segment[0].value == "on-fail" and segment[1].value == ":":
        for policy in ON_FAIL_POLICIES:
            items.add(f'"{policy}"', "value", "on-fail", _VALUE_DOCS[policy], group=0)


def _program_arguments(
    cursor: Cursor, alias: str, inner: list[Any], segment: list[Any], items: _Items
) -> None:
    if len(segment) == 2 and isinstance(segment[0], t.Name) and segment[1].value == ":":
        _variables(cursor, items, group=1)
        return
    if segment:
        return
    contract = program_contract(cursor.analysis, alias)
    if contract is None:
        return
    given = {
        tok.value
        for i, tok in enumerate(inner[:-1])
        if isinstance(tok, t.Name) and inner[i + 1].value == ":"
    }
    descriptions = input_descriptions(contract)
    for port in contract.inputs:
        if port.name in given:
            continue
        detail = f"input of {alias}" + ("" if port.required else " (optional)")
        items.add(
            f"{port.name}:",
            "input",
            detail,
            descriptions.get(port.name, ""),
            insert=f"{port.name}: ",
            group=0,
        )


def _outputs(cursor: Cursor, base: str, items: _Items) -> None:
    """After ``result.``: the outputs of the program call ``result`` holds."""
    symbol = next((s for s in visible_symbols(cursor) if s.name == base), None)
    if symbol is None or symbol.kind not in (Kind.LET, Kind.CONST, Kind.OUTPUT):
        return
    value = symbol.node.value
    if not isinstance(value, t.ProgramCall) or value.name is None:
        return
    contract = program_contract(cursor.analysis, value.name.value)
    if contract is None:
        return
    for port in contract.outputs:
        items.add(port.name, "variable", f"output of {value.name.value}", group=0)


# --------------------------------------------------------------------------- strings


_PARTIAL_NAME = re.compile(r"(?:[^\W\d][\w-]*)?")


def _in_string(cursor: Cursor, string: t.String, items: _Items) -> None:
    parent = string.parent
    one_line = string.start_pos[0] == string.end_pos[0]
    whole = Range(
        (string.start_pos[0] - 1, string.start_pos[1]),
        (string.end_pos[0] - 1, string.end_pos[1]),
    )
    if one_line and isinstance(parent, t.Arguments) and isinstance(parent.parent, t.Parallel):
        for strategy in JOIN_STRATEGIES:
            label = f'"{strategy}"'
            items.add(label, "value", "join strategy", _VALUE_DOCS[strategy], replace=whole)
        return
    if (
        one_line
        and isinstance(parent, t.KeywordArgument)
        and parent.name.value == "on-fail"
        and isinstance(parent.parent, t.Arguments)
        and isinstance(parent.parent.parent, t.Parallel)
    ):
        for policy in ON_FAIL_POLICIES:
            label = f'"{policy}"'
            items.add(label, "value", "on-fail", _VALUE_DOCS[policy], replace=whole)
        return
    if one_line and isinstance(parent, t.UseStatement) and parent.path is string:
        _use_paths(cursor, string, items)
        return
    # An interpolation being typed: `{` then part of a name, on the cursor's line.
    start = 0
    if string.start_pos[0] - 1 == cursor.line:
        start = string.start_pos[1] + string.quote_length
    text = cursor.text[start : cursor.character]
    brace = text.rfind("{")
    if brace < 0:
        return
    partial = text[brace + 1 :]
    backslashes = len(text[:brace]) - len(text[:brace].rstrip("\\"))
    if backslashes % 2:
        return  # `\{` is a literal brace
    if "." in partial:
        base, _, rest = partial.partition(".")
        if _PARTIAL_NAME.fullmatch(base) and _PARTIAL_NAME.fullmatch(rest):
            _outputs(cursor, base, items)
        return
    if not _PARTIAL_NAME.fullmatch(partial):
        return
    closed = cursor.text[cursor.word_end : cursor.word_end + 1] == "}"
    for symbol in visible_symbols(cursor, cursor.word):
        _variable_item(cursor, symbol, items, group=0, suffix="" if closed else "}")


# Enough for any real directory listing, few enough that a huge one stays quick.
_MAX_PATH_ITEMS = 200


def _use_paths(cursor: Cursor, string: t.String, items: _Items) -> None:
    """Local programs for `use "...`: the folders and `.prose` files beside the document
    (or in the folder typed so far), relative to it."""
    importer = cursor.analysis.path
    if importer is None:
        return  # unsaved: nothing to be relative to
    start = string.start_pos[1] + string.quote_length
    typed = cursor.text[start : cursor.character]
    if typed.startswith(("@", "http:", "https:")) or "\\" in typed:
        return
    folder_text, slash, name = typed.rpartition("/")
    folder = Path(folder_text).expanduser() if folder_text.startswith("~") else Path(folder_text)
    if not folder.is_absolute():
        folder = importer.parent / folder
    if slash and not folder_text:
        folder = Path("/")
    segment_start = start + len(typed) - len(name)
    segment_end = cursor.character
    while segment_end < len(cursor.text) and cursor.text[segment_end] not in '"/':
        segment_end += 1
    replace = Range((cursor.line, segment_start), (cursor.line, segment_end))
    try:
        entries = sorted(folder.iterdir(), key=lambda entry: entry.name)[: _MAX_PATH_ITEMS * 5]
    except OSError:
        return
    items.needle = name.lower()
    this_file = importer.resolve()
    count = 0
    for entry in entries:
        if entry.name.startswith(".") or count >= _MAX_PATH_ITEMS:
            continue
        try:
            is_dir = entry.is_dir()
            is_program = not is_dir and entry.suffix == ".prose" and entry.is_file()
        except OSError:
            continue
        if is_dir:
            items.add(entry.name + "/", "folder", "folder", replace=replace, group=1)
        elif is_program and entry.resolve() != this_file:
            items.add(entry.name, "file", "program", replace=replace, group=0)
        else:
            continue
        count += 1


# --------------------------------------------------------------------------- names


def _agents(cursor: Cursor, items: _Items, resume: bool) -> None:
    for name, definitions in cursor.analysis.model.agents.items():
        agent = definitions[0]
        model = agent.get_property("model")
        persist = agent.get_property("persist")
        detail = "agent"
        if model is not None and model.value is not None:
            detail += f" · {model.value.get_code(include_prefix=False)}"
        if persist is not None:
            detail += " · persistent"
        docs = [leading_comment(agent)]
        prompt = agent.get_property("prompt")
        if prompt is not None and isinstance(prompt.value, t.String):
            docs.append(_shorten(prompt.value.text, 300))
        # `resume:` needs a persistent agent: list those first.
        group = 0 if not resume or persist is not None else 1
        items.add(name, "agent", detail, "\n\n".join(d for d in docs if d), group=group)


def _blocks(cursor: Cursor, items: _Items) -> None:
    # Arguments already written after the word (`do rev|(x)`): insert only the name.
    has_arguments = cursor.text[cursor.word_end : cursor.word_end + 1] == "("
    for name, definitions in cursor.analysis.model.blocks.items():
        params = [p.value for p in definitions[0].parameters()]
        if params and not has_arguments:
            placeholders = ", ".join(
                f"${{{i}:{_escape_snippet(p)}}}" for i, p in enumerate(params, 1)
            )
            insert, snippet = f"{name}({placeholders})", True
        else:
            insert, snippet = name, False
        signature = f"block {name}({', '.join(params)})" if params else f"block {name}"
        items.add(
            name,
            "block",
            signature,
            leading_comment(definitions[0]),
            insert=insert,
            snippet=snippet,
            group=0,
        )


def _programs(cursor: Cursor, items: _Items, group: int) -> None:
    for alias, uses in cursor.analysis.model.programs.items():
        path = uses[0].path
        source = path.text if path is not None else ""
        items.add(alias, "program", f"program · {source}", group=group)


def _variables(cursor: Cursor, items: _Items, group: int) -> None:
    for symbol in visible_symbols(cursor, cursor.word):
        _variable_item(cursor, symbol, items, group)


def _variable_item(
    cursor: Cursor, symbol: Symbol, items: _Items, group: int, suffix: str = ""
) -> None:
    kind, detail, docs = _symbol_info(cursor.analysis, symbol)
    items.add(
        symbol.name,
        kind,
        detail,
        docs,
        insert=symbol.name + suffix if suffix else None,
        group=group,
    )


def _symbol_info(analysis: Analysis, symbol: Symbol) -> tuple[str, str, str]:
    """The kind, detail and documentation of a variable's items (cached per model)."""
    cache = _cache(analysis.model).symbols
    info = cache.get(id(symbol))
    if info is not None:
        return info
    kind = "parameter" if symbol.kind is Kind.PARAMETER else "variable"
    detail = symbol.kind.value
    summary = _summary(symbol)
    if summary:
        detail += f" · {summary}"
    docs = ""
    line = symbol.leaf.start_pos[0] - 1
    lines = analysis.lines
    if not symbol.implicit and 0 <= line < len(lines):
        docs = f"```prose\n{_shorten(lines[line].strip(), 200)}\n```"
    info = cache[id(symbol)] = (kind, detail, docs)
    return info


def _summary(symbol: Symbol) -> str:
    """What a variable holds, in a word or two."""
    node = symbol.node
    kind = symbol.kind
    if kind in (Kind.LET, Kind.CONST, Kind.OUTPUT, Kind.BRANCH):
        return _describe_value(node.value)
    if kind is Kind.INPUT:
        description = node.description
        return _shorten(description.text, 60) if isinstance(description, t.String) else ""
    if kind is Kind.PARAMETER:
        return f"block {node.name}" if node.name else ""
    if kind is Kind.PIPELINE:
        op = node.operation
        return str(op.value) if op is not None else ""
    if kind is Kind.ERROR:
        return "catch"
    if isinstance(node, t.ForEach):
        return "for"
    if isinstance(node, t.Repeat):
        return "repeat"
    if isinstance(node, t.Loop):
        return "loop"
    return ""


_VALUE_WORDS: tuple[tuple[type, str], ...] = (
    (t.Session, "session"),
    (t.Resume, "resume"),
    (t.DoBlock, "do"),
    (t.Parallel, "parallel"),
    (t.Repeat, "repeat"),
    (t.ForEach, "for"),
    (t.Loop, "loop"),
    (t.Pipeline, "pipeline"),
    (t.ArrowSequence, "sequence"),
    (t.String, "string"),
    (t.ArrayLiteral, "array"),
    (t.ObjectLiteral, "object"),
    (t.Number, "number"),
    (t.TryStatement, "try"),
)


def _describe_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, t.DoInvocation):
        return f"do {value.name.value}" if value.name is not None else "do"
    if isinstance(value, t.ProgramCall):
        return f"{value.name.value}(…)" if value.name is not None else "call"
    for cls, word in _VALUE_WORDS:
        if isinstance(value, cls):
            return word
    if isinstance(value, t.Name | t.Attribute):
        return str(value.get_code(include_prefix=False))
    return ""


def leading_comment(node: Any) -> str:
    """The comment lines right above a definition, without their ``#``."""
    lines = node.get_first_leaf().prefix.splitlines()
    comment: list[str] = []
    for line in reversed(lines):
        stripped = line.strip()
        if not stripped.startswith("#"):
            if stripped or comment:
                break
            continue
        comment.append(stripped[1:].strip())
    return "\n".join(reversed(comment))


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _escape_snippet(text: str) -> str:
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")
