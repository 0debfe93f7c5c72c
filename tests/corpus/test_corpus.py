"""The real corpus in ../shared/corpus: third-party programs used as test data where they lie."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.syntax import parse, syntax_diagnostics

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
pytestmark = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the shared corpus is not beside the checkout ({CORPUS})"
)

# The three official programs known to be malformed (see shared/README.md), with the
# line (1-based) and code of the precise error each must get.
MALFORMED = {
    "common/bounty.prose": (104, "E031"),  # a `"""` inside a `"""` prompt ends it early
    "common/publisher.prose": (79, "E031"),  # the same mistake
    "lib/profiler.prose": (194, "E041"),  # an `assert` statement
}
# A sketch of proposed syntax, not a program of the current language: it puts
# statements directly under `choice` (which must hold options) and inline bodies.
ROADMAP_SKETCHES = {"examples/roadmap/syntax/open-prose-syntax.prose"}


def corpus_files() -> list[Path]:
    return sorted(CORPUS.rglob("*.prose")) if CORPUS.is_dir() else []


def official_files() -> list[Path]:
    return [
        p for p in corpus_files() if p.relative_to(CORPUS).parts[0] in ("examples", "common", "lib")
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


@pytest.mark.parametrize("path", official_files(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_official_programs_have_no_syntax_error(path: Path) -> None:
    relative = path.relative_to(CORPUS).as_posix()
    if relative in MALFORMED or relative in ROADMAP_SKETCHES:
        pytest.skip("known to be malformed: checked by test_malformed_programs_get_a_precise_error")
    diagnostics = syntax_diagnostics(parse(read(path)))
    assert [(d.start, d.code, d.message) for d in diagnostics] == []


@pytest.mark.parametrize("relative", sorted(MALFORMED))
def test_malformed_programs_get_a_precise_error(relative: str) -> None:
    line, code = MALFORMED[relative]
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
