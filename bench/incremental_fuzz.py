"""Random edits: after every ``Document.apply_edit``, the tree and the syntax diagnostics must
equal those of a full parse of the new text.

Run from the repository root: ``python bench/incremental_fuzz.py`` (see bench/README.md).
Prints edits/s and the number of mismatches (which must be 0), and the first mismatches found,
each shrunk to a small reproducer.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from common import CORPUS_DIR, dump_tree, load_syntax, parent_problems
from generate import block_program, flat_program

Position = tuple[int, int]

# Pieces of inserted text: the tokens and layouts that change the block structure or the
# extent of tokens (quotes, condition markers, brackets, colons, line breaks, indentation,
# clause keywords), and headers whose expression takes the lines below it (a block inside
# brackets, a session that continues with `->` or takes properties).
FRAGMENTS = [
    '"', '"""', "**", "***", "(", ")", "[", "]", "{", "}", ":", ",", "->", "|", "=", "\n",
    "\r\n", "\r", "  ", "    ", "\t", "#", "\\", "{name}", "else:", "else", "elif **c**:",
    "catch:", "finally:", 'option "x":', "é", "\U0001d11e", "\u00a0", "session", ' "p"',
    "agent a:", "\n  model: sonnet", "let x = ", "parallel:", "parallel(", "\n  ", "\n    ",
    "| map:", " | map:", "do:", "loop", "(loop)", "loop until **done** (max: 3):", "try:",
    "if **c**:", "block b(p):", "x", "1", "not ", "choice **c**:", "prompt: ", "\n        ",
    "for x in session", "repeat session", "session:", "f(do:", "[loop", "if not do:", "->a",
]  # fmt: skip


@dataclass(frozen=True)
class Edit:
    start: Position
    end: Position
    text: str


@dataclass
class Mismatch:
    before: str
    edit: Edit
    what: str


def starting_texts(rng: random.Random, count: int) -> list[str]:
    """Windows of generated programs and of the corpus (a few to a few dozen lines each), and
    as many short runs of random fragments (where the odd structures are)."""
    sources = [flat_program(400), block_program(400)]
    corpus = sorted(CORPUS_DIR.rglob("*.prose")) if CORPUS_DIR.is_dir() else []
    sources += [path.read_text(encoding="utf-8", errors="replace") for path in corpus]
    texts = [""]
    while len(texts) < count:
        if len(texts) % 2:
            texts.append("".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 40))))
            continue
        lines = rng.choice(sources).splitlines(keepends=True)
        size = rng.randint(1, 40)
        start = rng.randrange(max(1, len(lines) - size + 1))
        texts.append("".join(lines[start : start + size]))
    return texts


def random_edit(rng: random.Random, text: str) -> Edit:
    lines = text.split("\n")
    line = rng.randrange(len(lines) + 1)
    column = rng.randrange(len(lines[line]) + 3) if line < len(lines) else rng.randrange(3)
    shape = rng.random()
    if shape < 0.5:
        end = (line, column)  # an insertion
    elif shape < 0.85:
        end = (line, column + rng.randint(1, 6))
    else:
        end = (line + rng.randint(1, 3), rng.randrange(12))
    if rng.random() < 0.1:
        new = "".join(chr(rng.randrange(32, 127)) for _ in range(rng.randint(1, 4)))
    else:
        new = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 3)))
    return Edit((line, column), end, new)


def compare(syntax: Any, doc: Any) -> str | None:
    """None when the document equals a full parse of its text, else what differs."""
    text = doc.text
    if doc.module.get_code() != text:
        return "get_code() differs from the text"
    fresh = syntax.parse(text)
    if dump_tree(doc.module) != dump_tree(fresh):
        return "tree differs"
    mine, full = syntax.syntax_diagnostics(doc.module), syntax.syntax_diagnostics(fresh)
    if mine != full:
        extra = [d for d in mine if d not in full]
        missing = [d for d in full if d not in mine]
        return f"diagnostics differ: incremental only {extra[:2]}, full only {missing[:2]}"
    if parent_problems(doc.module):
        return "stale parent pointers"
    return None


