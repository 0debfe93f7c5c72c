"""What the editor tests do when an editor, Node.js or an npm install is missing.

On a developer's machine a missing tool skips the test and says how to install it, so the
README's test command works on a fresh checkout. Under CI (the `CI` variable is set, as
`.ci/run` and every hosted CI service do) a missing tool is a failure: CI installs them all,
so a skip there would hide a broken set-up.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(message: str) -> NoReturn:
    """Skip (or, under CI, fail) because a tool the test drives is not installed."""
    if os.environ.get("CI"):
        pytest.fail(
            f"{message} (CI is set, so missing tools fail instead of skipping)", pytrace=False
        )
    pytest.skip(message)
