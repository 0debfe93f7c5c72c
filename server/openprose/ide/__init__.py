"""Editor features as plain functions over a document snapshot and a position.

Nothing here imports pygls or lsprotocol: every feature takes an ``Analysis`` (the text,
its tree, its semantic model and diagnostics) and 0-based (line, character) positions
counted in code points, and returns the plain data classes of ``openprose.ide.types``.
``openprose.lsp`` converts them to the protocol.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openprose.ide.analysis import Analysis, analyze_document

__all__ = ["Analysis", "analyze_document"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: importing a light module of the package (ide.types, ide.commands)
    # must not import the parser and the analysis, which the language server needs only
    # after `initialize` is answered.
    if name in __all__:
        from openprose.ide import analysis

        return getattr(analysis, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
