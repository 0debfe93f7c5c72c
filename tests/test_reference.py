"""Diagnostic code links: one repository address, pinned to the running version's release
tag, with anchors that GitHub really gives the headings of docs/diagnostics.md."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import unicodedata
from pathlib import Path

import pytest

from openprose import __version__
from openprose.codes import CODES
from openprose.reference import (
    REPOSITORY,
    code_anchor,
    code_url,
    diagnostics_reference,
    release_ref,
)

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "diagnostics.md"


def rendered_headings(markdown: str) -> list[str]:
    """The text of every ATX heading outside fenced code, as rendered (inline code without
    its backticks, backslash escapes resolved)."""
    headings = []
    fence: str | None = None
    for line in markdown.splitlines():
        opening = re.match(r" {0,3}(`{3,}|~{3,})", line)
        if opening:
            if fence is None:
                fence = opening.group(1)[0] * len(opening.group(1))
            elif line.strip().startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        match = re.match(r" {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", line)
        if match:
            text = re.sub(r"`+([^`]*)`+", r"\1", match.group(1))
            headings.append(re.sub(r"\\(.)", r"\1", text))
    return headings


def github_anchors(markdown: str) -> list[str]:
    """The anchors GitHub gives the headings, in order (github-slugger: lower case, keep
    letters, marks, numbers, connector punctuation, spaces and hyphens, spaces to hyphens;
    a repeated anchor gets -1, -2...)."""
    seen: dict[str, int] = {}
    anchors = []
    for text in rendered_headings(markdown):
        slug = "".join(
            c
            for c in text.lower()
            if c in " -" or unicodedata.category(c)[0] in "LMN" or unicodedata.category(c) == "Pc"
        ).replace(" ", "-")
        if slug in seen:
            seen[slug] += 1
            slug = f"{slug}-{seen[slug]}"
        else:
            seen[slug] = 0
        anchors.append(slug)
    return anchors


ANCHORS = github_anchors(DOC.read_text(encoding="utf-8"))
HEADINGS = rendered_headings(DOC.read_text(encoding="utf-8"))


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_code_links_to_its_own_heading(code: str) -> None:
    url = code_url(code)
    assert url is not None
    page, _, anchor = url.partition("#")
    assert page == diagnostics_reference()
    assert anchor in ANCHORS, f"{code}: no heading of docs/diagnostics.md has #{anchor}"
    heading = HEADINGS[ANCHORS.index(anchor)]
    assert heading.startswith(f"{code}: "), heading


def test_the_slugger_follows_github() -> None:
    # Examples of GitHub's rendering (punctuation dropped, inline code kept as text).
    assert github_anchors("# `resume:` requires persistent agent\n") == [
        "resume-requires-persistent-agent"
    ]
    assert github_anchors('### W003: Exceeds 10,000 "chars" (x)\n## A\n## A\n') == [
        "w003-exceeds-10000-chars-x",
        "a",
        "a-1",
    ]
    assert github_anchors("```prose\n# not a heading\n```\n# Real\n") == ["real"]
    assert code_anchor("E017") == "e017-resume-requires-persistent-agent"
    assert code_anchor("X999") is None


def test_links_are_pinned_to_the_release_tag() -> None:
    assert release_ref("0.1.0") == "v0.1.0"
    assert release_ref("1.12.3") == "v1.12.3"
    assert release_ref("0.2.0.dev3") == "main"
    assert release_ref("0.2.0+local") == "main"
    assert diagnostics_reference("0.1.0") == f"{REPOSITORY}/blob/v0.1.0/docs/diagnostics.md"
    assert diagnostics_reference() == diagnostics_reference(__version__)
    assert code_url("E007", "https://docs.example/diagnostics.html") == (
        "https://docs.example/diagnostics.html#e007-undefined-agent-reference"
    )


def test_one_repository_address() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["urls"]["Repository"] == REPOSITORY
    assert project["urls"]["Documentation"].startswith(REPOSITORY + "/")
    package = json.loads((ROOT / "vscode-extension" / "package.json").read_text("utf-8"))
    assert package["repository"]["url"].removesuffix(".git") == REPOSITORY


def test_an_installed_package_links_as_well(tmp_path: Path) -> None:
    """Away from a source checkout (no docs/ anywhere above the package), as pip or the VS
    Code extension install it, codes still link."""
    site = tmp_path / "site"
    shutil.copytree(
        ROOT / "server" / "openprose",
        site / "openprose",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    script = (
        "from openprose.lsp import convert, positions\n"
        "from openprose.diagnostics import Diagnostic, Severity\n"
        "import openprose\n"
        "d = Diagnostic('E007', 'm', Severity.ERROR, (1, 0), (1, 1))\n"
        "p = convert.Positions(lambda n: 'x', 'utf-16')\n"
        "print(openprose.__file__)\n"
        "print(convert.diagnostic(d, p, 'file:///x.prose').code_description.href)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    where, href = done.stdout.split()
    assert Path(where).is_relative_to(site)
    assert href == f"{diagnostics_reference()}#e007-undefined-agent-reference"
