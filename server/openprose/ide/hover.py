"""Hover: what the word under the cursor is, in a few lines of markdown.

- keywords, property names, modifier names (`count`, `on-fail`, `max`) and a few property
  values (`sonnet`, `deny`, `exponential`): a short explanation and an example (docs.py);
- an agent: its model, the first line of its prompt, persistence, skills, a summary of its
  permissions, and where it is defined;
- a variable (also inside a `{name}` interpolation): its kind, what produced its value
  (`session: researcher`, `do review(...)`, a parallel branch, `for x in items`, an input's
  description...), and where it is defined and reassigned;
- a block: its signature and where it is defined;
- an imported program (its alias, a call, or the `use` path): where it comes from and its
  contract (inputs with their descriptions, outputs), when it can be read offline;
- an input or output of an imported program (`research(topic: ...)`, `result.findings`);
- a `**...**` condition: a note on discretion conditions;
- a code in a suppression comment (`# prose: ignore[W015]`): the rule's title and severity.

Whitespace, other comments and plain string text get no hover.
"""

from __future__ import annotations

from typing import Any

from openprose.analysis.model import Kind, Symbol, import_alias
from openprose.ide import docs
from openprose.ide.analysis import Analysis, node_range
from openprose.ide.names import Found, Occurrence, Port, find, index_of, program_of
from openprose.ide.ports import analysis_of_file, imported_program
from openprose.ide.types import Hover, Pos, Range
from openprose.syntax import tree as t

_SHORT = 72  # longest inline excerpt of a prompt or expression


def hover(analysis: Analysis, position: Pos) -> Hover | None:
    suppressed = _suppression_code(analysis, position)
    if suppressed is not None:
        return suppressed
    found = find(analysis, position)
    if found is None:
        return None
    try:
        contents, where = _describe(analysis, found)
    except _Nothing:
        return None
    return Hover(contents, where)


class _Nothing(Exception):
    pass


def _suppression_code(analysis: Analysis, position: Pos) -> Hover | None:
    """The rule a code in a suppression comment names, when the cursor is on one."""
    from openprose.codes import CODES, SYNTAX_CODES
    from openprose.suppressions import DIRECTIVE, listed_codes

    line, character = position
    if not 0 <= line < len(analysis.lines):
        return None
    text = analysis.lines[line]
    if "prose:" not in text:
        return None
    leaf = analysis.leaf_at(position)
    if leaf is None or leaf.start_pos <= (line + 1, character):
        return None  # not in the whitespace and comments before a token
    for match in DIRECTIVE.finditer(text):
        for name, start, end in listed_codes(match):
            if start <= character <= end and name in CODES:
                entry = CODES[name]
                contents = (
                    f"**{entry.code}**: {entry.title}\n\nDefault severity: {entry.severity.label}."
                )
                if entry.code in SYNTAX_CODES:
                    contents += " A syntax error: suppression comments cannot silence it."
                return Hover(contents, Range((line, start), (line, end)))
    return None


def _describe(analysis: Analysis, found: Found) -> tuple[str, Range]:
    leaf = found.leaf
    if found.port is not None:
        return _port(analysis, found.port), found.port.range
    occurrence = found.occurrence
    if occurrence is not None:
        return _occurrence(analysis, occurrence), occurrence.range
    where = node_range(leaf)
    if isinstance(leaf, t.Keyword):
        keyword = docs.keyword_doc(leaf)
        if keyword is None:
            raise _Nothing
        word, doc = keyword
        return docs.render(f"**`{word}`** (keyword)", doc), where
    if isinstance(leaf, t.Discretion):
        return docs.render("**discretion condition**", docs.DISCRETION), where
    if isinstance(leaf, t.String) and isinstance(leaf.parent, t.UseStatement):
        alias = import_alias(leaf.parent)
        if alias is not None and leaf.parent.path is leaf:
            return _program(analysis, alias), where
    if isinstance(leaf, t.Name):
        described = _name(leaf)
        if described is not None:
            return described, where
    raise _Nothing


# --------------------------------------------------------------------------- plain names


def _name(leaf: Any) -> str | None:
    parent = leaf.parent
    word = leaf.value
    if isinstance(parent, t.Property):
        if parent.children[0] is leaf:
            doc = docs.PROPERTIES.get(word)
            return docs.render(f"**`{word}`** (property)", doc) if doc is not None else None
        meaning = docs.VALUES.get(parent.name, {}).get(word)
        if meaning is not None:
            return f"**`{word}`** (value of `{parent.name}`)\n\n{_capital(meaning)}."
        return None
    if isinstance(parent, t.KeywordArgument) and parent.children[0] is leaf:
        owner = parent.parent.parent if isinstance(parent.parent, t.Arguments) else None
        if isinstance(owner, t.Parallel | t.Loop):
            doc = docs.PROPERTIES.get(word)
            if doc is not None:
                return docs.render(f"**`{word}`** (modifier)", doc)
        return None
    if isinstance(parent, t.Session) and parent.name is leaf:
        return f"**`{word}`** (session name)\n\nA label for this session."
    return None


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


