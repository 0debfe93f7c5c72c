"""Properties of agents, sessions and ``resume:``.

Spec sections: Agent Definitions (properties, persist, skills, permissions), Session
Statement (prompts, duplicate properties), Resume Statement (a persistent agent to resume;
whether it has memory yet is ``agent_memory``), Error Handling (``retry:`` and ``backoff:``).

Word-valued properties (``model``, ``backoff``, ``bash``...) take a bare word; a string
holding the same word (``backoff: "linear"``) is accepted too, as the official examples
write it that way and it can only mean one thing.  ``persist:`` is the exception: a string
there is a path.
"""

from __future__ import annotations

import difflib
from collections.abc import Set
from typing import Any

from openprose.analysis.context import Context
from openprose.analysis.rules.agent_memory import persistence
from openprose.analysis.rules.control import listed, terminated, text_of
from openprose.analysis.rules.imports import declarations
from openprose.syntax import tree as t
from openprose.syntax.vocabulary import (
    ACCESS_PERMISSIONS,
    AGENT_PROPERTIES,
    BACKOFFS,
    MODELS,
    PATTERN_PERMISSIONS,
    PERMISSION_ACCESS,
    PERMISSIONS,
    PERSIST_VALUES,
    SESSION_PROPERTIES,
)

MAX_PROMPT = 10_000
# Made once (a union written in a call is made again at each call).
_WORDS = (t.Name, t.Keyword)
HIGH_RETRY = 10


def check(ctx: Context) -> None:
    check_local(ctx)


def check_local(ctx: Context) -> None:
    # Each class on its own: one query of the three would sort them together by position.
    found = ctx.index.by_class()
    for agent in found.get(t.AgentDefinition, ()):
        _agent(ctx, agent)
    if t.Session in found:
        for session, prompt, block in sessions_to_check(ctx):
            if prompt is not None:
                _session_prompt(ctx, prompt)
            if block is not None:
                _session_properties(ctx, session, block)
    for resume in found.get(t.Resume, ()):
        _session(ctx, resume)
        _resume_needs_persist(ctx, resume)


SessionParts = tuple[t.Session, t.String | None, t.PropertyBlock | None]


def sessions_to_check(ctx: Context) -> list[SessionParts]:
    """The sessions with a prompt that may be blank or long (one that is neither is left
    out) or with properties, each with that prompt and its property block.  Sessions are a
    third of the statements of a program, and most have a plain prompt and few properties:
    looked at once for these rules and for the grammar rules (E074)."""
    return ctx.memo("properties.sessions", lambda: _sessions_to_check(ctx))[0]


def sessions_without_colon(ctx: Context) -> list[t.Session]:
    """The sessions whose properties follow the keyword (no `:`, no prompt): E074, found in
    the same look as ``sessions_to_check``."""
    return ctx.memo("properties.sessions", lambda: _sessions_to_check(ctx))[1]


def _sessions_to_check(ctx: Context) -> tuple[list[SessionParts], list[t.Session]]:
    found: list[SessionParts] = []
    headless: list[t.Session] = []
    string = t.String
    block_class = t.PropertyBlock
    isspace = str.isspace
    for session in ctx.index.by_class().get(t.Session, ()):
        children = session.children
        # `session.property_block`: the parser adds it last, after the header's tokens (a
        # look at each child met every session's keyword and newline).
        block = children[-1]
        if type(block) is not block_class:
            block = None
        elif len(children) == 2:
            headless.append(session)  # `session.children[1] is block`
        prompt = None
        if len(children) > 1:
            first = children[1]  # `session.prompt`: the string right after the keyword
            if type(first) is string:
                value = first.value
                if not (
                    2 < len(value) <= MAX_PROMPT
                    and (
                        value[1] in _PLAIN_ASCII
                        or (value[1] not in _NOT_PLAIN and not isspace(value[1]))
                    )
                ):
                    prompt = first
        if prompt is not None or block is not None:
            found.append((session, prompt, block))
    return found, headless


def _value(prop: t.Property) -> Any:
    """The value to check, or None when absent or when the line has a syntax error (the
    parser reported it already)."""
    children = prop.children
    no_errors = _NO_ERRORS
    for child in children:
        if type(child) not in no_errors and isinstance(child, t.ErrorNode):
            return None
    if len(children) > 2 and type(children[1]) is t.Operator:
        # `name: value`, the usual shape: the value follows the first operator.
        value = children[2]
        return value if isinstance(value, t.Expression) else None
    return prop.value


# What a property line is mostly made of: classes that are no error node.
_NO_ERRORS = frozenset(
    (t.Name, t.Operator, t.String, t.Number, t.Keyword, t.Newline, t.PropertyBlock, t.ArrayLiteral)
)


