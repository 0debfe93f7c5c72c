"""Signature help inside ``do name(...)`` and ``alias(...)`` (a program call).

The call is found from the leaves of the current logical line before the cursor (the
arguments of a call being typed rarely parse), so this works on incomplete lines.
"""

from __future__ import annotations

from typing import Any

from openprose.ide.analysis import Analysis
from openprose.ide.completion.contracts import input_descriptions, program_contract
from openprose.ide.completion.cursor import locate, segments
from openprose.ide.completion.items import leading_comment
from openprose.ide.types import Pos, SignatureHelp
from openprose.syntax import tree as t


def signature_help(analysis: Analysis, position: Pos) -> SignatureHelp | None:
    """The signature of the call whose parentheses hold ``position``, if any."""
    cursor = locate(analysis, position)
    if cursor is None or cursor.in_comment_or_condition():
        return None
    tokens = cursor.tokens
    index = _open_call(tokens)
    if index is None:
        return None
    callee = tokens[index - 1]
    head = tokens[index - 2].value if index > 1 else None
    parts = segments(tokens[index + 1 :])
    if head == "do":
        return _block(analysis, callee.value, len(parts) - 1)
    if head in ("block", "|") or callee.value == "reduce":
        return None
    if callee.value in analysis.model.programs:
        return _program(analysis, callee.value, parts)
    return None


def _open_call(tokens: list[Any]) -> int | None:
    """The index of the innermost open ``(`` that follows a name."""
    stack: list[int] = []
    for i, tok in enumerate(tokens):
        if not isinstance(tok, t.Operator):
            continue
        if tok.value in "([{":
            stack.append(i)
        elif tok.value in ")]}" and stack:
            stack.pop()
    for i in reversed(stack):
        if tokens[i].value == "(" and i > 0 and isinstance(tokens[i - 1], t.Name):
            return i
    return None


def _block(analysis: Analysis, name: str, commas: int) -> SignatureHelp | None:
    block = analysis.model.block(name)
    if block is None:
        return None
    params = tuple(p.value for p in block.parameters())
    return SignatureHelp(
        f"block {name}({', '.join(params)})",
        params,
        commas,
        leading_comment(block),
    )


def _program(analysis: Analysis, alias: str, parts: list[list[Any]]) -> SignatureHelp | None:
    contract = program_contract(analysis, alias)
    if contract is None:
        return None
    names = [port.name for port in contract.inputs]
    current = parts[-1]
    given = {
        part[0].value
        for part in parts
        if len(part) >= 2 and isinstance(part[0], t.Name) and part[1].value == ":"
    }
    if len(current) >= 2 and current[0].value in names and current[1].value == ":":
        active = names.index(current[0].value)  # the input being given
    else:
        # The next input to give: the first one not given yet.
        missing = [i for i, name in enumerate(names) if name not in given]
        active = missing[0] if missing else len(parts) - 1
    descriptions = input_descriptions(analysis, contract)
    lines = []
    for port in contract.inputs:
        line = f"- `{port.name}`"
        if port.name in descriptions:
            line += f": {descriptions[port.name]}"
        if not port.required:
            line += " (optional)"
        lines.append(line)
    return SignatureHelp(
        f"{alias}({', '.join(names)})",
        tuple(names),
        active,
        "\n".join(lines),
    )
