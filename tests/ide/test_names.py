"""The name index all the name features share: robust on garbage, answering from one index
built per analysis on a large program."""

from __future__ import annotations

import pytest

from openprose.ide import analyze_document
from openprose.ide.definition import definition
from openprose.ide.highlights import highlights
from openprose.ide.names import index_of
from openprose.ide.references import references
from openprose.ide.rename import prepare_rename, rename


@pytest.mark.parametrize("text", ["", "\n", "$$$ ;;", '"""open', "let = \n  :", "\ufeffagent"])
def test_garbage_does_not_crash(text: str) -> None:
    analysis = analyze_document(text)
    lines = text.split("\n")
    for line in range(len(lines) + 1):
        for column in range(len(lines[line]) + 2 if line < len(lines) else 1):
            position = (line, column)
            definition(analysis, position)
            references(analysis, position, True)
            highlights(analysis, position)
            prepare_rename(analysis, position)
            rename(analysis, position, "x")


def test_requests_on_a_large_program() -> None:
    parts = ['agent scout:\n  model: sonnet\nblock step(x):\n  session "Step {x}"\n']
    for n in range(3400):
        previous = f"v{max(n - 1, 0)}"
        parts.append(
            f'let v{n} = session: scout\n  prompt: "Go {{{previous}}}"\n  context: {previous}\n'
        )
        if n % 100 == 0:
            parts.append("do step(v0)\n")
    text = "".join(parts)
    assert text.count("\n") > 10_000
    analysis = analyze_document(text)
    index_of(analysis)  # built once per analysis
    lines = text.split("\n")
    line = next(i for i in range(5000, len(lines)) if lines[i].startswith("  context: "))
    position = (line, len("  context: ") + 1)  # a variable used deep in the program
    # Answers from the per-analysis index on a program of over 10,000 lines.
    assert definition(analysis, position)
    assert references(analysis, position, True)
    assert highlights(analysis, position)
    assert prepare_rename(analysis, position) is not None
