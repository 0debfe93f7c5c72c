"""OpenProse syntax: tokenizer, lossless parso-based tree, parser and incremental document."""

from openprose.syntax.issues import iter_issues, syntax_diagnostics
from openprose.syntax.parser import parse
from openprose.syntax.tree import *  # noqa: F403 - the node classes are the public API

__all__ = ["iter_issues", "parse", "syntax_diagnostics"]
from openprose.syntax.document import Document, ReparseStats

__all__ += ["Document", "ReparseStats"]
