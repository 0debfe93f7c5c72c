"""The registry (openprose.codes) says which module reports each code, and it is right: run
over the corpus, the examples of docs/diagnostics.md and a project whose programs import each
other, each module reports only codes it claims, and every code it claims at least once.

Diagnostics are told apart by who made them, the way the checker runs them: the parser's come
with the tree, each rule module of ``all_rules()`` appends to the context in turn, and the
suppression comments' own problems come from ``find_suppressions``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

from openprose.analysis import prepare
from openprose.analysis.rules import all_rules
from openprose.checking import check_text
from openprose.codes import CODES, PARSER, SUPPRESSIONS
from openprose.suppressions import find_suppressions
from openprose.syntax import parse
from tests.corpus import location

DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
_EXAMPLE = re.compile(r"^```prose\n(?P<body>.*?)^```$", re.M | re.S)

# What the examples of the docs do not show: a prompt too long to print (W003), and the
# unknown property of a loop's modifiers, which the control rules report (W005).
MORE = [
    'session "' + "x" * 10_001 + '"\n',
    'loop until **the draft is done** (limit: 3):\n  session "Improve the draft"\n',
]

# Programs that import each other, for the rules that need other files.
RESEARCH = 'input topic: "The subject"\ninput depth: "How deep"\noutput notes = session "{topic}"\n'
PROJECT = {
    "lib/research.prose": RESEARCH,
    "cycle/a.prose": 'use "./b.prose"\n',
    "cycle/b.prose": 'use "./a.prose"\n',
    "main.prose": (
        'use "./lib/research.prose" as research\n'
        'use "@acme/uncached"\n'
        'use "./missing.prose"\n'
        'let r = research(topic: "tides", tone: "dry")\n'
        'session "{r.summary}"\n'
    ),
}

Reports = dict[str, set[str]]


def reports(text: str, path: Path | None = None) -> Reports:
    """The codes each module reports for ``text`` (a file at ``path`` when given)."""
    module = parse(text)
    ctx = prepare(module, path)
    found: Reports = defaultdict(set)
    found[PARSER] |= {d.code for d in ctx.syntax_diagnostics()}
    for rule in all_rules():
        before = len(ctx.diagnostics)
        rule(ctx)
        found[rule.__module__] |= {d.code for d in ctx.diagnostics[before:]}
    found[SUPPRESSIONS] |= {d.code for d in find_suppressions(module).problems}
    # Every code the checker reports has a module that made it.
    made = set().union(*found.values())
    missing = {d.code for d in check_text(text, str(path) if path else None)} - made
    assert not missing, f"reported by no module: {missing} in {path or text!r}"
    return found


def examples() -> list[str]:
    return [m["body"] for m in _EXAMPLE.finditer(DOC.read_text(encoding="utf-8"))]


@cache
def programs(project: Path) -> list[tuple[str, Path | None]]:
    texts: list[tuple[str, Path | None]] = [(text, None) for text in [*examples(), *MORE]]
    for path in [*location.files(), *sorted(project.rglob("*.prose"))]:
        texts.append((path.read_text(encoding="utf-8"), path))
    return texts


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Reports:
    """The codes each module reported over every program."""
    project = tmp_path_factory.mktemp("project")
    for name, text in PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    total: Reports = defaultdict(set)
    for text, path in programs(project):
        for module, codes in reports(text, path).items():
            total[module] |= codes
    return total


def claimed() -> Reports:
    found: Reports = defaultdict(set)
    for entry in CODES.values():
        for module in entry.checked_by:
            found[module].add(entry.code)
    return found


def test_every_rule_module_is_in_the_registry() -> None:
    rule_modules = {rule.__module__ for rule in all_rules()}
    assert rule_modules | {PARSER, SUPPRESSIONS} == set(claimed())


@pytest.mark.parametrize("module", sorted(claimed()))
def test_a_module_reports_only_codes_it_claims(reported: Reports, module: str) -> None:
    assert reported[module] - claimed()[module] == set()


def test_no_other_module_reports_anything(reported: Reports) -> None:
    assert {module for module, codes in reported.items() if codes} <= set(claimed())


@pytest.mark.parametrize(
    ("code", "module"),
    sorted((entry.code, module) for entry in CODES.values() for module in entry.checked_by),
)
def test_a_module_reports_every_code_it_claims(reported: Reports, code: str, module: str) -> None:
    assert code in reported[module]


def test_syntax_codes_are_the_parsers() -> None:
    assert {c for c, entry in CODES.items() if entry.syntax} == claimed()[PARSER]
