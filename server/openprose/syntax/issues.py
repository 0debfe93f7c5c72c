"""Collecting the syntax issues recorded in a tree as diagnostics."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from openprose.codes import severity_of
from openprose.diagnostics import Diagnostic, Related
from openprose.syntax.tree import (
    ErrorBlock,
    ErrorStatement,
    SyntaxIssue,
    UnsupportedStatement,
    ancestor,
    offset_position,
)

_REPORTED_WHOLE = (ErrorBlock, ErrorStatement, UnsupportedStatement)


def iter_issues(node: Any) -> Iterator[SyntaxIssue]:
    """Every issue under ``node``.  Inside an ``ErrorBlock``, ``ErrorStatement`` or
    ``UnsupportedStatement`` only its own issue counts: the lines in it are reported
    once, as a whole."""
    stack = [node]
    while stack:
        current = stack.pop()
        issues = current.issues
        if issues:
            yield from issues
        if isinstance(current, _REPORTED_WHOLE):
            continue
        children = current.children
        for i in range(len(children) - 1, -1, -1):
            child = children[i]
            if hasattr(child, "children"):
                stack.append(child)


def syntax_diagnostics(module: Any) -> list[Diagnostic]:
    """The syntax diagnostics of a parsed module, sorted by position."""
    return to_diagnostics(iter_issues(module))


def to_diagnostics(issues: Iterable[SyntaxIssue]) -> list[Diagnostic]:
    """Diagnostics for syntax issues, sorted by position."""
    diagnostics = [
        Diagnostic(
            issue.code,
            issue.message,
            severity_of(issue.code),
            issue.start,
            issue.end,
            tuple(
                Related(message, offset_position(leaf, a), offset_position(leaf, b))
                for message, leaf, a, b in issue.related
            ),
        )
        for issue in issues
    ]
    diagnostics.sort(key=Diagnostic.sort_key)
    return diagnostics


def reported_whole(node: Any) -> bool:
    """Whether ``node`` lies inside a construct whose issues are reported as one."""
    return ancestor(node, _REPORTED_WHOLE) is not None
