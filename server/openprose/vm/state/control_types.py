"""The state control plane's report (seed 003) and its targets (vm/state/control.py)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from openprose.vm.state.base import StateError

OPERATIONS = ("describe", "reset", "compact")
STRATEGIES = ("recent", "tokens")
RUN_STORES = ("bindings", "narration", "journal", "agents", "imports")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


# ---------------------------------------------------------------------- the report


@dataclass
class StoreReport:
    name: str
    enabled: bool = True
    exists: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    data: Any = None


@dataclass
class StoreError:
    store: str
    message: str


@dataclass
class StateReport:
    """The seed's ``StateOperationResult``; the target is ``run_id`` or ``agent`` (both
    None: the whole project)."""

    operation: str
    run_id: str | None = None
    agent: str | None = None
    stores: list[StoreReport] = field(default_factory=list)
    cleared: list[str] = field(default_factory=list)
    compacted: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    errors: list[StoreError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def render(self) -> str:
        """The report as text for a terminal (no data: that is for ``--json``)."""
        target = (
            f"run {self.run_id}"
            if self.run_id
            else f"agent {self.agent}"
            if self.agent
            else "the project"
        )
        lines = [f"{self.operation} {target}"]
        width = max([22, *(len(store.name) + 1 for store in self.stores)])
        for store in self.stores:
            if not store.enabled:
                state = "not enabled"
            elif not store.exists:
                state = "empty"
            else:
                state = ", ".join(f"{n} {k}" for k, n in store.counts.items()) or "present"
            where = store.metadata.get("path") or store.metadata.get("location")
            suffix = f"  ({where})" if where else ""
            lines.append(f"  {store.name:<{width}} {state}{suffix}")
            if isinstance(store.data, str):
                lines.extend("    " + line for line in store.data.splitlines())
            elif store.data:
                lines.extend(f"    {_one_line(item)}" for item in _items(store.data))
        for title, names in (
            ("cleared", self.cleared),
            ("compacted", self.compacted),
            ("missing", self.missing),
        ):
            if names:
                lines.append(f"{title}: {', '.join(names)}")
        lines.extend(f"error: {error.store}: {error.message}" for error in self.errors)
        return "\n".join(lines)


def _items(data: Any) -> list[Any]:
    if isinstance(data, dict):
        return [f"{k}: {_one_line(v)}" for k, v in data.items()]
    return list(data) if isinstance(data, list) else [data]


def _one_line(value: Any, width: int = 100) -> str:
    if isinstance(value, dict):
        value = ", ".join(f"{k}={v}" for k, v in value.items())
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


# ---------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    """What an operation is about, and where the project's state is.  ``states``: the
    backends a run is looked for in (default filesystem and sqlite, which live under
    ``runs_root``); ``scopes``: the agent memory scopes (project, user)."""

    runs_root: Path
    run_id: str | None = None
    agent: str | None = None
    all: bool = False
    project_root: Path | None = None
    home: Path | None = None
    states: tuple[str, ...] = ("filesystem", "sqlite")
    scopes: tuple[str, ...] = ("project", "user")

    @property
    def project(self) -> Path:
        return self.project_root if self.project_root is not None else self.runs_root.parent.parent

    @property
    def user_home(self) -> Path:
        return self.home if self.home is not None else Path.home()

    def checked(self) -> Target:
        if sum((self.run_id is not None, self.agent is not None, self.all)) > 1:
            raise StateError("give one target: a run id, an agent, or everything")
        if self.run_id is not None and not _is_run_id(self.run_id):
            raise StateError(f"{self.run_id!r} is not a run id")
        if self.agent is not None and not NAME.match(self.agent):
            raise StateError(f"{self.agent!r} is not an agent name")
        return self


def _is_run_id(run_id: str) -> bool:
    return bool(run_id) and "/" not in run_id and "\\" not in run_id and run_id not in (".", "..")


class Store(Protocol):
    name: str

    def describe(self, include_data: bool) -> StoreReport: ...

    def refusal(self) -> str | None:
        """Why this store cannot be reset precisely now (None: it can)."""
        ...

    def reset(self) -> None: ...
