"""The quick fix for a legacy ``import`` of a GitHub skill (W027): rewrite it as ``use``."""

from __future__ import annotations

import re
from typing import Any

from openprose.diagnostics import Diagnostic
from openprose.ide.fixes.edits import text_edit
from openprose.ide.fixes.fixer import Fix, Fixer, quickfix
from openprose.syntax import tree as t

__all__ = ["legacy_import"]


_GITHUB = re.compile(r"github:([A-Za-z0-9][A-Za-z0-9_.-]*)/[^\s]+")


def legacy_import(fixer: Fixer, diagnostic: Diagnostic, leaf: Any) -> list[Fix]:
    node = leaf.parent
    if not isinstance(node, t.ImportStatement) or node.children[0] is not leaf:
        return []
    name, source = node.name, node.source
    if name is None or source is None or not name.is_terminated or not source.is_terminated:
        return []
    skill = name.text.strip()
    match = _GITHUB.fullmatch(source.text.strip())
    if match is None or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", skill):
        return []
    path = f"@{match.group(1)}/{skill}"
    edit = text_edit(leaf.start_pos, source.end_pos, f'use "{path}"')
    return [quickfix(f'Rewrite as `use "{path}"`', [edit], "W027", preferred=True)]
