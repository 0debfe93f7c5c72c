"""The language's words: keywords, pipe operations, property names and the values they take.

One place for every list of words, so that the parser, the analyzer, the formatter,
completion, hover, the quick fixes, the CLI's hints and the VM agree on them.  The prose that
explains a word to the user (hover and completion documentation) lives with the editor
features (``ide/docs.py``, ``ide/completion/items.py``), keyed by these words.

Order matters where a list is shown to the user (completion, "must be one of ..." messages,
snippet choices): it is the order the spec and the documentation use.
"""

from __future__ import annotations

# --------------------------------------------------------------------------- keywords

# The words that start a statement, in the order completion offers them and the CLI's hints
# search them.  The parser dispatches the first seven as expressions (EXPRESSION_KEYWORDS),
# the others as statements.
STATEMENT_KEYWORDS = (
    "session",
    "let",
    "const",
    "agent",
    "block",
    "do",
    "parallel",
    "repeat",
    "for",
    "loop",
    "try",
    "choice",
    "if",
    "use",
    "input",
    "output",
    "throw",
    "resume",
)

# The statement keywords that also start an expression (``x = session "..."``), as
# completion offers them after ``=``.  The parser also reads ``try`` as a value
# (``x = try: ...``), which completion does not offer there.
EXPRESSION_KEYWORDS = ("session", "resume", "do", "parallel", "repeat", "for", "loop")

# Statement keywords allowed only at the top level of a program.
TOP_LEVEL_KEYWORDS = ("agent", "block", "use", "input")

# The legacy ``import "skill" from "source"`` statement: parsed, but not offered by
# completion, which offers ``use`` instead.
LEGACY_STATEMENT_KEYWORDS = ("import",)

# Words that continue a statement; at the start of a line on their own the parser reports
# them as misplaced (E035/E036).
CLAUSE_KEYWORDS = ("elif", "else", "catch", "finally", "option")

# Words from other languages that are not OpenProse statements: the parser explains what to
# write instead.
UNSUPPORTED_STATEMENTS = ("return", "break", "continue", "assert", "pass")

# Words that start definitions and control flow: a variable named `session` or `for` reads
# as the statement.  The other keywords (`use`, `input`, `output`, `import`, `as`, `in`,
# `map`, `until`...) are soft: keywords only where the grammar expects them, so they stay
# usable as names.
RESERVED_WORDS = frozenset(
    [
        "agent",
        "block",
        "let",
        "const",
        "session",
        "resume",
        "do",
        "parallel",
        "repeat",
        "for",
        "loop",
        "try",
        "catch",
        "finally",
        "throw",
        "choice",
        "option",
        "if",
        "elif",
        "else",
    ]
)

# ``items | map:`` and the others; ``reduce`` takes ``(acc, item)``.
PIPE_OPERATIONS = ("map", "filter", "pmap", "reduce")

# --------------------------------------------------------------------------- properties

AGENT_PROPERTIES = ("model", "prompt", "persist", "skills", "permissions")
SESSION_PROPERTIES = ("model", "prompt", "context", "retry", "backoff")

MODELS = ("sonnet", "opus", "haiku")
# The bare words ``persist:`` takes; a string there is a path.
PERSIST_VALUES = ("true", "project", "user")
BACKOFFS = ("none", "linear", "exponential")

# Permission kinds (inside ``permissions:``): the first take glob patterns, the others one of
# PERMISSION_ACCESS.
PATTERN_PERMISSIONS = ("read", "write", "execute")
ACCESS_PERMISSIONS = ("bash", "network")
PERMISSIONS = PATTERN_PERMISSIONS + ACCESS_PERMISSIONS
PERMISSION_ACCESS = ("allow", "deny", "prompt")

# --------------------------------------------------------------------------- modifiers

# ``parallel ("first", on-fail: "continue", count: 2):``
JOIN_STRATEGIES = ("all", "first", "any")
ON_FAIL_POLICIES = ("fail-fast", "continue", "ignore")
PARALLEL_MODIFIERS = ("on-fail", "count")
# ``loop until **done** (max: 5):``
LOOP_MODIFIERS = ("max",)
