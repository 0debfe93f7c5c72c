"""The registry of diagnostic codes: one stable code per rule, with its default severity.

E001-E028 and W001-W011 keep the meanings the language reference gives them.
Rules the reference states without a code continue the numbering (E029..., W012...).
Every code here has an entry in docs/diagnostics.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from openprose.diagnostics import Severity


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    title: str
    severity: Severity


_E = Severity.ERROR
_W = Severity.WARNING

_CODES = [
    # From the language reference.
    Code("E001", "Unterminated string literal", _E),
    Code("E002", "Unknown escape sequence in string", _E),
    Code("E003", "Session missing prompt or agent", _E),
    Code("E004", "Unexpected token", _E),
    Code("E005", "Invalid syntax", _E),
    Code("E006", "Duplicate agent definition", _E),
    Code("E007", "Undefined agent reference", _E),
    Code("E008", "Invalid model value", _E),
    Code("E009", "Duplicate property", _E),
    Code("E010", "Duplicate use statement", _E),
    Code("E011", "Empty use path", _E),
    Code("E012", "Invalid use path format", _E),
    Code("E013", "Skills must be an array", _E),
    Code("E014", "Skill name must be a string", _E),
    Code("E015", "Permissions must be a block", _E),
    Code("E016", "Permission pattern must be a string", _E),
    Code("E017", "`resume:` requires persistent agent", _E),
    Code("E018", "`resume:` with no existing memory", _E),
    Code("E019", "Duplicate variable name (flat namespace)", _E),
    Code("E020", "Empty input name", _E),
    Code("E021", "Duplicate input declaration", _E),
    Code("E022", "Input after executable statement", _E),
    Code("E023", "Empty output name", _E),
    Code("E024", "Duplicate output declaration", _E),
    Code("E025", "Unknown program in invocation", _E),
    Code("E026", "Missing required input", _E),
    Code("E027", "Unknown input name in invocation", _E),
    Code("E028", "Unknown output property access", _E),
    Code("W001", "Empty session prompt", _W),
    Code("W002", "Whitespace-only session prompt", _W),
    Code("W003", "Session prompt exceeds 10,000 characters", _W),
    Code("W004", "Empty prompt property", _W),
    Code("W005", "Unknown property name", _W),
    Code("W006", "Unknown import source format", _W),
    Code("W007", "Skill not imported", _W),
    Code("W008", "Unknown permission type", _W),
    Code("W009", "Unknown permission value", _W),
    Code("W010", "Empty skills array", _W),
    Code("W011", "`session:` on persistent agent with existing memory", _W),
    # Syntax rules the reference states without a code.
    Code("E029", "Unterminated discretion condition", _E),
    Code("E030", "Unclosed bracket", _E),
    Code("E031", "Unexpected indentation", _E),
    Code("E032", "Unindent does not match an outer level", _E),
    Code("E033", "Expected an indented block", _E),
    Code("E034", "Inconsistent tabs and spaces in indentation", _E),
    Code("E035", "Clause without its statement", _E),
    Code("E036", "Misplaced or repeated clause", _E),
    Code("E037", "Try without catch or finally", _E),
    Code("E038", "Choice without options", _E),
    Code("E039", "Invalid pipe operator", _E),
    Code("E040", "Wrong pipeline operation parameters", _E),
    Code("E041", "Statement outside the language", _E),
    Code("E042", "Invalid character", _E),
    # Semantic rules the reference states without a code (one code per rule; the same
    # rule in several tables shares its code).
    Code("E043", "Undefined variable", _E),
    Code("E044", "Undefined interpolation variable", _E),
    Code("E045", "Undefined variable in context", _E),
    Code("E046", "Alias required for programs with the same name", _E),
    Code("E047", "Output name conflicts with variable", _E),
    Code("E048", "Cannot reassign const variable", _E),
    Code("E049", "Variable name conflicts with agent name", _E),
    Code("E050", "Context array elements must be variable references", _E),
    Code("E051", "Undefined block reference", _E),
    Code("E052", "Duplicate block definition", _E),
    Code("E053", "Block name conflicts with agent name", _E),
    Code("E054", "Empty block name", _E),
    Code("E055", "Invalid join strategy", _E),
    Code("E056", "Invalid on-fail policy", _E),
    Code("E057", 'Count without "any"', _E),
    Code("E058", "Count less than 1", _E),
    Code("E059", "Repeat count must be positive", _E),
    Code("E060", "Repeat count must be an integer", _E),
    Code("E061", "Undefined collection variable", _E),
    Code("E062", "Max iterations must be positive", _E),
    Code("E063", "Max iterations must be an integer", _E),
    Code("E064", "Empty discretion condition", _E),
    Code("E065", "Retry count must be positive", _E),
    Code("E066", "Retry count must be an integer", _E),
    Code("E067", "Invalid backoff strategy", _E),
    Code("E068", "Reserved word used as a name", _E),
    Code("E069", "Block definition inside another block", _E),
    Code("E070", "Invalid interpolation", _E),
    Code("E071", "Import cycle", _E),
    Code("E072", "Imported program not found", _E),
    Code("W012", "Empty input description", _W),
    Code("W013", "Retry on agent definition", _W),
    Code("W014", "Block argument count mismatch", _W),
    Code("W015", "Parameter shadows outer variable", _W),
    Code("W016", "Count exceeds parallel branches", _W),
    Code("W017", "Loop variable shadows outer variable", _W),
    Code("W018", "Unbounded loop without max iterations", _W),
    Code("W019", "Discretion condition may be ambiguous", _W),
    Code("W020", "Pipeline variable shadows outer variable", _W),
    Code("W021", "Error variable shadows outer variable", _W),
    Code("W022", "Empty throw message", _W),
    Code("W023", "High retry count", _W),
    Code("W024", "Duplicate option label", _W),
    Code("W025", "Option has empty body", _W),
    Code("W026", "Condition has empty body", _W),
    Code("W027", "Legacy import syntax", _W),
    Code("W028", "Object literal outside the grammar", _W),
    Code("W029", "Condition is not a discretion condition", _W),
    Code("W030", "Expression outside the grammar", _W),
    Code("W031", "Backoff without retry", _W),
    Code("W032", "Race with a single branch", _W),
    Code("W033", "Output without a name", _W),
    Code("W034", "Placeholder names no variable", _W),
    Code("I001", "Program contract not verified offline", Severity.INFORMATION),
    Code("W035", "Recursion without a base case", _W),
    Code("E073", "Import not at the top level", _E),
    Code("W036", "Suppression comment has no effect", _W),
    Code("E074", "Session properties without `:`", _E),
    Code("W037", "Agent defined inside another statement", _W),
]

CODES: dict[str, Code] = {c.code: c for c in _CODES}


def severity_of(code: str) -> Severity:
    return CODES[code].severity
