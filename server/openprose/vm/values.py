"""Runtime values: text results, lists, records (program outputs, parallel results, errors)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

# A value is a ``str`` (a session's text, a literal), an ``int`` (a literal count), a
# ``list`` of values, or a ``Record``.
Value = Any


class Record(Mapping[str, Any]):
    """Named values with attribute access: ``result.findings`` on a program call's outputs,
    ``e.message`` on a caught error, ``x.branch`` on a parallel's named branches."""

    __slots__ = ("_fields", "kind")

    def __init__(self, fields: Mapping[str, Any], kind: str = "record") -> None:
        self._fields = dict(fields)
        self.kind = kind

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __repr__(self) -> str:
        return f"Record({self.kind}, {self._fields!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return self.kind == other.kind and self._fields == other._fields
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.kind, tuple(self._fields)))


def error_value(message: str, statement: str = "", kind: str = "error") -> Record:
    """What ``catch as e`` binds: ``e.message``, ``e.statement``, ``e.kind``."""
    return Record({"message": message, "statement": statement, "kind": kind}, kind="error")


def is_error(value: Value) -> bool:
    return isinstance(value, Record) and value.kind == "error"


class ProseError(Exception):
    """A failure of the running program (a failed session, a ``throw``, a limit)."""

    def __init__(self, message: str, statement: str = "", kind: str = "error") -> None:
        super().__init__(message)
        self.message = message
        self.statement = statement
        self.kind = kind

    @property
    def value(self) -> Record:
        return error_value(self.message, self.statement, self.kind)


class AttributeMissing(ProseError):
    def __init__(self, name: str, statement: str = "") -> None:
        super().__init__(f"no attribute {name!r}", statement, "attribute")


def attribute(value: Value, name: str) -> Value:
    """``value.name``.  A text has no attributes; a record has its fields."""
    if isinstance(value, Record):
        if name in value:
            return value[name]
        raise AttributeMissing(name)
    if isinstance(value, Mapping) and name in value:
        return value[name]
    if isinstance(value, str) and value.lstrip().startswith("{"):
        # A session asked for structured output answers JSON: its fields are attributes.
        try:
            fields = json.loads(value)
        except ValueError:
            fields = None
        if isinstance(fields, dict) and name in fields:
            return fields[name]
    raise AttributeMissing(name)


def render(value: Value) -> str:
    """The text a value shows in an interpolation, a context or a binding file."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_quoted(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_quoted(v)}" for k, v in value.items()) + "}"
    return str(value)


def _quoted(value: Value) -> str:
    return f'"{value}"' if isinstance(value, str) else render(value)


def preview(value: Value, limit: int = 100) -> str:
    """A one-line, shortened rendering for the narration."""
    text = render(value).replace("\n", " ")
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f'"{text}"' if isinstance(value, str) else text


def items_of(value: Value) -> list[Value]:
    """What ``for x in value`` iterates.  A text is iterated as its non-empty lines: a
    model asked for a list answers one item per line (docs/run.md)."""
    if isinstance(value, list):
        return value
    if isinstance(value, Record):
        return list(value.values())
    if isinstance(value, str):
        return [line for line in value.splitlines() if line.strip()]
    if value is None:
        return []
    return [value]


def to_count(value: Value) -> int | None:
    """A repeat count or a ``max:``: an integer, or a text holding one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None
