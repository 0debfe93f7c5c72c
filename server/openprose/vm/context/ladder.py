"""How a context binding is passed to a session (spec: Context Passing; state/in-context.md,
Context Serialization).

By reference when the agent can read files and the binding is on disk: the session gets its
path and reads what it needs.  Otherwise by value, by the spec's ladder of sizes: under
2,000 characters verbatim, 2,000 to 8,000 summarised to key points, over 8,000 reduced to
its essentials.  A summary is a backend step (``SummaryRequest``, mode ``summary`` or
``essentials``) journaled by the value's content hash, so a value passed to many sessions
is summarised once; the binding itself is never changed.
"""

from __future__ import annotations

from dataclasses import dataclass

VERBATIM_BELOW = 2_000  # characters: passed as they are
ESSENTIALS_ABOVE = 8_000  # characters: essentials extracted, not summarised
SUMMARY_LIMIT = 2_000  # characters a summary or an extract is asked to fit in

VERBATIM, SUMMARY, ESSENTIALS, REFERENCE = "verbatim", "summary", "essentials", "reference"


@dataclass(frozen=True)
class Item:
    """One context binding as sent."""

    name: str
    text: str  # what the session receives: the value, its summary, or the reference
    form: str  # verbatim | summary | essentials | reference | dropped
    chars: int  # characters of the binding's value
    location: str | None = None  # where the binding is stored, when it is


def tier(text: str, verbatim_below: int = VERBATIM_BELOW) -> str:
    """The form a value of this size is passed in by value."""
    size = len(text)
    if size < verbatim_below:
        return VERBATIM
    return SUMMARY if size <= ESSENTIALS_ABOVE else ESSENTIALS


def reference(name: str, location: str, chars: int) -> str:
    """What a session with file access receives for a binding passed by reference."""
    return (
        f"[by reference: {location} ({chars:,} characters). Read this file for the value; "
        "for a large one, read what the task needs.]"
    )


def dropped(name: str, chars: int) -> str:
    """What replaces a binding's value that was dropped to fit the window."""
    return f"[{name}: {chars:,} characters left out to fit the model's context window]"
