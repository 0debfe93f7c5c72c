"""The bundled VM: runs a checked program strictly, calling a model backend only for the parts
the language leaves to intelligence (sessions, discretion conditions, choices, summaries).

Layering: imports syntax, analysis, checking, files and config only; ``cli`` and ``lsp`` call it.
"""

from openprose.vm.interpreter import Interpreter, MissingInput, Options, RunResult
from openprose.vm.runner import ProgramInvalid, load_checked, run_file

__all__ = [
    "Interpreter",
    "MissingInput",
    "Options",
    "ProgramInvalid",
    "RunResult",
    "load_checked",
    "run_file",
]
