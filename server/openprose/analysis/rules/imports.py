"""Imports, inputs and program invocation: the program's contract with other programs.

Spec sections: Use Statements (paths, duplicates, aliases), Input Declarations (empty
descriptions, placement), Program Invocation (unknown programs, inputs and outputs), and
the VM reference's resolution of use paths (prose.md, "Remote Programs").

Calls are checked against the contract of the imported program (contracts.py): local
programs are read from disk, registry programs from the project's import cache, and
nothing is ever fetched.  A program whose contract cannot be read offline gets one
information diagnostic on its `use`, and calls to it are not checked.

Inputs may appear after executable statements: the VM reference (prose.md, "Input Binding
Semantics") makes them runtime prompts, and the official examples rely on that.  Such an
input is optional for a caller (contracts.py).  An input inside a block definition is an
error (E022): inputs are the program's, a block takes parameters.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from openprose.analysis.context import Context, NodeIndex, span
from openprose.analysis.contracts import (
    Contract,
    ContractLoader,
    ImportPath,
    Kind,
    Resolution,
    Status,
    classify,
)
from openprose.analysis.model import Symbol, import_alias
from openprose.analysis.rules.control import terminated, text_of
from openprose.codes import severity_of
from openprose.diagnostics import Diagnostic, Related
from openprose.syntax import tree as t
from openprose.syntax.tree import offset_position


def check(ctx: Context) -> None:
    check_program(ctx)


def check_program(ctx: Context) -> None:
    index = ctx.index
    if type(index) is NodeIndex and not ctx.model.program_calls:
        found = index.by_class()
        # (The three classes of `_DECLARATIONS`, told without a generator.)
        if (
            t.UseStatement not in found
            and t.ImportStatement not in found
            and t.InputDeclaration not in found
        ):
            return  # no import, input or program call: nothing to check (most programs)
    nodes = declarations(ctx)
    if not any(nodes.values()) and not ctx.model.program_calls:
        return  # no import, input or program call: nothing to check (most programs)
    uses = nodes[t.UseStatement]
    paths = {id(use): _import_path(use) for use in uses}
    _path_formats(ctx, uses, paths)
    _legacy_sources(ctx, nodes[t.ImportStatement])
    resolutions = _resolve(ctx, paths)
    _names(ctx, paths, resolutions)
    _inputs(ctx, nodes[t.InputDeclaration])
    contracts = _program_contracts(ctx, resolutions)
    _calls(ctx, contracts)
    if contracts:
        _outputs(ctx, contracts, ctx.nodes(t.LetBinding))


def declarations(ctx: Context) -> dict[type, list[Any]]:
    """The program's use, legacy import and input statements, by class, in source order
    (asked by the structure and properties rules too)."""

    def compute() -> dict[type, list[Any]]:
        # Each class as the index keeps it (a query of the three would sort them together,
        # only to part them again), without a query (most programs hold none of them) when
        # the index is one walk (an index made of others answers through its queries).
        index = ctx.index
        if type(index) is NodeIndex:
            found = index.by_class()
            return {kind: found.get(kind, []) for kind in _DECLARATIONS}
        return {kind: index.nodes(kind) for kind in _DECLARATIONS}

    return ctx.memo("imports.declarations", compute)


_DECLARATIONS = (t.UseStatement, t.ImportStatement, t.InputDeclaration)


def _import_path(use: t.UseStatement) -> ImportPath | None:
    leaf = use.path
    if leaf is None or not terminated(leaf):
        return None  # the parser reports the missing or unterminated string
    return classify(text_of(leaf))


def _alias(ctx: Context, use: t.UseStatement) -> str | None:
    """``import_alias(use)``, found once per check (an offline import's message and the
    duplicate names check both ask)."""
    aliases: dict[int, str | None] = ctx.memo("imports.aliases", dict)
    key = id(use)
    if key not in aliases:
        aliases[key] = import_alias(use)
    return aliases[key]


def _top_level_uses(ctx: Context) -> list[t.UseStatement]:
    return ctx.memo(
        "imports.top_level_uses",
        lambda: [s for s in declarations(ctx)[t.UseStatement] if isinstance(s.parent, t.Module)],
    )


# --------------------------------------------------------------------------- use paths


def _path_formats(
    ctx: Context, uses: list[t.UseStatement], paths: dict[int, ImportPath | None]
) -> None:
    for use in uses:
        path = paths[id(use)]
        if path is None:
            continue
        leaf = use.path
        if path.kind is Kind.EMPTY:
            ctx.report("E011", 'use path cannot be empty: write `use "@handle/slug"`', leaf)
        elif path.kind is Kind.INVALID:
            if path.text.startswith("@"):
                hint = "a registry path is `@handle/slug` (letters, digits, `-`, `_` and `.`)"
            else:
                hint = (
                    "write `@handle/slug` for a registry program, or a relative path such as "
                    "`./name.prose` for a local one"
                )
            ctx.report("E012", f"invalid use path `{path.text}`: {hint}", leaf)
        elif path.kind is Kind.SCHEME:
            ctx.report(
                "W006",
                f"unknown import source format `{path.scheme}:`: a program is imported by "
                "`@handle/slug`, a local path (`./name.prose`) or an `https://` URL",
                leaf,
            )


_SKILL_SOURCE = re.compile(r"github:[\w.\-]+/[\w.\-]+(?:/\S*)?|npm:\S+|\.\.?/\S.*")


def _legacy_sources(ctx: Context, imports: list[t.ImportStatement]) -> None:
    """The source of a legacy ``import "skill" from "source"`` (the syntax itself is
    reported by another rule): `github:owner/repo`, `npm:package` or a relative path."""
    for node in imports:
        source = node.source
        if source is None or not source.is_terminated:
            continue
        if not _SKILL_SOURCE.fullmatch(source.text):
            ctx.report(
                "W006",
                f"unknown import source format `{source.text}`: a skill comes from "
                "`github:owner/repo`, `npm:package` or a relative path such as `./skills/name`",
                source,
            )


def _resolve(ctx: Context, paths: dict[int, ImportPath | None]) -> dict[int, Resolution]:
    """Resolve every top-level use (E072, I001, E071)."""
    loader: ContractLoader | None = ctx.contracts
    if loader is None:
        return {}
    resolutions: dict[int, Resolution] = {}
    for use in _top_level_uses(ctx):
        path = paths[id(use)]
        if path is None or path.kind in (Kind.EMPTY, Kind.INVALID, Kind.SCHEME):
            continue
        leaf = use.path
        resolution = loader.resolve_path(ctx.path, path)
        resolutions[id(use)] = resolution
        if resolution.status is Status.MISSING:
            where = f"`{resolution.file}`" if resolution.file is not None else "the file"
            message = f"imported program not found: `{path.text}`: {where} "
            message += (
                "does not exist" if resolution.reason == "no such file" else resolution.reason
            )
            if path.bare:
                message += f" (a registry program is written `@handle/{path.text}`)"
            ctx.report("E072", message, leaf)
        elif resolution.status is Status.OFFLINE:
            alias = _alias(ctx, use)
            if path.kind is Kind.URL:
                why = "programs are not fetched by URL"
            else:
                cache = f".prose/imports/{path.handle}--{path.slug}/program.prose"
                why = f"it is not in the local import cache (`{cache}`)"
            ctx.report(
                "I001",
                f"contract of `{path.shown}` not verified offline: {why}, so calls to "
                f"`{alias}` are not checked against its inputs and outputs",
                leaf,
            )
        elif resolution.status is Status.FOUND and ctx.path is not None:
            _cycle(ctx, loader, use, resolution)
    return resolutions


def _cycle(ctx: Context, loader: ContractLoader, use: t.UseStatement, found: Resolution) -> None:
    assert ctx.path is not None and use.path is not None
    chain = loader.cycle(ctx.path, found)
    if chain is None:
        return
    leaf = use.path
    if not chain:
        message = f"import cycle: `{leaf.text}` is this program itself"
    else:
        here = ctx.path.resolve().parent
        files = [ctx.path.name, *(_shown(link.file, here) for link in chain), ctx.path.name]
        message = "import cycle: " + " -> ".join(f"`{name}`" for name in files)
    related = [
        Related(
            f"`{link.file.name}` uses `{link.dependency.text}` here",
            link.dependency.start,
            link.dependency.end,
            str(link.file),
        )
        for link in chain
    ]
    _report(ctx, "E071", message, leaf, related)


def _shown(file: Path, directory: Path) -> str:
    try:
        return os.path.relpath(file, directory)
    except ValueError:  # another drive
        return str(file)


def _names(
    ctx: Context, paths: dict[int, ImportPath | None], resolutions: dict[int, Resolution]
) -> None:
    """The same program twice (E010); two programs under one name (E046)."""
    by_key: dict[str, t.UseStatement] = {}
    by_name: dict[str, t.UseStatement] = {}
    for use in _top_level_uses(ctx):
        path = paths[id(use)]
        if path is None or path.kind is Kind.EMPTY:
            continue
        leaf = use.path
        assert leaf is not None
        key = _key(path, resolutions.get(id(use)))
        first = by_key.get(key)
        if first is not None:
            ctx.report(
                "E010",
                f"program `{path.shown}` is already imported",
                leaf,
                related=(("first imported here", first.path),),
            )
            continue
        by_key[key] = use
        name = _alias(ctx, use)
        if name is None:
            continue
        other = by_name.get(name)
        if other is None:
            by_name[name] = use
            continue
        other_path = paths[id(other)]
        shown = other_path.shown if other_path is not None else name
        if use.alias is None and other.alias is None:
            message = (
                f"alias required when importing multiple programs named `{name}`: "
                f"`{shown}` is already imported as `{name}`; write "
                f'`use "{path.text}" as another-name`'
            )
            at: Any = leaf
        else:
            message = (
                f"`{name}` already names the program imported from `{shown}`: "
                "give this import another alias"
            )
            at = use.alias if use.alias is not None else leaf
        ctx.report("E046", message, at, related=((f"`{name}` is imported here", other.path),))


def _key(path: ImportPath, resolution: Resolution | None) -> str:
    if path.kind is Kind.LOCAL and resolution is not None and resolution.file is not None:
        return str(resolution.file)
    return path.key


# --------------------------------------------------------------------------- inputs


def _inputs(ctx: Context, inputs: list[t.InputDeclaration]) -> None:
    for node in inputs:
        description = node.description
        name = node.name
        if (
            isinstance(description, t.String)
            and not _starts_with_text(description.value)
            and terminated(description)
            and not text_of(description).strip()
        ):
            what = f"input `{name.value}`" if name is not None else "this input"
            ctx.report(
                "W012",
                f"{what} has an empty description: say what the caller should provide",
                description,
            )
        block = _enclosing_block(node)
        if block is not None:
            subject = f"input `{name.value}`" if name is not None else "this input"
            parameter = name.value if name is not None else "name"
            ctx.report(
                "E022",
                "inputs must be declared at the top of the program, before executable "
                f"statements: {subject} is inside block `{block.name}`; a block takes "
                f"parameters instead (`block {block.name}({parameter})`)",
                node.children[0],
                end=name if name is not None else None,
            )


def _starts_with_text(value: str) -> bool:
    """Whether a one-line string literal's body starts with a character kept as written that
    is no space: its text is not blank, without decoding it (most descriptions hold an
    escaped quote, and are decoded slowly)."""
    return len(value) > 2 and value[1] not in _NOT_TEXT and not value[1].isspace()


# A quote (an empty or triple-quoted string) or a backslash (an escape) opens the body.
_NOT_TEXT = frozenset('"\\')


def _enclosing_block(node: Any) -> t.BlockDefinition | None:
    found: t.BlockDefinition | None = t.ancestor(node, t.BlockDefinition)
    return found


# --------------------------------------------------------------------------- invocation


def _program_contracts(ctx: Context, resolutions: dict[int, Resolution]) -> dict[str, Contract]:
    """Imported program name -> its contract, for the programs whose contract is known."""
    contracts: dict[str, Contract] = {}
    for name, uses in ctx.model.programs.items():
        resolution = resolutions.get(id(uses[0]))
        if resolution is not None and resolution.contract is not None:
            contracts[name] = resolution.contract
    return contracts


def _calls(ctx: Context, contracts: dict[str, Contract]) -> None:
    model = ctx.model
    for call in model.program_calls:
        name = call.name
        if name is None:
            continue
        if name.value not in model.programs:
            _unknown_program(ctx, name)
            continue
        contract = contracts.get(name.value)
        if contract is None or call.arguments is None:
            continue
        given = {argument.name.value for argument in call.arguments.keyword_arguments()}
        declared = [port.name for port in contract.inputs]
        for argument in call.arguments.keyword_arguments():
            if contract.input(argument.name.value) is None:
                ctx.report(
                    "E027",
                    f"`{argument.name.value}` is not an input of `{name.value}`"
                    + _suggest(argument.name.value, declared, "its inputs are", "it has none"),
                    argument.name,
                )
        missing = [p for p in contract.inputs if p.required and p.name not in given]
        if missing:
            listed = _listing(p.name for p in missing)
            plural = "s" if len(missing) > 1 else ""
            message = f"missing required input{plural} {listed} of `{name.value}`"
            if call.arguments.positional():
                message += " (arguments are passed by name: `input: value`)"
            related = [
                Related(f"`{p.name}` is declared here", p.start, p.end, str(contract.path))
                for p in missing
            ]
            _report(ctx, "E026", message, (name.start_pos, call.arguments.end_pos), related)


def _unknown_program(ctx: Context, name: t.Name) -> None:
    model = ctx.model
    value = name.value
    if model.block(value) is not None:
        message = f"`{value}` is a block, not an imported program: invoke it with `do {value}(...)`"
    elif model.agent(value) is not None:
        message = (
            f"`{value}` is an agent, not an imported program: start a session with "
            f"`session: {value}`"
        )
    else:
        message = f"program `{value}` is not imported"
        close = difflib.get_close_matches(value, list(model.programs), n=1)
        if close:
            message += f": did you mean `{close[0]}`?"
        else:
            message += f': import it with `use "@handle/{value}"`'
    ctx.report("E025", message, name)


# --------------------------------------------------------------------------- outputs


def _outputs(ctx: Context, contracts: dict[str, Contract], bindings: list[t.LetBinding]) -> None:
    """``result.name`` and ``let { name } = program(...)`` name declared outputs (E028)."""
    if not contracts:
        return
    results = _program_results(ctx, contracts)
    for reference in ctx.model.references:
        found = results.get(reference.symbol) if reference.symbol is not None else None
        if found is None or reference.role == "assignment":
            continue
        program, call = found
        leaf = reference.leaf
        if isinstance(leaf, t.String):
            _interpolated_output(ctx, reference.start, leaf, program, contracts[program], call)
        elif isinstance(leaf.parent, t.Attribute) and leaf.parent.base is leaf:
            names = leaf.parent.attribute_names()
            if names:
                _output(ctx, names[0].value, names[0], program, contracts[program], call)
    for node in bindings:
        if not isinstance(node.target, t.ObjectLiteral):
            continue
        value = node.value
        if not isinstance(value, t.ProgramCall) or value.name is None:
            continue
        contract = contracts.get(value.name.value)
        if contract is None:
            continue
        for entry in node.target.entries():
            key = entry.key if isinstance(entry, t.ObjectEntry) else entry
            if isinstance(key, t.Name):
                _output(ctx, key.value, key, value.name.value, contract, value)


def _program_results(
    ctx: Context, contracts: dict[str, Contract]
) -> dict[Symbol, tuple[str, t.ProgramCall]]:
    """Variables whose every value is the result of one program with a known contract."""
    values: dict[Symbol, list[Any]] = {}
    for symbol in ctx.model.definitions:
        node = symbol.node
        if not isinstance(node, t.LetBinding | t.Assignment | t.OutputBinding):
            continue
        defined = node.name if isinstance(node, t.OutputBinding) else node.target
        if defined is symbol.leaf:  # not a name of a destructuring pattern
            values[symbol] = [node.value]
    for reference in ctx.model.references:
        assigned_to = reference.symbol
        if reference.role == "assignment" and assigned_to is not None and assigned_to in values:
            assignment = reference.leaf.parent
            value = assignment.value if isinstance(assignment, t.Assignment) else None
            values[assigned_to].append(value)
    results: dict[Symbol, tuple[str, t.ProgramCall]] = {}
    for symbol, assigned in values.items():
        programs = {_called(value) for value in assigned}
        if len(programs) != 1:
            continue
        program = programs.pop()
        if program is not None and program in contracts:
            results[symbol] = (program, assigned[0])
    return results


def _called(value: Any) -> str | None:
    """The program a value is the result of (None: not a program call)."""
    if isinstance(value, t.ProgramCall) and value.name is not None:
        return value.name.value
    return None


def _interpolated_output(
    ctx: Context,
    start: tuple[int, int],
    leaf: t.String,
    program: str,
    contract: Contract,
    call: t.ProgramCall,
) -> None:
    for part in leaf.parts():
        if part.kind != "interpolation" or part.start != start:
            continue
        path = part.path
        if len(path) < 2:
            return
        begin = part.start_offset + 1 + len(path[0]) + 1
        at = (offset_position(leaf, begin), offset_position(leaf, begin + len(path[1])))
        _output(ctx, path[1], at, program, contract, call)
        return


def _output(
    ctx: Context, name: str, at: Any, program: str, contract: Contract, call: t.ProgramCall
) -> None:
    if contract.output(name) is not None:
        return
    declared = [port.name for port in contract.outputs]
    ctx.report(
        "E028",
        f"`{name}` is not an output of `{program}`"
        + _suggest(name, declared, "it declares", "it declares no outputs"),
        at,
        related=((f"the result of this call to `{program}`", call.name),),
    )


# --------------------------------------------------------------------------- helpers


def _suggest(name: str, declared: list[str], some: str, none: str) -> str:
    if not declared:
        return f" ({none})"
    close = difflib.get_close_matches(name, declared, n=1)
    hint = f": did you mean `{close[0]}`?" if close else ""
    return f"{hint} ({some} {_listing(declared)})"


def _listing(names: Iterable[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _report(ctx: Context, code: str, message: str, at: Any, related: list[Related]) -> None:
    """Like ``ctx.report``, with related locations that may lie in other files."""
    start, end = at if isinstance(at, tuple) else span(at)
    ctx.diagnostics.append(Diagnostic(code, message, severity_of(code), start, end, tuple(related)))
