"""Code lenses: "▶ Run program" (and "Run with inputs…" where the client can ask for them)
on a program without errors.

Two ways to run, chosen by the client: the server-side ``prose.run`` command (any client:
the server runs the program and streams its narration), or a client-side command
(``runCommand: "client"`` in the initialization options; the VS Code extension runs
``prose run`` in a terminal, so output, Ctrl-C and colours behave as in a shell).  Only a
client that runs programs itself can ask the user for inputs, so only it gets "Run with
inputs…"; the server-side command takes inputs as its second argument.
"""

from __future__ import annotations

from collections.abc import Iterable

from openprose.diagnostics import Diagnostic
from openprose.ide.analysis import Analysis, node_range
from openprose.ide.commands import (
    CLIENT_RUN_COMMAND,
    CLIENT_RUN_WITH_INPUTS_COMMAND,
    RUN_COMMAND,
)
from openprose.ide.types import CodeLens
from openprose.syntax import tree as t


def declares_inputs(analysis: Analysis) -> bool:
    return any(isinstance(s, t.InputDeclaration) for s in analysis.module.statements())


def code_lenses(
    analysis: Analysis,
    runnable: bool,
    diagnostics: Iterable[Diagnostic] | None = None,
    client_runs: bool = False,
    uri: str | None = None,
) -> list[CodeLens]:
    """The lenses of a document; ``diagnostics`` are the ones the user sees (default: the
    analysis's own), and a program with an error among them has no lens (it would not run).
    ``uri`` is the document as the client names it (default: from its path)."""
    if not runnable:
        return []
    statements = analysis.module.statements()
    if not statements:
        return []
    found = analysis.diagnostics if diagnostics is None else diagnostics
    if any(d.is_error for d in found):
        return []
    if uri is None:
        uri = analysis.path.resolve().as_uri() if analysis.path is not None else ""
    where = node_range(statements[0].get_first_leaf())
    if not client_runs:
        return [CodeLens(where, "▶ Run program", RUN_COMMAND, (uri,))]
    lenses = [CodeLens(where, "▶ Run program", CLIENT_RUN_COMMAND, (uri,))]
    if declares_inputs(analysis):
        lenses.append(CodeLens(where, "Run with inputs…", CLIENT_RUN_WITH_INPUTS_COMMAND, (uri,)))
    return lenses
