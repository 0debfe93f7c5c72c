"""``prose check --format sarif``: a SARIF 2.1.0 log, valid against the OASIS schema.

The schema is vendored (tests/cli/sarif/, see its README): tests never reach the network.
``jsonschema`` checks formats only with optional packages, so URIs are checked here by hand.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprose import __version__
from openprose.cli.sarif import SarifLog
from openprose.codes import CODES
from openprose.diagnostics import Diagnostic, Related, Severity
from openprose.reference import REPOSITORY, heading_anchor
from tests.cli.fixture_types import RunProse, WriteSource

SCHEMA = Path(__file__).parent / "sarif" / "sarif-schema-2.1.0.json"
DIAGNOSTICS_DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"

# RFC 3986: what a URI reference may hold once percent-encoded.
URI_REFERENCE = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")

DUPLICATE_AGENT = """\
agent writer:
  model: sonnet
agent writer:
  model: opus
session: writer
  prompt: "Draft"
"""


@cache
def validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def assert_valid(log: dict[str, Any]) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator().iter_errors(log)]
    assert errors == []
    for uri in _uris(log):
        assert URI_REFERENCE.fullmatch(uri), uri


def _uris(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k in ("uri", "helpUri", "informationUri")]
        return found + [uri for v in value.values() for uri in _uris(v)]
    if isinstance(value, list):
        return [uri for v in value for uri in _uris(v)]
    return []


def check_sarif(prose: RunProse, *args: str, cwd: Path | None = None) -> tuple[int, Any]:
    result = prose("check", "--format", "sarif", *args, cwd=cwd)
    log = json.loads(result.stdout)
    assert_valid(log)
    return result.returncode, log


def test_errors_and_warnings_validate_with_their_regions(
    prose: RunProse, source: WriteSource
) -> None:
    source("flows/bad.prose", 'session "Hello\n')
    # The undefined name comes after an accented letter and an emoji: one code point each.
    source("flows/warn.prose", 'session ""\nsession "é🙂{y}"\n')
    status, log = check_sarif(prose, "flows")
    assert status == 1
    (run,) = log["runs"]
    assert run["columnKind"] == "unicodeCodePoints"
    found = {
        (r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for r in run["results"]
    }
    assert found == {
        ("E001", "error", "flows/bad.prose"),
        ("W001", "warning", "flows/warn.prose"),
        ("E044", "error", "flows/warn.prose"),
    }
    (undefined,) = [r for r in run["results"] if r["ruleId"] == "E044"]
    region = undefined["locations"][0]["physicalLocation"]["region"]
    # `{y}` starts at code point 12 (UTF-16 would count 13: the emoji takes two units).
    assert region == {"startLine": 2, "startColumn": 12, "endLine": 2, "endColumn": 15}
    assert run["invocations"] == [{"executionSuccessful": True}]


def test_locations_are_relative_to_the_working_directory(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    source("project/sub dir/ünï #1.prose", 'session "Hello\n')
    source("elsewhere.prose", 'session "Hello\n')
    _, log = check_sarif(
        prose, "sub dir", str(tmp_path / "elsewhere.prose"), cwd=tmp_path / "project"
    )
    (run,) = log["runs"]
    root = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert root == (tmp_path / "project").as_uri() + "/"
    inside, outside = (
        r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]
    )
    assert inside["uriBaseId"] == "%SRCROOT%"
    assert unquote(inside["uri"]) == "sub dir/ünï #1.prose"
    # Outside the working directory, "../" would not resolve in code scanning.
    assert outside == {"uri": (tmp_path / "elsewhere.prose").as_uri()}


def test_rules_list_every_code_with_its_documentation(prose: RunProse, source: WriteSource) -> None:
    source("clean.prose", 'session "Hello"\n')
    status, log = check_sarif(prose, "clean.prose")
    assert status == 0
    driver = log["runs"][0]["tool"]["driver"]
    assert (driver["name"], driver["version"], driver["informationUri"]) == (
        "openprose",
        __version__,
        REPOSITORY,
    )
    assert [rule["id"] for rule in driver["rules"]] == sorted(CODES)
    headings = {
        heading_anchor(line.removeprefix("### ").replace("`", ""))
        for line in DIAGNOSTICS_DOC.read_text(encoding="utf-8").splitlines()
        if line.startswith("### ")
    }
    for rule in driver["rules"]:
        entry = CODES[rule["id"]]
        assert rule["shortDescription"]["text"] == entry.title
        expected_level = "error" if entry.severity is Severity.ERROR else "warning"
        if entry.severity > Severity.WARNING:
            expected_level = "note"
        assert rule["defaultConfiguration"]["level"] == expected_level
        page, anchor = rule["helpUri"].split("#")
        assert page.endswith("/docs/diagnostics.md")
        assert anchor in headings, rule["id"]
    assert log["runs"][0]["results"] == []


def test_a_result_points_to_its_rule_and_related_places(
    prose: RunProse, source: WriteSource
) -> None:
    source("agents.prose", DUPLICATE_AGENT)
    _, log = check_sarif(prose, "agents.prose")
    run = log["runs"][0]
    (duplicate,) = [r for r in run["results"] if r["ruleId"] == "E006"]
    assert run["tool"]["driver"]["rules"][duplicate["ruleIndex"]]["id"] == "E006"
    (related,) = duplicate["relatedLocations"]
    assert related["physicalLocation"]["region"]["startLine"] == 1
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "agents.prose"
    assert related["message"]["text"]


def test_a_related_place_in_an_imported_program_is_relative_too(
    prose: RunProse, source: WriteSource
) -> None:
    source("lib/research.prose", 'input topic: "t"\ninput depth: "d"\nsession "{topic} {depth}"\n')
    source("main.prose", 'use "./lib/research" as research\n\nlet r = research(topic: "tides")\n')
    _, log = check_sarif(prose, "main.prose")
    (missing,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "E026"]
    (declared,) = missing["relatedLocations"]
    # The analyzer names the imported file by its absolute path; SARIF gets it relative.
    location = declared["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "lib/research.prose", "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] == 2


def test_an_unreadable_path_is_a_notification_and_exit_2(
    prose: RunProse, source: WriteSource
) -> None:
    source("bad.prose", 'session "Hello\n')
    status, log = check_sarif(prose, "bad.prose", "missing.prose")
    assert status == 2
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (notification,) = invocation["toolExecutionNotifications"]
    assert notification["level"] == "error"
    assert "missing.prose" in notification["message"]["text"]
    assert len(log["runs"][0]["results"]) == 1


def test_standard_input_has_no_uri(prose: RunProse) -> None:
    result = prose("check", "--format", "sarif", "-", stdin='session "Hello\n')
    log = json.loads(result.stdout)
    assert_valid(log)
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"description": {"text": "standard input"}}


def test_the_vendored_schema_rejects_a_broken_log() -> None:
    # Guards the guard: a validator that accepted everything would make every test above pass.
    log = SarifLog("/").log()
    log["runs"][0]["columnKind"] = "bytes"
    with pytest.raises(AssertionError):
        assert_valid(log)


@given(
    name=st.text(
        st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/\\"),
        min_size=1,
        max_size=20,
    ).filter(lambda n: n not in (".", "..")),
    severity=st.sampled_from(Severity),
    line=st.integers(1, 10_000),
    column=st.integers(0, 500),
    width=st.integers(0, 50),
)
def test_any_file_name_and_range_validate(
    name: str, severity: Severity, line: int, column: int, width: int
) -> None:
    sarif = SarifLog("/project")
    related = Related("first defined here", (1, 0), (1, 3), path=f"/project/other/{name}")
    diagnostic = Diagnostic(
        "E006", "duplicate", severity, (line, column), (line, column + width), (related,)
    )
    sarif.add(name, f"/project/{name}", [diagnostic])
    log = sarif.log()
    assert_valid(log)
    (result,) = log["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert unquote(location["artifactLocation"]["uri"]) == name
    assert location["region"]["startColumn"] == column + 1
    assert location["region"]["endColumn"] == column + width + 1
    other = result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]
    assert unquote(other["uri"]) == f"other/{name}"
