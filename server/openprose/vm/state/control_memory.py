"""The control plane's stores of persistent agents' memory; ``vm/memory.py`` reads, resets
and compacts it (files, ``agents.db``, PostgreSQL) under each agent's lock."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprose.vm.state.control_types import StoreReport, Target

if TYPE_CHECKING:
    from openprose.vm.memory import AgentMemories


class AgentMemory:
    """One agent's memory in one scope and one layout (files, ``agents.db``, PostgreSQL);
    ``vm/memory.py`` reads, resets and compacts it under the agent's lock."""

    def __init__(self, name: str, memories: AgentMemories, agent: str, scope: str) -> None:
        self.name = name
        self.memories = memories
        self.agent = agent
        self.scope = scope

    def describe(self, include_data: bool) -> StoreReport:
        found = self.memories.describe(self.agent, self.scope, include_data)
        return StoreReport(
            self.name,
            exists=bool(found["exists"]),
            counts=dict(found["items"]),
            metadata={
                "scope": self.scope,
                "layout": found["store"],
                "location": found["location"],
                **found["metadata"],
            },
            data=found.get("data"),
        )

    def refusal(self) -> str | None:
        return None

    def reset(self) -> None:
        self.memories.reset(self.agent, self.scope)

    def compact(
        self, strategy: str, max_messages: int | None, max_tokens: int | None
    ) -> dict[str, Any]:
        found = self.memories.compact(self.agent, self.scope, strategy, max_messages, max_tokens)
        return {
            "before": found["before"]["segments"],
            "after": found["after"]["segments"],
            "folded": found["compacted"],
            "kept": found["kept"],
            "limit": found["limit"],
        }


class RunAgents:
    """The memory of a run's agents (``persist: true``), every agent together, in each
    layout the run may keep it in."""

    name = "agents"

    def __init__(self, *layouts: AgentMemories) -> None:
        self.layouts = layouts

    def members(self) -> list[AgentMemory]:
        found = []
        for layout in self.layouts:
            suffix = (
                "" if len(self.layouts) == 1 or layout.state == "filesystem" else f":{layout.state}"
            )
            found += [
                AgentMemory(f"agents/{agent}{suffix}", layout, agent, "true")
                for agent in layout.agents("true")
            ]
        return found

    def describe(self, include_data: bool) -> StoreReport:
        members = [(m.name, m.describe(include_data)) for m in self.members()]
        report = StoreReport(
            self.name,
            exists=any(found.exists for _, found in members),
            counts={
                "agents": len(members),
                "segments": sum(found.counts.get("segments", 0) for _, found in members),
            },
            metadata={"agents": [name.split("/", 1)[1] for name, _ in members]},
        )
        if members:
            report.metadata["location"] = members[0][1].metadata.get("location")
        if include_data:
            report.data = {name.split("/", 1)[1]: found.data for name, found in members}
        return report

    def refusal(self) -> str | None:
        return None

    def reset(self) -> None:
        for member in self.members():
            member.reset()


def memories(
    state: str, run_path: Path | None, target: Target, run_id: str | None = None
) -> AgentMemories:
    from openprose.vm.memory import AgentMemories

    connect = _postgres_connect(target) if state == "postgres" else None
    return AgentMemories(
        run_path, target.project, target.user_home, state=state, run_id=run_id, connect=connect
    )


def _postgres_connect(target: Target) -> Callable[[], Any]:
    from openprose.vm.state.control_postgres import connector

    return connector(target.project)[0]
