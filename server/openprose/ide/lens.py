"""Code lenses.  "Run program" belongs on every program, bound to the ``prose.run`` command,
but only once something can run programs: until the VM exists ``runnable`` is False and no
lens is shown (no dead buttons)."""

from __future__ import annotations

from openprose.ide.analysis import Analysis, node_range
from openprose.ide.types import CodeLens

RUN_COMMAND = "prose.run"


def code_lenses(analysis: Analysis, runnable: bool) -> list[CodeLens]:
    if not runnable:
        return []
    statements = analysis.module.statements()
    if not statements:
        return []
    uri = analysis.path.resolve().as_uri() if analysis.path is not None else ""
    first = statements[0].get_first_leaf()
    return [CodeLens(node_range(first), "▶ Run program", RUN_COMMAND, (uri,))]
