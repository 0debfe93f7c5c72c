"""Counting a request's tokens: the provider's counter where it has one, else an estimate.

The estimate is four characters a token, rounded up, per piece of text (docs/context.md):
the usual figure for English prose, which over-counts code and under-counts text in
scripts outside the Latin alphabet.  It is what the budget uses unless the backend has a
counter (``count_tokens``: Anthropic's token-counting endpoint); the counter is a request
of its own, so the VM asks it only when the estimate comes near a decision (compaction or
the window), and a failed count falls back to the estimate.
"""

from __future__ import annotations

from typing import Any

CHARS_PER_TOKEN = 4
# The estimate is trusted below this share of the window; above it the provider's counter,
# when there is one, decides (it is a round trip, so not asked for every session).
COUNT_ABOVE = 0.5


def estimate(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def counter_of(backend: object) -> Any | None:
    """The backend's ``count_tokens(request) -> int`` under its wrappers, if it has one."""
    target: object | None = backend
    while target is not None:
        count = getattr(target, "count_tokens", None)
        if callable(count):
            return count
        target = getattr(target, "inner", None)
    return None


def backend_name(backend: object) -> str:
    """The name of the model backend under the journal and recording wrappers."""
    target = backend
    while getattr(target, "inner", None) is not None:
        target = target.inner  # type: ignore[attr-defined]
    return str(getattr(target, "name", ""))
