"""Reading a parsed program's nodes through the types a test expects.

The tree's accessors return unions (a statement is one of the ``Statement`` union, a value is
an ``Expression`` or None); a test that knows what it parsed names the type, and the helper
checks it, so that a wrong node fails the test where it is read."""

from __future__ import annotations

from typing import TypeVar

from openprose.syntax import AgentDefinition, Expression, Resume, Session, String

T = TypeVar("T")


def narrow(value: object, cls: type[T]) -> T:
    """``value``, checked to be a ``cls`` (None never is)."""
    assert isinstance(value, cls), f"expected {cls.__name__}, got {value!r}"
    return value


def prompt(node: object) -> String:
    """The prompt string of ``session "..."``, checked to be one."""
    return narrow(narrow(node, Session).prompt, String)


def property_value(node: AgentDefinition | Session | Resume, name: str) -> Expression | None:
    """The value of ``node``'s property ``name``, checked to be there."""
    found = node.get_property(name)
    assert found is not None, f"no property {name!r} in {node!r}"
    return found.value
