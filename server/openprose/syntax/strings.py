"""The inside of string literals: text runs, escapes and ``{name}`` interpolations.

Only ``{identifier}`` and ``{identifier.property...}`` are interpolations; any other
brace text (JSON in a prompt, ``{}``, ``{a b}``) is literal text, as the language
reference says for empty braces.  ``\\{`` is a literal brace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from openprose.syntax.tree import offset_position

if TYPE_CHECKING:
    from openprose.syntax.tree import Position, String

VALID_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "{": "{", "}": "}"}

_PART = re.compile(
    r"(?P<escape>\\(?:.|\Z))"
    r"|(?P<interp>\{(?P<path>[^\W\d]\w*(?:-\w+)*(?:\.[^\W\d]\w*(?:-\w+)*)*)\})"
    r"|(?P<text>[^\\{]+|\{)",
    re.DOTALL,
)
_ESCAPE = re.compile(r"\\(?:.|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class StringPart:
    """One piece of a string; offsets index into ``leaf.value`` (quotes included)."""

    kind: str  # "text", "escape" or "interpolation"
    raw: str
    start_offset: int
    end_offset: int
    leaf: String

    @property
    def is_valid_escape(self) -> bool:
        return self.kind == "escape" and self.raw[1:] in VALID_ESCAPES

    @property
    def name(self) -> str | None:
        """For an interpolation, the variable name (before any ``.property``)."""
        if self.kind != "interpolation":
            return None
        return self.raw[1:-1].split(".", 1)[0]

    @property
    def path(self) -> list[str]:
        """For an interpolation, the dotted path: ``{a.b}`` gives ``["a", "b"]``."""
        return self.raw[1:-1].split(".") if self.kind == "interpolation" else []

    @property
    def start(self) -> Position:
        return offset_position(self.leaf, self.start_offset)

    @property
    def end(self) -> Position:
        return offset_position(self.leaf, self.end_offset)


# A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``; the parts
# of every string are built often enough (each check of the prompts) that setting the slots
# directly, half the cost, pays.
_new = object.__new__
_SET_KIND, _SET_RAW, _SET_START, _SET_END, _SET_LEAF = (
    StringPart.__dict__[name].__set__
    for name in ("kind", "raw", "start_offset", "end_offset", "leaf")
)
_KINDS = {"escape": "escape", "interp": "interpolation", "path": "interpolation", "text": "text"}


def string_parts(leaf: String) -> list[StringPart]:
    value = leaf.value
    q = 3 if value.startswith('"""') else 1
    body = leaf.body
    parts: list[StringPart] = []
    append = parts.append
    for m in _PART.finditer(body):
        start, end = m.span()
        part = _new(StringPart)
        _SET_KIND(part, _KINDS[m.lastgroup])  # type: ignore[index]
        _SET_RAW(part, body[start:end])
        _SET_START(part, q + start)
        _SET_END(part, q + end)
        _SET_LEAF(part, leaf)
        append(part)
    return parts


def invalid_escapes(leaf: String) -> list[tuple[int, int, str]]:
    """(start, end, raw) offsets in ``leaf.value`` of every unknown escape sequence."""
    value = leaf.value
    if "\\" not in value:
        return []
    q = leaf.quote_length
    body = leaf.body
    bad = []
    triple = leaf.is_triple
    for m in _ESCAPE.finditer(body):
        raw = m.group()
        if triple and raw[1:] in ("\n", "\r"):
            continue  # a backslash ending a line of a multi-line prompt stays literal
        if raw[1:] not in VALID_ESCAPES:
            bad.append((q + m.start(), q + m.end(), raw))
    return bad


def decode(leaf: String) -> str:
    """The string's text with escapes decoded; unknown escapes are kept as written."""
    body = leaf.body
    if "\\" not in body:
        return body
    return _ESCAPE.sub(lambda m: VALID_ESCAPES.get(m.group()[1:], m.group()), body)
