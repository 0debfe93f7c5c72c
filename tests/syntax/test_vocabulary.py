"""The language's words are defined once, in ``openprose.syntax.vocabulary``: the parser, the
analyzer, the formatter, completion, hover, the quick fixes and the VM use those very lists,
and no other module of the package spells one out again."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from openprose.analysis.rules import control, names, properties
from openprose.format import printer
from openprose.ide import docs, rename
from openprose.ide.completion import context, items
from openprose.ide.fixes import invalid_model, undefined_variable, unknown_property
from openprose.syntax import vocabulary as v
from openprose.syntax.parser import expressions, statements
from openprose.vm import interpreter

PACKAGE = Path(v.__file__).parent.parent


@pytest.mark.parametrize(
    ("user", "name"),
    [
        (expressions, "PIPE_OPERATIONS"),
        (items, "PIPE_OPERATIONS"),
        (items, "MODELS"),
        (items, "PERSIST_VALUES"),
        (items, "BACKOFFS"),
        (items, "PERMISSION_ACCESS"),
        (items, "ACCESS_PERMISSIONS"),
        (context, "STATEMENT_KEYWORDS"),
        (context, "EXPRESSION_KEYWORDS"),
        (context, "TOP_LEVEL_KEYWORDS"),
        (context, "RESERVED_WORDS"),
        (context, "AGENT_PROPERTIES"),
        (context, "SESSION_PROPERTIES"),
        (context, "PERMISSIONS"),
        (context, "JOIN_STRATEGIES"),
        (context, "ON_FAIL_POLICIES"),
        (properties, "MODELS"),
        (properties, "BACKOFFS"),
        (properties, "PERSIST_VALUES"),
        (properties, "PERMISSIONS"),
        (properties, "PATTERN_PERMISSIONS"),
        (properties, "ACCESS_PERMISSIONS"),
        (properties, "PERMISSION_ACCESS"),
        (properties, "AGENT_PROPERTIES"),
        (properties, "SESSION_PROPERTIES"),
        (control, "JOIN_STRATEGIES"),
        (control, "ON_FAIL_POLICIES"),
        (names, "RESERVED_WORDS"),
        (rename, "RESERVED_WORDS"),
        (undefined_variable, "RESERVED_WORDS"),
        (invalid_model, "MODELS"),
        (unknown_property, "AGENT_PROPERTIES"),
        (unknown_property, "SESSION_PROPERTIES"),
        (unknown_property, "LOOP_MODIFIERS"),
        (unknown_property, "PARALLEL_MODIFIERS"),
        (docs, "UNSUPPORTED_STATEMENTS"),
        (interpreter, "JOIN_STRATEGIES"),
        (interpreter, "ON_FAIL_POLICIES"),
        (interpreter, "SESSION_PROPERTIES"),
    ],
)
def test_users_hold_the_vocabularys_own_list(user: object, name: str) -> None:
    assert getattr(user, name) is getattr(v, name)


def test_completion_offers_each_property_the_values_the_analyzer_accepts() -> None:
    assert items._VALUES == {
        "model": v.MODELS,
        "persist": v.PERSIST_VALUES,
        "backoff": v.BACKOFFS,
        "bash": v.PERMISSION_ACCESS,
        "network": v.PERMISSION_ACCESS,
    }
    assert items._VALUES["model"] is v.MODELS


def test_snippet_choices_list_the_vocabulary_in_order() -> None:
    assert items._PROPERTY_SNIPPETS["model"] == "model: ${1|sonnet,opus,haiku|}"
    assert items._PROPERTY_SNIPPETS["network"] == "network: ${1|allow,deny,prompt|}"
    agent = next(body for label, body, _, _ in items._SNIPPETS if label == "agent name:")
    assert "${2|sonnet,opus,haiku|}" in agent


def test_every_statement_keyword_has_a_completion_detail_and_nothing_else_has() -> None:
    assert set(items._STATEMENT_DETAILS) == set(v.STATEMENT_KEYWORDS)


def test_the_parser_dispatches_exactly_the_vocabularys_statement_words() -> None:
    expression_only = set(v.EXPRESSION_KEYWORDS)
    assert set(statements._STATEMENTS) == (
        set(v.STATEMENT_KEYWORDS) - expression_only
        | set(v.LEGACY_STATEMENT_KEYWORDS)
        | set(v.CLAUSE_KEYWORDS)
        | set(v.UNSUPPORTED_STATEMENTS)
    )
    # `try` is a statement that is also a value (`x = try: ...`); completion offers it
    # only as a statement.
    assert set(expressions.EXPRESSIONS) == expression_only | {"try"}
    assert set(statements.UNSUPPORTED_HINTS) == set(v.UNSUPPORTED_STATEMENTS)


def test_the_reserved_words_are_the_statement_and_clause_keywords_but_the_soft_ones() -> None:
    soft = {"use", "input", "output"}  # usable as names: keywords only at a statement start
    assert (set(v.STATEMENT_KEYWORDS) - soft) | set(v.CLAUSE_KEYWORDS) == v.RESERVED_WORDS


def test_the_formatter_spaces_the_pipe_operations_like_calls() -> None:
    assert frozenset(v.PIPE_OPERATIONS) == printer._CALL_LIKE_KEYWORDS


def test_hover_documents_every_keyword_property_and_modifier() -> None:
    keywords = (
        v.STATEMENT_KEYWORDS
        + v.LEGACY_STATEMENT_KEYWORDS
        + v.CLAUSE_KEYWORDS
        + v.UNSUPPORTED_STATEMENTS
        + v.PIPE_OPERATIONS
    )
    assert [w for w in keywords if w not in docs.KEYWORDS] == []
    named = (
        v.AGENT_PROPERTIES
        + v.SESSION_PROPERTIES
        + v.PERMISSIONS
        + v.PARALLEL_MODIFIERS
        + v.LOOP_MODIFIERS
    )
    assert [w for w in named if w not in docs.PROPERTIES] == []
    documented = v.AGENT_PROPERTIES + v.SESSION_PROPERTIES + v.PERMISSIONS
    assert [w for w in documented if w not in items._PROPERTY_DOCS] == []


def test_hover_explains_every_value_of_the_vocabulary_and_no_other() -> None:
    lists = {
        "model": v.MODELS,
        "persist": v.PERSIST_VALUES,
        "backoff": v.BACKOFFS,
        "bash": v.PERMISSION_ACCESS,
        "network": v.PERMISSION_ACCESS,
    }
    assert set(docs.VALUES) == set(lists)
    for prop, meanings in docs.VALUES.items():
        assert set(meanings) == set(lists[prop]), prop
    value_docs = (
        v.MODELS
        + v.PERSIST_VALUES
        + v.BACKOFFS
        + v.PERMISSION_ACCESS
        + v.JOIN_STRATEGIES
        + v.ON_FAIL_POLICIES
    )
    assert set(items._VALUE_DOCS) == set(value_docs)


# Lists whose every word is a word of the language; a literal made of two or more of one
# list's words, outside the vocabulary, spells part of it out again.
_VALUE_LISTS = (
    "PIPE_OPERATIONS",
    "MODELS",
    "PERSIST_VALUES",
    "BACKOFFS",
    "PERMISSIONS",
    "PERMISSION_ACCESS",
    "JOIN_STRATEGIES",
    "ON_FAIL_POLICIES",
    "AGENT_PROPERTIES",
    "SESSION_PROPERTIES",
    "PARALLEL_MODIFIERS",
)
# Keywords are also the names of other things (symbol kinds, grammar pairs such as
# `elif`/`else`): only a literal holding a whole keyword list is a second definition.
_KEYWORD_LISTS = (
    "STATEMENT_KEYWORDS",
    "EXPRESSION_KEYWORDS",
    "TOP_LEVEL_KEYWORDS",
    "CLAUSE_KEYWORDS",
    "UNSUPPORTED_STATEMENTS",
    "RESERVED_WORDS",
)
# (module, words): literals that name a few words for a reason of their own.
_ALLOWED = {
    # W013: the two session properties that an agent definition cannot take.
    ("analysis/rules/properties.py", frozenset({"retry", "backoff"})),
    # Where memory is kept on disk: `persist: true` keeps none past the run.
    ("cli/state.py", frozenset({"project", "user"})),
    ("vm/state/control_types.py", frozenset({"project", "user"})),
    # The access values that grant a tool call (everything else denies it).
    ("vm/backends/claude_code_rules.py", frozenset({"allow", "prompt"})),
}


def _string_literals(path: Path) -> list[tuple[int, frozenset[str]]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Tuple | ast.List | ast.Set) or len(node.elts) < 2:
            continue
        words = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        strings = [w for w in words if isinstance(w, str)]
        if len(strings) == len(node.elts):
            found.append((node.lineno, frozenset(strings)))
    return found


def test_no_module_but_the_vocabulary_spells_out_its_lists() -> None:
    vocabulary = Path(v.__file__)
    repeated = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == vocabulary:
            continue
        module = path.relative_to(PACKAGE).as_posix()
        for line, words in _string_literals(path):
            if (module, words) in _ALLOWED:
                continue
            for name in _VALUE_LISTS:
                if words <= set(getattr(v, name)):
                    repeated.append(f"{module}:{line}: {sorted(words)} from {name}")
            for name in _KEYWORD_LISTS:
                if words == set(getattr(v, name)):
                    repeated.append(f"{module}:{line}: {sorted(words)} is {name}")
    assert repeated == []


def test_the_scan_finds_a_list_spelled_out_again(tmp_path: Path) -> None:
    copy = tmp_path / "copy.py"
    copy.write_text('JOINS = ("all", "first", "any")\nKINDS = ["agent", "value"]\n')
    assert _string_literals(copy) == [
        (1, frozenset({"all", "first", "any"})),
        (2, frozenset({"agent", "value"})),
    ]
