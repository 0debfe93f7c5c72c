"""Keeping large documents from holding up the server.

Formatting costs about two seconds per megabyte (print, then parse the result to check it),
and code actions may check the whole fixed text several times.  So formatting runs in a
worker thread, on a snapshot of the text, while the event loop goes on answering the other
requests; and above the ``large-file-size`` setting (characters; 0: no limit) formatting and
code actions answer with nothing, which is logged every time and shown to the user once per
document.  Code actions stay on the event loop: the analysis they use reads the other open
documents' trees, which the loop changes as edits arrive.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, TypeVar

from lsprotocol import types

if TYPE_CHECKING:
    from openprose.ide.host import OpenDocument
    from openprose.lsp.server import ProseLanguageServer

log = logging.getLogger("prose-ls")
T = TypeVar("T")


class LargeDocuments:
    def __init__(self) -> None:
        self._told: set[str] = set()  # URIs whose user was told

    def too_large(self, ls: ProseLanguageServer, doc: OpenDocument, feature: str) -> bool:
        """Whether ``doc`` is above the size limit (then ``feature`` answers with nothing)."""
        limit = ls.settings.large_file_size
        size = len(doc.text)
        if not limit or size <= limit:
            return False
        log.info(
            "%s: no %s: %d characters, above large-file-size (%d)", doc.uri, feature, size, limit
        )
        if doc.uri not in self._told:
            self._told.add(doc.uri)
            name = PurePosixPath(doc.uri).name or doc.uri
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Info,
                    message=f"OpenProse: {name} has {size:,} characters, more than the "
                    f"large-file-size setting ({limit:,}): formatting and code actions are "
                    "off for it.",
                )
            )
        return True


async def off_the_loop(
    ls: ProseLanguageServer, doc: OpenDocument, compute: Callable[[str], T]
) -> T | None:
    """``compute(text)`` for ``doc``'s current text in a worker thread; None when the
    document changed or was closed meanwhile (the result would be for another text)."""
    text = doc.text
    result = await asyncio.to_thread(compute, text)
    if ls.documents.get(doc.uri) is not doc or doc.text != text:
        return None
    return result


# One per server process (the server itself is a module-level object too).
large_documents = LargeDocuments()
