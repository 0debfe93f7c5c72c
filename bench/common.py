"""Shared helpers of the benchmark scripts: importing the parser, timing, statistics, tree dumps."""

from __future__ import annotations

import contextlib
import gc
import importlib
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS_DIR = REPO_ROOT.parent / "shared" / "corpus"

DumpEntry = tuple[object, ...]


def load_syntax() -> ModuleType:
    """Import ``openprose.syntax``, falling back to the in-tree ``server/`` directory."""
    try:
        return importlib.import_module("openprose.syntax")
    except ImportError:
        sys.path.insert(0, str(REPO_ROOT / "server"))
        return importlib.import_module("openprose.syntax")


@contextlib.contextmanager
def postgres_server(url: str | None, throwaway: bool) -> Iterator[str | None]:
    """The PostgreSQL a script measures: ``url``, or with ``throwaway`` a cluster with
    PostgreSQL's default durability started as the tests start theirs (Debian's
    postgresql), stopped at the end; None: no PostgreSQL."""
    if not throwaway:
        yield url
        return
    sys.path.insert(0, str(REPO_ROOT))
    from tests.postgres_cluster import Cluster

    cluster = Cluster(durable=True).start()
    try:
        yield cluster.url()
    finally:
        cluster.stop()


def time_once(func: Callable[[], object]) -> float:
    """Seconds taken by one call of ``func``, after a full garbage collection."""
    gc.collect()
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` in 0..1) of a non-empty list."""
    ordered = sorted(values)
    rank = min(len(ordered), max(1, math.ceil(fraction * len(ordered))))
    return ordered[rank - 1]


def median(values: list[float]) -> float:
    return statistics.median(values)


def _walk(root: Any) -> Iterator[tuple[int, Any]]:
    """Pre-order walk yielding (depth, node); iterative, so deep trees are fine."""
    stack: list[tuple[int, Any]] = [(0, root)]
    while stack:
        depth, node = stack.pop()
        yield depth, node
        children = getattr(node, "children", None)
        if children is not None:
            stack.extend((depth + 1, child) for child in reversed(children))


def dump_tree(root: Any) -> list[DumpEntry]:
    """Leaves as (class, type, value, prefix, start_pos); nodes as (depth, class, type)."""
    out: list[DumpEntry] = []
    for depth, node in _walk(root):
        name = type(node).__name__
        if getattr(node, "children", None) is None:
            out.append((depth, name, node.type, node.value, node.prefix, node.start_pos))
        else:
            out.append((depth, name, node.type, len(node.children)))
    return out


def parent_problems(root: Any) -> int:
    """How many children do not point back at their parent node."""
    bad = 0
    for _, node in _walk(root):
        for child in getattr(node, "children", None) or ():
            bad += child.parent is not node
    return bad


def error_count(root: Any) -> int:
    """Error nodes and error leaves in a tree (parso's ``error_node`` / ``error_leaf`` types)."""
    return sum(1 for _, node in _walk(root) if node.type in ("error_node", "error_leaf"))


def first_difference(left: list[DumpEntry], right: list[DumpEntry]) -> str:
    """A short description of where two dumps start to differ."""
    for index, (a, b) in enumerate(zip(left, right, strict=False)):
        if a != b:
            return f"entry {index}: incremental={a!r} full={b!r}"
    return f"lengths differ: incremental={len(left)} full={len(right)}"


def compare_with_full_parse(module: Any, text: str, parse: Callable[[str], Any]) -> str:
    """``"OK"`` when ``module`` matches a fresh parse of ``text``, else a MISMATCH description."""
    if module.get_code() != text:
        return "MISMATCH (get_code() differs from the document text)"
    mine, fresh = dump_tree(module), dump_tree(parse(text))
    if mine != fresh:
        return "MISMATCH (" + first_difference(mine, fresh) + ")"
    bad_parents = parent_problems(module)
    if bad_parents:
        return f"MISMATCH ({bad_parents} stale parent pointers)"
    return "OK"


def format_table(header: list[str], rows: list[list[str]], text_columns: int = 1) -> str:
    """Left-align the first ``text_columns`` columns, right-align the others."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        parts = [
            cell.ljust(width) if index < text_columns else cell.rjust(width)
            for index, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([line(header), rule, *(line(row) for row in rows)])
