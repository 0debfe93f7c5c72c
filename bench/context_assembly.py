"""Context assembly cost per session with 50 bindings of 10 KB each (issue 11 figure).

Goal: < 5 ms per session.  The goal concerns the assembly a session pays every time: once
the summaries of its bindings are known (case a, later sessions) and by reference (case b).
The first assembly of a value by value also asks the backend for its summaries, which are
model calls: their cost is reported, not held to the goal.

What runs is the VM's real path: ``run_file`` on the offline backend with the filesystem
state (so the summaries are journaled and the bindings are files), a program of 50 ``let``
bindings of 10,000 distinct characters each and N sessions with ``context: { b1, ..., b50 }``.

* (a) by value: 10,000 characters is over 8,000, so each binding goes as its "essentials",
  a summary asked from the backend and journaled by content hash.  The first session of a
  run asks 50 summaries (checked: the backend counts them); every later session of the run
  finds them by content hash and asks none.
* (b) by reference: ``OfflineBackend(reads_files=True)``, so each binding goes as the path
  of its file in the run directory (the VM reads the file to check it holds the value).

How it is timed: this script wraps, from outside, the three steps ``Interpreter.session``
takes to assemble a request (``Interpreter.context_items``: each binding evaluated, laid out
by the size ladder and summarised; ``fit``: the layers measured under the model's window;
``Plan.build``: the request made) with ``time.perf_counter``, and adds them up per session.
The backend's ``run_session`` marks the end of a session's assembly; the answer itself, the
journaling of the answer and the accounting after it are left out, as are the evaluation of
the prompt and properties (one short string here).  Nothing of the VM is re-implemented.
Within ``context_items`` three of its parts are timed as well, to show where the time goes:
``binding_location`` (the binding's file read back, to pass its path), ``summary`` (the
value's summary looked up by the hash of its content, or asked) and ``emit`` (the ladder's
step narrated: an event written to the run's log).  The wrappers add a few microseconds a
call (about 150 calls a session).

Median and p95 (nearest rank) are over all sessions of all runs of a case; the goal is
printed as met when the p95 is under 5 ms.  The peak memory
is ``tracemalloc``'s peak above what was allocated when the assembly began, in a separate,
untimed run (tracing slows everything down).

Prints figures; checks nothing but that the VM did what the case says (a sanity check,
so that a change of the VM cannot make the figures silently measure something else).  The
machine is shared: the figures are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
try:
    import openprose  # noqa: F401
except ImportError:  # pragma: no cover - running from a bare checkout
    sys.path.insert(0, str(REPO_ROOT / "server"))

import openprose.vm.interpreter as interpreter_module  # noqa: E402
from openprose.vm.backends.base import (  # noqa: E402
    SessionRequest,
    SessionResult,
    SummaryRequest,
    SummaryResult,
)
from openprose.vm.backends.offline import OfflineBackend  # noqa: E402
from openprose.vm.context import ladder  # noqa: E402
from openprose.vm.context.assembly import Plan  # noqa: E402
from openprose.vm.interpreter import Interpreter, Options  # noqa: E402
from openprose.vm.runner import load_checked, run_file  # noqa: E402

BINDINGS = 50
VALUE_CHARS = 10_000
GOAL_MS = 5.0
WORDS = ("context", "budget", "window", "token", "session", "agent", "binding", "summary",
         "ladder", "value", "request", "answer", "model", "memory", "prompt", "reserve",
         "layer", "journal", "digest", "essentials", "reference", "path")  # fmt: skip


def value(index: int) -> str:
    """A deterministic, distinct value of exactly VALUE_CHARS characters (prose-like: words
    and spaces, nothing a string literal would need to escape)."""
    rng = random.Random(index)
    words: list[str] = []
    size = 0
    while size < VALUE_CHARS:
        word = rng.choice(WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:VALUE_CHARS]


def program(sessions: int) -> str:
    names = [f"b{i}" for i in range(1, BINDINGS + 1)]
    lines = [f'let {name} = "{value(i)}"' for i, name in enumerate(names, 1)]
    context = "{ " + ", ".join(names) + " }"
    for n in range(sessions):
        lines.append(f'session "Assemble {n}"\n  context: {context}')
    return "\n".join(lines) + "\n"


class Probe:
    """What the wrappers measure: the assembly time of each session, in order."""

    def __init__(self) -> None:
        self.current = 0.0
        self.parts = dict.fromkeys(STEPS + WITHIN, 0.0)
        self.inside = False  # within context_items: its own parts are timed too
        self.samples: list[float] = []
        self.breakdown: list[dict[str, float]] = []
        self.summaries: list[int] = []  # summaries asked from the backend, per session
        self.asked = 0
        self.forms: list[set[str]] = []  # the ladder's forms of the items sent, per session
        self.pending: set[str] = set()
        self.trace = False  # tracemalloc: the peak above the start of each assembly
        self.base = 0
        self.peaks: list[int] = []
        self.started = False

    def begin(self) -> None:
        if not self.started and self.trace:
            tracemalloc.reset_peak()
            self.base = tracemalloc.get_traced_memory()[0]
        self.started = True

    def add(self, part: str, seconds: float) -> None:
        if part in STEPS:
            self.current += seconds
        self.parts[part] += seconds

    def end(self, request: SessionRequest) -> None:
        """The session is about to be sent: its assembly is over."""
        if self.trace:
            self.peaks.append(tracemalloc.get_traced_memory()[1] - self.base)
        self.samples.append(self.current)
        self.breakdown.append(dict(self.parts))
        self.summaries.append(self.asked)
        self.forms.append(self.pending)
        self.current, self.asked, self.started, self.pending = 0.0, 0, False, set()
        self.parts = dict.fromkeys(self.parts, 0.0)


STEPS = ("context_items", "fit", "build")  # what a session's assembly is made of
# Within context_items: reading the binding's file to find its location, looking its
# summary up (or asking it), and narrating the ladder's step (an event in the run's log).
WITHIN = ("binding_location", "summary", "emit")
PROBE = Probe()


class Measured(OfflineBackend):
    """The offline backend, telling the probe when a session is sent and a summary asked."""

    async def run_session(self, request: SessionRequest) -> SessionResult:
        PROBE.end(request)
        return await super().run_session(request)

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        PROBE.asked += 1
        return await super().summarise(request)


def install_timers() -> None:
    """Wrap the VM's assembly steps (from here: the VM's code is not changed)."""
    context_items = Interpreter.context_items
    fit = vars(interpreter_module)["fit"]  # the name ``Interpreter.with_retry`` calls
    build = Plan.build
    binding_location = Interpreter.binding_location
    summary = Interpreter.summary
    emit = Interpreter.emit

    async def timed_context_items(self: Interpreter, *args: Any, **kwargs: Any) -> Any:
        PROBE.begin()
        PROBE.inside = True
        start = time.perf_counter()
        try:
            items = await context_items(self, *args, **kwargs)
        finally:
            PROBE.inside = False
        PROBE.add("context_items", time.perf_counter() - start)
        PROBE.pending = {item.form for item in items}
        return items

    async def timed_fit(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        fitted = await fit(*args, **kwargs)
        PROBE.add("fit", time.perf_counter() - start)
        return fitted

    def timed_build(self: Plan) -> SessionRequest:
        start = time.perf_counter()
        request = build(self)
        PROBE.add("build", time.perf_counter() - start)
        return request

    def timed_binding_location(self: Interpreter, *args: Any) -> Any:
        start = time.perf_counter()
        location = binding_location(self, *args)
        PROBE.add("binding_location", time.perf_counter() - start)
        return location

    async def timed_summary(self: Interpreter, *args: Any) -> Any:
        start = time.perf_counter()
        text = await summary(self, *args)
        PROBE.add("summary", time.perf_counter() - start)
        return text

    def timed_emit(self: Interpreter, *args: Any, **kwargs: Any) -> Any:
        if not PROBE.inside:
            return emit(self, *args, **kwargs)
        start = time.perf_counter()
        emitted = emit(self, *args, **kwargs)
        PROBE.add("emit", time.perf_counter() - start)
        return emitted

    wrappers: list[tuple[object, str, object]] = [
        (Interpreter, "context_items", timed_context_items),
        (Interpreter, "binding_location", timed_binding_location),
        (Interpreter, "summary", timed_summary),
        (Interpreter, "emit", timed_emit),
        (interpreter_module, "fit", timed_fit),
        (Plan, "build", timed_build),
    ]
    for owner, name, wrapper in wrappers:
        setattr(owner, name, wrapper)


def one_run(checked: tuple[str, Any], make: Callable[[], OfflineBackend], tmp: str | None) -> None:
    with tempfile.TemporaryDirectory(dir=tmp) as directory:
        root = Path(directory)
        main = root / "main.prose"
        main.write_text(checked[0], encoding="utf-8")
        result = asyncio.run(
            run_file(
                main,
                backend=make(),
                runs_root=root / ".prose" / "runs",
                options=Options(jitter=False),
                checked=checked,
            )
        )
    if result.status != "success":
        raise SystemExit(f"the bench program failed: {result.error}")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(fraction * len(ordered)))) - 1]


def collect(checked: tuple[str, Any], make: Callable[[], OfflineBackend], runs: int,
            tmp: str | None) -> tuple[list[float], list[dict[str, float]], list[int],
                                      list[set[str]]]:  # fmt: skip
    """Per session of ``runs`` runs: seconds, parts, summaries asked, forms sent."""
    PROBE.samples, PROBE.breakdown, PROBE.summaries, PROBE.forms = [], [], [], []
    for _ in range(runs):
        one_run(checked, make, tmp)
    return PROBE.samples, PROBE.breakdown, PROBE.summaries, PROBE.forms


def check(holds: bool, problem: str) -> None:
    """The case is what it claims to measure (not a timing check)."""
    if not holds:
        raise SystemExit(f"the VM did not assemble the case as expected: {problem}")


def row(label: str, seconds: list[float], goal: bool) -> None:
    ms = [s * 1000 for s in seconds]
    med, p95 = statistics.median(ms), percentile(ms, 0.95)
    target = ("met" if p95 < GOAL_MS else "NOT met") if goal else "(no goal: model calls)"
    print(f"   {label:44} n={len(ms):4}  median {med:8.2f} ms  p95 {p95:8.2f} ms  "
          f"max {max(ms):8.2f} ms  {target}")  # fmt: skip


def parts_line(breakdown: list[dict[str, float]]) -> None:
    medians = {k: statistics.median(b[k] for b in breakdown) * 1000 for k in breakdown[0]}
    print("      median by step: " + ", ".join(f"{k} {medians[k]:.3f} ms" for k in STEPS))
    print("      within context_items: " + ", ".join(f"{k} {medians[k]:.3f} ms" for k in WITHIN))


def by_value(checked: tuple[str, Any], runs: int, sessions: int, tmp: str | None) -> None:
    samples, breakdown, asked, forms = collect(checked, Measured, runs, tmp)
    first = [i for i in range(len(samples)) if i % sessions == 0]
    later = [i for i in range(len(samples)) if i % sessions != 0]
    # The case must be what it says: 50 essentials asked once per run, then found.
    check(all(asked[i] == BINDINGS for i in first), f"first sessions asked {asked[:1]}")
    check(all(asked[i] == 0 for i in later), "a later session asked a summary again")
    check(all(f == {ladder.ESSENTIALS} for f in forms), f"forms sent: {forms[:1]}")
    print(f"(a) by value: {BINDINGS} x {VALUE_CHARS:,} characters, each passed as its "
          f"{ladder.ESSENTIALS} ({runs} runs x {sessions} sessions)")  # fmt: skip
    row("first session (50 summaries asked, journaled)", [samples[i] for i in first], False)
    parts_line([breakdown[i] for i in first])
    row("later sessions (summaries found by hash)", [samples[i] for i in later], True)
    parts_line([breakdown[i] for i in later])


def by_reference(checked: tuple[str, Any], runs: int, sessions: int, tmp: str | None) -> None:
    samples, breakdown, asked, forms = collect(
        checked, lambda: Measured(reads_files=True), runs, tmp
    )
    check(sum(asked) == 0, f"{sum(asked)} summaries asked by reference")
    check(all(f == {ladder.REFERENCE} for f in forms), f"forms sent: {forms[:1]}")
    print(f"(b) by reference: {BINDINGS} bindings passed as their paths "
          f"({runs} runs x {sessions} sessions)")  # fmt: skip
    row("every session", samples, True)
    parts_line(breakdown)


def memory(checked: tuple[str, Any], tmp: str | None) -> None:
    print("peak memory of one assembly (tracemalloc, above the allocation at its start; "
          "untimed run)")  # fmt: skip
    PROBE.trace = True
    tracemalloc.start()
    try:
        for label, make in (
            ("by value", Measured),
            ("by reference", lambda: Measured(reads_files=True)),
        ):
            PROBE.peaks = []
            collect(checked, make, 1, tmp)
            peaks = [p / 1024 for p in PROBE.peaks]
            if label == "by value":
                print(f"   by value, first session (summaries asked)  {peaks[0]:8.0f} KiB")
                print(f"   by value, second session (summaries found) {peaks[1]:8.0f} KiB")
            else:
                print(f"   by reference                               {peaks[0]:8.0f} KiB")
    finally:
        tracemalloc.stop()
        PROBE.trace = False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per case (default 20)")
    parser.add_argument(
        "--sessions", type=int, default=21, help="sessions per run (default 21), each with all 50"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 1 run of 3 sessions per case (~1 s)"
    )
    parser.add_argument("--tmp", help="directory for the run directories (e.g. /dev/shm)")
    args = parser.parse_args()
    runs, sessions = (1, 3) if args.quick else (args.runs, max(args.sessions, 2))
    install_timers()
    started = time.perf_counter()
    text = program(sessions)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "main.prose"
        path.write_text(text, encoding="utf-8")
        checked = load_checked(path)  # parsed and checked once, run many times
    print(f"context assembly: {BINDINGS} bindings of {VALUE_CHARS:,} characters, "
          f"goal < {GOAL_MS:g} ms a session (met: p95 under it); run directories under "
          f"{args.tmp or tempfile.gettempdir()}")  # fmt: skip
    by_value(checked, runs, sessions, args.tmp)
    by_reference(checked, runs, sessions, args.tmp)
    memory(checked, args.tmp)
    print(f"({time.perf_counter() - started:.1f} s; shared machine, figures are noisy)")


if __name__ == "__main__":
    main()
