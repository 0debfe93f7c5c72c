"""Use statements, inputs and program invocation, one file at a time: every rule with a
program that breaks it (exact range) and one that does not (no diagnostic at all).

The programs live in a temporary project whose `.prose/imports/` cache holds the registry
programs they import, so that even the good programs get no "not verified offline" note.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprose.analysis.rules import imports
from openprose.analysis.rules.control import terminated, text_of
from openprose.checking import check_text
from openprose.diagnostics import Diagnostic, Severity
from openprose.syntax import tree as t

RESEARCH = """\
input topic: "The subject to research"
input depth: "How deep to go"
let notes = session "Research {topic} to {depth} depth"
output findings = session "Summarise the research"
  context: notes
output sources = session "List the sources"
  context: notes
"""
SUMMARISE = """\
input text: "What to summarise"
output summary = session "Summarise {text}"
"""


@pytest.fixture
def main(tmp_path: Path) -> Path:
    """The path of a program in a project caching @acme/research, @beta/research and
    @acme/summarise, next to a local program `helper.prose`."""
    cache = tmp_path / ".prose" / "imports"
    for directory, text in (
        ("acme--research", RESEARCH),
        ("beta--research", RESEARCH),
        ("acme--summarise", SUMMARISE),
    ):
        (cache / directory).mkdir(parents=True)
        (cache / directory / "program.prose").write_text(text, encoding="utf-8")
    (tmp_path / "helper.prose").write_text(SUMMARISE, encoding="utf-8")
    return tmp_path / "main.prose"


def diagnostics(text: str, path: Path) -> list[Diagnostic]:
    return check_text(text, str(path))


def only(text: str, code: str, path: Path) -> Diagnostic:
    found = [d for d in diagnostics(text, path) if d.code == code]
    assert len(found) == 1, diagnostics(text, path)
    return found[0]


def where(d: Diagnostic) -> tuple[tuple[int, int], tuple[int, int]]:
    return d.start, d.end


BAD = {
    # code: (program, start, end)
    "E010": ('use "@acme/summarise"\nuse "@acme/summarise"\n', (2, 4), (2, 21)),
    "E011": ('use "" as summarise\n', (1, 4), (1, 6)),
    "E012": ('use "summarise tool"\n', (1, 4), (1, 20)),
    "W006": ('use "github:acme/summarise"\n', (1, 4), (1, 27)),
    "E046": ('use "@acme/research"\nuse "@beta/research"\n', (2, 4), (2, 20)),
    "W012": ('input topic: ""\nsession "Research {topic}"\n', (1, 13), (1, 15)),
    "E022": (
        'block gather:\n  input topic: "The subject"\n  session "Research {topic}"\ndo gather\n',
        (2, 2),
        (2, 13),
    ),
    "E025": ('let report = research(topic: "tidal power")\n', (1, 13), (1, 21)),
    "I001": ('use "@acme/unknown"\n', (1, 4), (1, 19)),
}

GOOD = {
    "E010": 'use "@acme/summarise"\nlet s = summarise(text: "the minutes")\n',
    "E011": 'use "@acme/summarise" as summarise\nlet s = summarise(text: "the minutes")\n',
    "E012": 'use "@acme/summarise"\n',
    "W006": 'use "@acme/summarise"\n',
    "E046": 'use "@acme/research"\nuse "@beta/research" as beta_research\n',
    "W012": 'input topic: "The subject"\nsession "Research {topic}"\n',
    "E022": (
        'input topic: "The subject"\nblock gather(subject):\n  session "Research {subject}"\n'
        "do gather(topic)\n"
    ),
    "E025": (
        'use "@acme/research" as research\n'
        'let report = research(topic: "tidal power", depth: "brief")\n'
    ),
    "I001": 'use "@acme/research"\n',
}


@pytest.mark.parametrize("code", sorted(BAD))
def test_bad_program_reports_the_code_at_the_exact_range(code: str, main: Path) -> None:
    text, start, end = BAD[code]
    assert where(only(text, code, main)) == (start, end)


@pytest.mark.parametrize("code", sorted(GOOD))
def test_good_program_is_clean(code: str, main: Path) -> None:
    assert diagnostics(GOOD[code], main) == []


def test_severities(main: Path) -> None:
    assert only(*BAD["W006"][:1], "W006", main).severity is Severity.WARNING
    assert only(*BAD["W012"][:1], "W012", main).severity is Severity.WARNING
    assert only(*BAD["I001"][:1], "I001", main).severity is Severity.INFORMATION
    assert only(*BAD["E012"][:1], "E012", main).severity is Severity.ERROR


# --------------------------------------------------------------------------- use paths


@pytest.mark.parametrize(
    "path",
    ["@acme", "@acme/", "@/research", "@acme/research/extra", "@ac me/research", "a/b/c", "@./x"],
)
def test_invalid_paths(path: str, main: Path) -> None:
    d = only(f'use "{path}"\n', "E012", main)
    assert where(d) == ((1, 4), (1, 6 + len(path)))


def test_invalid_path_message_explains_both_forms(main: Path) -> None:
    message = only('use "summarise tool"\n', "E012", main).message
    assert "`@handle/slug`" in message and "`./name.prose`" in message


def test_surrounding_spaces_are_invalid(main: Path) -> None:
    only('use " @acme/research"\n', "E012", main)


def test_whitespace_only_path_is_empty(main: Path) -> None:
    assert where(only('use "   "\n', "E011", main)) == ((1, 4), (1, 9))


@pytest.mark.parametrize("path", ["npm:summarise", "git+ssh://host/x.prose", "file:x.prose"])
def test_other_schemes_are_unknown_formats(path: str, main: Path) -> None:
    d = only(f'use "{path}"\n', "W006", main)
    assert d.message.startswith("unknown import source format")


def test_registry_shorthand_without_at_is_a_registry_path(main: Path) -> None:
    # prose.md: `use "alice/research"` is the registry shorthand of `@alice/research`.
    assert diagnostics('use "acme/research"\n', main) == []


@pytest.mark.parametrize("path", ["./helper.prose", "helper.prose", "./helper", "helper"])
def test_local_paths_are_accepted(path: str, main: Path) -> None:
    assert diagnostics(f'use "{path}" as h\nlet s = h(text: "notes")\n', main) == []


def test_url_is_known_but_not_verified(main: Path) -> None:
    found = diagnostics('use "https://example.com/research.prose"\n', main)
    assert [(d.code, where(d)) for d in found] == [("I001", ((1, 4), (1, 40)))]
    assert "not fetched by URL" in found[0].message


def test_no_path_means_no_cross_file_checks() -> None:
    # Unsaved text: no loader, so no verdict on what the imports hold.
    assert check_text('use "@acme/unknown"\nuse "./missing.prose"\n') == []


def test_legacy_import_source(main: Path) -> None:
    bad = 'import "web-search" from "gitlab:acme/skills"\n'
    assert where(only(bad, "W006", main)) == ((1, 25), (1, 45))
    for source in ("github:acme/skills", "npm:@acme/skills", "./skills/web-search"):
        text = f'import "web-search" from "{source}"\n'
        assert [d.code for d in diagnostics(text, main) if d.code == "W006"] == []


# --------------------------------------------------------------------------- duplicates


def test_duplicate_points_at_the_first(main: Path) -> None:
    d = only(BAD["E010"][0], "E010", main)
    assert d.message == "program `@acme/summarise` is already imported"
    assert [(r.message, r.start, r.end) for r in d.related] == [
        ("first imported here", (1, 4), (1, 21))
    ]


def test_duplicate_written_two_ways(main: Path) -> None:
    text = 'use "@acme/research"\nuse "acme/research" as r\n'
    assert where(only(text, "E010", main)) == ((2, 4), (2, 19))


def test_duplicate_local_file_written_two_ways(main: Path) -> None:
    text = 'use "./helper.prose"\nuse "helper" as h\n'
    assert where(only(text, "E010", main)) == ((2, 4), (2, 12))


def test_same_slug_from_two_handles(main: Path) -> None:
    d = only(BAD["E046"][0], "E046", main)
    assert d.message.startswith("alias required when importing multiple programs named `research`")
    assert [(r.start, r.end) for r in d.related] == [((1, 4), (1, 20))]
    assert [x.code for x in diagnostics(BAD["E046"][0], main)] == ["E046"]


def test_two_programs_under_one_alias(main: Path) -> None:
    text = 'use "@acme/research" as r\nuse "@beta/research" as r\n'
    d = only(text, "E046", main)
    assert where(d) == ((2, 24), (2, 25))
    assert "give this import another alias" in d.message


# --------------------------------------------------------------------------- inputs


def test_empty_description_message(main: Path) -> None:
    d = only(BAD["W012"][0], "W012", main)
    assert d.message.startswith("input `topic` has an empty description")


def test_whitespace_description_is_empty(main: Path) -> None:
    assert where(only('input topic: "  "\n', "W012", main)) == ((1, 13), (1, 17))


def test_input_inside_a_block_message(main: Path) -> None:
    d = only(BAD["E022"][0], "E022", main)
    assert d.message.startswith("inputs must be declared at the top of the program")
    assert "`block gather(topic)`" in d.message


def test_input_deep_inside_a_block(main: Path) -> None:
    text = (
        "block gather:\n"
        "  if **the topic is unclear**:\n"
        '    input topic: "The subject"\n'
        '    session "Research {topic}"\n'
        "do gather\n"
    )
    assert where(only(text, "E022", main)) == ((3, 4), (3, 15))


def test_mid_program_inputs_are_runtime_prompts(main: Path) -> None:
    # prose.md ("Input Binding Semantics"): an input after executable statements, or in a
    # branch, is a runtime prompt; the official examples rely on it.
    text = (
        'input topic: "The subject"\n'
        'let draft = session "Draft {topic}"\n'
        'input verdict: "Does the draft read well?"\n'
        "if **the verdict is negative**:\n"
        "  input fix: **What should change?**\n"
        '  session "Revise {draft} after {verdict}"\n'
    )
    assert diagnostics(text, main) == []


# --------------------------------------------------------------------------- invocation


def test_unknown_program_message(main: Path) -> None:
    d = only(BAD["E025"][0], "E025", main)
    assert (
        d.message == 'program `research` is not imported: import it with `use "@handle/research"`'
    )


def test_unknown_program_suggests_an_import(main: Path) -> None:
    text = 'use "@acme/research"\nlet r = reserch(topic: "x", depth: "y")\n'
    d = only(text, "E025", main)
    assert where(d) == ((2, 8), (2, 15))
    assert d.message.endswith("did you mean `research`?")


def test_calling_a_block_like_a_program(main: Path) -> None:
    text = 'block gather(topic):\n  session "Research {topic}"\ngather(topic: "tides")\n'
    d = only(text, "E025", main)
    assert where(d) == ((3, 0), (3, 6))
    assert "invoke it with `do gather(...)`" in d.message


def test_calling_an_agent_like_a_program(main: Path) -> None:
    text = 'agent writer:\n  model: sonnet\nwriter(topic: "tides")\n'
    assert "`session: writer`" in only(text, "E025", main).message


def test_unverified_program_calls_are_not_checked(main: Path) -> None:
    text = 'use "@acme/unknown" as u\nlet r = u(anything: "x")\nsession "{r.whatever}"\n'
    assert [d.code for d in diagnostics(text, main)] == ["I001"]


def test_one_note_per_use_statement(main: Path) -> None:
    text = 'use "@acme/unknown" as u\nu(a: "1")\nu(b: "2")\n'
    assert [d.code for d in diagnostics(text, main)] == ["I001"]


# An input's description is decoded only when its body does not start with plain text.
@given(st.text(alphabet=' a"\\nt\t\u00a0{}', max_size=6))
def test_a_description_starting_with_text_is_not_blank(inside: str) -> None:
    value = f'"{inside}"'
    leaf = t.String(value, t.LineAnchor(1), 0)
    if imports._starts_with_text(value) and terminated(leaf):
        assert text_of(leaf).strip()


def test_a_description_of_spaces_or_escaped_spaces_is_empty() -> None:
    for description in ('"  "', '"\\t"', '"\\n "'):
        text = f'input topic: {description}\nsession "Research {{topic}}"\n'
        assert [d.code for d in check_text(text)] == ["W012"], description
