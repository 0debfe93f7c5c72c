"""Rename and prepare rename: what may be renamed, whether a new name is valid and free, and
the edits (see ``ide/cross_file_rename.py`` for the edits in other files)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from openprose.analysis.model import LITERALS, Kind
from openprose.format import TextEdit
from openprose.ide.analysis import Analysis
from openprose.ide.cross_file_rename import importer_edits, rename_port
from openprose.ide.names import Found, Key, Port, find, index_of, program_of
from openprose.ide.ports import imported_program
from openprose.ide.rename_edits import occurrence_edits, variable_collision
from openprose.ide.types import Pos, PrepareRename, Range, RenameError
from openprose.syntax import tree as t
from openprose.syntax.vocabulary import RESERVED_WORDS

_IDENTIFIER = re.compile(r"[^\W\d]\w*(?:-\w+)*")


def prepare_rename(analysis: Analysis, position: Pos) -> PrepareRename | RenameError | None:
    found = find(analysis, position)
    if found is None:
        return None
    result = _renamable(analysis, found)
    if isinstance(result, RenameError) or result is None:
        return result
    name, where = result
    return PrepareRename(where, name)


def _renamable(analysis: Analysis, found: Found) -> tuple[str, Range] | RenameError | None:
    leaf = found.leaf
    port = found.port
    if port is not None:
        error = _port_error(analysis, port)
        if error is not None:
            return error
        return port.name, port.range
    occurrence = found.occurrence
    if occurrence is not None:
        key = occurrence.key
        if key[0] == "undefined":
            return RenameError(f"`{occurrence.name}` is not defined in this program")
        if key[0] == "var":
            symbols = index_of(analysis).symbols.get(key, [])
            implicit = next((s for s in symbols if s.implicit), None)
            if implicit is not None:
                stage = implicit.leaf.value
                return RenameError(
                    f"`{occurrence.name}` is the implicit element variable of `{stage}`: "
                    "its name is fixed"
                )
        return occurrence.name, occurrence.range
    if isinstance(leaf, t.Keyword):
        return RenameError(f"`{leaf.value}` is a keyword, not a name that can be renamed")
    if isinstance(leaf, t.String):
        return RenameError("string text cannot be renamed (only `{name}` interpolations)")
    if isinstance(leaf, t.Discretion):
        return RenameError("a `**...**` condition is text for the model, not a name")
    if isinstance(leaf, t.Number):
        return RenameError("a number cannot be renamed")
    if isinstance(leaf, t.Name):
        return RenameError(_name_error(leaf))
    return None


def _name_error(leaf: Any) -> str:
    parent = leaf.parent
    word = leaf.value
    if isinstance(parent, t.Property) and parent.children[0] is leaf:
        return f"`{word}` is a property name: its meaning is fixed by the language"
    if isinstance(parent, t.KeywordArgument) and parent.children[0] is leaf:
        owner = parent.parent.parent if parent.parent is not None else None
        if isinstance(owner, t.Parallel | t.Loop):
            return f"`{word}` is a modifier name: its meaning is fixed by the language"
        return f"`{word}` names an argument, not something this program defines"
    if isinstance(parent, t.Property):
        return f"`{word}` is a property value, not a name this program defines"
    if word in LITERALS:
        return f"`{word}` is a literal value"
    if isinstance(parent, t.Session) and parent.name is leaf:
        return f"`{word}` is a session label, not a symbol"
    if isinstance(parent, t.Attribute):
        return f"`{word}` is a property of a value whose fields this program does not declare"
    return f"`{word}` does not name anything this program defines"


def _port_error(analysis: Analysis, port: Port) -> RenameError | None:
    program = imported_program(analysis, port.program)
    what = f"`{port.name}` is an {port.kind} of the imported program `{port.program}`"
    if program is None:
        return RenameError(f"{what}, which is not imported")
    if not program.local:
        return RenameError(f"{what}, a registry program that cannot be edited from here")
    if program.contract is None:
        return RenameError(f"{what}, whose file cannot be read: {program.reason}")
    declared = (
        program.contract.input(port.name)
        if port.kind == "input"
        else program.contract.output(port.name)
    )
    if declared is None:
        return RenameError(f"`{port.name}` is not an {port.kind} of `{port.program}`")
    return None


def rename(
    analysis: Analysis, position: Pos, new_name: str, importers: Iterable[str | Path] = ()
) -> dict[str | None, list[TextEdit]] | RenameError:
    """The edits of a rename, keyed by file (None: this document).  ``importers`` are the
    program files that may import this one (the workspace's): renaming an input or output
    renames it in those that do, too."""
    found = find(analysis, position)
    if found is None:
        return RenameError("nothing to rename here")
    result = _renamable(analysis, found)
    if result is None:
        return RenameError("nothing to rename here")
    if isinstance(result, RenameError):
        return result
    old, _where = result
    error = _invalid_name(new_name)
    if error is not None:
        return error
    if new_name == old:
        return {None: []}
    if found.port is not None:
        return rename_port(analysis, found.port, new_name)
    occurrence = found.occurrence
    assert occurrence is not None
    key = occurrence.key
    if key[0] == "var":
        symbols = index_of(analysis).symbols.get(key, [])
        program = program_of(symbols[0]) if symbols else None
        if program is not None and program[1]:
            port = Port("output", program[0], old, occurrence.range)
            error = _port_error(analysis, port)
            if error is not None:
                return RenameError(
                    f"`{old}` must keep the name of the output of `{program[0]}` it "
                    f"receives: {error.message}"
                )
            return rename_port(analysis, port, new_name)
    collision = _collision(analysis, key, new_name)
    if collision is not None:
        return collision
    edits: dict[str | None, list[TextEdit]] = {None: occurrence_edits(analysis, key, new_name)}
    if key[0] == "var":
        symbols = index_of(analysis).symbols.get(key, [])
        if symbols and symbols[0].kind in (Kind.INPUT, Kind.OUTPUT):
            elsewhere = importer_edits(analysis, symbols[0], new_name, importers)
            if isinstance(elsewhere, RenameError):
                return elsewhere
            edits.update(elsewhere)
    return edits


def _invalid_name(name: str) -> RenameError | None:
    if not _IDENTIFIER.fullmatch(name):
        return RenameError(
            f"`{name}` is not a valid name: use letters, digits, `_` and inner `-`, "
            "starting with a letter or `_`"
        )
    if name in RESERVED_WORDS:
        return RenameError(f"`{name}` is a reserved word")
    if name in LITERALS:
        return RenameError(f"`{name}` is a literal value")
    return None


def _collision(analysis: Analysis, key: Key, new_name: str) -> RenameError | None:
    model = analysis.model
    kind = key[0]
    if kind == "agent":
        if new_name in model.agents:
            return RenameError(f"an agent named `{new_name}` already exists")
        if new_name in model.blocks:
            return RenameError(f"`{new_name}` already names a block")
        if _variable_named(analysis, new_name):
            return RenameError(f"`{new_name}` already names a variable")
        return None
    if kind == "block":
        if new_name in model.blocks:
            return RenameError(f"a block named `{new_name}` already exists")
        if new_name in model.agents:
            return RenameError(f"`{new_name}` already names an agent")
        return None
    if kind == "program":
        if new_name in model.programs:
            return RenameError(f"`{new_name}` already names an imported program")
        if new_name in model.blocks or new_name in model.agents:
            return RenameError(f"`{new_name}` already names a block or an agent")
        return None
    symbols = index_of(analysis).symbols.get(key, [])
    if not symbols or symbols[0].scope is None:
        return RenameError("nothing to rename here")
    return variable_collision(analysis, symbols[0].scope, new_name)


def _variable_named(analysis: Analysis, name: str) -> bool:
    return bool(index_of(analysis).symbols_by_name.get(name))
