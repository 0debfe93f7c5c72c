"""Where a reparse of a block's statements can start and stop so that it equals a full parse.

These are the conditions the incremental document (syntax/document.py) and the formatter's
incremental safety check (format/check.py) share: finding the innermost blocks whose
statements hold some lines, the items at a line, the indentation and nesting a full parse
would have at a block, and the cases where a construct around a block depends on how the
block reads (a header that read its first line, an issue anchored inside it, an unclosed
token at its end).  Both parse only part of a text and must agree with ``parse(text)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from openprose.syntax import tree as t
from openprose.syntax.tokenizer import count_newlines


def first_line(item: Any) -> int:
    """The line where an item's prefix (blank lines, comments) starts."""
    leaf = item.get_first_leaf()
    return int(leaf.line - count_newlines(leaf.prefix)[0])


def last_line(item: Any) -> int:
    """The line of an item's last character (its newline, usually)."""
    leaf = item.get_last_leaf()
    line, column = leaf.end_pos
    if column == 0 and leaf.value:
        return int(line) - 1
    return int(line)


def item_at_line(items: list[Any], line: int) -> int:
    """Index of the last item whose prefix starts at or before ``line``."""
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        if first_line(items[mid]) <= line:
            lo = mid + 1
        else:
            hi = mid
    return max(0, lo - 1)


def item_starting_at(items: list[Any], line: int, min_index: int) -> int | None:
    """Index of the item whose prefix starts exactly at ``line``, if it is at or after
    ``min_index`` (where a reparse may resume the old items)."""
    k = item_at_line(items, line)
    if k >= min_index and first_line(items[k]) == line:
        return k
    return None


def release(nodes: list[Any]) -> None:
    """Cut the parent links inside discarded subtrees.

    Parent links make every tree a reference cycle, which only the cyclic garbage
    collector can free, in one long pause over the whole heap; without them the old
    statements are freed at once by reference counting.
    """
    for node in nodes:
        node.parent = None
        children = getattr(node, "children", None)
        if children is not None:
            release(children)


def enclosing_blocks(block: Any) -> int:
    """How many blocks a full parse has open when it parses ``block``'s items."""
    count = 0
    node = block.parent
    while node is not None:
        if isinstance(node, t.Module | t.Suite | t.PropertyBlock | t.ErrorBlock):
            count += 1
        node = node.parent
    return count


def line_indent(leaf: Any) -> str:
    """The indentation of the logical line holding ``leaf``."""
    current = leaf
    for prev in leaves_before(leaf):
        if isinstance(prev, t.Newline):
            break
        current = prev
    prefix: str = current.prefix
    cut = max(prefix.rfind("\n"), prefix.rfind("\r")) + 1
    indent = prefix[cut:]
    return indent.lstrip("\ufeff") if cut == 0 else indent


def leaves_before(leaf: Any) -> Iterator[Any]:
    """The leaves before ``leaf``, nearest first.

    parso's ``get_previous_leaf`` searches the parent's children at every step, which
    made walking back over a header line of 10,000 tokens take seconds.
    """
    node = leaf
    while node.parent is not None:
        siblings = node.parent.children
        k = next(k for k, child in enumerate(siblings) if child is node)
        for index in range(k - 1, -1, -1):
            stack = [siblings[index]]
            while stack:
                current = stack.pop()
                children = getattr(current, "children", None)
                if children is None:
                    yield current
                else:
                    stack.extend(children)
        node = node.parent


def header_may_read_first_line(block: Any) -> bool:
    """Whether the header's expression may have read the block's first line.

    A header expression that reaches the end of its line looks at the next one: a line
    that starts with ``->`` or ``|`` continues it, a ``name:`` line gives a session its
    properties.  A header that ends in its own ``:`` (junk after it aside) read no further.
    """
    siblings = block.parent.children
    k = next(k for k, child in enumerate(siblings) if child is block)
    before = siblings[k - 1] if k else None
    if isinstance(before, t.ErrorNode) and k >= 2:
        before = siblings[k - 2]
    return not (isinstance(before, t.Operator) and before.value == ":")


def anchored_by_enclosing(block: Any, replaced: list[Any]) -> bool:
    """Whether a construct around ``block`` anchors an issue in the ``replaced`` items.

    A header's own errors found after its block (``parallel(loop)``: the `:` missing after
    the brackets) go after the last leaf of that block; reusing the header would keep
    them on the replaced leaves, at their old positions.
    """
    replaced_ids = {id(node) for node in replaced}
    node = block.parent
    while node is not None:
        for issue in getattr(node, "issues", None) or ():
            leaves = (issue.start_leaf, issue.end_leaf, *(r[1] for r in issue.related))
            if any(id(child_of(leaf, block)) in replaced_ids for leaf in leaves):
                return True
        node = node.parent
    return False