def _block_of(node: Any) -> t.PropertyBlock | None:
    """``node.property_block`` of a session or resume: the parser adds it last."""
    last = node.children[-1]
    return last if type(last) is t.PropertyBlock else None


def _plain_text(value: str) -> bool:
    """Whether a string literal written as ``value`` certainly holds text that is neither
    blank nor longer than ``MAX_PROMPT`` (most prompts: their checks can be skipped)."""
    # Its first character is text, neither a quote (a triple-quoted prompt), a backslash (an
    # escape) nor a space; decoding only shortens the body.
    return 2 < len(value) <= MAX_PROMPT and value[1] not in _NOT_PLAIN and not value[1].isspace()


_NOT_PLAIN = frozenset('"\\')
# The first characters of most plain prompts, told by one lookup (visible ASCII).
_PLAIN_ASCII = frozenset(chr(c) for c in range(0x21, 0x7F)) - _NOT_PLAIN


def _word(value: Any) -> str | None:
    """A bare word, or the text of a plain string (``"linear"``)."""
    if isinstance(value, _WORDS):
        return str(value.value)
    if isinstance(value, t.String) and terminated(value):
        return text_of(value)
    return None


def _shown(value: Any) -> str:
    text: str = value.get_code(include_prefix=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _one_of(words: tuple[str, ...]) -> str:
    return ", ".join(words[:-1]) + " or " + words[-1]


def _suggestion(word: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word.lower(), known, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


# --------------------------------------------------------------------------- duplicates


def _once(
    ctx: Context, first: dict[str, t.Property], prop: t.Property, leaf: t.Name, name: str
) -> None:
    """E009 when a property named ``name`` came before ``prop`` (``first`` keeps the first
    of each name)."""
    earlier = first.setdefault(name, prop)
    if earlier is not prop:
        _again(ctx, earlier, leaf, name)


def _again(ctx: Context, earlier: t.Property, leaf: t.Name, name: str) -> None:
    ctx.report(
        "E009",
        f"property `{name}` is already specified",
        leaf,
        related=(("first specified here", earlier.name_leaf),),
    )


def _duplicates(ctx: Context, props: list[t.Property]) -> None:
    """E009 for a property given twice, here and in a ``permissions:`` block (a
    ``context:`` block is outside the grammar: its labels may repeat)."""
    first: dict[str, t.Property] = {}
    for prop in props:
        leaf = prop.children[0]  # `prop.name_leaf`
        name = leaf.value
        _once(ctx, first, prop, leaf, name)
        if name == "permissions" and prop.block is not None:
            _duplicates(ctx, prop.block.properties())


# --------------------------------------------------------------------------- agents


def _agent(ctx: Context, agent: t.AgentDefinition) -> None:
    first: dict[str, t.Property] = {}
    # `agent.properties()`, its block and the block's properties told by `type` (neither
    # class has subclasses; `isinstance` of each child, twice, cost more than the checks).
    block_class, property_class = t.PropertyBlock, t.Property
    block = None
    for child in agent.children:
        if type(child) is block_class:
            block = child
            break
    if block is None:
        return
    for prop in block.children:
        if type(prop) is not property_class:
            continue
        leaf = prop.children[0]  # `prop.name_leaf`
        name = leaf.value
        # `_duplicates(ctx, props)`, in the same look at each property.
        earlier = first.setdefault(name, prop)
        if earlier is not prop:
            _again(ctx, earlier, leaf, name)
        if name == "model":
            _model(ctx, prop)
        elif name == "prompt":
            _prompt_property(ctx, prop, session=False)
        elif name == "persist":
            _persist(ctx, prop)
        elif name == "skills":
            _skills(ctx, prop)
        elif name == "permissions":
            if prop.block is not None:
                _duplicates(ctx, prop.block.properties())
            _permissions(ctx, prop)
        elif name in ("retry", "backoff"):
            ctx.report(
                "W013",
                f"`{name}` is only valid in session statements: set it on the `session:` "
                "that uses this agent",
                prop.name_leaf,
            )
        elif name == "context":
            ctx.report(
                "W005",
                "`context` is not an agent property: context belongs on the sessions that "
                "use the agent",
                prop.name_leaf,
            )
        else:
            ctx.report(
                "W005",
                f"unknown agent property `{name}`{_suggestion(name, AGENT_PROPERTIES)}; "
                f"agents take {_one_of(AGENT_PROPERTIES)}",
                prop.name_leaf,
            )


def _model(ctx: Context, prop: t.Property) -> None:
    _one_word_of(ctx, prop, MODELS, "E008", "model")


def _one_word_of(
    ctx: Context, prop: t.Property, allowed: tuple[str, ...], code: str, what: str
) -> None:
    """Report ``code`` unless the property's value is one of the ``allowed`` words."""
    value = _value(prop)
    if value is None or _word(value) in allowed:
        return
    word = _word(value)
    hint = _suggestion(word, allowed) if word else ""
    ctx.report(code, f"invalid {what} `{_shown(value)}`: must be {_one_of(allowed)}{hint}", value)


def _prompt_property(ctx: Context, prop: t.Property, session: bool) -> None:
    value = _value(prop)
    if type(value) is not t.String:  # (no class derives from `String`)
        return
    written = value.value
    if _plain_text(written):
        return
    if written[:3] == '"""' and "\\" not in written and len(written) >= 6 and written[-3:] == '"""':
        # A terminated triple-quoted prompt (most agents' and many sessions'), whose text is
        # its body (no escape to decode): nothing to report when it holds more than blanks
        # and is not too long.
        body = written[3:-3]
        if body and not body.isspace() and (not session or len(body) <= MAX_PROMPT):
            return
    if not value.is_terminated:
        return
    text = value.text
    if not text.strip():
        what = "empty" if not text else "whitespace-only"
        ctx.report("W004", f"{what} prompt: consider providing a prompt", value)
    elif session and len(text) > MAX_PROMPT:
        _long_prompt(ctx, value, len(text))


def _long_prompt(ctx: Context, string: t.String, length: int) -> None:
    ctx.report(
        "W003",
        f"session prompt is {length:,} characters long (more than {MAX_PROMPT:,}): "
        "consider breaking it into smaller tasks",
        string,
    )


def _persist(ctx: Context, prop: t.Property) -> None:
    value = _value(prop)
    if value is None:
        return
    if isinstance(value, t.String):
        if value.is_terminated and not value.text.strip():
            ctx.report("W009", "empty persist path: use true, project or a path string", value)
        return
    if isinstance(value, _WORDS) and value.value in PERSIST_VALUES:
        return
    ctx.report(
        "W009",
        f"unknown persist value `{_shown(value)}`: use true, project or a path string",
        value,
    )


def _skills(ctx: Context, prop: t.Property) -> None:
    value = _value(prop)
    if value is None:
        if prop.block is not None:
            ctx.report("E013", 'skills must be an array: `skills: ["name"]`', prop.name_leaf)
        return
    if not isinstance(value, t.ArrayLiteral):
        ctx.report("E013", 'skills must be an array of skill names: `skills: ["name"]`', value)
        return
    elements = listed(value)
    if not elements:
        if value.is_closed:
            ctx.report("W010", "empty skills array: remove it or name a skill", value)
        return
    imported = _imported(ctx)
    for element in elements:
        if not isinstance(element, t.String):
            ctx.report("E014", f'skill name must be a string: `"{_shown(element)}"`', element)
        elif terminated(element) and "{" not in element.value:
            name = text_of(element)
            if name not in imported:
                ctx.report(
                    "W007",
                    f'skill `{name}` is not imported: add `use "...{name}"` before assigning it',
                    element,
                )


def _imported(ctx: Context) -> Set[str]:
    """Names a skill may use: ``use`` aliases and last path segments, legacy imports
    (computed once per check: every `skills:` property asks)."""
    names = ctx.program_fact(imported_names)
    return names


def imported_names(ctx: Context) -> Set[str]:
    names = set(ctx.model.programs)
    found = declarations(ctx)
    for use in found[t.UseStatement]:
        if use.path is not None:
            segment = use.path.text.strip().rstrip("/").rsplit("/", 1)[-1]
            names.add(segment.removesuffix(".prose"))
    for legacy in found[t.ImportStatement]:
        if legacy.name is not None:
            names.add(legacy.name.text)
    return frozenset(names)


def _permissions(ctx: Context, prop: t.Property) -> None:
    value = _value(prop)
    if value is not None:
        ctx.report(
            "E015",
            "permissions must be a block: write each permission on its own indented line "
            "under `permissions:`",
            value,
        )
        return
    if prop.block is None:
        return
    for permission in prop.block.properties():
        kind = permission.name
        if kind not in PERMISSIONS:
            ctx.report(
                "W008",
                f"unknown permission type `{kind}`{_suggestion(kind, PERMISSIONS)}; "
                f"permissions are {_one_of(PERMISSIONS)}",
                permission.name_leaf,
            )
            continue
        _permission_value(ctx, permission)


def _permission_value(ctx: Context, permission: t.Property) -> None:
    kind = permission.name
    value = _value(permission)
    if value is None:
        if permission.block is not None:
            ctx.report(
                "W009",
                f"unknown permission value for `{kind}`: expected "
                + (
                    "an array of patterns"
                    if kind in PATTERN_PERMISSIONS
                    else _one_of(PERMISSION_ACCESS)
                ),
                permission.name_leaf,
            )
        return
    if isinstance(value, t.ArrayLiteral):
        if kind in ACCESS_PERMISSIONS:
            ctx.report(
                "W009",
                f"`{kind}` takes {_one_of(PERMISSION_ACCESS)}, not a list of patterns "
                f"(pattern lists are for {_one_of(PATTERN_PERMISSIONS)})",
                value,
            )
            return
        for element in listed(value):
            if not isinstance(element, t.String):
                ctx.report(
                    "E016",
                    f'permission pattern must be a string: `"{_shown(element)}"`',
                    element,
                )
        return
    if _word(value) in PERMISSION_ACCESS:
        return
    if kind in PATTERN_PERMISSIONS:
        expected = f'an array of patterns (`{kind}: ["*.md"]`), or {_one_of(PERMISSION_ACCESS)}'
    else:
        expected = _one_of(PERMISSION_ACCESS)
    ctx.report(
        "W009",
        f"unknown permission value `{_shown(value)}` for `{kind}`: expected {expected}",
        value,
    )


# --------------------------------------------------------------------------- sessions


def _session(ctx: Context, node: t.Session | t.Resume) -> None:
    children = node.children
    if type(node) is t.Session and len(children) > 1:
        prompt = children[1]  # `node.prompt`: the string right after the keyword
        if isinstance(prompt, t.String) and not _plain_text(prompt.value):
            _session_prompt(ctx, prompt)
    block = _block_of(node)
    if block is not None:
        _session_properties(ctx, node, block)


def _session_prompt(ctx: Context, prompt: t.String) -> None:
    if not prompt.is_terminated:
        return
    text = prompt.text
    if not text:
        ctx.report("W001", "session has an empty prompt", prompt)
    elif not text.strip():
        ctx.report("W002", "session prompt contains only whitespace", prompt)
    elif len(text) > MAX_PROMPT:
        _long_prompt(ctx, prompt, len(text))


def _session_properties(ctx: Context, node: t.Session | t.Resume, block: t.PropertyBlock) -> None:
    retry: t.Property | None = None
    backoff: t.Property | None = None
    first: dict[str, t.Property] = {}
    property_class = t.Property
    for prop in block.children:
        if type(prop) is not property_class:  # `block.properties()`
            continue
        leaf = prop.children[0]  # `prop.name_leaf`
        name = leaf.value
        # `_duplicates(ctx, props)`, in the same look at each property (`_once` without
        # its call: most properties come once).
        earlier = first.setdefault(name, prop)
        if earlier is not prop:
            _again(ctx, earlier, leaf, name)
        if name == "context":
            pass  # the names rules check the variables
        elif name == "model":
            _model(ctx, prop)
        elif name == "prompt":
            _prompt_property(ctx, prop, session=True)
        elif name == "retry":
            retry = retry or prop
            _retry(ctx, prop)
        elif name == "backoff":
            backoff = backoff or prop
            _backoff(ctx, prop)
        elif name in AGENT_PROPERTIES:
            if name == "permissions" and prop.block is not None:
                _duplicates(ctx, prop.block.properties())
            statement = "resume" if isinstance(node, t.Resume) else "session"
            ctx.report(
                "W005",
                f"`{name}` is not a {statement} property: set it on the agent definition",
                prop.name_leaf,
            )
        else:
            statement = "resume" if isinstance(node, t.Resume) else "session"
            ctx.report(
                "W005",
                f"unknown {statement} property `{name}`{_suggestion(name, SESSION_PROPERTIES)}; "
                f"{statement} statements take {_one_of(SESSION_PROPERTIES)}",
                prop.name_leaf,
            )
    if backoff is not None and retry is None:
        ctx.report(
            "W031",
            "backoff has no effect without retry: add `retry: N`",
            backoff.name_leaf,
        )


def _resume_needs_persist(ctx: Context, node: t.Resume) -> None:
    leaf = node.agent
    if leaf is None:
        return
    agent = ctx.model.agent(leaf.value)
    if agent is None or persistence(agent) is not None:
        return  # an undefined agent is E007, reported by the names rules
    ctx.report(
        "E017",
        f"agent `{leaf.value}` must have a `persist:` property to use `resume:`",
        leaf,
        related=(("the agent is defined here", agent.name_leaf),),
    )


def _retry(ctx: Context, prop: t.Property) -> None:
    value = _value(prop)
    if value is None:
        return
    count = value.as_int() if isinstance(value, t.Number) else None
    if count is None:
        ctx.report(
            "E066",
            f"retry count must be an integer, not `{_shown(value)}`",
            value,
        )
    elif count <= 0:
        ctx.report("E065", f"retry count must be positive, not {count}", value)
    elif count > HIGH_RETRY:
        ctx.report(
            "W023",
            f"retry count {count} is unusually high (more than {HIGH_RETRY})",
            value,
        )


def _backoff(ctx: Context, prop: t.Property) -> None:
    _one_word_of(ctx, prop, BACKOFFS, "E067", "backoff strategy")
