"""Memory of persistent agents: ``memory.md`` and one numbered segment per invocation
(spec/state/filesystem.md, sqlite.md, postgres.md; primitives/session.md).

Where it lives follows ``persist:``: ``true`` in the run (``agents/{name}/`` of the run
directory, or the run's ``state.db``; dies with the run), ``project`` in the project's
``.prose/`` (``agents/{name}/`` or ``agents.db``), ``user`` in ``~/.prose/``, a string in
that directory, which must lie inside the project.  How it is kept follows the state
backend: files (``memory_files``), SQLite or PostgreSQL (``memory_sql``), behind one
``memory_store.MemoryStore``; ``in-context`` keeps files for the scopes that outlive a run.

In the spec the persistent agent writes its memory itself.  The VM writes it from the
session's answer instead (the answer stands for the agent's compacted state), so that every
backend, the offline one included, leaves the same record; ``resume:`` passes the current
memory to the session as context named ``memory``.

``memory.md`` is ``# Agent Memory: {name}``, ``## Current Understanding`` (the last
answer) and, once compacted, ``## Compacted history`` (the specifics of folded segments,
``memory_compact``), which every later record keeps.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from openprose.syntax.vocabulary import PERSIST_VALUES
from openprose.vm.memory_compact import estimate_tokens, fold, folded_numbers
from openprose.vm.memory_files import FileMemoryStore
from openprose.vm.memory_sql import PostgresMemoryStore, SqliteMemoryStore
from openprose.vm.memory_store import MemoryStore, Segment, render_segment, segment_name
from openprose.vm.rundir import iso
from openprose.vm.state.base import StateError
from openprose.vm.values import ProseError

T = TypeVar("T")

__all__ = ["AgentMemories", "render_memory", "segment_name", "split_memory"]

_UNDERSTANDING = "## Current Understanding\n\n"
_HISTORY = "## Compacted history\n\n"
_HEADING = re.compile(r"^## Compacted history\n\n", re.IGNORECASE | re.MULTILINE)
STRATEGIES = ("recent", "tokens")
DEFAULT_KEEP = 3  # session.md: "preserve recent segments in full (last 2-3)"
DEFAULT_TOKENS = 2000


def render_memory(agent: str, understanding: str, history: str = "") -> str:
    text = f"# Agent Memory: {agent}\n\n{_UNDERSTANDING}{understanding}\n"
    return text + (f"\n{_HISTORY}{history}\n" if history else "")


def split_memory(text: str) -> tuple[str, str]:
    """``memory.md``'s current understanding and its compacted history ("" when none).
    The history after the understanding is ours only when every line under its heading is
    one of its list lines: an answer that merely contains the heading stays the answer.
    A history ahead of the understanding (how ``prose state compact`` first wrote it) is
    read too; a record moves it after."""
    at = text.find(_UNDERSTANDING)
    head, body = ("", text) if at < 0 else (text[:at], text[at + len(_UNDERSTANDING) :])
    histories = []
    ahead = _HEADING.search(head)
    if ahead:
        histories.append(head[ahead.end() :].strip("\n"))
    after = list(_HEADING.finditer(body))
    if after:
        tail = body[after[-1].end() :]
        lines = tail.splitlines()
        if after[-1].start() > 0 and all(_is_history_line(line) for line in lines):
            body = body[: after[-1].start()]
            histories.append(tail.strip("\n"))
    return body.rstrip("\n"), "\n".join(h for h in histories if h)


def _is_history_line(line: str) -> bool:
    return line.startswith(("- ", "  - ")) or not line.strip()


def _for_the_agent(text: str) -> str:
    """What ``resume:`` passes as ``memory``: everything under Current Understanding."""
    memory = text.split(_UNDERSTANDING, 1)[1] if _UNDERSTANDING in text else text
    return memory.rstrip("\n")


class AgentMemories:
    """Every persistent agent's memory seen from one run.

    ``state``: the state backend (``filesystem``, ``in-context``, ``sqlite``, ``postgres``).
    ``run_id``: the run (default: its directory's path under ``.prose/runs``); PostgreSQL
    keeps ``persist: true`` agents under it.  Which step of which run wrote each segment is
    recorded (a resumed run records nothing twice); the run is then named by its directory
    when it has one, else by ``run_id``.
    ``connect``: for ``postgres``, a factory of new psycopg connections (closed after use).
    """

    def __init__(
        self,
        run_path: Path | None,
        project_root: Path | None = None,
        home: Path | None = None,
        *,
        state: str = "filesystem",
        run_id: str | None = None,
        connect: Callable[[], Any] | None = None,
    ) -> None:
        self.run_path = run_path
        self.project_root = project_root
        self.home = home
        self.state = state
        self.run_id = run_id if run_id is not None else _run_identity(run_path)
        # Which run recorded a segment: the run directory's path when there is one, unique
        # even for an imported program's run (whose own id is only its directory's name).
        self.recorder = _run_identity(run_path) if run_path is not None else self.run_id
        # An agent's memory as this run last recorded or read it (an agent has one scope).
        self.current: dict[str, str] = {}
        self.store = self._store(state, connect)

    def _store(self, state: str, connect: Callable[[], Any] | None) -> MemoryStore:
        if state in ("filesystem", "in-context"):
            return FileMemoryStore(self.directory, self._agents_root)
        if state == "sqlite":
            return SqliteMemoryStore(self._database)
        if state == "postgres":
            if connect is None:
                raise ValueError("postgres agent memory needs a connection factory")
            return PostgresMemoryStore(connect, self.run_id or None, self._custom_place)
        raise ValueError(f"unknown state backend {state!r}")

    # ------------------------------------------------------------------ places

    def directory(self, agent: str, scope: str) -> Path | None:
        """Where ``agent``'s memory lives for a ``persist:`` value (None: in memory only)."""
        if scope in PERSIST_VALUES:
            root = self._agents_root(scope)
            return root / agent if root is not None else None
        return self._custom(scope)

    def _agents_root(self, scope: str) -> Path | None:
        if scope == "true":
            return self.run_path / "agents" if self.run_path is not None else None
        if scope == "project":
            return self.project_root / ".prose" / "agents" if self.project_root else None
        if scope == "user":
            return self._home() / ".prose" / "agents"
        return None

    def _home(self) -> Path:
        return self.home if self.home is not None else Path.home()

    def _custom(self, scope: str) -> Path | None:
        if self.project_root is None:
            return None
        root = self.project_root.resolve()
        place = (root / scope).resolve()
        if place != root and root not in place.parents:
            raise ProseError(f"persist path {scope!r} is outside the project ({root})")
        return place

    def _custom_place(self, scope: str) -> str | None:
        place = self._custom(scope)
        if place is None or self.project_root is None:
            return None
        return place.relative_to(self.project_root.resolve()).as_posix()

    def _database(self, scope: str) -> Path | None:
        if scope == "true":
            return self.run_path / "state.db" if self.run_path is not None else None
        if scope == "project":
            return self.project_root / ".prose" / "agents.db" if self.project_root else None
        if scope == "user":
            return self._home() / ".prose" / "agents.db"
        place = self._custom(scope)
        return place / "agents.db" if place is not None else None

    # ------------------------------------------------------------------ a run's use

    def read(self, agent: str, scope: str) -> str | None:
        """The memory ``resume:`` passes on; None when the agent has none yet.  Within one
        run the memory is what this run last recorded (a resumed run replaying its steps
        sees what it saw the first time)."""
        if agent in self.current:
            return self.current[agent]
        text = self.store.read_memory(agent, scope)
        if text is None:
            return None
        self.current[agent] = _for_the_agent(text)
        return self.current[agent]

    def record(
        self, agent: str, scope: str, prompt: str, answer: str, ts: float, key: str = ""
    ) -> bool:
        """Record one invocation: a new segment numbered after every earlier one, and the
        answer as the agent's current understanding (its compacted history kept).  ``key``
        is the session's step key: a step this run recorded already (a resumed run
        replaying it) writes nothing.  Holds the agent's lock throughout, so concurrent
        runs never share a number.  Returns whether anything was written."""
        self.current[agent] = answer
        with self.store.transaction(agent, scope, create=True) as txn:
            if txn is None:
                return False
            memory = txn.memory()
            text = render_memory(agent, answer, split_memory(memory)[1] if memory else "")
            # What a later resume: of this run is given, as a new run reading it would be.
            self.current[agent] = _for_the_agent(text)
            number = 0
            if key:
                found = txn.find(self.recorder, key)
                if found is not None and found.complete:
                    return False
                number = found.number if found is not None else 0
            segment = Segment(
                number or txn.last_number() + 1, iso(ts), prompt, answer, self.recorder, key
            )
            txn.put_segment(segment)
            txn.put_memory(text)
            txn.note(segment)
        return True

    def segments(self, agent: str, scope: str) -> list[Segment]:
        """The agent's segments not yet compacted, oldest first: the earlier turns of a
        multi-turn (``resume:``) session (vm/context/compaction.py)."""
        with self.store.transaction(agent, scope, create=False) as txn:
            return txn.segments() if txn is not None else []

    def flush(self, agent: str, scope: str, notes: str, ts: float, key: str = "") -> bool:
        """Write a memory flush (seed 001: decisions, preferences, artifacts, patterns, one
        per line) to the compacted history of the agent's ``memory.md``, before compaction
        discards the turns they came from.  ``key`` (the session's step) makes it once per
        step: a resumed run re-walking the compaction writes nothing.  Returns whether
        anything was written."""
        lines = [line.strip().lstrip("-*+ ").strip() for line in notes.splitlines()]
        lines = [line for line in lines if line]
        if not lines:
            return False
        head = f"- Memory flush ({iso(ts)})" + (f", step {key}" if key else "")
        with self.store.transaction(agent, scope, create=True) as txn:
            if txn is None:
                return False
            memory = txn.memory()
            understanding, history = split_memory(memory) if memory else ("", "")
            if key and f", step {key}\n" in history + "\n":
                return False
            entry = "\n".join([head, *(f"  - {line}" for line in lines)])
            history = f"{history}\n{entry}" if history else entry
            text = render_memory(agent, understanding, history)
            txn.put_memory(text)
        self.current.pop(agent, None)
        return True

    # ------------------------------------------------------------------ control plane

    def agents(self, scope: str) -> list[str]:
        """The agents that have memory in ``scope`` (``true``: this run, ``project``,
        ``user``), sorted.  A ``persist:`` path holds one agent and is not listed."""
        return self._guard(lambda: self.store.agents(scope))

    def describe(self, agent: str, scope: str, include_data: bool = False) -> dict[str, Any]:
        """What memory ``agent`` has in ``scope`` (a ``persist:`` value), as a plain dict:

        - ``agent``, ``scope``, ``store`` (filesystem | sqlite | postgres), ``location``
          (a directory, a database file, or the PostgreSQL rows; never a password; None
          when the scope has no place), ``exists``;
        - ``items``: ``segments`` (segments kept), ``compacted_segments`` (folded into the
          history), ``memory_chars``, ``tokens`` (estimate of memory and segments, four
          characters a token);
        - ``metadata``: ``first_segment``, ``last_segment`` (numbers, None when none),
          ``last_number`` (the highest ever given), ``updated`` (the last segment's time);
        - ``data`` only when ``include_data``: ``memory`` (the text of ``memory.md``) and
          ``segments`` (each a dict: number, timestamp, prompt, summary, run, step).

        Reading takes the agent's lock, so the numbers agree with each other.  Raises
        ``StateError`` when the store cannot be read (the message is for the user)."""

        def run() -> dict[str, Any]:
            report = self._base(agent, scope)
            with self.store.transaction(agent, scope, create=False) as txn:
                memory = txn.memory() if txn is not None else None
                segments = txn.segments() if txn is not None else []
                last = txn.last_number() if txn is not None else 0
            report["exists"] = memory is not None or bool(segments)
            report["items"] = _items(memory, segments)
            report["metadata"] = {
                "first_segment": segments[0].number if segments else None,
                "last_segment": segments[-1].number if segments else None,
                "last_number": last,
                "updated": segments[-1].timestamp if segments else None,
            }
            if include_data:
                report["data"] = {
                    "memory": memory,
                    "segments": [segment.to_json() for segment in segments],
                }
            return report

        return self._guard(run)

    def reset(self, agent: str, scope: str) -> dict[str, Any]:
        """Forget ``agent``'s memory in ``scope``: ``memory.md``, every segment and the
        record of numbers and steps (numbering starts again at 1; a run resumed afterwards
        records its replayed steps again).  Exactly this agent in this scope, nothing more.

        Returns ``agent``, ``scope``, ``store``, ``location``, ``exists`` (before the reset),
        ``cleared`` (whether anything was removed) and ``items`` (what was removed:
        ``segments``, ``compacted_segments``, ``memory_chars``, ``tokens``).  Raises
        ``StateError`` when the store cannot do it."""

        def run() -> dict[str, Any]:
            report = self._base(agent, scope)
            with self.store.transaction(agent, scope, create=False) as txn:
                memory = txn.memory() if txn is not None else None
                segments = txn.segments() if txn is not None else []
                if txn is not None:
                    txn.clear()
            self.current.pop(agent, None)
            existed = memory is not None or bool(segments)
            report.update(exists=existed, cleared=existed, items=_items(memory, segments))
            return report

        return self._guard(run)

    def compact(
        self,
        agent: str,
        scope: str,
        strategy: str = "recent",
        max_messages: int | None = None,
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """Keep ``agent``'s most recent segments and fold the older ones into
        ``memory.md``'s "Compacted history", keeping their specifics (numbers, names, paths,
        URLs, quoted text, decisions; ``memory_compact``), deterministically, no model.

        ``strategy="recent"`` keeps the last ``max_messages`` segments (default 3);
        ``"tokens"`` keeps as many of the most recent as fit in ``max_tokens`` (default
        2000), a segment's tokens estimated as its file's characters / 4, rounded up.
        Folded segments are removed; their numbers are never given again.

        Returns ``agent``, ``scope``, ``store``, ``location``, ``exists``, ``strategy``,
        ``limit`` (the max_messages or max_tokens used), ``before`` and ``after`` (each
        ``segments``, ``compacted_segments``, ``memory_chars``, ``tokens``), ``compacted``
        (numbers folded now) and ``kept`` (numbers kept).  A missing agent is reported with
        ``exists`` False and zero counts.  Raises ``ValueError`` for an unknown strategy or
        a negative limit, ``StateError`` when the store cannot do it."""
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown compaction strategy {strategy!r} (recent or tokens)")
        if strategy == "recent":
            limit = DEFAULT_KEEP if max_messages is None else max_messages
        else:
            limit = DEFAULT_TOKENS if max_tokens is None else max_tokens
        if limit < 0:
            raise ValueError(f"a compaction limit cannot be negative ({limit})")

        def run() -> dict[str, Any]:
            report = self._base(agent, scope)
            report.update(strategy=strategy, limit=limit, compacted=[], kept=[])
            with self.store.transaction(agent, scope, create=False) as txn:
                memory = txn.memory() if txn is not None else None
                segments = txn.segments() if txn is not None else []
                report["exists"] = memory is not None or bool(segments)
                report["before"] = _items(memory, segments)
                keep = _keep(segments, strategy, limit)
                folded = segments[: len(segments) - keep]
                if txn is not None and folded:
                    understanding, history = split_memory(memory or "")
                    memory = render_memory(agent, understanding, fold(folded, history))
                    # Memory first: a compaction that dies before removing the segments
                    # leaves them in both places, and the next one does not fold them twice.
                    txn.put_memory(memory)
                    txn.remove_segments([segment.number for segment in folded])
                    segments = segments[len(folded) :]
                    self.current.pop(agent, None)
            report["after"] = _items(memory, segments)
            report["compacted"] = [segment.number for segment in folded]
            report["kept"] = [segment.number for segment in segments]
            return report

        return self._guard(run)

    def _base(self, agent: str, scope: str) -> dict[str, Any]:
        return {
            "agent": agent,
            "scope": scope,
            "store": self.store.name,
            "location": self.store.location(agent, scope),
            "exists": False,
        }

    def _guard(self, operation: Callable[[], T]) -> T:
        try:
            return operation()
        except (OSError, sqlite3.Error) as error:
            raise StateError(f"agent memory ({self.store.name}): {error}") from None


def _keep(segments: list[Segment], strategy: str, limit: int) -> int:
    """How many of the most recent segments stay."""
    if strategy == "recent":
        return min(limit, len(segments))
    used = kept = 0
    for segment in reversed(segments):
        used += estimate_tokens(render_segment(segment))
        if used > limit:
            break
        kept += 1
    return kept


def _items(memory: str | None, segments: list[Segment]) -> dict[str, int]:
    text = memory or ""
    return {
        "segments": len(segments),
        "compacted_segments": len(folded_numbers(split_memory(text)[1])) if text else 0,
        "memory_chars": len(text),
        "tokens": estimate_tokens(text)
        + sum(estimate_tokens(render_segment(segment)) for segment in segments),
    }


def _run_identity(run_path: Path | None) -> str:
    """The run directory's path under ``.prose/runs`` (an imported program's run is under
    its caller's: ``{id}/imports/{name}``), or its name when it is elsewhere."""
    if run_path is None:
        return ""
    parts = run_path.parts
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] == "runs" and index > 0 and parts[index - 1] == ".prose":
            return "/".join(parts[index + 1 :])
    return run_path.name
