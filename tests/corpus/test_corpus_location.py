"""What a checkout without ../shared/corpus does: each module's corpus tests give way to one
test that skips with the reason, or fails under CI (tests/corpus/location.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus import location

ROOT = Path(__file__).resolve().parents[2]
MODULE = "tests/corpus/test_invalid_programs.py"


def without_the_corpus(missing: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    environment = {name: value for name, value in os.environ.items() if name != "CI"}
    environment[location.ENVIRONMENT_VARIABLE] = str(missing)
    if ci is not None:
        environment["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider", MODULE],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def summary(output: str) -> str:
    return output.strip().splitlines()[-1]


@pytest.mark.parametrize("ci", [None, "false"])
def test_without_the_corpus_a_module_skips_once_with_the_reason(
    tmp_path: Path, ci: str | None
) -> None:
    missing = tmp_path / "no-corpus"
    result = without_the_corpus(missing, ci)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    reason = f"{missing} ({location.ENVIRONMENT_VARIABLE}) not found: the corpus tests need it"
    assert f"SKIPPED [1] {MODULE}: {reason}" in output
    assert re.match(r"1 skipped, \d+ deselected in ", summary(output)), output


def test_without_the_corpus_a_module_fails_under_ci(tmp_path: Path) -> None:
    result = without_the_corpus(tmp_path / "no-corpus", "true")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert f"FAILED {MODULE}::{location.STAND_IN}" in output
    assert "CI is set, so a missing corpus fails" in output
    assert re.match(r"1 failed, \d+ deselected in ", summary(output)), output


@pytest.mark.parametrize(
    ("value", "ci"),
    [("", False), ("false", False), ("False", False), ("0", False), ("true", True), ("1", True)],
)
def test_ci_is_any_value_but_empty_false_or_0(
    monkeypatch: pytest.MonkeyPatch, value: str, ci: bool
) -> None:
    monkeypatch.setenv("CI", value)
    assert location.under_ci() is ci


def test_the_default_reason_names_the_place_beside_the_checkout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(location.ENVIRONMENT_VARIABLE, raising=False)
    assert location.missing_reason().startswith(
        "../shared/corpus not found beside the checkout: the corpus tests need it"
    )
    assert ROOT.parent / "shared" / "corpus" == location.BESIDE_THE_CHECKOUT
