"""Inlay hints: the parameter name before each positional argument of ``do name(...)``."""

from __future__ import annotations

from bisect import bisect_left

from openprose.ide.analysis import Analysis, to_pos
from openprose.ide.types import InlayHint, Range
from openprose.syntax import tree as t


def inlay_hints(analysis: Analysis, range: Range) -> list[InlayHint]:
    """``param:`` hints for the block arguments inside ``range`` (0-based positions)."""
    invocations = analysis.context.nodes(t.DoInvocation)
    if not invocations:
        return []
    model = analysis.model
    start = (range.start[0] + 1, range.start[1])
    end = (range.end[0] + 1, range.end[1])
    index = bisect_left(invocations, start, key=lambda node: node.start_pos)
    # An invocation starting before the range may reach into it (arguments over lines).
    while index > 0 and invocations[index - 1].end_pos > start:
        index -= 1
    hints: list[InlayHint] = []
    for node in invocations[index:]:
        if node.start_pos > end:
            break
        arguments = node.arguments
        if arguments is None or node.name is None:
            continue
        block = model.block(node.name.value)
        if block is None:
            continue
        params = block.parameters()
        for param, argument in zip(params, arguments.items(), strict=False):
            if isinstance(argument, t.KeywordArgument):
                continue
            if isinstance(argument, t.Name) and argument.value == param.value:
                continue
            position = to_pos(argument.start_pos)
            if range.contains(position):
                hints.append(InlayHint(position, f"{param.value}:"))
    return hints
