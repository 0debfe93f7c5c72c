"""The registry of diagnostic codes: each code names one rule, says what it is called, how
severe it is by default and which module reports it.

E001-E028 and W001-W011 keep the meanings the language reference gives them.
Rules the reference states without a code continue the numbering (E029..., W012...).
Every code here has an entry in docs/diagnostics.md, which shows its rule name and the
modules that report it.

A rule's name says what is wrong, in kebab-case (``unbounded-loop``), as ruff names its
rules; codes stay the stable identifiers that configuration and suppression comments use.
"""

from __future__ import annotations

from dataclasses import dataclass

from openprose.diagnostics import Severity

# The modules that report diagnostics.  The parser is named by its package: it reports
# every syntax code, whichever of its modules finds the problem.
PARSER = "openprose.syntax.parser"
SUPPRESSIONS = "openprose.suppressions"
RULES = "openprose.analysis.rules"
_AGENT_MEMORY = f"{RULES}.agent_memory"
_CONTROL = f"{RULES}.control"
_GRAMMAR = f"{RULES}.grammar"
_IMPORTS = f"{RULES}.imports"
_NAMES = f"{RULES}.names"
_PROPERTIES = f"{RULES}.properties"
_STRUCTURE = f"{RULES}.structure"


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    name: str  # the rule's name: what is wrong, in kebab-case
    title: str
    severity: Severity
    checked_by: tuple[str, ...]  # the modules that report it (dotted names)

    @property
    def syntax(self) -> bool:
        """Whether the parser reports it: a program with a syntax code has no reliable tree,
        so the code can be neither ignored nor downgraded."""
        return self.checked_by == (PARSER,)


def _rule(code: str, name: str, title: str, severity: Severity, *checked_by: str) -> Code:
    return Code(code, name, title, severity, checked_by)


_E = Severity.ERROR
_W = Severity.WARNING

