"""Where the project's documentation is published, and a link to each diagnostic code's entry.

There is no documentation site yet: the reference is docs/diagnostics.md in the repository,
as GitHub renders it, at the release tag of the running version (so a code links to the text
that matches the checker the user runs, wherever the package is installed).  A version that is
not a release (a development build) links to the main branch instead.
"""

from __future__ import annotations

import re
import unicodedata

from openprose import __version__

# The one place the repository's address is written in the package (pyproject.toml's
# [project.urls] and the VS Code extension's package.json name the same; a test checks it).
REPOSITORY = "https://github.com/openprose-toolchain/openprose"
REFERENCE_PATH = "docs/diagnostics.md"

_RELEASE = re.compile(r"\d+(\.\d+)*")


def release_ref(version: str = __version__) -> str:
    """The git ref holding this version's documentation: its tag (``v1.2.3``), or ``main``."""
    return f"v{version}" if _RELEASE.fullmatch(version) else "main"


def diagnostics_reference(version: str = __version__) -> str:
    """The URL of the diagnostics reference for ``version``."""
    return f"{REPOSITORY}/blob/{release_ref(version)}/{REFERENCE_PATH}"


def heading_anchor(text: str) -> str:
    """The anchor GitHub gives a Markdown heading whose rendered text is ``text``: lower
    case, everything but letters, digits, marks, ``_``, ``-`` and spaces dropped, each space a
    ``-`` (github-slugger's rule; the first heading with a given anchor keeps it as is)."""
    kept = [
        c
        for c in text.lower()
        if c in " -" or unicodedata.category(c)[0] in "LMN" or unicodedata.category(c) == "Pc"
    ]
    return "".join(kept).replace(" ", "-")


def code_anchor(code: str) -> str | None:
    """The anchor of a code's heading (``### E007: Undefined agent reference``), None for an
    unknown code."""
    from openprose.codes import CODES

    entry = CODES.get(code)
    if entry is None:
        return None
    return heading_anchor(f"{code}: {entry.title.replace('`', '')}")


def code_url(code: str, reference: str | None = None) -> str | None:
    """A link to a code's entry in the reference (``reference``: the page's URL, by default
    this version's on GitHub); None for an unknown code."""
    anchor = code_anchor(code)
    if anchor is None:
        return None
    return f"{reference or diagnostics_reference()}#{anchor}"
