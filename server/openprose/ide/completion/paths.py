"""Path completion in a ``use "..."`` statement: the programs and folders beside the document,
or in the folder typed so far."""

from __future__ import annotations

from pathlib import Path

from openprose.ide.completion.cursor import Cursor
from openprose.ide.completion.items import _Items
from openprose.ide.types import Range
from openprose.syntax import tree as t

# Enough for any real directory listing, few enough that a huge one stays quick.
_MAX_PATH_ITEMS = 200


def _use_paths(cursor: Cursor, string: t.String, items: _Items) -> None:
    """Local programs for `use "...`: the folders and `.prose` files beside the document
    (or in the folder typed so far), relative to it."""
    importer = cursor.analysis.path
    if importer is None:
        return  # unsaved: nothing to be relative to
    start = string.start_pos[1] + string.quote_length
    typed = cursor.text[start : cursor.character]
    if typed.startswith(("@", "http:", "https:")) or "\\" in typed:
        return
    folder_text, slash, name = typed.rpartition("/")
    folder = Path(folder_text).expanduser() if folder_text.startswith("~") else Path(folder_text)
    if not folder.is_absolute():
        folder = importer.parent / folder
    if slash and not folder_text:
        folder = Path("/")
    segment_start = start + len(typed) - len(name)
    segment_end = cursor.character
    while segment_end < len(cursor.text) and cursor.text[segment_end] not in '"/':
        segment_end += 1
    replace = Range((cursor.line, segment_start), (cursor.line, segment_end))
    try:
        entries = sorted(folder.iterdir(), key=lambda entry: entry.name)[: _MAX_PATH_ITEMS * 5]
    except OSError:
        return
    items.needle = name.lower()
    this_file = importer.resolve()
    count = 0
    for entry in entries:
        if entry.name.startswith(".") or count >= _MAX_PATH_ITEMS:
            continue
        try:
            is_dir = entry.is_dir()
            is_program = not is_dir and entry.suffix == ".prose" and entry.is_file()
        except OSError:
            continue
        if is_dir:
            items.add(entry.name + "/", "folder", "folder", replace=replace, group=1)
        elif is_program and entry.resolve() != this_file:
            items.add(entry.name, "file", "program", replace=replace, group=0)
        else:
            continue
        count += 1