def header_nested(block: Any) -> bool:
    """Whether ``block`` belongs to a construct inside another one's header or value
    (``if not do:``, ``parallel(loop)``, ``let x = parallel:``), whose parse goes on after
    the block ends."""
    owner = block.parent
    if isinstance(owner, OWN_LINE_CONSTRUCTS):
        return False
    return not isinstance(owner.parent, t.Module | t.Suite | t.PropertyBlock)


def open_token_at_end(items: list[Any], new_items: list[Any]) -> bool:
    """Whether the block ended, before or after the edit, in an unclosed string or condition.

    An enclosing header reports nothing missing after one (the unclosed token is the one
    error), so its issues depend on how the block ends.
    """
    for item in (items[-1], new_items[-1] if new_items else None):
        leaf = item.get_last_leaf() if item is not None else None
        if isinstance(leaf, t.Newline):
            continue
        if isinstance(leaf, t.String | t.Discretion) and not leaf.is_terminated:
            return True
    return False


def child_of(leaf: Any, node: Any) -> Any:
    """The child of ``node`` that holds ``leaf`` (None if ``leaf`` is not under ``node``)."""
    current = leaf
    while current is not None and current.parent is not node:
        current = current.parent
    return current


# Clauses and pipeline stages start their own line: nothing after their block looks back.
OWN_LINE_CONSTRUCTS = (
    t.ElifClause,
    t.ElseClause,
    t.CatchClause,
    t.FinallyClause,
    t.OptionClause,
    t.PipeStage,
)


def descendable(node: Any) -> bool:
    """Whether a reparse may start inside ``node`` rather than from a block around it."""
    if isinstance(node, t.Module):
        return True
    # A choice's options decide its own "no option" error, and a property block's
    # contents decide a session's "no prompt" error: reparse those whole.
    return isinstance(node, t.Suite) and not isinstance(node.parent, t.ChoiceStatement)


def blocks_containing(module: t.Module, first: int, last: int) -> list[Any]:
    """The chain of reparseable blocks whose statements contain lines first..last,
    outermost (the module) first."""
    items = module.children[:-1]
    if not items:
        return [module]
    item = items[item_at_line(items, first)]
    if first_line(item) > first or last_line(item) < last:
        return [module]
    return [module, *blocks_in_statement(item, first, last)]


def blocks_in_statement(item: Any, first: int, last: int) -> list[Any]:
    """The chain of reparseable blocks inside the statement ``item`` whose statements
    contain lines first..last, outermost first (the caller knows ``item`` holds them)."""
    found: list[Any] = []
    block = block_within(item, first, last)
    while block is not None:
        if descendable(block):
            found.append(block)
        items = block.children[1:]
        if not items:
            break
        inner = items[item_at_line(items, first)]
        if first_line(inner) > first or last_line(inner) < last:
            break
        block = block_within(inner, first, last)
    return found


def block_within(item: Any, first: int, last: int) -> Any:
    """The block directly under ``item`` whose statements contain lines first..last."""
    if isinstance(item, t.ErrorNode | t.UnsupportedStatement):
        return None
    stack = list(item.children)
    while stack:
        node = stack.pop()
        children = getattr(node, "children", None)
        if children is None:
            continue
        if isinstance(node, t.Suite | t.PropertyBlock):
            if len(children) < 2:
                continue
            if first_line(children[1]) <= first and last_line(children[-1]) >= last:
                return node
            continue
        if isinstance(node, (t.ErrorNode, *NESTING_EXPRESSIONS)):
            continue
        stack.extend(children)
    return None


# Brackets and `not` count toward the parser's nesting limit like blocks do; a block
# inside one is reparsed with its statement, where the parser counts them itself.
NESTING_EXPRESSIONS = (
    t.ArrayLiteral,
    t.ObjectLiteral,
    t.Arguments,
    t.Parameters,
    t.Subscript,
    t.NotExpression,
)


__all__ = [
    "NESTING_EXPRESSIONS",
    "OWN_LINE_CONSTRUCTS",
    "anchored_by_enclosing",
    "block_within",
    "blocks_containing",
    "blocks_in_statement",
    "child_of",
    "descendable",
    "enclosing_blocks",
    "first_line",
    "header_may_read_first_line",
    "header_nested",
    "item_at_line",
    "item_starting_at",
    "leaves_before",
    "line_indent",
    "open_token_at_end",
    "release",
]
