"""Persistent agents' memory: ``resume:`` needs memory to continue (E018), and ``session:``
on an agent that already has memory starts afresh and ignores it (W011).

Spec section: Resume Statement.  Memory exists when an earlier execution in program order
(``openprose.analysis.flow``) created it, or, for project and path scopes, when the
project's ``.prose/`` state holds it from earlier runs.  A ``resume:`` on an agent without
``persist:`` at all is E017, a property check.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from openprose.analysis import flow
from openprose.analysis.context import Context
from openprose.syntax import tree as t

# Each statement is judged at its first few executions only (a block invoked many times
# would otherwise be judged once per invocation).
_MAX_JUDGED = 4


@dataclass
class Persistence:
    scope: str  # "run" (true), "project", "user", "path"
    prop: t.Property
    path: str | None = None


def check(ctx: Context) -> None:
    check_program(ctx)


def check_program(ctx: Context) -> None:
    # Only the sessions of agents that keep memory are judged: most programs have none.
    kept_by = {}
    for name, agents in ctx.model.agents.items():
        # An agent without `persist:` keeps none, told without the memo's calls (most agents).
        if persist_property(agents[0]) is None:
            continue
        kept = _persistence_of(ctx, agents[0])
        if kept is not None:
            kept_by[name] = kept
    if kept_by:
        _memory(ctx, kept_by)


def persist_property(agent: t.AgentDefinition) -> t.Property | None:
    """``agent.get_property("persist")``, without building the list of its properties (every
    agent of every program is asked)."""
    # (Neither class has subclasses: told by `type`, cheaper than `isinstance`.)
    block_class, property_class = t.PropertyBlock, t.Property
    for child in agent.children:
        if type(child) is block_class:
            for prop in child.children:
                if type(prop) is property_class and prop.children[0].value == "persist":
                    return prop
            return None
    return None


def persistence(agent: t.AgentDefinition) -> Persistence | None:
    """Where the agent keeps its memory (None: it keeps none)."""
    prop = persist_property(agent)
    if prop is None:
        return None
    # A line with a syntax error has no value to judge: the parser reported it.
    errors = any(isinstance(c, t.ErrorNode) for c in prop.children)
    value = None if errors else prop.value
    if isinstance(value, (t.Name, t.Keyword)):
        if value.value == "false":
            return None
        scope = {"true": "run", "project": "project", "user": "user"}.get(value.value)
        return Persistence(scope or "unknown", prop)
    if isinstance(value, t.String) and value.is_terminated and value.text.strip():
        return Persistence("path", prop, value.text.strip())
    return Persistence("unknown", prop)


def _persistence_of(ctx: Context, agent: t.AgentDefinition) -> Persistence | None:
    """``persistence(agent)`` of a top-level agent, kept while its item is unchanged."""
    return ctx.index.item_memo(agent, "persistence", lambda: persistence(agent))


def _memory(ctx: Context, kept_by: dict[str, Persistence]) -> None:
    runs = flow.runs(ctx, (t.Session, t.Resume), kept_by)
    by_agent: dict[str, list[flow.Run]] = {}
    for run in runs:
        agent = flow.agent_of(run.node)
        if agent is not None:
            by_agent.setdefault(agent.value, []).append(run)
    reported: set[int] = set()
    judged: dict[int, int] = {}
    # An undefined agent is E007 and one without `persist:` E017 (names and properties).
    for name, agent_runs in by_agent.items():
        kept = kept_by[name]
        disk = _disk_memory(ctx, name, kept)
        for index, run in enumerate(agent_runs):
            if id(run.node) in reported or judged.get(id(run.node), 0) >= _MAX_JUDGED:
                continue
            judged[id(run.node)] = judged.get(id(run.node), 0) + 1
            # Nearest first: an earlier run just before usually settles it.
            others = _nearest_first(agent_runs, index)
            if isinstance(run.node, t.Resume):
                if _no_memory(kept, disk, run, others):
                    reported.add(id(run.node))
                    _report_no_memory(ctx, name, kept, run)
            elif _session_ignores_memory(ctx, name, kept, disk, run, others):
                reported.add(id(run.node))


def _disk_memory(ctx: Context, name: str, kept: Persistence) -> bool | None:
    """Whether memory from earlier runs is on disk (None: cannot know)."""
    root = ctx.project_root
    if root is None:
        return None
    if kept.scope == "project":
        location = Path(root) / ".prose" / "agents" / name
    elif kept.scope == "path" and kept.path is not None:
        raw = kept.path
        if "{" in raw or raw.startswith("~"):
            return None
        location = Path(root) / raw
    else:
        return None
    try:
        if location.is_file():
            return True
        if location.is_dir():
            # memory.md, or the agent's segment files (`{name}-001.md`...).
            return any(p.is_file() and p.suffix == ".md" for p in location.iterdir())
    except OSError:
        return None
    return False


def _nearest_first(runs: list[flow.Run], index: int) -> Iterator[flow.Run]:
    """The runs other than ``runs[index]``, those before it nearest first, then those after
    (made as they are asked for: a judgement usually stops at the first; a list per run was
    quadratic in an agent's runs)."""
    for k in range(index - 1, -1, -1):
        yield runs[k]
    for k in range(index + 1, len(runs)):
        yield runs[k]


def _no_memory(
    kept: Persistence, disk: bool | None, run: flow.Run, others: Iterable[flow.Run]
) -> bool:
    if kept.scope == "run":
        pass
    elif kept.scope in ("project", "path"):
        if disk is not False:
            return False  # memory on disk, or cannot tell
    else:
        return False  # user scope (outside the project) or an invalid value
    return not any(flow.possibly_before(other, run) for other in others)


def _report_no_memory(ctx: Context, name: str, kept: Persistence, run: flow.Run) -> None:
    if kept.scope == "run":
        where = "memory with `persist: true` lives only for this run"
    elif kept.scope == "project":
        where = f"no memory file in .prose/agents/{name}/"
    else:
        where = f"no memory file in {kept.path}"
    ctx.report(
        "E018",
        f"no memory exists for agent `{name}` ({where}): use `session: {name}` for the first "
        "invocation",
        run.node.agent,
        related=(("persistence is set here", kept.prop),),
    )


def _session_ignores_memory(
    ctx: Context,
    name: str,
    kept: Persistence,
    disk: bool | None,
    run: flow.Run,
    others: Iterable[flow.Run],
) -> bool:
    if kept.scope == "unknown":
        return False
    message = (
        f"agent `{name}` already has memory: `session:` will ignore it; "
        f"use `resume: {name}` to continue"
    )
    if disk:
        ctx.report(
            "W011",
            message + " (memory from earlier runs is on disk)",
            run.node.agent,
            related=(("persistence is set here", kept.prop),),
        )
        return True
    # A `resume:` only continues memory that a `session:` (or an earlier run) created.
    for other in others:
        if (
            isinstance(other.node, t.Session)
            and other.node is not run.node
            and flow.definitely_before(other, run)
        ):
            ctx.report(
                "W011",
                message,
                run.node.agent,
                related=(("memory is created here", other.node.agent),),
            )
            return True
    return False
