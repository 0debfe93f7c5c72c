# Type stubs for the parts of parso that OpenProse uses (parso ships no type information):
# the tree base classes our syntax tree specialises, split_lines, and the Python parser the
# parse benchmark compares against.
from typing import Any

from parso.tree import BaseNode

__version__: str

def parse(code: str | None = None, **kwargs: Any) -> BaseNode: ...