# --------------------------------------------------------------------------- occurrences


def _occurrence(analysis: Analysis, occurrence: Occurrence) -> str:
    kind = occurrence.key[0]
    name = occurrence.name
    if kind == "agent":
        return _agent(analysis, name)
    if kind == "block":
        return _block(analysis, name)
    if kind == "program":
        return _program(analysis, name)
    if kind == "undefined":
        return _undefined(analysis, occurrence)
    return _variable(analysis, occurrence)


def _line(leaf: Any) -> int:
    return int(leaf.start_pos[0])


def _agent(analysis: Analysis, name: str) -> str:
    definitions = analysis.model.agents.get(name)
    if not definitions:
        return f"**agent** `{name}`\n\nNot defined in this program."
    agent = definitions[0]
    lines = [f"**agent** `{name}`", ""]
    facts = []
    for prop in agent.properties():
        fact = _agent_property(prop)
        if fact is not None:
            facts.append(f"- {fact}")
    if facts:
        lines.extend([*facts, ""])
    lines.append(f"Defined on line {_line(agent)}.")
    if len(definitions) > 1:
        lines[-1] += f" (defined {len(definitions)} times)"
    return "\n".join(lines)


def _agent_property(prop: Any) -> str | None:
    name = prop.name
    value = prop.value
    if name == "model":
        return f"model: `{_code(value)}`" if value is not None else None
    if name == "prompt":
        return f"prompt: {_excerpt(value)}" if value is not None else None
    if name == "persist":
        return f"persist: `{_code(value)}`" if value is not None else None
    if name == "skills":
        if isinstance(value, t.ArrayLiteral):
            skills = [_text(e) for e in value.elements()]
            return "skills: " + (", ".join(f"`{s}`" for s in skills) if skills else "none")
        return f"skills: `{_code(value)}`" if value is not None else None
    if name == "permissions":
        block = prop.block
        if block is None:
            return None
        rules = []
        for rule in block.properties():
            inner = rule.value
            if isinstance(inner, t.ArrayLiteral):
                shown = ", ".join(f"`{_text(e)}`" for e in inner.elements()) or "nothing"
            elif inner is not None:
                shown = f"`{_code(inner)}`"
            else:
                continue
            rules.append(f"{rule.name} {shown}")
        return "permissions: " + ("; ".join(rules) if rules else "none")
    return None


def _block(analysis: Analysis, name: str) -> str:
    definitions = analysis.model.blocks.get(name)
    if not definitions:
        return f"**block** `{name}`\n\nNot defined in this program."
    block = definitions[0]
    signature = f"block {name}({', '.join(p.value for p in block.parameters())})"
    text = f"```prose\n{signature}\n```\n\nDefined on line {_line(block)}."
    if len(definitions) > 1:
        text += f" (defined {len(definitions)} times)"
    return text


def _program(analysis: Analysis, alias: str) -> str:
    program = imported_program(analysis, alias)
    if program is None:
        return f"**program** `{alias}`\n\nNot imported: add a `use` statement."
    path = program.use.path
    shown = path.text if path is not None else "?"
    lines = [f"**program** `{alias}`, imported from `{shown}`", ""]
    contract = program.contract
    if contract is None:
        lines.append(f"*contract not loaded*: {program.reason}.")
        return "\n".join(lines)
    descriptions = _input_descriptions(analysis, program.file)
    if contract.inputs:
        lines.append("Inputs:")
        for port in contract.inputs:
            entry = f"- `{port.name}`"
            if not port.required:
                entry += " (optional: asked at run time)"
            description = descriptions.get(port.name)
            if description:
                entry += f": {description}"
            lines.append(entry)
    else:
        lines.append("No inputs.")
    lines.append("")
    if contract.outputs:
        lines.append("Outputs: " + ", ".join(f"`{p.name}`" for p in contract.outputs))
    else:
        lines.append("No outputs.")
    if program.file is not None:
        lines.extend(["", f"File: `{program.file}`"])
    return "\n".join(lines)


