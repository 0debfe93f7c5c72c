"""Arithmetic, comparisons and boolean operators: outside the grammar (the checker warns),
but official examples use them (``depth - 1``, ``if depth <= 0``), so the VM gives them the
plain meaning.  Only integers take part in arithmetic and ordering; ``+`` also joins texts
and lists.  Anything else fails the statement with a message naming the operator.
"""

from __future__ import annotations

from openprose.vm.values import ProseError, Value, render, to_count


def binary(left: Value, operator: str, right: Value) -> Value:
    if operator == "+":
        if isinstance(left, list):
            return [*left, *(right if isinstance(right, list) else [right])]
        if isinstance(left, int) and isinstance(right, int):
            return left + right
        if isinstance(left, str) or isinstance(right, str):
            return render(left) + render(right)
    a, b = to_count(left), to_count(right)
    if a is not None and b is not None:
        if operator == "-":
            return a - b
        if operator == "*":
            return a * b
        if operator == "/" and b != 0:
            return a // b
        if operator == "%" and b != 0:
            return a % b
    raise ProseError(f"cannot apply {operator!r} to {render(left)!r} and {render(right)!r}")


def compare(left: Value, operator: str, right: Value) -> bool:
    if operator in ("==", "!=", "is", "is not"):
        same = left == right or render(left) == render(right)
        return same if operator in ("==", "is") else not same
    if operator in ("in", "not in"):
        if isinstance(right, list):
            found = any(compare(left, "==", item) for item in right)
        else:
            found = render(left) in render(right)
        return found if operator == "in" else not found
    a, b = to_count(left), to_count(right)
    if a is None or b is None:
        raise ProseError(f"cannot order {render(left)!r} and {render(right)!r}")
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}.get(operator, False)


def truth(value: Value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "no", "0")
    return bool(value)
