"""Quick fixes for diagnostics, and one "fix all" action for the safe ones.

Every fix is found from the tree, not from the diagnostic's message: the diagnostic only
says where to look (the client may send diagnostics of an older version of the text, so a
fix whose construct is no longer there is simply not offered).  Edits are minimal and use
0-based (line, character) positions counted in code points.

A fix is *safe* when applying it cannot be a wrong guess: making a reassigned ``const`` a
``let``, bounding a bare ``loop``, switching a ``session:`` to ``resume:`` on an agent whose
memory exists, removing a property that repeats the same value, adding the `:` a
``session`` with indented properties lacks, and a "did you mean" when exactly one name is
close.  ``fix_all`` applies only those, and checks the result.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from openprose.analysis.model import Kind, Reference
from openprose.analysis.rules.properties import AGENT_PROPERTIES, MODELS, SESSION_PROPERTIES
from openprose.codes import CODES
from openprose.config import SYNTAX_CODES, Config
from openprose.diagnostics import Diagnostic
from openprose.format import TextEdit
from openprose.ide.analysis import Analysis, to_pos
from openprose.ide.define_variable import define_variable
from openprose.ide.move_agent import move_to_top_level
from openprose.ide.types import CodeAction, Pos, Range
from openprose.syntax import tree as t

__all__ = ["close_names", "code_actions", "fix_all", "near_names"]

QUICKFIX = "quickfix"
FIX_ALL = "source.fixAll"

# How close a name must be to count as "did you mean" (the rules' own hints use 0.6).
_CUTOFF = 0.6
_MAX_SUGGESTIONS = 3
_LOOP_LIMIT = 10
_UNDEFINED_VARIABLE = ("E043", "E044", "E045", "E061", "W034")
_SUPPRESSIBLE = sorted(set(CODES) - SYNTAX_CODES)
_LOOP_MODIFIERS = ("max",)
_PARALLEL_MODIFIERS = ("on-fail", "count")


@dataclass(frozen=True, slots=True)
class _Fix:
    action: CodeAction
    safe: bool = False  # may be applied without asking (by fix_all)
    suggestion: str | None = None  # the near name a "did you mean" fix puts in


# --------------------------------------------------------------------------- entry points


def code_actions(
    analysis: Analysis,
    range: Range,
    diagnostics: list[Diagnostic] | None = None,
    config: Config | None = None,
) -> list[CodeAction]:
    """Quick fixes for the diagnostics that touch ``range``: those the client shows when
    given, else the document's own under ``config`` (a code the project ignores is not
    reported, so it gets no fix either)."""
    if diagnostics is None:
        diagnostics = _diagnostics(analysis, config)
    fixer = _Fixer(analysis)
    actions: list[CodeAction] = []
    seen: set[tuple[str, tuple[TextEdit, ...]]] = set()
    for diagnostic in diagnostics:
        if not _touches(diagnostic, range):
            continue
        for fix in fixer.fixes(diagnostic):
            key = (fix.action.title, fix.action.edits)
            if key not in seen:
                seen.add(key)
                actions.append(fix.action)
    return actions


def fix_all(
    analysis: Analysis, config: Config | None = None, unsafe: bool = False
) -> list[CodeAction]:
    """One ``source.fixAll`` action applying every safe fix of the diagnostics reported
    under ``config`` (none when there is nothing to fix).  The fixes never overlap, and the
    result is checked: a fix that would leave its diagnostic in place or bring a new one is
    left out.  ``unsafe`` (the command line's --unsafe-fixes) also takes the preferred fix
    of a diagnostic without a safe one: what the editor's "Auto Fix" would apply, a likely
    intent rather than a sure one."""
    key = (analysis.text, str(analysis.path), _config_key(config), unsafe)
    cached = _FIX_ALL_CACHE.get(key)
    if cached is not None:
        _FIX_ALL_CACHE.move_to_end(key)
        return list(cached)
    result = _fix_all(analysis, config, unsafe)
    _FIX_ALL_CACHE[key] = tuple(result)
    while len(_FIX_ALL_CACHE) > _CACHE_SIZE:
        _FIX_ALL_CACHE.popitem(last=False)
    return result


def near_names(analysis: Analysis, diagnostic: Diagnostic) -> list[str]:
    """The names the "did you mean" fixes of ``diagnostic`` offer, closest first (the
    command line shows them as hints)."""
    fixes = _Fixer(analysis, single=False).fixes(diagnostic)
    return [fix.suggestion for fix in fixes if fix.suggestion is not None]


def close_names(word: str, candidates: Iterable[str]) -> list[str]:
    """The ``candidates`` close enough to ``word`` for a "did you mean", closest first: the
    measure every fix here uses, for hints on problems that have no fix."""
    return _close(word, candidates)


# The server asks for "fix all" with every code action request (each cursor move): the
# answer for a text is kept, since checking the fixed text costs a full check.  The same
# text under another rule selection has other fixes, so the selection is part of the key.
_FIX_ALL_CACHE: OrderedDict[
    tuple[str, str, frozenset[str] | None, bool], tuple[CodeAction, ...]
] = OrderedDict()
_CACHE_SIZE = 8


def _diagnostics(analysis: Analysis, config: Config | None) -> list[Diagnostic]:
    return analysis.diagnostics if config is None else analysis.diagnostics_with(config)


def _config_key(config: Config | None) -> frozenset[str] | None:
    """What of a configuration decides the fixes: the enabled codes (severities do not)."""
    return None if config is None else config.enabled


def _fix_all(analysis: Analysis, config: Config | None, unsafe: bool) -> list[CodeAction]:
    fixer = _Fixer(analysis, single=False)
    chosen: list[_Chosen] = []
    taken: list[TextEdit] = []
    for diagnostic in _diagnostics(analysis, config):
        fixes = fixer.fixes(diagnostic)
        fix = next((f for f in fixes if f.safe), None)
        if fix is None and unsafe:
            fix = next((f for f in fixes if f.action.preferred), None)
        if fix is None:
            continue
        edits = [e for e in fix.action.edits if e not in taken]
        if any(_overlap(e, other) for e in edits for other in taken):
            continue
        taken.extend(edits)
        chosen.append((diagnostic, fix))
    chosen = _verified(analysis, chosen, config) if chosen else []
    if not chosen:
        return []
    edits = _merge(fix.action.edits for _, fix in chosen)
    codes = sorted({code for _, fix in chosen for code in fix.action.diagnostic_codes})
    count = len(chosen)
    title = f"Fix {count} problem{'s' if count != 1 else ''} that can be fixed safely"
    return [CodeAction(title, FIX_ALL, tuple(edits), tuple(codes), preferred=False)]


# --------------------------------------------------------------------------- fix_all checks

_Chosen = tuple[Diagnostic, "_Fix"]
# Checks of the fixed text allowed when the fixes interfere (each is a full check).
_MAX_CHECKS = 16


def _verified(analysis: Analysis, chosen: list[_Chosen], config: Config | None) -> list[_Chosen]:
    """The fixes whose result is clean: each fixed diagnostic gone, nothing new.  When the
    whole set is not clean, groups of fixes are added while the result stays clean, halving
    a group that is not (within a budget of checks; what is left over is left out)."""
    from openprose.checking import check_module
    from openprose.format import _comments as comments_of
    from openprose.syntax import parse

    path = str(analysis.path) if analysis.path is not None else None
    before = Counter(d.code for d in _diagnostics(analysis, config))
    comments = comments_of(analysis.module)
    checks = [0]

    def clean(fixes: list[_Chosen]) -> bool:
        checks[0] += 1
        text = apply_edits(analysis.text, _merge(fix.action.edits for _, fix in fixes))
        module = parse(text)
        if comments_of(module) != comments:
            return False  # a fix that deletes a line must not take its comment with it
        after = Counter(d.code for d in check_module(module, path, config, text))
        fixed = Counter(d.code for d, _ in fixes)
        return all(after[code] <= before[code] - fixed[code] for code in after | fixed)

    if clean(chosen):
        return chosen
    kept: list[_Chosen] = []
    pending = [chosen[: len(chosen) // 2], chosen[len(chosen) // 2 :]]
    while pending and checks[0] < _MAX_CHECKS:
        group = pending.pop(0)
        if not group:
            continue
        if clean([*kept, *group]):
            kept.extend(group)
        elif len(group) > 1:
            half = len(group) // 2
            pending[:0] = [group[:half], group[half:]]
    return kept


def _overlap(a: TextEdit, b: TextEdit) -> bool:
    """Whether two edits touch the same text (two insertions at one point do too)."""
    return a.start == b.start or (a.start < b.end and b.start < a.end)


def _merge(groups: Iterable[Iterable[TextEdit]]) -> list[TextEdit]:
    merged: list[TextEdit] = []
    for group in groups:
        for edit in group:
            if edit not in merged:
                merged.append(edit)
    return sorted(merged, key=lambda e: (e.start, e.end))


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with non-overlapping ``edits`` applied (in any order)."""
    from parso.utils import split_lines

    starts = [0]
    for line in split_lines(text, keepends=True):
        starts.append(starts[-1] + len(line))
    lines = split_lines(text)

    def offset(position: Pos) -> int:
        line, character = position
        if line >= len(lines):
            return len(text)
        return starts[line] + min(character, len(lines[line]))

    result = text
    spans = sorted(((offset(e.start), offset(e.end), e.text) for e in edits), reverse=True)
    for start, end, new in spans:
        result = result[:start] + new + result[end:]
    return result


# --------------------------------------------------------------------------- positions


def _touches(diagnostic: Diagnostic, range: Range) -> bool:
    start, end = to_pos(diagnostic.start), to_pos(diagnostic.end)
    low, high = sorted((range.start, range.end))
    return start <= high and low <= end


def _edit(start: Any, end: Any, text: str) -> TextEdit:
    """An edit from parso positions."""
    return TextEdit(to_pos(start), to_pos(end), text)


def _replace(node: Any, text: str) -> TextEdit:
    return _edit(node.start_pos, node.end_pos, text)


def _code(node: Any) -> str:
    return str(node.get_code(include_prefix=False)).strip()


def _ancestor(node: Any, cls: type | tuple[type, ...]) -> Any:
    while node is not None and not isinstance(node, cls):
        node = node.parent
    return node


def _close(word: str, candidates: Iterable[str], n: int = _MAX_SUGGESTIONS) -> list[str]:
    options = sorted({c for c in candidates if c != word})
    found = difflib.get_close_matches(word, options, n=n, cutoff=_CUTOFF)
    if not found and word.lower() != word:
        found = difflib.get_close_matches(word.lower(), options, n=n, cutoff=_CUTOFF)
    return found


def _quickfix(
    title: str, edits: Iterable[TextEdit], code: str, preferred: bool = False, safe: bool = False
) -> _Fix:
    action = CodeAction(title, QUICKFIX, tuple(edits), (code,), preferred)
    return _Fix(action, safe)


def _suggestions(
    code: str,
    word: str,
    candidates: Iterable[str],
    edit: Callable[[str], TextEdit],
    sure: bool = True,
) -> list[_Fix]:
    """A "Change to `x`" for each name close to ``word``: preferred when exactly one is
    close, and then safe too unless not ``sure``."""
    close = _close(word, candidates)
    single = len(close) == 1
    return [
        replace(
            _quickfix(f"Change to `{name}`", [edit(name)], code, single, single and sure),
            suggestion=name,
        )
        for name in close
    ]


# --------------------------------------------------------------------------- the fixes


class _Fixer:
    def __init__(self, analysis: Analysis, single: bool = True) -> None:
        self.analysis = analysis
        # Fixes asked for one by one (not by fix_all, which checks its whole result): the
        # few that cannot be judged from the tree are checked by checking the fixed text.
        self.single = single
        self.module = analysis.module
        self._newline: str | None = None
        self._indent: str | None = None

    def fixes(self, diagnostic: Diagnostic) -> list[_Fix]:
        if diagnostic.code == "W036":  # in a comment: there is no leaf to start from
            return _useless_suppression(self, diagnostic)
        handler = _HANDLERS.get(diagnostic.code)
        if handler is None:
            return []
        leaf = self.leaf(diagnostic.start)
        if leaf is None:
            return []
        return handler(self, diagnostic, leaf)

    # Helpers -----------------------------------------------------------------

    def leaf(self, position: tuple[int, int]) -> Any:
        """The leaf starting at (or containing) a parso position, prefixes excluded."""
        try:
            leaf = self.module.get_leaf_for_position(position, include_prefixes=True)
        except (ValueError, IndexError):
            return None
        if leaf is not None and leaf.end_pos == position and leaf.start_pos != position:
            following = leaf.get_next_leaf()
            if following is not None and following.start_pos == position:
                leaf = following
        if leaf is None or not (leaf.start_pos <= position <= leaf.end_pos):
            return None
        return leaf

    @property
    def newline(self) -> str:
        if self._newline is None:
            found = next(
                (
                    str(leaf.value)
                    for leaf in t.iter_leaves(self.module)
                    if isinstance(leaf, t.Newline) and leaf.value
                ),
                None,
            )
            if found is None:
                match = re.search(r"\r\n|\r|\n", self.analysis.text)
                found = match.group() if match else "\n"
            self._newline = found
        return self._newline

    @property
    def indent(self) -> str:
        """One level of indentation, as the document writes it (two spaces by default)."""
        if self._indent is None:
            self._indent = "  "
            for statement in self.module.statements():
                block = next(
                    (c for c in statement.children if isinstance(c, t.Suite | t.PropertyBlock)),
                    None,
                )
                inner = block.children[1:] if block is not None else []
                if inner and not isinstance(inner[0], t.ErrorNode | t.Newline):
                    unit = self.line_indent(inner[0])
                    if unit and self.line_indent(statement) == "":
                        self._indent = unit
                        break
        return self._indent

    def line_indent(self, node: Any) -> str:
        """The whitespace before ``node`` on its line ("" when it is not first on it)."""
        line, column = node.start_pos
        lines = self.analysis.lines
        if line - 1 >= len(lines):
            return ""
        before = lines[line - 1][:column].lstrip("\ufeff")
        return before if not before.strip() else ""

    def line_after(self, node: Any) -> tuple[Pos, str]:
        """Where to insert whole lines after ``node``, and a line break to put first (when
        the node ends the file without one)."""
        last = node.get_last_leaf()
        if isinstance(last, t.Newline) and last.value:
            return to_pos(node.end_pos), ""
        return to_pos(node.end_pos), self.newline

    def delete_lines(self, node: Any) -> TextEdit:
        """Delete the lines of a statement or property (its comments above stay)."""
        line = node.start_pos[0] - 1
        last = node.get_last_leaf()
        end = to_pos(node.end_pos)
        if isinstance(last, t.Newline) and last.value:
            return TextEdit((line, 0), end, "")
        # The file's last line, without a line break: take the one before it instead.
        if line > 0:
            return TextEdit((line - 1, len(self.analysis.lines[line - 1])), end, "")
        return TextEdit((line, 0), end, "")

    def reference(self, diagnostic: Diagnostic) -> Reference | None:
        for reference in self.analysis.model.references:
            if reference.start == diagnostic.start and reference.end == diagnostic.end:
                return reference
        return None

    def brings(self, edit: TextEdit, code: str) -> bool:
        """Whether applying ``edit`` brings more ``code`` diagnostics."""
        from openprose.checking import check_text

        path = str(self.analysis.path) if self.analysis.path is not None else None
        after = check_text(apply_edits(self.analysis.text, [edit]), path)
        count = sum(d.code == code for d in after)
        return count > sum(d.code == code for d in self.analysis.diagnostics)

    def used_names(self) -> set[str]:
        model = self.analysis.model
        names = {s.name for s in model.definitions}
        names |= set(model.agents) | set(model.blocks) | set(model.programs)
        return names


# E007 ------------------------------------------------------------------------------


def _undefined_agent(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    model = fixer.analysis.model
    uses = [
        (ref, node)
        for ref, node in model.agent_references
        if ref.value == getattr(leaf, "value", None) and model.agent(ref.value) is None
    ]
    if not isinstance(leaf, t.Name) or not any(ref is leaf for ref, _ in uses):
        return []
    name = leaf.value
    fixes = _suggestions("E007", name, model.agents, lambda other: _replace(leaf, other))
    nested = [
        a
        for a in fixer.analysis.context.nodes(t.AgentDefinition)
        if a.name == name and not isinstance(a.parent, t.Module)
    ]
    if nested:
        # Defined, but inside another statement (W037): moving it out is the fix, and a
        # second definition at the top level would only hide it.
        edits = move_to_top_level(fixer.analysis, nested[0], fixer.newline)
        if edits:
            title = f"Move agent `{name}` to the top level"
            fixes.append(_quickfix(title, edits, "E007", preferred=not fixes))
        return fixes
    first_ref, first_node = min(uses, key=lambda use: use[0].start_pos)
    top = first_ref
    while top.parent is not None and not isinstance(top.parent, t.Module):
        top = top.parent
    if top.parent is None:
        return fixes
    if any(isinstance(node, t.Resume) for _, node in uses):
        # `resume:` needs a persistent agent; a first use that resumes continues memory
        # from earlier runs, kept with the project.
        persist = "true" if isinstance(first_node, t.Session) else "project"
    else:
        persist = None
    nl, unit = fixer.newline, fixer.indent
    lines = [
        f"agent {name}:",
        f"{unit}model: sonnet",
        *([f"{unit}persist: {persist}"] if persist else []),
        f'{unit}prompt: "You are the {name} agent: describe its role and expertise here"',
    ]
    stub = nl.join(lines) + nl + nl
    # Next to the agents defined before that statement, if any, else right before it.
    statements = fixer.module.statements()
    index = next(i for i, s in enumerate(statements) if s is top)
    for i in range(index - 1, -1, -1):
        if isinstance(statements[i], t.AgentDefinition):
            top = statements[i + 1]
            break
    line = _insertion_line(fixer, top)
    text_lines = fixer.analysis.lines
    if line > 0 and text_lines[line - 1].strip():
        stub = nl + stub
    at = (line, 1) if line == 0 and fixer.analysis.text.startswith("\ufeff") else (line, 0)
    fixes.append(
        _quickfix(
            f"Create agent `{name}`",
            [TextEdit(at, at, stub)],
            "E007",
            preferred=not fixes,
        )
    )
    return fixes


def _insertion_line(fixer: _Fixer, statement: Any) -> int:
    """The 0-based line to insert a definition before ``statement``: above the comment
    lines right over it, unless those open the file (a header stays first)."""
    lines = fixer.analysis.lines
    line = statement.start_pos[0] - 1
    above = line
    while above > 0 and lines[above - 1].lstrip("\ufeff").startswith("#"):
        above -= 1
    if above == 0:
        return line
    return above


# E008 ------------------------------------------------------------------------------


def _invalid_model(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    prop = _ancestor(leaf, t.Property)
    if prop is None or prop.name != "model" or prop.value is None:
        return []
    value = prop.value
    if value.start_pos != diagnostic.start:
        return []
    word = _code(value).strip('"').strip()
    close = _close(word, MODELS, n=len(MODELS))
    order = close + [m for m in MODELS if m not in close]
    single = len(close) == 1
    return [
        _quickfix(
            f"Change model to `{model}`",
            [_replace(value, model)],
            "E008",
            preferred=bool(close) and model == close[0],
            safe=single and model == close[0],
        )
        for model in order
    ]


# W005 ------------------------------------------------------------------------------


def _unknown_property(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    parent = leaf.parent
    if isinstance(parent, t.KeywordArgument) and parent.name is leaf:
        return _unknown_modifier(parent)
    if _ancestor(leaf, t.Arguments) is not None:
        return _positional_modifier(leaf, diagnostic)
    if not isinstance(parent, t.Property) or parent.name_leaf is not leaf:
        return []
    block = parent.parent
    if not isinstance(block, t.PropertyBlock):
        return []
    owner = block.parent
    if isinstance(owner, t.AgentDefinition):
        known: tuple[str, ...] = AGENT_PROPERTIES
    elif isinstance(owner, t.Session | t.Resume):
        known = SESSION_PROPERTIES
    else:
        return []
    name = leaf.value
    present = {p.name for p in block.properties()}
    fixes: list[_Fix] = []
    if name not in AGENT_PROPERTIES + SESSION_PROPERTIES:
        fixes = _suggestions(
            "W005",
            name,
            [k for k in known if k not in present],
            lambda other: _replace(leaf, other),
        )
    if not (isinstance(owner, t.AgentDefinition) and len(block.properties()) == 1):
        fixes.append(_quickfix(f"Remove property `{name}`", [fixer.delete_lines(parent)], "W005"))
    return fixes


def _unknown_modifier(item: t.KeywordArgument) -> list[_Fix]:
    arguments = item.parent
    owner = arguments.parent if isinstance(arguments, t.Arguments) else None
    name = item.name.value
    present = (
        {k.name.value for k in arguments.keyword_arguments() if k is not item}
        if isinstance(arguments, t.Arguments)
        else set()
    )
    if isinstance(owner, t.Loop):
        if "max" in present:
            return []
        close = _close(name, _LOOP_MODIFIERS)
        return [
            _quickfix(
                "Change to `max`",
                [_replace(item.name, "max")],
                "W005",
                preferred=bool(close),
                safe=bool(close),
            )
        ]
    if isinstance(owner, t.Parallel):
        return _suggestions(
            "W005",
            name,
            [m for m in _PARALLEL_MODIFIERS if m not in present],
            lambda other: _replace(item.name, other),
        )
    return []


def _positional_modifier(leaf: Any, diagnostic: Diagnostic) -> list[_Fix]:
    """``loop (5):``: the limit needs its name."""
    item = leaf
    while item.parent is not None and not isinstance(item.parent, t.Arguments):
        item = item.parent
    arguments = item.parent
    if not isinstance(arguments, t.Arguments) or not isinstance(arguments.parent, t.Loop):
        return []
    if item.start_pos != diagnostic.start or any(
        k.name.value == "max" for k in arguments.keyword_arguments()
    ):
        return []
    if not isinstance(item, t.Number | t.Name | t.Attribute) or len(arguments.positional()) > 1:
        return []
    edit = _edit(item.start_pos, item.start_pos, "max: ")
    return [_quickfix(f"Change to `(max: {_code(item)})`", [edit], "W005", True, True)]


# E043, E044, E045, E061 (and W034) --------------------------------------------------


def _undefined_variable(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    reference = fixer.reference(diagnostic)
    if reference is None or reference.symbol is not None:
        return []
    fixes = _did_you_mean_variable(fixer, diagnostic, reference)
    # With a close name the use is a typo; a placeholder in a prompt is most often text.
    if not fixes and diagnostic.code != "W034":
        for title, edits in define_variable(fixer.analysis, reference, fixer.newline):
            fixes.append(_quickfix(title, edits, diagnostic.code))
    return fixes


def _did_you_mean_variable(
    fixer: _Fixer, diagnostic: Diagnostic, reference: Reference
) -> list[_Fix]:
    name = reference.name
    start, end = reference.start, reference.end
    if start[0] != end[0]:
        return []
    line = fixer.analysis.lines[start[0] - 1]
    column = line.find(name, start[1], end[1])
    if column < 0:
        return []
    at = (start[0], column)
    until = (start[0], column + len(name))
    candidates = _visible(reference)
    if reference.role == "assignment":
        candidates = [s for s in candidates if not s.kind.is_constant]
    names = {s.name for s in candidates}
    # A `{placeholder}` in a multi-line prompt may well be meant as text: never automatic.
    sure = diagnostic.code != "W034"
    return _suggestions(diagnostic.code, name, names, lambda other: _edit(at, until, other), sure)


def _visible(reference: Reference) -> list[Any]:
    """The variables the binder could have found where ``reference`` stands."""
    in_block = False
    scope: Any = reference.scope
    while scope is not None:
        in_block = in_block or scope.kind == "block"
        scope = scope.parent
    found = []
    scope = reference.scope
    while scope is not None:
        for symbol in scope.symbols.values():
            if not symbol.kind.is_variable:
                continue
            if (
                symbol.exported
                or symbol.kind.is_scoped
                or (in_block and scope.kind == "program")
                or symbol.start < reference.start
            ):
                found.append(symbol)
        scope = scope.parent
    return found


# E048 ------------------------------------------------------------------------------


def _const_reassignment(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    reference = fixer.reference(diagnostic)
    if reference is None or reference.symbol is None or reference.symbol.kind is not Kind.CONST:
        return []
    node = reference.symbol.node
    if not isinstance(node, t.ConstBinding):
        return []
    keyword = node.children[0]
    if not isinstance(keyword, t.Keyword) or keyword.value != "const":
        return []
    return [
        _quickfix(
            f"Make `{reference.name}` a `let`",
            [_replace(keyword, "let")],
            "E048",
            preferred=True,
            safe=True,
        )
    ]


# W011 ------------------------------------------------------------------------------


def _session_with_memory(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    session = leaf.parent
    if not isinstance(session, t.Session) or session.agent is not leaf or session.name is not None:
        return []
    keyword = session.keyword_leaf
    colon = session.children[1] if len(session.children) > 1 else None
    if keyword.value != "session" or not (isinstance(colon, t.Operator) and colon.value == ":"):
        return []
    edit = _replace(keyword, "resume")
    if fixer.single and fixer.brings(edit, "E018"):
        # A block run twice: this `session:` is also the agent's first run, which has no
        # memory to resume.
        return []
    return [_quickfix("Switch to `resume:`", [edit], "W011", preferred=True, safe=True)]


# E074 ------------------------------------------------------------------------------


def _session_without_colon(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    session = leaf.parent
    if not isinstance(session, t.Session) or session.children[0] is not leaf:
        return []
    if len(session.children) < 2 or not isinstance(session.children[1], t.PropertyBlock):
        return []
    edit = _edit(leaf.end_pos, leaf.end_pos, ":")
    return [_quickfix("Add `:` after `session`", [edit], "E074", preferred=True, safe=True)]


# E003, E004: `session name` and `resume name` without their `:` ---------------------


def _agent_without_colon(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    node: Any = leaf.parent
    if diagnostic.code == "E003":
        fits = isinstance(node, t.Session)
    else:  # "expected `:` after `resume`", right after the keyword
        fits = isinstance(node, t.Resume) and diagnostic.start == diagnostic.end
        fits = fits and to_pos(leaf.end_pos) == to_pos(diagnostic.start)
    if not fits or node.children[0] is not leaf:
        return []
    name = leaf.get_next_leaf()
    if not isinstance(name, t.Name) or name.start_pos[0] != leaf.start_pos[0]:
        return []
    after = name.get_next_leaf()
    if isinstance(after, t.Operator) and after.value == ":" and after.start_pos[0] == name.line:
        return []  # `session name: agent`, something else
    edit = _edit(leaf.end_pos, leaf.end_pos, ":")
    known = fixer.analysis.model.agent(name.value) is not None
    title = f"Change to `{leaf.value}: {name.value}`"
    return [_quickfix(title, [edit], diagnostic.code, preferred=True, safe=known)]


# W037 ------------------------------------------------------------------------------


def _nested_agent(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    agent = leaf.parent
    if not isinstance(agent, t.AgentDefinition) or agent.name_leaf is not leaf:
        return []
    edits = move_to_top_level(fixer.analysis, agent, fixer.newline)
    if not edits:
        return []
    # Not safe: the sessions that name the agent start using it.
    return [_quickfix(f"Move agent `{agent.name}` to the top level", edits, "W037", True)]


# E037 ------------------------------------------------------------------------------


def _try_without_handler(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    node = leaf.parent
    if not isinstance(node, t.TryStatement) or node.children[0] is not leaf:
        return []
    if node.catch_clauses() or node.finally_clause is not None:
        return []
    indent = fixer.line_indent(node)
    if node.start_pos[1] and not indent:
        return []  # not first on its line
    statements = [s for s in node.body_statements() if not isinstance(s, t.ErrorNode)]
    inner = fixer.line_indent(statements[0]) if statements else ""
    if not inner.startswith(indent) or len(inner) <= len(indent):
        inner = indent + fixer.indent
    deeper = inner + inner[len(indent) :]
    used = fixer.used_names()
    error = next(
        name
        for name in ("err", "error", "failure", *(f"err{i}" for i in range(2, 99)), "e")
        if name not in used
    )
    nl = fixer.newline
    position, first = fixer.line_after(node)
    handler = (
        f"{first}{indent}catch as {error}:{nl}"
        f'{inner}session "Report what failed and what was left undone"{nl}'
        f"{deeper}context: {error}{nl}"
    )
    return [
        _quickfix("Add `catch:`", [TextEdit(position, position, handler)], "E037", preferred=True)
    ]


# W018 ------------------------------------------------------------------------------


def _unbounded_loop(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    node = leaf.parent
    if not isinstance(node, t.Loop) or node.children[0] is not leaf or node.kind is not None:
        return []
    modifiers = node.modifiers
    limit = f"max: {_LOOP_LIMIT}"
    if modifiers is None:
        edit = _edit(leaf.end_pos, leaf.end_pos, f" ({limit})")
        return [_quickfix(f"Add `({limit})`", [edit], "W018", preferred=True, safe=True)]
    if any(k.name.value == "max" for k in modifiers.keyword_arguments()):
        return []
    items = modifiers.items()
    opening = modifiers.children[0]
    if not (isinstance(opening, t.Operator) and opening.value == "("):
        return []
    if len(items) == 1 and isinstance(items[0], t.Number | t.Name):
        # `loop (5):` is a limit without its name.
        edit = _edit(items[0].start_pos, items[0].start_pos, "max: ")
        return [_quickfix(f"Change to `(max: {_code(items[0])})`", [edit], "W018", True, True)]
    text = limit + (", " if items else "")
    edit = _edit(opening.end_pos, opening.end_pos, text)
    return [_quickfix(f"Add `{limit}`", [edit], "W018", preferred=True, safe=True)]


# E009 ------------------------------------------------------------------------------


def _duplicate_property(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    prop = leaf.parent
    if not isinstance(prop, t.Property) or prop.name_leaf is not leaf:
        return []
    block = prop.parent
    if not isinstance(block, t.PropertyBlock):
        return []
    first = block.get(prop.name)
    if first is None or first is prop:
        return []
    same = _property_text(first) == _property_text(prop)
    name = prop.name
    if same:
        return [
            _quickfix(
                f"Remove duplicate `{name}`",
                [fixer.delete_lines(prop)],
                "E009",
                preferred=True,
                safe=True,
            )
        ]
    return [
        _quickfix(f"Remove this `{name}`", [fixer.delete_lines(prop)], "E009"),
        _quickfix(f"Remove the first `{name}`", [fixer.delete_lines(first)], "E009"),
    ]


def _property_text(prop: t.Property) -> str:
    return " ".join(
        _code(leaf)
        for leaf in t.iter_leaves(prop)
        if not isinstance(leaf, t.Newline) and _code(leaf)
    )


# W027 ------------------------------------------------------------------------------

_GITHUB = re.compile(r"github:([A-Za-z0-9][A-Za-z0-9_.-]*)/[^\s]+")


def _legacy_import(fixer: _Fixer, diagnostic: Diagnostic, leaf: Any) -> list[_Fix]:
    node = leaf.parent
    if not isinstance(node, t.ImportStatement) or node.children[0] is not leaf:
        return []
    name, source = node.name, node.source
    if name is None or source is None or not name.is_terminated or not source.is_terminated:
        return []
    skill = name.text.strip()
    match = _GITHUB.fullmatch(source.text.strip())
    if match is None or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", skill):
        return []
    path = f"@{match.group(1)}/{skill}"
    edit = _edit(leaf.start_pos, source.end_pos, f'use "{path}"')
    return [_quickfix(f'Rewrite as `use "{path}"`', [edit], "W027", preferred=True)]


# W036 ------------------------------------------------------------------------------


def _useless_suppression(fixer: _Fixer, diagnostic: Diagnostic) -> list[_Fix]:
    """For a code that does nothing: change it to a code reported on that line, or remove
    it; for a directive that does nothing: remove the directive."""
    from openprose.suppressions import DIRECTIVE, find_suppressions, listed_codes

    if diagnostic not in find_suppressions(fixer.module).problems:
        return []  # the client's diagnostic is from an older text
    line, start = diagnostic.start
    end = diagnostic.end[1]
    text = fixer.analysis.lines[line - 1]
    row = line - 1
    last = line == len(fixer.analysis.lines)
    match = next(
        (m for m in DIRECTIVE.finditer(text) if m.start() <= start and end <= m.end()), None
    )
    if match is None:
        return []
    if start == match.start():  # the whole directive has no effect
        removal = _remove_directive(text, row, start, end, last)
        return [_quickfix("Remove the suppression comment", [removal], "W036")]
    codes = listed_codes(match)
    listed = [name for name, _, _ in codes]
    word = text[start:end]
    fixes: list[_Fix] = []
    on_line = sorted(
        {
            d.code
            for d in fixer.analysis.diagnostics
            if d.start[0] == line and d.code != "W036" and d.code not in listed
        }
    )
    candidates = on_line or _close_codes(word, listed)
    for code in candidates:
        fixes.append(
            _quickfix(
                f"Change to `{code}`",
                [TextEdit((row, start), (row, end), code)],
                "W036",
                preferred=len(candidates) == 1 and bool(on_line),
            )
        )
    index = next(i for i, (_, code_start, _) in enumerate(codes) if code_start == start)
    if len(codes) == 1:
        removal = _remove_directive(text, row, match.start(), match.end(), last)
    elif index + 1 < len(codes):  # up to the next code, taking the separator
        removal = TextEdit((row, start), (row, codes[index + 1][1]), "")
    else:  # the last one: from the end of the code before it
        removal = TextEdit((row, codes[index - 1][2]), (row, end), "")
    fixes.append(_quickfix(f"Remove `{word}` from the suppression comment", [removal], "W036"))
    return fixes


def _close_codes(word: str, listed: list[str]) -> list[str]:
    """Codes one keystroke from ``word`` (a look-alike letter, or one character off)."""
    options = [c for c in _SUPPRESSIBLE if c not in listed]
    plain = word.upper().translate(str.maketrans("OLI", "011"))
    if plain in options:
        return [plain]
    return [
        c
        for c in options
        if len(c) == len(plain) and sum(a != b for a, b in zip(c, plain, strict=True)) == 1
    ][:_MAX_SUGGESTIONS]


def _remove_directive(text: str, row: int, start: int, end: int, last: bool) -> TextEdit:
    """Delete a directive and the blanks before it; a line holding nothing else goes whole."""
    before = text[:start]
    if not before.strip() and not text[end:].strip():
        return (
            TextEdit((row, 0), (row + 1, 0), "")
            if not last
            else TextEdit((row, 0), (row, len(text)), "")
        )
    return TextEdit((row, len(before.rstrip())), (row, end), "")


_Handler = Callable[[_Fixer, Diagnostic, Any], list[_Fix]]

_HANDLERS: dict[str, _Handler] = {
    "E003": _agent_without_colon,
    "E004": _agent_without_colon,
    "E007": _undefined_agent,
    "E008": _invalid_model,
    "E009": _duplicate_property,
    "E037": _try_without_handler,
    "E048": _const_reassignment,
    "E074": _session_without_colon,
    "W005": _unknown_property,
    "W011": _session_with_memory,
    "W018": _unbounded_loop,
    "W027": _legacy_import,
    "W037": _nested_agent,
    **{code: _undefined_variable for code in _UNDEFINED_VARIABLE},
}
