"""What the tests of the name features share: programs with a `‸` cursor, ranges of a needle,
and a caller and the program it imports."""

from __future__ import annotations

from pathlib import Path

from openprose.ide import analyze_document
from openprose.ide.analysis import Analysis
from openprose.ide.rename import rename
from openprose.ide.types import Range, RenameError
from tests.support.cursor import cursor
from tests.support.edits import apply_edits


def load(source: str, path: Path | None = None) -> tuple[Analysis, tuple[int, int]]:
    text, position = cursor(source)
    return analyze_document(text, path=path), position


def spot(text: str, needle: str, nth: int = 0, skip: int = 0) -> Range:
    """The range of the ``nth`` occurrence of ``needle``, ``skip`` characters trimmed from
    its start (``spot(t, "{x", skip=1)`` is the ``x`` of an interpolation)."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    at += skip
    line = text.count("\n", 0, at)
    column = at - (text.rfind("\n", 0, at) + 1)
    return Range((line, column), (line, column + len(needle) - skip))


def renamed(source: str, new_name: str, path: Path | None = None) -> str:
    analysis, position = load(source, path)
    result = rename(analysis, position, new_name)
    assert not isinstance(result, RenameError), result
    assert set(result) == {None}
    return apply_edits(analysis.text, result[None])


def refused(source: str, new_name: str = "fresh", path: Path | None = None) -> str:
    analysis, position = load(source, path)
    result = rename(analysis, position, new_name)
    assert isinstance(result, RenameError), result
    return result.message


def at_word(text: str, needle: str, nth: int = 0, offset: int = 1) -> tuple[int, int]:
    found = spot(text, needle, nth)
    return found.start[0], found.start[1] + offset


PROGRAM = """\
agent researcher:
  model: sonnet
  persist: true
block review(doc, depth):
  session "Review {doc} at {depth} depth"
    context: doc
input topic: "The subject"
let notes = session: researcher
  prompt: "Research {topic}"
notes = resume: researcher
  context: notes
parallel:
  a = session "A"
  b = session "B"
do review(notes, 2)
session "Combine {a.summary}"
  context: { a, b }
"""

LIBRARY = """\
input topic: "The subject to research"
input depth: "How deep to go"
let notes = session "Research {topic} to {depth}"
  context: topic
output findings = session "Summarise {topic}"
  context: notes
output sources = session "List the sources"
"""

CALLER = """\
use "./lib.prose" as lib
let r = lib(topic: "x", depth: "y")
let again = lib(topic: "z", depth: "w")
session "Report {r.findings}"
  context: r.findings
let { findings, sources } = lib(topic: "q", depth: "p")
session "More"
  context: findings
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
