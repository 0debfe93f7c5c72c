"""``prose check --format github``: GitHub Actions workflow commands, one per diagnostic.

A step that prints ``::error file=...,line=...::message`` gets an annotation on that line of
the pull request (https://docs.github.com/actions/reference/workflow-commands-for-github-actions).
The body repeats ``path:line:col: CODE message``, as ruff does, so the raw log reads on its own.
Columns count characters from 1, as in every other format; ``endColumn`` is the column just
past the range, like ``end_column`` in ``--format json``.
"""

from __future__ import annotations

import os

from openprose.diagnostics import Diagnostic, Severity

# GitHub has three annotation levels; information and hints are notices.
_COMMAND = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFORMATION: "notice",
    Severity.HINT: "notice",
}


def escape_data(text: str) -> str:
    """The message after ``::``: the runner reads ``%XX`` back, so ``%`` itself is escaped
    first, and a line break would end the command (the rules of @actions/core)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A ``key=value`` property: also ``:`` (which would end the properties) and ``,`` (which
    would start the next one)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(path: str, diagnostic: Diagnostic) -> str:
    (line, column), (end_line, end_column) = diagnostic.start, diagnostic.end
    properties = {
        # GitHub matches the path to the repository's files with forward slashes.
        "file": path.replace(os.sep, "/"),
        "line": str(line),
        "col": str(column + 1),
        "endLine": str(end_line),
        "endColumn": str(end_column + 1),
        "title": diagnostic.code,
    }
    listed = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    body = f"{path}:{line}:{column + 1}: {diagnostic.code} {diagnostic.message}"
    return f"::{_COMMAND[diagnostic.severity]} {listed}::{escape_data(body)}"
