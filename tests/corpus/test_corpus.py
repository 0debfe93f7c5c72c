"""The real corpus in ../shared/corpus: third-party programs used as test data where they lie."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openprose.checking import check_text
from openprose.syntax import parse, syntax_diagnostics
from tests.corpus import location
from tests.corpus.malformed import (
    BARE_PROMPT_UNDER_SESSION,
    EARLY_DIALECT,
    MALFORMED,
    OFFICIAL,
    ROADMAP_SKETCHES,
)

CORPUS = location.CORPUS
pytestmark = pytest.mark.corpus


def corpus_files() -> list[Path]:
    return location.files()


def official_files() -> list[Path]:
    return location.files("examples", "common", "lib")


def official_programs() -> list[Any]:
    """The official files, the known malformed ones expected to fail (checked by
    test_malformed_programs_get_a_precise_error), with the reason."""
    return [
        pytest.param(
            path,
            marks=pytest.mark.xfail(reason=OFFICIAL[location.relative(path)], strict=True),
        )
        if location.relative(path) in OFFICIAL
        else path
        for path in official_files()
    ]


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8-sig")


def test_corpus_is_there() -> None:
    assert len(corpus_files()) > 400
    assert len(official_files()) > 70


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_file_parses_and_round_trips(path: Path) -> None:
    text = read(path)
    module = parse(text)
    assert module.get_code() == text


@pytest.mark.parametrize("path", official_programs(), ids=location.relative)
def test_official_programs_have_no_syntax_error(path: Path) -> None:
    diagnostics = syntax_diagnostics(parse(read(path)))
    assert [(d.start, d.code, d.message) for d in diagnostics] == []


@pytest.mark.parametrize("relative", sorted(MALFORMED))
def test_malformed_programs_get_a_precise_error(relative: str) -> None:
    line, code, _ = MALFORMED[relative]
    diagnostics = syntax_diagnostics(parse(read(CORPUS / relative)))
    assert diagnostics, "expected an error"
    first = diagnostics[0]
    assert (first.start[0], first.code) == (line, code)


def test_nested_triple_quote_error_points_at_the_closing_quotes() -> None:
    diagnostics = syntax_diagnostics(parse(read(CORPUS / "common/bounty.prose")))
    first = diagnostics[0]
    assert first.start == (104, 14) and first.end == (104, 17)
    assert first.related and first.related[0].start == (77, 10)


def test_roadmap_sketch_errors_are_the_choice_and_inline_bodies() -> None:
    (relative,) = ROADMAP_SKETCHES
    codes = {d.code for d in syntax_diagnostics(parse(read(CORPUS / relative)))}
    assert "E038" in codes  # choice with statements instead of options


# Official programs that break a rule of the reference (line, code), explained in the
# analyzer's notes: the checker reports them, as it should.
SPEC_VIOLATIONS = {
    # `let snapshot_count = snapshot_count + 1` inside a loop redefines an outer variable:
    # the exact shape the reference's Flat Namespace section gives as a compile error.
    "examples/44-run-endpoint-ux-test.prose": (165, "E019"),
    # `resume: miner` on a `persist: true` agent that no `session:` ever started: its
    # memory lives only for the run, so there is none to resume (it wants `persist: project`).
    "examples/48-habit-miner.prose": (252, "E018"),
}


@pytest.mark.parametrize("path", official_programs(), ids=location.relative)
def test_official_programs_have_no_error(path: Path) -> None:
    relative = location.relative(path)
    errors = [(d.start[0], d.code) for d in check_text(read(path), str(path)) if d.is_error]
    expected = [SPEC_VIOLATIONS[relative]] if relative in SPEC_VIOLATIONS else []
    assert errors == expected


HARNESS = CORPUS / "irl-dan-open-prose"


def harness_valid_files() -> list[Path]:
    if not HARNESS.is_dir():
        return []
    return sorted(
        [*HARNESS.glob("permutation-tests/*.prose"), *HARNESS.glob("test-programs/*.prose")]
    )


@pytest.mark.parametrize("path", harness_valid_files(), ids=lambda p: str(p.relative_to(HARNESS)))
def test_harness_programs_in_the_current_grammar_check_clean(path: Path) -> None:
    relative = path.relative_to(HARNESS).as_posix()
    errors = [d for d in check_text(read(path), str(path)) if d.is_error]
    if relative in EARLY_DIALECT or relative in BARE_PROMPT_UNDER_SESSION:
        assert errors, f"{relative} is listed as early dialect but checks clean: unlist it"
        if relative in BARE_PROMPT_UNDER_SESSION:
            assert {d.code for d in errors} == {"E031"}
        return
    assert [(d.start, d.code, d.message) for d in errors] == []