def _input_descriptions(analysis: Analysis, file: Any) -> dict[str, str]:
    other = analysis_of_file(file, analysis.caches) if file is not None else None
    if other is None:
        return {}
    found: dict[str, str] = {}
    for symbol in other.model.inputs:
        description = symbol.node.description
        if symbol.name not in found and isinstance(description, t.String):
            found[symbol.name] = _one_line(description.text)
    return found


def _port(analysis: Analysis, port: Port) -> str:
    title = f"**{port.kind}** `{port.name}` of program `{port.program}`"
    program = imported_program(analysis, port.program)
    if program is None:
        return f"{title}\n\n`{port.program}` is not imported."
    contract = program.contract
    if contract is None:
        return f"{title}\n\n*contract not loaded*: {program.reason}."
    declared = contract.input(port.name) if port.kind == "input" else contract.output(port.name)
    if declared is None:
        names = contract.inputs if port.kind == "input" else contract.outputs
        listed = ", ".join(f"`{p.name}`" for p in names) or "none"
        return f"{title}\n\nNot declared by `{port.program}` (its {port.kind}s: {listed})."
    lines = [title, ""]
    if port.kind == "input":
        description = _input_descriptions(analysis, program.file).get(port.name)
        if description:
            lines.extend([description, ""])
        if not declared.required:
            lines.extend(["Optional: the program asks for it at run time if not given.", ""])
    else:
        value = _output_value(analysis, program.file, port.name)
        if value:
            lines.extend([f"Value: {value}", ""])
    lines.append(f"Declared on line {declared.start[0]} of `{program.file}`.")
    return "\n".join(lines)


def _output_value(analysis: Analysis, file: Any, name: str) -> str | None:
    other = analysis_of_file(file, analysis.caches) if file is not None else None
    if other is None:
        return None
    for symbol in other.model.outputs:
        if symbol.name == name:
            return _value(symbol.node.value)
    return None


# --------------------------------------------------------------------------- variables

_KINDS = {
    Kind.LET: "variable",
    Kind.CONST: "constant",
    Kind.INPUT: "input",
    Kind.OUTPUT: "output",
    Kind.BRANCH: "parallel result",
    Kind.LOOP: "loop variable",
    Kind.INDEX: "index variable",
    Kind.PIPELINE: "pipeline variable",
    Kind.ERROR: "error variable",
    Kind.PARAMETER: "parameter",
}


def _variable(analysis: Analysis, occurrence: Occurrence) -> str:
    index = index_of(analysis)
    symbols = index.symbols.get(occurrence.key, [])
    if not symbols:
        return f"`{occurrence.name}`"
    symbol = symbols[0]
    if occurrence.role == "definition":
        symbol = next((s for s in symbols if s.leaf is occurrence.leaf), symbol)
    lines = [f"**{_kind_label(symbol)}** `{symbol.name}`", ""]
    origin = _origin(symbol)
    if origin:
        lines.extend([origin, ""])
    program = program_of(symbol)
    if program is not None and program[1]:
        lines.extend([f"Receives the output `{symbol.name}` of `{program[0]}`.", ""])
    if symbol.implicit:
        lines.append(f"Implicit in `{symbol.leaf.value}` on line {_line(symbol.leaf)}.")
    else:
        lines.append(f"Defined on line {_line(symbol.leaf)}.")
    writes = [
        o.range.start[0] + 1 for o in index.by_key.get(occurrence.key, ()) if o.role == "write"
    ]
    if writes:
        shown = ", ".join(str(n) for n in sorted(set(writes)))
        lines[-1] += f" Reassigned on line{'s' if len(set(writes)) > 1 else ''} {shown}."
    return "\n".join(lines)


def _kind_label(symbol: Symbol) -> str:
    label = _KINDS.get(symbol.kind, symbol.kind.value)
    if symbol.kind is Kind.LET:
        return "let variable"
    if symbol.kind is Kind.CONST:
        return "const " + label
    if symbol.kind is Kind.OUTPUT and symbol.exported:
        return "block output"
    return label


