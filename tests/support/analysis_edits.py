"""Random edits for comparing an incremental analysis with a full one, and the views that
compare them (tests/analysis/test_incremental.py, bench/incremental_analysis.py).

The edits favour what invalidation must get right: names that start or stop meaning an
agent, block or variable, definitions added and removed, lines that move the statements
below, and fragments typed anywhere (what breaks the block structure)."""

from __future__ import annotations

import random
import re
from typing import Any

from openprose.analysis import diagnostics_of, prepare
from openprose.analysis.incremental import IncrementalAnalysis, _chunks
from openprose.analysis.model import Model
from openprose.diagnostics import Diagnostic
from openprose.syntax import Document, parse
from tests.support.fragments import FRAGMENTS

# Names the edits put in and take out; the definitions and uses below use them.
NAMES = ["a", "b", "writer", "draft", "notes", "item", "x", "review", "topic", "z", "true"]
LINES = [
    "agent a:\n  model: sonnet\n",
    "agent writer:\n  persist: true\n",
    'let draft = session "d"\n',
    'block b(x):\n  session "{x}"\n',
    'input topic: "t"\n',
    'use "p/z" as z\n',
    "output review = draft\n",
    'resume: writer\n  prompt: "{notes}"\n',
    "do b(draft)\n",
    "session: a\n  context: notes\n",
    "notes = draft\n",
    'for x in draft:\n  let y = session "{x}"\n',
    'const notes = "n"\n',
    'session "uses {draft} and {topic}"\n',
    "parallel:\n  notes = session: writer\n",
    'loop until **done** (max: 2):\n  let inner = session "i"\n',
    'session "after {inner}"\n',
    "\n",
]
WORD = re.compile(r"[A-Za-z_][\w-]*")


def edit_at(rng: random.Random, text: str) -> tuple[tuple[int, int], tuple[int, int], str]:
    """A random edit of ``text``: a word renamed, a definition or use inserted, a line
    deleted, or fragments typed anywhere."""
    lines = text.split("\n")
    shape = rng.random()
    if shape < 0.3:
        words = [(i, m) for i, line in enumerate(lines) for m in WORD.finditer(line)]
        if words:
            i, match = rng.choice(words)
            return (i, match.start()), (i, match.end()), rng.choice(NAMES)
    if shape < 0.55:
        i = rng.randrange(len(lines) + 1)
        return (i, 0), (i, 0), rng.choice(LINES)
    if shape < 0.7 and len(lines) > 1:
        i = rng.randrange(len(lines) - 1)
        return (i, 0), (i + 1, 0), ""
    line = rng.randrange(len(lines))
    column = rng.randrange(len(lines[line]) + 1)
    end = (line, min(len(lines[line]), column + rng.choice([0, 0, 1, 3])))
    return (line, column), end, "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 2)))


def diagnostics_view(diagnostics: list[Diagnostic]) -> list[tuple[Any, ...]]:
    return [(d.start, d.end, d.code, d.message, d.severity, d.related) for d in diagnostics]


def model_view(model: Model) -> tuple[Any, ...]:
    """The model by names and positions (the objects differ between the two analyses)."""

    def place(symbol: Any) -> Any:
        return None if symbol is None else (symbol.name, symbol.kind, symbol.leaf.start_pos)

    return (
        [(*place(s), s.scope.kind if s.scope else None) for s in model.definitions],
        [
            (r.name, r.role, r.start, r.end, place(r.symbol), place(r.hidden))
            for r in model.references
        ],
        {name: [a.start_pos for a in agents] for name, agents in model.agents.items()},
        {name: [b.start_pos for b in blocks] for name, blocks in model.blocks.items()},
        {name: [u.start_pos for u in uses] for name, uses in model.programs.items()},
        [place(s) for s in model.inputs],
        [place(s) for s in model.outputs],
        [(leaf.start_pos, node.start_pos) for leaf, node in model.agent_references],
        [node.start_pos for node in model.block_references],
        [(s.kind, s.node.start_pos) for s in model.scopes],
    )


def analysed(text: str) -> tuple[Document, IncrementalAnalysis]:
    """A document of ``text`` and its incremental analysis, made once."""
    document = Document(text)
    incremental = IncrementalAnalysis()
    incremental.diagnostics(incremental.prepare(document.module))
    return document, incremental


def compared(document: Document, incremental: IncrementalAnalysis) -> tuple[str | None, Model]:
    """The document's current text analysed incrementally (after ``changed`` was told of
    the edits) and from scratch: what differs (None: nothing), and the incremental model."""
    ctx = incremental.prepare(document.module)
    got = diagnostics_view(incremental.diagnostics(ctx))
    full = prepare(parse(document.text))
    if got != diagnostics_view(diagnostics_of(full)):
        return "the diagnostics", ctx.model
    if model_view(ctx.model) != model_view(full.model):
        return "the model", ctx.model
    # The runs kept at both ends of an edit are those cutting the whole module makes.
    if incremental.runs() != _chunks(document.module.children):
        return "the runs", ctx.model
    return None, ctx.model
