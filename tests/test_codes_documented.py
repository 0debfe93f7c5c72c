"""docs/diagnostics.md documents every code in the registry, and its examples are true.

Each code has a section ``### CODE: Title`` with a ``Default severity: ... Rule: ...`` line,
a ``Checked by: ...`` line naming (and linking to) the modules that report it, a ``**Bad:**``
example and a ``**Fixed:**`` example, all agreeing with codes.py.  The examples are run through
the checker: the fixed one must check clean, and the bad one must report the code (for rules
the page marks as cross-file, it must at least be free of syntax errors, and once the rule
fires from the text alone, the page must stop calling it so).
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from openprose.codes import CODES
from openprose.diagnostics import Severity

DOC = Path(__file__).resolve().parents[1] / "docs" / "diagnostics.md"
# W003's bad example stands for a prompt too long to print: pad it past 10,000 characters.
LONG_PROMPT = {"W003": "Check each heading against the style guide and note any mismatch.\n" * 160}

_SECTION = re.compile(r"^### (?P<code>[EWI]\d{3}): (?P<title>.+)$", re.MULTILINE)
# "(cross-file)" marks rules that need other files or on-disk state (imported programs, the
# import cache, saved agent memory): a text checked without a path cannot trigger them.  They
# are exercised end to end in tests/analysis/test_contracts.py and test_agent_memory_rules.py.
_META = re.compile(
    r"^Default severity: (?P<severity>\w+)\. Rule: `(?P<name>[^`]+)`\.\n"
    r"Checked by: (?P<by>.+?)(?P<cross_file> \(cross-file\))?\.$",
    re.M,
)
_MODULE = re.compile(r"\[`(?P<module>[\w.]+)`\]\((?P<target>[^)]+)\)")
_EXAMPLE = re.compile(r"^\*\*(?P<kind>Bad|Fixed):\*\*\n\n```prose\n(?P<body>.*?)^```$", re.M | re.S)


@dataclass(frozen=True)
class Section:
    code: str
    title: str
    body: str


def sections() -> dict[str, Section]:
    text = DOC.read_text(encoding="utf-8")
    matches = list(_SECTION.finditer(text))
    found: dict[str, Section] = {}
    for match, following in zip(matches, [*matches[1:], None], strict=True):
        end = following.start() if following else len(text)
        code = match["code"]
        assert code not in found, f"{code} is documented twice"
        found[code] = Section(code, match["title"], text[match.end() : end])
    return found


SECTIONS = sections()


def test_every_registered_code_is_documented_and_nothing_else() -> None:
    assert sorted(SECTIONS) == sorted(CODES)


def meta(code: str) -> re.Match[str]:
    found = _META.search(SECTIONS[code].body)
    assert found, f"{code}: missing 'Default severity: ... Rule: ...' and 'Checked by: ...' lines"
    return found


@pytest.mark.parametrize("code", sorted(CODES))
def test_section_title_severity_and_rule_name_match_the_registry(code: str) -> None:
    assert SECTIONS[code].title == CODES[code].title
    assert meta(code)["severity"] == CODES[code].severity.label
    assert meta(code)["name"] == CODES[code].name


def test_rule_names_are_distinct_kebab_case_words() -> None:
    names = [entry.name for entry in CODES.values()]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)*", name) for name in names), names


def source_of(module: str) -> Path:
    """The file of a module, or the directory of a package."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, f"{module} is not a module"
    origin = Path(spec.origin)
    return origin.parent if origin.name == "__init__.py" else origin


@pytest.mark.parametrize("code", sorted(CODES))
def test_checked_by_names_and_links_the_modules_of_the_registry(code: str) -> None:
    links = list(_MODULE.finditer(meta(code)["by"]))
    assert ", ".join(m[0] for m in links) == meta(code)["by"], f"{code}: one link per module"
    assert tuple(m["module"] for m in links) == CODES[code].checked_by
    for link in links:
        target = (DOC.parent / link["target"]).resolve()
        assert target == source_of(link["module"]), f"{code}: {link['target']} is not the module"


def examples(code: str) -> dict[str, str]:
    found = {m["kind"]: m["body"] for m in _EXAMPLE.finditer(SECTIONS[code].body)}
    assert set(found) == {"Bad", "Fixed"}, f"{code}: needs one Bad and one Fixed example"
    return found


@pytest.mark.parametrize("code", sorted(CODES))
def test_examples_show_the_problem_and_the_fix(code: str) -> None:
    from openprose.checking import check_text
    from openprose.syntax import parse, syntax_diagnostics

    bad, fixed = examples(code)["Bad"], examples(code)["Fixed"]
    assert check_text(fixed) == [], f"{code}: the fixed example is not clean"

    if code in LONG_PROMPT:
        bad = bad.replace('"""\n', '"""\n' + LONG_PROMPT[code], 1)
    reported = {d.code for d in check_text(bad)}
    if meta(code)["cross_file"]:
        assert code not in reported, f"{code} is reported from the text alone: not cross-file"
        syntax_errors = [d for d in syntax_diagnostics(parse(bad)) if d.severity is Severity.ERROR]
        assert syntax_errors == [], f"{code}: the bad example should be a semantic problem"
    else:
        assert code in reported, f"{code}: the bad example does not report {code}"
