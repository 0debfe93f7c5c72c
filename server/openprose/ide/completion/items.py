"""The completion items: the collector that keeps one item per label, the language's
keywords, snippets, properties and their values, and the names a program defines (agents,
blocks, imported programs, variables) with their details and documentation."""

from __future__ import annotations

from typing import Any

from openprose.analysis.model import Kind, Symbol
from openprose.ide.analysis import Analysis
from openprose.ide.completion.cursor import Cursor
from openprose.ide.completion.scopes import matches, model_data, visible_symbols
from openprose.ide.types import CompletionItem, CompletionKind, Range
from openprose.syntax import tree as t
from openprose.syntax.vocabulary import (
    ACCESS_PERMISSIONS,
    BACKOFFS,
    MODELS,
    PERMISSION_ACCESS,
    PERSIST_VALUES,
    PIPE_OPERATIONS,
)


def _choice(tab: int, words: tuple[str, ...]) -> str:
    """A snippet placeholder offering the words in order: ``${1|a,b|}``."""
    return f"${{{tab}|{','.join(words)}|}}"


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
        kind: CompletionKind,
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


# The detail shown for each of vocabulary.STATEMENT_KEYWORDS.
_STATEMENT_DETAILS: dict[str, str] = {
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


# (label, body, detail, top level only)
_SNIPPETS: tuple[tuple[str, str, str, bool], ...] = (
    (
        "agent name:",
        f'agent ${{1:name}}:\n  model: {_choice(2, MODELS)}\n  prompt: "$3"\n$0',
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
    "model": f"model: {_choice(1, MODELS)}",
    "prompt": 'prompt: "$1"',
    "persist": f"persist: {_choice(1, PERSIST_VALUES)}",
    "skills": 'skills: ["$1"]',
    "permissions": "permissions:\n  $0",
    "context": "context: $1",
    "retry": "retry: ${1:3}",
    "backoff": f"backoff: {_choice(1, BACKOFFS)}",
    "read": 'read: ["${1:*}"]',
    "write": 'write: ["${1:*}"]',
    "execute": 'execute: ["${1:*}"]',
    **{name: f"{name}: {_choice(1, PERMISSION_ACCESS)}" for name in ACCESS_PERMISSIONS},
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
    **{name: PERMISSION_ACCESS for name in ACCESS_PERMISSIONS},
}


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


def _symbol_info(analysis: Analysis, symbol: Symbol) -> tuple[CompletionKind, str, str]:
    """The kind, detail and documentation of a variable's items (cached per model)."""
    cache = model_data(analysis).symbols
    info = cache.get(id(symbol))
    if info is not None:
        return info
    kind: CompletionKind = "parameter" if symbol.kind is Kind.PARAMETER else "variable"
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
