"""What the completion tests share: programs written with the `‸` cursor marker and the items
completion gives there (never the same label twice)."""

from __future__ import annotations

from pathlib import Path

from openprose.ide.analysis import Analysis, analyze_document
from openprose.ide.completion import completion
from openprose.ide.types import CompletionItem, Pos
from tests.support.cursor import cursor

AGENTS = """\
agent researcher:
  model: sonnet
  prompt: "You research topics thoroughly"

agent captain:
  model: opus
  persist: true
  prompt: "You coordinate"

"""


RESEARCH = """\
input topic: "The subject to research"
input depth: "How deep to go"
output findings = session "Research {topic} to {depth} depth"
output sources = session "List the sources"
"""


def analysis_at(source: str, path: str | Path | None = None) -> tuple[Analysis, Pos]:
    text, position = cursor(source)
    return analyze_document(text, path=path), position


def complete(source: str, path: str | Path | None = None) -> list[CompletionItem]:
    analysis, position = analysis_at(source, path)
    items = completion(analysis, position)
    labels = [item.label for item in items]
    assert len(labels) == len(set(labels)), labels  # never the same item twice
    return items


def labels(source: str, path: str | Path | None = None) -> list[str]:
    return [item.label for item in complete(source, path)]


def item(source: str, label: str, path: str | Path | None = None) -> CompletionItem:
    found = [i for i in complete(source, path) if i.label == label]
    assert found, f"no {label!r} in {labels(source, path)}"
    return found[0]


USE = 'use "./research" as research\n'


VARIABLES = """\
let research = session "Research"
const config = session "Config"
"""