def reproduces(syntax: Any, before: str, edit: Edit) -> bool:
    doc = syntax.Document(before)
    try:
        doc.apply_edit(edit.start, edit.end, edit.text)
    except Exception:  # a crash is a mismatch too
        return True
    return compare(syntax, doc) is not None


def shrink(syntax: Any, before: str, edit: Edit) -> tuple[str, Edit]:
    """Drop lines after the edit, then lines before it (shifting the edit), while it still fails."""
    lines = before.splitlines(keepends=True)
    last = max(edit.start[0], edit.end[0])
    while len(lines) > last + 1 and reproduces(syntax, "".join(lines[:-1]), edit):
        lines = lines[:-1]
    index = 0
    while index < min(edit.start[0], edit.end[0]):
        moved = Edit((edit.start[0] - 1, edit.start[1]), (edit.end[0] - 1, edit.end[1]), edit.text)
        candidate = lines[:index] + lines[index + 1 :]
        if reproduces(syntax, "".join(candidate), moved):
            lines, edit = candidate, moved
        else:
            index += 1
    return "".join(lines), edit


def run(
    syntax: Any, rng: random.Random, edits: int, per_document: int, max_chars: int
) -> tuple[int, list[Mismatch], float, float]:
    texts = starting_texts(rng, 400)
    mismatches: list[Mismatch] = []
    done = 0
    edit_seconds = 0.0
    started = time.perf_counter()
    clock: Callable[[], float] = time.perf_counter
    while done < edits:
        doc = syntax.Document(rng.choice(texts))
        for _ in range(per_document):
            if done >= edits or len(doc.text) > max_chars:
                break
            before = doc.text
            edit = random_edit(rng, before)
            try:
                t0 = clock()
                doc.apply_edit(edit.start, edit.end, edit.text)
                edit_seconds += clock() - t0
                what = compare(syntax, doc)
            except Exception as error:  # reported, then the run goes on
                what = f"raised {error!r}"
            done += 1
            if what is not None:
                mismatches.append(Mismatch(before, edit, what))
                doc = syntax.Document(doc.text)  # go on from a correct tree
    return done, mismatches, time.perf_counter() - started, edit_seconds


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--edits", type=int, default=100_000, help="random edits to apply")
    options.add_argument("--seed", type=int, default=12, help="random seed")
    options.add_argument("--per-document", type=int, default=40, help="edits before a new text")
    options.add_argument("--max-chars", type=int, default=6_000, help="start over past this size")
    options.add_argument("--show", type=int, default=5, help="mismatches to shrink and print")
    options.add_argument("--quick", action="store_true", help="a smoke run: 500 edits")
    args = options.parse_args()
    if args.quick:
        args.edits = 500

    syntax = load_syntax()
    rng = random.Random(args.seed)
    done, mismatches, seconds, in_edits = run(
        syntax, rng, args.edits, args.per_document, args.max_chars
    )
    print(
        f"{done} random edits (seed {args.seed}) in {seconds:.1f} s: {done / seconds:,.0f} edits/s"
    )
    print("  (each: apply_edit, a full parse of the new text, and the comparison of the trees")
    print("   and of the syntax diagnostics with their exact ranges)")
    print(f"  apply_edit alone: {in_edits:.1f} s, {done / in_edits:,.0f} edits/s")
    print(f"mismatches: {len(mismatches)}")
    for mismatch in mismatches[: args.show]:
        text, edit = shrink(syntax, mismatch.before, mismatch.edit)
        print(f"- {mismatch.what}")
        print(f"  Document({text!r}).apply_edit({edit.start}, {edit.end}, {edit.text!r})")
    if mismatches:
        sys.exit(1)


if __name__ == "__main__":
    main()
