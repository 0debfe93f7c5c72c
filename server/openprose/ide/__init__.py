"""Editor features as plain functions over a document snapshot and a position.

Nothing here imports pygls or lsprotocol: every feature takes an ``Analysis`` (the text,
its tree, its semantic model and diagnostics) and 0-based (line, character) positions
counted in code points, and returns the plain data classes of ``openprose.ide.types``.
``openprose.lsp`` converts them to the protocol.
"""

from openprose.ide.analysis import Analysis, analyze_document

__all__ = ["Analysis", "analyze_document"]
