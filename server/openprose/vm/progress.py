"""Live progress of a run, from its events: a status line redrawn in place on a terminal,
plain lines elsewhere (one per top-level statement, for logs)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from openprose.vm import events as ev

REDRAW_INTERVAL = 0.1  # seconds between redraws of the status line


class Progress:
    def __init__(
        self,
        stream: TextIO,
        terminal: bool,
        total: int,
        width: int = 100,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.terminal = terminal
        self.total = total
        self.width = width
        self.clock = clock
        self.statement = ""
        self.step = ""
        self.sessions = 0
        self.tokens = 0
        self.cost = 0.0
        self.branches = 0
        self.iteration = ""
        self._drawn = 0.0
        self._shown = False

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.Position) and event.level == 0:
            self.statement, self.step, self.iteration = event.statement, event.step, ""
            if not self.terminal:
                print(
                    _cut(f"prose: [{self.step}/{self.total}] {self.statement}", self.width),
                    file=self.stream,
                )
                return
        elif isinstance(event, ev.ContextStep) and event.action != "summarised":
            # Compaction and overflow recovery change what a session sees: said, not only
            # traced (a summary of a long binding is routine and stays in the trace).
            if self.terminal and self._shown:
                self.stream.write("\r\x1b[K")
            print(_cut(f"prose: context: {event.detail}", self.width * 2), file=self.stream)
        elif isinstance(event, ev.Success):
            self.sessions += 1
            self.tokens += event.input_tokens + event.output_tokens
            self.cost += event.cost
        elif isinstance(event, ev.ParallelEnter):
            self.branches += len(event.branches)
        elif isinstance(event, ev.ParallelBranch):
            self.branches = max(0, self.branches - 1)
        elif isinstance(event, ev.ParallelJoin):
            self.branches = 0
        elif isinstance(event, ev.LoopIteration) and event.level == 0:
            of = f"/{event.maximum}" if event.maximum is not None else ""
            self.iteration = f"iteration {event.iteration}{of}"
        elif isinstance(event, ev.ProgramEnd):
            self.finish()
            return
        if self.terminal:
            self.draw(force=isinstance(event, ev.Position))

    def line(self) -> str:
        parts = [f"[{self.step}/{self.total}] {self.statement}"]
        if self.iteration:
            parts.append(self.iteration)
        if self.branches:
            parts.append(f"{_count(self.branches, 'branch', 'branches')} running")
        sessions = _count(self.sessions, "session", "sessions")
        tokens = _count(self.tokens, "token", "tokens")
        parts.append(f"{sessions}, {tokens}, ${self.cost:.2f}")
        return _cut(" · ".join(parts), self.width)

    def draw(self, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self._drawn < REDRAW_INTERVAL:
            return
        self._drawn = now
        self._shown = True
        self.stream.write("\r\x1b[K" + self.line())
        self.stream.flush()

    def finish(self) -> None:
        if self.terminal and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"
