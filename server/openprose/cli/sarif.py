"""``prose check --format sarif``: one SARIF 2.1.0 log for code scanning (GitHub's
upload-sarif action, and any SARIF viewer).

Columns are 1-based and count Unicode code points, as every other format here does; the run
says so with ``columnKind: unicodeCodePoints`` (SARIF's other unit is UTF-16 code units).
``endColumn`` is the column just past the region, SARIF's own convention.

Files under the working directory are named by a URI relative to it, resolved against
``%SRCROOT%`` (the working directory, given in ``originalUriBaseIds``): code scanning matches
them to the repository when ``prose check`` runs at its root.  A file elsewhere gets an
absolute ``file:`` URI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath
from typing import Any, TextIO
from urllib.parse import quote

from openprose import __version__
from openprose.codes import CODES
from openprose.diagnostics import Diagnostic, Position, Severity
from openprose.reference import REPOSITORY, code_url

SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
TOOL_NAME = "openprose"
SOURCE_ROOT = "%SRCROOT%"

# SARIF has no level below "note".
_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFORMATION: "note",
    Severity.HINT: "note",
}

Json = dict[str, Any]


class SarifLog:
    """Collects the results of one ``prose check`` and writes them as one log at the end."""

    def __init__(self, working_directory: str | None = None) -> None:
        # Not resolved: file paths are made absolute against the same unresolved directory.
        self._root = Path(os.path.abspath(working_directory or os.getcwd()))
        self._rule_index = {code: index for index, code in enumerate(sorted(CODES))}
        self._results: list[Json] = []
        self._notifications: list[Json] = []

    def add(self, display_path: str, fs_path: str | None, diagnostics: list[Diagnostic]) -> None:
        """The diagnostics of one source; ``fs_path`` None is standard input."""
        location = self._artifact(display_path, fs_path)
        for diagnostic in diagnostics:
            self._results.append(self._result(location, fs_path, diagnostic))

    def add_unreadable(self, message: str) -> None:
        """A path that could not be read: the run did not check everything it was asked to."""
        self._notifications.append({"level": "error", "message": {"text": message}})

    def log(self) -> Json:
        invocation: Json = {"executionSuccessful": not self._notifications}
        if self._notifications:
            invocation["toolExecutionNotifications"] = self._notifications
        return {
            "$schema": SCHEMA,
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {"driver": self._driver()},
                    "originalUriBaseIds": {SOURCE_ROOT: {"uri": self._root.as_uri() + "/"}},
                    "columnKind": "unicodeCodePoints",
                    "invocations": [invocation],
                    "results": self._results,
                }
            ],
        }

    def write(self, stream: TextIO) -> None:
        json.dump(self.log(), stream, indent=2, ensure_ascii=False)
        stream.write("\n")

    def _driver(self) -> Json:
        rules = []
        for code in self._rule_index:
            entry = CODES[code]
            rule: Json = {
                "id": code,
                "shortDescription": {"text": entry.title},
                "defaultConfiguration": {"level": _LEVEL[entry.severity]},
            }
            url = code_url(code)
            if url is not None:
                rule["helpUri"] = url
            rules.append(rule)
        return {
            "name": TOOL_NAME,
            "version": __version__,
            "informationUri": REPOSITORY,
            "rules": rules,
        }

    def _result(self, location: Json, fs_path: str | None, diagnostic: Diagnostic) -> Json:
        result: Json = {
            "ruleId": diagnostic.code,
            "level": _LEVEL[diagnostic.severity],
            "message": {"text": diagnostic.message},
            "locations": [_location(location, diagnostic.start, diagnostic.end)],
        }
        index = self._rule_index.get(diagnostic.code)
        if index is not None:
            result["ruleIndex"] = index
        related = []
        for number, note in enumerate(diagnostic.related, start=1):
            where = location if note.path is None else self._artifact(note.path, note.path)
            entry = _location(where, note.start, note.end)
            entry["id"] = number
            entry["message"] = {"text": note.message}
            related.append(entry)
        if related:
            result["relatedLocations"] = related
        return result

    def _artifact(self, display_path: str, fs_path: str | None) -> Json:
        if fs_path is None:
            return {"description": {"text": "standard input"}}
        absolute = Path(os.path.abspath(fs_path))
        try:
            relative = absolute.relative_to(self._root)
        except ValueError:
            # Outside the working directory (or through a symbolic link out of it): a relative
            # URI would need "..", which code scanning does not resolve.
            return {"uri": absolute.as_uri()}
        return {"uri": _uri_path(relative), "uriBaseId": SOURCE_ROOT}


def _uri_path(relative: PurePath) -> str:
    # Percent-encoded as a URI path: spaces, "%", "#", "?" and non-ASCII names are all legal
    # in file names and not in a URI.
    return quote(relative.as_posix(), safe="/")


def _location(artifact: Json, start: Position, end: Position) -> Json:
    (line, column), (end_line, end_column) = start, end
    region = {
        "startLine": line,
        "startColumn": column + 1,
        "endLine": end_line,
        "endColumn": end_column + 1,
    }
    return {"physicalLocation": {"artifactLocation": dict(artifact), "region": region}}
