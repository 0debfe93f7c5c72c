"""No editor feature keeps state in a module: every cache belongs to the analysis host
(``ide/caches.py``), reached through the analysis a feature is given.  A scan of the
sources of ``openprose/ide`` and of ``analysis/contracts.py`` finds module-level mutable
containers, ``global`` rebinding and memoising decorators; constant tables are allowed by
name."""

from __future__ import annotations

import ast
from collections.abc import Collection
from pathlib import Path

import openprose

PACKAGE = Path(openprose.__file__).resolve().parent
SCANNED = [*sorted((PACKAGE / "ide").rglob("*.py")), PACKAGE / "analysis" / "contracts.py"]

CONTAINERS = frozenset(
    (
        "dict",
        "set",
        "list",
        "OrderedDict",
        "defaultdict",
        "Counter",
        "deque",
        "WeakKeyDictionary",
        "WeakValueDictionary",
        "WeakSet",
    )
)
LITERALS = (ast.Dict, ast.Set, ast.List, ast.DictComp, ast.SetComp, ast.ListComp)
MEMOISERS = frozenset(("cache", "lru_cache"))
CACHE_WORDS = ("cache", "memo", "seen", "kept", "recent")

# Tables filled once at import and only read afterwards, by module (relative to the package).
CONSTANT_TABLES = {
    "ide/completion/items.py": {
        "_STATEMENT_DETAILS",
        "_PROPERTY_DOCS",
        "_PROPERTY_SNIPPETS",
        "_VALUE_DOCS",
        "_VALUES",
    },
    "ide/docs.py": {"KEYWORDS", "PROPERTIES", "VALUES"},
    "ide/fixes/registry.py": {"HANDLERS"},
    "ide/hover.py": {"_KINDS"},
    "ide/symbols.py": {"_HANDLERS"},
}


def _called_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def module_state(source: str, allowed: Collection[str] = ()) -> list[str]:
    """What in ``source`` keeps state at module level: ``name:line`` of each finding."""
    found: list[str] = []
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = node.value
            mutable = isinstance(value, LITERALS) or (
                isinstance(value, ast.Call) and _called_name(value) in CONTAINERS
            )
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                name = target.id if isinstance(target, ast.Name) else ast.unparse(target)
                if name == "__all__" or not mutable:
                    continue
                looks_cached = any(word in name.lower() for word in CACHE_WORDS)
                if looks_cached or name not in allowed:
                    found.append(f"{name}:{node.lineno}")
    for inner in ast.walk(tree):
        if isinstance(inner, ast.Global):
            found.extend(f"global {name}:{inner.lineno}" for name in inner.names)
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in inner.decorator_list:
                if _called_name(decorator) in MEMOISERS:
                    found.append(f"@{_called_name(decorator)} {inner.name}:{inner.lineno}")
    return found


def test_the_scan_finds_the_module_caches_there_used_to_be() -> None:
    source = (
        "import weakref\nimport functools\n"
        "_cache: dict[str, int] = {}\n"
        "_caches = weakref.WeakKeyDictionary()\n"
        "_FIX_ALL_CACHE = OrderedDict()\n"
        "_overlay = None\n"
        "def set_overlay(o):\n    global _overlay\n    _overlay = o\n"
        "@functools.lru_cache(maxsize=8)\ndef parsed(text): ...\n"
        "TABLE = {'a': 1}\n"
    )
    assert set(module_state(source, {"TABLE", "_FIX_ALL_CACHE"})) == {
        "_cache:3",
        "_caches:4",
        "_FIX_ALL_CACHE:5",
        "global _overlay:8",
        "@lru_cache parsed:11",
    }


def test_no_module_level_state_in_the_editor_features() -> None:
    assert len(SCANNED) > 30  # the package was found
    found = {
        str(path.relative_to(PACKAGE)): module_state(
            path.read_text(encoding="utf-8"),
            CONSTANT_TABLES.get(str(path.relative_to(PACKAGE)), set()),
        )
        for path in SCANNED
    }
    assert {module: names for module, names in found.items() if names} == {}


def test_every_allowed_table_still_exists() -> None:
    # An allowance outliving its table would let a new cache of that name in unnoticed.
    for module, names in CONSTANT_TABLES.items():
        tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
        assigned = {
            target.id
            for node in tree.body
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name)
        }
        assert names <= assigned, module