_CODES = [
    # From the language reference.
    _rule("E001", "unterminated-string", "Unterminated string literal", _E, PARSER),
    _rule("E002", "invalid-escape-sequence", "Unknown escape sequence in string", _E, PARSER),
    _rule("E003", "session-without-prompt-or-agent", "Session missing prompt or agent", _E, PARSER),
    _rule("E004", "unexpected-token", "Unexpected token", _E, PARSER),
    _rule("E005", "invalid-syntax", "Invalid syntax", _E, PARSER),
    _rule("E006", "duplicate-agent", "Duplicate agent definition", _E, _NAMES),
    _rule("E007", "undefined-agent", "Undefined agent reference", _E, _NAMES),
    _rule("E008", "invalid-model", "Invalid model value", _E, _PROPERTIES),
    _rule("E009", "duplicate-property", "Duplicate property", _E, _PROPERTIES),
    _rule("E010", "duplicate-use", "Duplicate use statement", _E, _IMPORTS),
    _rule("E011", "empty-use-path", "Empty use path", _E, _IMPORTS),
    _rule("E012", "invalid-use-path", "Invalid use path format", _E, _IMPORTS),
    _rule("E013", "skills-not-an-array", "Skills must be an array", _E, _PROPERTIES),
    _rule("E014", "skill-name-not-a-string", "Skill name must be a string", _E, _PROPERTIES),
    _rule("E015", "permissions-not-a-block", "Permissions must be a block", _E, _PROPERTIES),
    _rule(
        "E016",
        "permission-pattern-not-a-string",
        "Permission pattern must be a string",
        _E,
        _PROPERTIES,
    ),
    _rule("E017", "resume-without-persist", "`resume:` requires persistent agent", _E, _PROPERTIES),
    _rule("E018", "resume-without-memory", "`resume:` with no existing memory", _E, _AGENT_MEMORY),
    _rule("E019", "duplicate-variable", "Duplicate variable name (flat namespace)", _E, _NAMES),
    _rule("E020", "empty-input-name", "Empty input name", _E, PARSER),
    _rule("E021", "duplicate-input", "Duplicate input declaration", _E, _NAMES),
    _rule("E022", "input-after-statement", "Input after executable statement", _E, _IMPORTS),
    _rule("E023", "empty-output-name", "Empty output name", _E, PARSER),
    _rule("E024", "duplicate-output", "Duplicate output declaration", _E, _NAMES),
    _rule("E025", "unknown-program", "Unknown program in invocation", _E, _IMPORTS),
    _rule("E026", "missing-required-input", "Missing required input", _E, _IMPORTS),
    _rule("E027", "unknown-input", "Unknown input name in invocation", _E, _IMPORTS),
    _rule("E028", "unknown-output", "Unknown output property access", _E, _IMPORTS),
    _rule("W001", "empty-session-prompt", "Empty session prompt", _W, _PROPERTIES),
    _rule("W002", "blank-session-prompt", "Whitespace-only session prompt", _W, _PROPERTIES),
    _rule(
        "W003",
        "session-prompt-too-long",
        "Session prompt exceeds 10,000 characters",
        _W,
        _PROPERTIES,
    ),
    _rule("W004", "empty-prompt-property", "Empty prompt property", _W, _PROPERTIES),
    _rule("W005", "unknown-property", "Unknown property name", _W, _PROPERTIES, _CONTROL),
    _rule("W006", "unknown-import-source", "Unknown import source format", _W, _IMPORTS),
    _rule("W007", "skill-not-imported", "Skill not imported", _W, _PROPERTIES),
    _rule("W008", "unknown-permission-type", "Unknown permission type", _W, _PROPERTIES),
    _rule("W009", "unknown-permission-value", "Unknown permission value", _W, _PROPERTIES),
    _rule("W010", "empty-skills", "Empty skills array", _W, _PROPERTIES),
    _rule(
        "W011",
        "session-ignores-memory",
        "`session:` on persistent agent with existing memory",
        _W,
        _AGENT_MEMORY,
    ),
    # Syntax rules the reference states without a code.
    _rule("E029", "unterminated-discretion", "Unterminated discretion condition", _E, PARSER),
    _rule("E030", "unclosed-bracket", "Unclosed bracket", _E, PARSER),
    _rule("E031", "unexpected-indentation", "Unexpected indentation", _E, PARSER),
    _rule("E032", "unmatched-unindent", "Unindent does not match an outer level", _E, PARSER),
    _rule("E033", "missing-indented-block", "Expected an indented block", _E, PARSER),
    _rule(
        "E034", "mixed-tabs-and-spaces", "Inconsistent tabs and spaces in indentation", _E, PARSER
    ),
    _rule("E035", "clause-without-statement", "Clause without its statement", _E, PARSER),
    _rule("E036", "misplaced-clause", "Misplaced or repeated clause", _E, PARSER),
    _rule("E037", "try-without-catch-or-finally", "Try without catch or finally", _E, PARSER),
    _rule("E038", "choice-without-options", "Choice without options", _E, PARSER),
    _rule("E039", "invalid-pipe-operator", "Invalid pipe operator", _E, PARSER),
    _rule("E040", "invalid-pipeline-parameters", "Wrong pipeline operation parameters", _E, PARSER),
    _rule("E041", "unknown-statement", "Statement outside the language", _E, PARSER),
    _rule("E042", "invalid-character", "Invalid character", _E, PARSER),
    # Semantic rules the reference states without a code (one code per rule; the same
    # rule in several tables shares its code).
    _rule("E043", "undefined-variable", "Undefined variable", _E, _NAMES),
    _rule(
        "E044", "undefined-interpolation-variable", "Undefined interpolation variable", _E, _NAMES
    ),
    _rule("E045", "undefined-context-variable", "Undefined variable in context", _E, _NAMES),
    _rule(
        "E046",
        "missing-program-alias",
        "Alias required for programs with the same name",
        _E,
        _IMPORTS,
    ),
    _rule("E047", "output-name-conflict", "Output name conflicts with variable", _E, _NAMES),
    _rule("E048", "const-reassignment", "Cannot reassign const variable", _E, _NAMES),
    _rule(
        "E049",
        "variable-agent-name-conflict",
        "Variable name conflicts with agent name",
        _E,
        _NAMES,
    ),
    _rule(
        "E050",
        "context-element-not-a-variable",
        "Context array elements must be variable references",
        _E,
        _CONTROL,
    ),
    _rule("E051", "undefined-block", "Undefined block reference", _E, _NAMES),
    _rule("E052", "duplicate-block", "Duplicate block definition", _E, _NAMES),
    _rule("E053", "block-agent-name-conflict", "Block name conflicts with agent name", _E, _NAMES),
    _rule("E054", "empty-block-name", "Empty block name", _E, PARSER),
    _rule("E055", "invalid-join-strategy", "Invalid join strategy", _E, _CONTROL),
    _rule("E056", "invalid-on-fail-policy", "Invalid on-fail policy", _E, _CONTROL),
    _rule("E057", "count-without-any", 'Count without "any"', _E, _CONTROL),
    _rule("E058", "count-below-one", "Count less than 1", _E, _CONTROL),
    _rule("E059", "non-positive-repeat-count", "Repeat count must be positive", _E, _CONTROL),
    _rule("E060", "non-integer-repeat-count", "Repeat count must be an integer", _E, _CONTROL),
    _rule("E061", "undefined-collection", "Undefined collection variable", _E, _NAMES),
    _rule("E062", "non-positive-max-iterations", "Max iterations must be positive", _E, _CONTROL),
    _rule("E063", "non-integer-max-iterations", "Max iterations must be an integer", _E, _CONTROL),
    _rule("E064", "empty-discretion", "Empty discretion condition", _E, _CONTROL),
    _rule("E065", "non-positive-retry-count", "Retry count must be positive", _E, _PROPERTIES),
    _rule("E066", "non-integer-retry-count", "Retry count must be an integer", _E, _PROPERTIES),
    _rule("E067", "invalid-backoff", "Invalid backoff strategy", _E, _PROPERTIES),
    _rule("E068", "reserved-word-as-name", "Reserved word used as a name", _E, _NAMES),
    _rule("E069", "nested-block-definition", "Block definition inside another block", _E, _NAMES),
    _rule("E070", "invalid-interpolation", "Invalid interpolation", _E, _GRAMMAR),
    _rule("E071", "import-cycle", "Import cycle", _E, _IMPORTS),
    _rule("E072", "imported-program-not-found", "Imported program not found", _E, _IMPORTS),
    _rule("W012", "empty-input-description", "Empty input description", _W, _IMPORTS),
    _rule("W013", "retry-on-agent", "Retry on agent definition", _W, _PROPERTIES),
    _rule("W014", "block-argument-count-mismatch", "Block argument count mismatch", _W, _CONTROL),
    _rule("W015", "parameter-shadows-variable", "Parameter shadows outer variable", _W, _NAMES),
    _rule("W016", "count-exceeds-branches", "Count exceeds parallel branches", _W, _CONTROL),
    _rule(
        "W017", "loop-variable-shadows-variable", "Loop variable shadows outer variable", _W, _NAMES
    ),
    _rule("W018", "unbounded-loop", "Unbounded loop without max iterations", _W, _CONTROL),
    _rule("W019", "ambiguous-discretion", "Discretion condition may be ambiguous", _W, _CONTROL),
    _rule(
        "W020",
        "pipeline-variable-shadows-variable",
        "Pipeline variable shadows outer variable",
        _W,
        _NAMES,
    ),
    _rule(
        "W021",
        "error-variable-shadows-variable",
        "Error variable shadows outer variable",
        _W,
        _NAMES,
    ),
    _rule("W022", "empty-throw-message", "Empty throw message", _W, _CONTROL),
    _rule("W023", "high-retry-count", "High retry count", _W, _PROPERTIES),
    _rule("W024", "duplicate-option-label", "Duplicate option label", _W, _CONTROL),
    _rule("W025", "empty-option", "Option has empty body", _W, _CONTROL),
    _rule("W026", "empty-condition-body", "Condition has empty body", _W, _CONTROL),
    _rule("W027", "legacy-import", "Legacy import syntax", _W, _GRAMMAR),
    _rule(
        "W028", "object-literal-outside-grammar", "Object literal outside the grammar", _W, _GRAMMAR
    ),
    _rule(
        "W029", "condition-not-discretion", "Condition is not a discretion condition", _W, _GRAMMAR
    ),
    _rule("W030", "expression-outside-grammar", "Expression outside the grammar", _W, _GRAMMAR),
    _rule("W031", "backoff-without-retry", "Backoff without retry", _W, _PROPERTIES),
    _rule("W032", "single-branch-race", "Race with a single branch", _W, _CONTROL),
    _rule("W033", "unnamed-output", "Output without a name", _W, _GRAMMAR),
    _rule("W034", "placeholder-without-variable", "Placeholder names no variable", _W, _NAMES),
    _rule(
        "I001",
        "unverified-program-contract",
        "Program contract not verified offline",
        Severity.INFORMATION,
        _IMPORTS,
    ),
    _rule("W035", "recursion-without-base-case", "Recursion without a base case", _W, _STRUCTURE),
    _rule("E073", "import-not-at-top-level", "Import not at the top level", _E, _STRUCTURE),
    _rule("W036", "unused-suppression", "Suppression comment has no effect", _W, SUPPRESSIONS),
    _rule(
        "E074", "session-properties-without-colon", "Session properties without `:`", _E, _GRAMMAR
    ),
    _rule(
        "W037", "nested-agent-definition", "Agent defined inside another statement", _W, _STRUCTURE
    ),
]

CODES: dict[str, Code] = {c.code: c for c in _CODES}

# The codes the parser reports (see ``Code.syntax``).
SYNTAX_CODES: frozenset[str] = frozenset(c.code for c in _CODES if c.syntax)


def severity_of(code: str) -> Severity:
    return CODES[code].severity
