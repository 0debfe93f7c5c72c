"""A ``permissions:`` block as the JSON text a backend receives (``SessionRequest.properties``).

Backends never see the syntax tree: the block becomes ``{"kind": value}`` where a value is
a list of patterns or a word (``allow``, ``deny``, ``prompt``).  Lines the checker warned
about (an unknown kind, a non-string pattern) are passed through or skipped as written, and
the backend decides what they mean (docs/run.md).
"""

from __future__ import annotations

import json

from openprose.syntax import tree as t


def permissions_text(prop: t.Property) -> str:
    rules: dict[str, str | list[str]] = {}
    if prop.block is not None:
        for permission in prop.block.properties():
            value = permission.value
            if isinstance(value, t.ArrayLiteral):
                rules[permission.name] = [
                    element.text for element in value.elements() if isinstance(element, t.String)
                ]
            elif isinstance(value, t.Name | t.Keyword):
                rules[permission.name] = str(value.value)
            elif isinstance(value, t.String):
                rules[permission.name] = value.text
    return json.dumps(rules, sort_keys=True)
