"""The real corpus in ../shared/corpus: third-party programs used as test data where they lie."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.checking import check_text
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


@pytest.mark.parametrize("path", official_files(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_official_programs_have_no_error(path: Path) -> None:
    relative = path.relative_to(CORPUS).as_posix()
    if relative in MALFORMED or relative in ROADMAP_SKETCHES:
        pytest.skip("known to be malformed: checked by test_malformed_programs_get_a_precise_error")
    errors = [(d.start[0], d.code) for d in check_text(read(path), str(path)) if d.is_error]
    expected = [SPEC_VIOLATIONS[relative]] if relative in SPEC_VIOLATIONS else []
    assert errors == expected


HARNESS = CORPUS / "irl-dan-open-prose"
# Programs of the earlier implementation's valid suites written in its early dialect,
# which the current reference does not accept, with the reason.
EARLY_DIALECT = {
    "permutation-tests/017-let-shadowing.prose": "redefines `x` inside `do:` (flat namespace)",
    "permutation-tests/061-try-with-retry.prose": "`backoff: 1000` (milliseconds)",
    "permutation-tests/106-session-props-retry.prose": "`backoff: 1000` (milliseconds)",
    "permutation-tests/162-agent-session-retry.prose": "`backoff: 500` (milliseconds)",
    "permutation-tests/189-parallel-for-with-modifiers.prose": "`parallel for x in items (...)`",
    "permutation-tests/198-empty-do-block.prose": "a `do:` whose body is only comments",
}
# The early dialect put a session's prompt as a bare string indented under `session: x`;
# the reference writes `prompt: "..."`.
BARE_PROMPT_UNDER_SESSION = {
    "permutation-tests/131-agent-with-session.prose",
    "permutation-tests/134-multiple-agents.prose",
    "permutation-tests/135-agent-in-parallel.prose",
    "permutation-tests/136-agent-in-loop.prose",
    "permutation-tests/139-import-with-agent.prose",
    "permutation-tests/181-pipeline-map-with-agent.prose",
    "permutation-tests/201-interpolation-in-agent-prompt.prose",
    "permutation-tests/202-multiline-in-agent.prose",
    "permutation-tests/231-agent-all-models.prose",
    "permutation-tests/232-agent-skills-list.prose",
    "permutation-tests/233-agent-in-every-context.prose",
    "permutation-tests/234-agent-long-prompt.prose",
    "permutation-tests/235-agent-cascade.prose",
    "permutation-tests/236-agent-parallel-race.prose",
    "permutation-tests/238-agent-in-block-param.prose",
    "permutation-tests/239-agent-defined-late.prose",
    "permutation-tests/240-agent-name-with-underscore.prose",
    "test-programs/combo-kitchen-sink.prose",
}


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
