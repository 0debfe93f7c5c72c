"""The corpus programs known to be malformed, each with the reason (names relative to the corpus).

Tests that need a well-formed program select around these at collection (as expected failures, or
left out with a test that they are still malformed), so that a run skips only what nobody
expected, and each list stays true.
"""

from __future__ import annotations

# The official programs (examples, common, lib) known to be malformed (see shared/README.md):
# the line (1-based) and code of the precise error each must get, and the mistake.
MALFORMED = {
    "common/bounty.prose": (104, "E031", 'a `"""` inside a `"""` prompt ends it early'),
    "common/publisher.prose": (79, "E031", 'a `"""` inside a `"""` prompt ends it early'),
    "lib/profiler.prose": (194, "E041", "an `assert` statement, which the language does not have"),
}
# A sketch of proposed syntax, not a program of the current language: it puts statements
# directly under `choice` (which must hold options) and inline bodies.
ROADMAP_SKETCHES = {
    "examples/roadmap/syntax/open-prose-syntax.prose": "a sketch of proposed syntax, not a program",
}
OFFICIAL = {
    **{name: mistake for name, (_, _, mistake) in MALFORMED.items()},
    **ROADMAP_SKETCHES,
}

HARNESS = "irl-dan-open-prose"
# Programs of the earlier implementation's valid suites (names relative to HARNESS) written in
# its early dialect, which the current reference does not accept, with the reason.
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
BARE_PROMPT = "early dialect: a bare prompt string indented under `session: x`"
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

# The earlier implementation's invalid programs whose mistake is a syntax error (each file's
# `# Expected error:` header names it; tests/corpus/test_invalid_programs.py checks the code).
INVALID_ON_PURPOSE = "invalid on purpose: the earlier implementation's invalid suite"
INVALID_PROGRAMS_WITH_SYNTAX_ERRORS = (
    "005-missing-colon-agent.prose",
    "006-missing-colon-block.prose",
    "007-missing-colon-if.prose",
    "009-unclosed-string.prose",
    "010-unclosed-multiline.prose",
    "013-invalid-keyword.prose",
    "016-empty-parallel.prose",
    "018-catch-without-try.prose",
    "020-else-without-if.prose",
    "022-option-without-choice.prose",
    "023-choice-no-options.prose",
    "026-let-missing-equals.prose",
    "027-let-missing-value.prose",
    "031-for-missing-collection.prose",
    "035-undefined-agent.prose",
    "044-import-missing-path.prose",
    "048-pipeline-no-body.prose",
    "054-double-catch.prose",
    "081-repeat-string-count.prose",
    "082-repeat-negative-count.prose",
    "089-skill-wrong-arg-count.prose",
    "096-option-outside-choice.prose",
    "097-duplicate-option-text.prose",
    "099-let-without-value.prose",
    "105-retry-string-value.prose",
    "106-retry-float-value.prose",
    "109-missing-colon-loop.prose",
    "111-indent-mixed-tabs-spaces.prose",
    "114-invalid-escape-sequence.prose",
    "123-invalid-pipeline-no-source.prose",
    "124-break-outside-loop.prose",
    "126-break-in-parallel.prose",
    "127-empty-choice-block.prose",
    "129-deeply-nested-empty.prose",
    "130-for-without-body.prose",
    "137-retry-on-block.prose",
    "147-reduce-single-param.prose",
    "148-map-with-params.prose",
    "150-pmap-no-body.prose",
)

# Every corpus program with a syntax error, and why: the formatter leaves each as it is.
SYNTAX_ERRORS = {
    **OFFICIAL,
    "examples-historical/45-run-endpoint-ux-test-with-remediation.prose": (
        "an `input` whose prompt is a condition spanning lines: syntax the language never had"
    ),
    "examples-historical/46-run-endpoint-ux-test-fast.prose": (
        "`const ... from` and calls such as `http.post(...)`: syntax the language never had"
    ),
    f"{HARNESS}/permutation-tests/198-empty-do-block.prose": (
        EARLY_DIALECT["permutation-tests/198-empty-do-block.prose"]
    ),
    **{f"{HARNESS}/{name}": BARE_PROMPT for name in sorted(BARE_PROMPT_UNDER_SESSION)},
    **{
        f"{HARNESS}/invalid-programs/{name}": INVALID_ON_PURPOSE
        for name in INVALID_PROGRAMS_WITH_SYNTAX_ERRORS
    },
    "lint-fixtures/conformance/gate-missing-prompt.prose": "a lint fixture: `gate` is no keyword",
    "lint-fixtures/invalid/mixed.prose": "a lint fixture, invalid on purpose (`gate` among others)",
}
