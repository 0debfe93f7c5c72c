"""What a program's names mean, kept per run of top-level items and read name by name.

The local checks read the rest of the program only by name: the variables defined under a
name, whether a name is defined at all or names an imported skill, the nested agent of a
name (the program facts of ``names.py``, ``grammar.py`` and ``properties.py``). A full
analysis computes each fact once over the whole model; an incremental one cannot afford
that on every keystroke, so it keeps, for each run of items, what that run defines, and
answers a question about one name from the runs (``ProgramNames``). The answers are the
same: each view below gives what the full fact gives for every name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Set
from dataclasses import dataclass, field
from typing import Any

from openprose.analysis.model import Symbol, UnitBinding
from openprose.syntax import tree as t


@dataclass(eq=False)
class RunNames:
    """The names one run of items defines, declares or imports."""

    # Its variables by name, in program order.
    definitions: dict[str, list[Symbol]] = field(default_factory=dict)
    # The names of its variables and inputs.
    defined: frozenset[str] = frozenset()
    # Names a skill may use: `use` aliases and last path segments, legacy imports.
    imported: frozenset[str] = frozenset()
    # The first agent of each name defined inside another statement.
    nested: dict[str, t.AgentDefinition] = field(default_factory=dict)
    # Every name above, and those of its agents, blocks and imported programs.
    declared: frozenset[str] = frozenset()


def run_names(binding: UnitBinding, nodes: Any) -> RunNames:
    """The names of a run whose binding is ``binding`` and whose index answers ``nodes``."""
    names = RunNames()
    for symbol in binding.definitions or ():
        names.definitions.setdefault(symbol.name, []).append(symbol)
    names.defined = frozenset(names.definitions) | {s.name for s in binding.inputs}
    imported = {alias for alias, _ in binding.programs}
    for node in nodes(t.UseStatement, t.ImportStatement):
        if isinstance(node, t.UseStatement) and node.path is not None:
            segment = node.path.text.strip().rstrip("/").rsplit("/", 1)[-1]
            imported.add(segment.removesuffix(".prose"))
        elif isinstance(node, t.ImportStatement) and node.name is not None:
            imported.add(node.name.text)
    names.imported = frozenset(imported)
    for agent in nodes(t.AgentDefinition):
        if agent.name and not isinstance(agent.parent, t.Module):
            names.nested.setdefault(agent.name, agent)
    declared = set(names.defined) | names.imported | set(names.nested)
    declared.update(name for name, _ in binding.agents)
    declared.update(name for name, _ in binding.blocks)
    names.declared = frozenset(declared)
    return names


class NameIndex:
    """For each name, the runs that declare it (kept from one analysis to the next: only
    the runs made, redone or dropped are added or taken out)."""

    def __init__(self) -> None:
        # A name most programs declare once maps to its run; one declared by several runs
        # to their set (a set per name took half a megabyte on 10,000 lines).
        self._runs: dict[str, RunNames | set[RunNames]] = {}

    def add(self, run: RunNames) -> None:
        runs = self._runs
        for name in run.declared:
            found = runs.get(name)
            if found is None:
                runs[name] = run
            elif isinstance(found, set):
                found.add(run)
            elif found is not run:
                runs[name] = {found, run}

    def remove(self, run: RunNames) -> None:
        runs = self._runs
        for name in run.declared:
            found = runs.get(name)
            if found is run:
                del runs[name]
            elif isinstance(found, set):
                found.discard(run)
                if len(found) == 1:
                    runs[name] = next(iter(found))

    def runs_of(self, name: str) -> Set[RunNames]:
        found = self._runs.get(name)
        if found is None:
            return frozenset()
        return found if isinstance(found, set) else frozenset((found,))

    def names(self) -> set[str]:
        return set(self._runs)

    def clear(self) -> None:
        self._runs.clear()


class ProgramNames:
    """The program's names, answered from its runs' ``RunNames`` in program order: for a
    name, from the few runs the index says declare it."""

    def __init__(self, runs: list[RunNames], index: NameIndex) -> None:
        self.runs = runs
        self._index = index
        self._order = {id(run): k for k, run in enumerate(runs)}
        self._known: dict[str, list[RunNames]] = {}

    def _of(self, name: str) -> list[RunNames]:
        found = self._known.get(name)
        if found is None:
            order = self._order
            found = sorted(
                (run for run in self._index.runs_of(name) if id(run) in order),
                key=lambda run: order[id(run)],
            )
            self._known[name] = found
        return found

    def definitions(self, name: str) -> list[Symbol]:
        found: list[Symbol] = []
        for run in self._of(name):
            symbols = run.definitions.get(name)
            if symbols:
                found += symbols
        return found

    def is_defined(self, name: str) -> bool:
        return any(name in run.defined for run in self._of(name))

    def is_imported(self, name: str) -> bool:
        return any(name in run.imported for run in self._of(name))

    def nested(self, name: str) -> t.AgentDefinition | None:
        for run in self._of(name):
            agent = run.nested.get(name)
            if agent is not None:
                return agent
        return None

    def all_declared(self) -> set[str]:
        return self._index.names()


class DefinitionsByName(Mapping[str, list[Symbol]]):
    """``names.definitions_by_name`` read name by name."""

    def __init__(self, names: ProgramNames) -> None:
        self._names = names

    def __getitem__(self, name: str) -> list[Symbol]:
        found = self._names.definitions(name)
        if not found:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter({name for run in self._names.runs for name in run.definitions})

    def __len__(self) -> int:
        return sum(1 for _ in self)


class NestedByName(Mapping[str, t.AgentDefinition]):
    """``names.nested_by_name`` read name by name."""

    def __init__(self, names: ProgramNames) -> None:
        self._names = names

    def __getitem__(self, name: str) -> t.AgentDefinition:
        agent = self._names.nested(name)
        if agent is None:
            raise KeyError(name)
        return agent

    def __iter__(self) -> Iterator[str]:
        return iter({name for run in self._names.runs for name in run.nested})

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _NameSet(Set[str]):
    def __init__(self, names: ProgramNames, field: str) -> None:
        self._names = names
        self._field = field

    def _sets(self) -> Iterator[frozenset[str]]:
        for run in self._names.runs:
            yield getattr(run, self._field)

    def __contains__(self, name: object) -> bool:
        return any(name in names for names in self._sets())

    def __bool__(self) -> bool:
        return any(self._sets())

    def __iter__(self) -> Iterator[str]:
        return iter(set().union(*self._sets()))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def defined_set(names: ProgramNames) -> Set[str]:
    """``grammar.defined_names`` read name by name."""
    return _NameSet(names, "defined")


def imported_set(names: ProgramNames) -> Set[str]:
    """``properties.imported_names`` read name by name."""
    return _NameSet(names, "imported")
