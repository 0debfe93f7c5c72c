"""A hand-written recursive-descent parser for OpenProse that never raises.

``core.py`` holds the machinery (the token stream, issues, error recovery, indented
blocks), ``expressions.py`` and ``statements.py`` the grammar; ``Parser`` is the
complete parser and ``parse`` its entry point.
"""

from __future__ import annotations

from openprose.syntax import tree as t
from openprose.syntax.parser.core import (
    MAX_NESTING,
    BlockKind,
    ParserCore,
    Relation,
    flat_module,
    gc_paused,
    relation,
)
from openprose.syntax.parser.expressions import ExpressionParser
from openprose.syntax.parser.statements import UNSUPPORTED_HINTS, Parser

__all__ = [
    "MAX_NESTING",
    "UNSUPPORTED_HINTS",
    "BlockKind",
    "ExpressionParser",
    "Parser",
    "ParserCore",
    "Relation",
    "flat_module",
    "gc_paused",
    "parse",
    "relation",
]


def parse(text: str) -> t.Module:
    """Parse OpenProse source into a lossless tree.  Never raises."""
    with gc_paused():
        try:
            return Parser(text).parse_module()
        except RecursionError:  # pragma: no cover - nesting is capped well below the limit
            return flat_module(text)
