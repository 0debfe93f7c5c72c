"""The one list of source fragments the property tests join into arbitrary programs.

`TOKENS` stress the tokenizer and the block structure: quotes, triple quotes, discretion
markers, brackets, colons, line breaks of every kind, indentation, tabs, comments and
non-ASCII (a character outside the BMP, a no-break space, a byte order mark). `FRAGMENTS`
adds statement heads and clause keywords, so the joined text reaches the parser's blocks."""

from __future__ import annotations

TOKENS = [
    '"',
    '"""',
    "**",
    "***",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    "->",
    "|",
    "=",
    "\n",
    "\r\n",
    "\r",
    "  ",
    "    ",
    "\t",
    "#",
    "# c",
    "\\",
    "{name}",
    "é",
    "\U0001d11e",
    "\u00a0",
    "\ufeff",
]

FRAGMENTS = [
    *TOKENS,
    "else:",
    "elif **c**:",
    "catch:",
    "catch as e:",
    "finally:",
    'option "x":',
    "session",
    ' "p"',
    "agent a:",
    "\n  model: sonnet",
    "let x = ",
    "parallel:",
    "\n  ",
    "| map:",
    "do:",
    "loop until **done** (max: 3):",
    "try:",
    "if **c**:",
    "block b(p):",
    "do b(x)",
    "x",
    "1",
    # Header expressions that take the lines below them: a block inside brackets, a
    # session continued by `->` (their errors are reported at the end of the block).
    "parallel(loop)",
    "for x in session",
    "if not do:",
    "->a",
]