def _origin(symbol: Symbol) -> str:
    """What gives the variable its value."""
    node = symbol.node
    kind = symbol.kind
    if kind is Kind.INPUT:
        description = node.description if isinstance(node, t.InputDeclaration) else None
        if isinstance(description, t.String) and description.text.strip():
            return f"Input: {_one_line(description.text)}"
        return "Input (no description)."
    if kind is Kind.PARAMETER and isinstance(node, t.BlockDefinition):
        params = ", ".join(p.value for p in node.parameters())
        return f"Parameter of `block {node.name}({params})`."
    if kind is Kind.LOOP and isinstance(node, t.ForEach):
        return f"Element of `{_header(node)}`."
    if kind is Kind.INDEX:
        return f"Iteration index of `{_header(node)}` (from 0)."
    if kind is Kind.PIPELINE and isinstance(node, t.PipeStage):
        op = node.operation.value if node.operation is not None else "?"
        if symbol.implicit:
            return f"The current element in `{op}`."
        names = node.parameter_list.names() if node.parameter_list is not None else []
        signature = f"{op}({', '.join(p.value for p in names)})"
        if names and names[0] is symbol.leaf and op == "reduce":
            return f"The accumulator of `{signature}`."
        return f"The current element of `{signature}`."
    if kind is Kind.ERROR:
        return "The error caught by `catch as " + symbol.name + "`."
    described = _value(getattr(node, "value", None))
    if kind is Kind.BRANCH:
        return f"Parallel branch: {described}" if described else "Parallel branch."
    if isinstance(node, t.LetBinding) and node.target is not symbol.leaf:
        return f"Destructured from {described}" if described else ""
    return f"Value: {described}" if described else ""


def _header(node: Any) -> str:
    """The first line of a construct, up to its colon: `for x, i in items`."""
    parts: list[str] = []
    for child in node.children:
        if isinstance(child, t.Suite) or (isinstance(child, t.Operator) and child.value == ":"):
            break
        parts.append(child.get_code(include_prefix=bool(parts)))
    return _shorten("".join(parts).strip())


def _value(node: Any) -> str:
    """A short description of an expression: `session: researcher`, `do review(...)`."""
    if node is None:
        return ""
    if isinstance(node, t.Session):
        if node.agent is not None:
            label = f" {node.name.value}" if node.name is not None else ""
            return f"`session{label}: {node.agent.value}`"
        if node.prompt is not None:
            return f"`session {_excerpt(node.prompt)}`"
        return "`session`"
    if isinstance(node, t.Resume):
        return f"`resume: {node.agent.value}`" if node.agent is not None else "`resume`"
    if isinstance(node, t.DoInvocation):
        name = node.name.value if node.name is not None else "?"
        args = "(...)" if node.arguments is not None and node.arguments.items() else ""
        return f"`do {name}{args}` (block)"
    if isinstance(node, t.DoBlock):
        return "a `do:` block (the value of its last statement)"
    if isinstance(node, t.Parallel):
        return f"a `parallel` block of {len(node.body_statements())} branches"
    if isinstance(node, t.ProgramCall):
        name = node.name.value if node.name is not None else "?"
        return f"`{name}(...)` (imported program)"
    if isinstance(node, t.Pipeline):
        source = _shorten(node.source.get_code(include_prefix=False), 30)
        ops = [s.operation.value for s in node.stages() if s.operation is not None]
        return f"`{' | '.join([source, *ops])}` (pipeline)"
    if isinstance(node, t.ArrowSequence):
        return f"an arrow sequence of {len(node.steps())} steps"
    if isinstance(node, t.String):
        return f"the string {_excerpt(node)}"
    if isinstance(node, t.ArrayLiteral):
        return f"an array of {len(node.elements())} elements"
    if isinstance(node, t.TryStatement):
        return "a `try` block"
    return f"`{_shorten(node.get_code(include_prefix=False))}`"


# --------------------------------------------------------------------------- undefined


def _undefined(analysis: Analysis, occurrence: Occurrence) -> str:
    name = occurrence.name
    lines = [f"`{name}`", "", "Not defined here."]
    hidden = index_of(analysis).hidden.get(occurrence.key)
    if hidden is not None:
        lines[-1] = (
            f"Not defined here: the {_KINDS.get(hidden.kind, 'variable')} defined on line "
            f"{_line(hidden.leaf)} lives only inside its body."
        )
    model = analysis.model
    if name in model.agents:
        lines.extend(["", f"`{name}` is an agent: use it with `session: {name}`."])
    elif name in model.blocks:
        lines.extend(["", f"`{name}` is a block: run it with `do {name}`."])
    return "\n".join(lines)


# --------------------------------------------------------------------------- text helpers


def _text(node: Any) -> str:
    if isinstance(node, t.String):
        return str(node.text)
    return str(node.get_code(include_prefix=False))


def _code(node: Any) -> str:
    return _shorten(node.get_code(include_prefix=False))


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if len(lines) > 1:
        first += " …"
    return _shorten(first)


def _shorten(text: str, limit: int = _SHORT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _excerpt(node: Any) -> str:
    """A string value's first line, shortened, in quotes."""
    if not isinstance(node, t.String):
        return _code(node)
    return '"' + _one_line(node.text).replace("`", "'") + '"'
