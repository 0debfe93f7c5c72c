"""docs/diagnostics.md documents every code in the registry, and its examples are true.

Each code has a section ``### CODE: Title`` with a ``Default severity: ...`` line, a
``**Bad:**`` example and a ``**Fixed:**`` example.  The examples are run through the checker:
the fixed one must check clean, and the bad one must report the code (for rules the page marks
as planned or cross-file, it must at least be free of syntax errors, and once the rule is
implemented, or fires from the text alone, the page must stop calling it so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from openprose.codes import CODES
from openprose.diagnostics import Severity

DOC = Path(__file__).resolve().parents[1] / "docs" / "diagnostics.md"
PLANNED = "analyzer (planned)"
# Rules that need other files or on-disk state (imported programs, the import cache, saved
# agent memory): a text checked without a path cannot trigger them.  They are exercised end
# to end in tests/analysis/test_contracts.py and tests/analysis/test_properties_rules.py.
CROSS_FILE = "analyzer (cross-file)"
# W003's bad example stands for a prompt too long to print: pad it past 10,000 characters.
LONG_PROMPT = {"W003": "Check each heading against the style guide and note any mismatch.\n" * 160}

_SECTION = re.compile(r"^### (?P<code>[EWI]\d{3}): (?P<title>.+)$", re.MULTILINE)
_META = re.compile(r"^Default severity: (?P<severity>\w+)\. Checked by: (?P<by>.+)\.$", re.M)
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


@pytest.mark.parametrize("code", sorted(CODES))
def test_section_title_and_severity_match_the_registry(code: str) -> None:
    section = SECTIONS[code]
    assert section.title == CODES[code].title
    meta = _META.search(section.body)
    assert meta, f"{code}: missing 'Default severity: ... Checked by: ...' line"
    assert meta["severity"] == CODES[code].severity.label


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
    meta = _META.search(SECTIONS[code].body)
    by = meta["by"] if meta is not None else None
    if by in (PLANNED, CROSS_FILE):
        assert code not in reported, f"{code} is reported from the text alone: say `analyzer`"
        syntax_errors = [d for d in syntax_diagnostics(parse(bad)) if d.severity is Severity.ERROR]
        assert syntax_errors == [], f"{code}: the bad example should be a semantic problem"
    else:
        assert code in reported, f"{code}: the bad example does not report {code}"
