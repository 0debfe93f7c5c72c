"""Completion at a position, on text that is usually incomplete.

The line being typed rarely parses cleanly, so the context is read from the leaves of the
current logical line before the word at the cursor (the parser keeps every token, even in
error nodes), and from the statements above it (by indentation) for what encloses a new
line.  Names come from the semantic model: agents and blocks (hoisted), imported programs,
and the variables of the scopes enclosing the position that are defined before it.

Nothing here walks the whole tree: a request looks at one logical line, the ancestors of
one leaf and the model's dictionaries, so it stays fast on long programs.

``context`` decides what fits where, ``items`` makes the items, ``paths`` completes the
path of a ``use``; ``cursor`` and ``scopes`` say where the cursor is and what it sees.
"""

from openprose.ide.completion.context import completion

__all__ = ["completion"]
