"""Keystroke-to-diagnostics latency of prose-ls beside its anchor, ruff's language server, in
the same run through the same plain stdio client (``lsp_client.py``).

Three servers are started one after the other (the time to each ``initialize`` answer is
printed): prose-ls on a generated 10,000-line program and on a 1,000-line one (initialization
option ``debounce`` 0, so the figure excludes the debounce delay), and ``ruff server`` on a
10,000-line Python file (``generate.python_file``).  In each document one character is typed
and deleted alternately in the middle: inside a session's prompt string for prose, inside a
comment for Python, so both files stay valid.  The keystrokes of the three documents are
interleaved (one on each in turn), so the machine's load weighs on them alike.  A keystroke's
time runs from writing its didChange to reading the publishDiagnostics of that version.
Then, on the 10,000-line program: Enter typed and deleted alternately at the start of a line in
the middle (5,000 lines move), completion and hover round trips, resident memory.

Each series prints p50/p95 wall time and the server's CPU time per keystroke (user + system of
the whole process, from /proc/PID/stat, over the series divided by its length; the tick is
10 ms, so it needs a long series): on this shared 2-core machine the wall times are noisy.
``--quick`` (a smoke run) uses 100 and 1,000 lines and 3 keystrokes; without ruff the anchor is
skipped with a message.  Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from common import percentile
from generate import flat_program, python_file
from lsp_client import LspClient, Message, carries_version, publish_diagnostics_for

TIMEOUT = 60.0


@dataclass
class Series:
    """Wall times (ms) of one kind of request, and the server's CPU seconds over them."""

    wall_ms: list[float] = field(default_factory=list)
    cpu_s: float = 0.0

    @property
    def p50(self) -> float:
        return statistics.median(self.wall_ms)

    @property
    def p95(self) -> float:
        return percentile(self.wall_ms, 0.95)

    @property
    def cpu_ms(self) -> float:
        return self.cpu_s * 1000 / len(self.wall_ms)


@dataclass
class Editor:
    """One open document on one server: sends its edits and times them to their diagnostics."""

    client: LspClient
    uri: str
    lines: list[str]
    version: int = 1
    unversioned: int = 0  # publications matched as "the first after the change"

    async def open(self, language: str) -> None:
        published = self.client.expect(publish_diagnostics_for(self.uri, self.version))
        await self.client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": self.uri,
                    "languageId": language,
                    "version": self.version,
                    "text": "\n".join(self.lines),
                }
            },
        )
        await self.wait(published)

    async def wait(self, published: asyncio.Future[tuple[float, Message]]) -> tuple[float, Message]:
        try:
            return await asyncio.wait_for(published, TIMEOUT)
        except TimeoutError:
            stderr = " | ".join(self.client.stderr_tail)
            raise TimeoutError(
                f"no diagnostics for {self.uri} version {self.version} after {TIMEOUT:.0f} s; "
                f"server stderr: {stderr}"
            ) from None

    async def edit(self, start: tuple[int, int], end: tuple[int, int], text: str) -> float:
        """Apply one change; milliseconds from sending it to its diagnostics."""
        self.version += 1
        published = self.client.expect(publish_diagnostics_for(self.uri, self.version))
        change = {
            "range": {
                "start": {"line": start[0], "character": start[1]},
                "end": {"line": end[0], "character": end[1]},
            },
            "text": text,
        }
        params = {
            "textDocument": {"uri": self.uri, "version": self.version},
            "contentChanges": [change],
        }
        begin = time.perf_counter()
        await self.client.notify("textDocument/didChange", params)
        received, message = await self.wait(published)
        self.unversioned += not carries_version(message)
        return (received - begin) * 1000

    def keystroke(self, index: int, line: int, column: int) -> Awaitable[float]:
        """Even indexes type ``x`` at (line, column), odd ones delete it."""
        if index % 2 == 0:
            return self.edit((line, column), (line, column), "x")
        return self.edit((line, column), (line, column + 1), "")

    def enter(self, index: int, line: int) -> Awaitable[float]:
        """Even indexes type Enter at the start of ``line``, odd ones delete the line break."""
        if index % 2 == 0:
            return self.edit((line, 0), (line, 0), "\n")
        return self.edit((line, 0), (line + 1, 0), "")


@dataclass
class Target:
    editor: Editor
    line: int
    column: int
    series: Series = field(default_factory=Series)


async def start(
    command: list[str], cwd: str, init_options: dict[str, Any] | None
) -> tuple[LspClient, float]:
    client = LspClient(*command, cwd=cwd)
    await client.start()
    params: dict[str, Any] = {
        "processId": os.getpid(),
        "rootUri": None,
        "capabilities": {},  # so both servers push their diagnostics
    }
    if init_options is not None:
        params["initializationOptions"] = init_options
    seconds, _ = await asyncio.wait_for(client.initialize(params), TIMEOUT)
    return client, seconds * 1000


def prose_target(client: LspClient, lines: int) -> Target:
    text = flat_program(lines).split("\n")
    line = next(i for i in range(len(text) // 2, len(text)) if text[i].startswith('session "'))
    editor = Editor(client, f"file:///bench/program-{lines}.prose", text)
    return Target(editor, line, len('session "') + 2)


def python_target(client: LspClient, lines: int, directory: str) -> Target:
    text = python_file(lines).split("\n")
    # An ASCII comment line, so UTF-16 and code point columns agree.
    line = next(
        i
        for i in range(len(text) // 2, len(text))
        if text[i].lstrip().startswith("# ") and text[i].isascii() and len(text[i].strip()) > 5
    )
    column = text[line].index("# ") + 4
    return Target(Editor(client, f"file://{directory}/program_{lines}.py", text), line, column)


async def timed_series(
    client: LspClient, count: int, step: Callable[[int], Awaitable[float]]
) -> Series:
    series = Series()
    cpu = client.cpu_seconds()
    for index in range(count):
        series.wall_ms.append(await step(index))
    series.cpu_s = client.cpu_seconds() - cpu
    return series


async def request_series(
    client: LspClient, count: int, method: str, params: dict[str, Any]
) -> Series:
    async def one(_: int) -> float:
        begin = time.perf_counter()
        received, _response = await asyncio.wait_for(client.request_timed(method, params), TIMEOUT)
        return (received - begin) * 1000

    return await timed_series(client, count, one)


@dataclass
class Results:
    small: int
    large: int
    python_lines: int = 0
    repetitions: int = 0
    initialize_ms: dict[str, float] = field(default_factory=dict)
    keystrokes: dict[str, Series] = field(default_factory=dict)
    enter: Series = field(default_factory=Series)
    completion: Series = field(default_factory=Series)
    hover: Series = field(default_factory=Series)
    memory_mb: dict[str, float] = field(default_factory=dict)
    ruff_memory_mb: float = float("nan")
    ruff_skipped: str = ""
    unversioned: dict[str, int] = field(default_factory=dict)


async def measure(small: int, large: int, repetitions: int) -> Results:
    results = Results(small, large, repetitions=repetitions)
    prose_command = [sys.executable, "-m", "openprose.lsp"]
    clients: list[LspClient] = []
    # Outside the checkout: ruff must not read this repository's configuration.
    with tempfile.TemporaryDirectory(prefix="lsp-latency-") as directory:
        try:
            large_client, results.initialize_ms["prose-ls"] = await start(
                prose_command, directory, {"debounce": 0}
            )
            clients.append(large_client)
            small_client, _ = await start(prose_command, directory, {"debounce": 0})
            clients.append(small_client)
            targets = {
                f"prose-ls, {large:,} lines": prose_target(large_client, large),
                f"prose-ls, {small:,} lines": prose_target(small_client, small),
            }
            ruff_command = [sys.executable, "-m", "ruff", "server"]
            if shutil.which("ruff") is None:
                results.ruff_skipped = "ruff is not installed"
            else:
                ruff_client, results.initialize_ms["ruff server"] = await start(
                    ruff_command, directory, None
                )
                clients.append(ruff_client)
                ruff = python_target(ruff_client, large, directory)
                results.python_lines = len(ruff.editor.lines)
                targets[f"ruff server, {results.python_lines:,} Python lines"] = ruff

            large_target = targets[f"prose-ls, {large:,} lines"]
            for target in targets.values():
                language = "python" if target.editor.uri.endswith(".py") else "prose"
                await target.editor.open(language)
            results.memory_mb["after open"] = large_client.rss_mb()

            # One keystroke on each document in turn; CPU is counted per server over the whole
            # loop, while it waits for the others too (an idle server costs no CPU).
            cpu_before = {name: t.editor.client.cpu_seconds() for name, t in targets.items()}
            for index in range(repetitions):
                for target in targets.values():
                    wall = await target.editor.keystroke(index, target.line, target.column)
                    target.series.wall_ms.append(wall)
            for name, target in targets.items():
                target.series.cpu_s = target.editor.client.cpu_seconds() - cpu_before[name]
                results.keystrokes[name] = target.series
                results.unversioned[name] = target.editor.unversioned
            results.memory_mb[f"after {repetitions} keystrokes"] = large_client.rss_mb()
            if "ruff server" in results.initialize_ms:
                results.ruff_memory_mb = clients[-1].rss_mb()

            editor = large_target.editor
            results.enter = await timed_series(
                large_client, repetitions, lambda i: editor.enter(i, large_target.line)
            )
            results.memory_mb[f"after {repetitions} Enters"] = large_client.rss_mb()

            text = editor.lines
            line = next(i for i in range(len(text) // 2, len(text)) if "session: " in text[i])
            column = text[line].index("session: ") + len("session: ")
            document = {"uri": editor.uri}
            results.completion = await request_series(
                large_client,
                repetitions,
                "textDocument/completion",
                {"textDocument": document, "position": {"line": line, "character": column}},
            )
            results.hover = await request_series(
                large_client,
                repetitions,
                "textDocument/hover",
                {"textDocument": document, "position": {"line": line, "character": column + 1}},
            )
        finally:
            for client in clients:
                await client.stop()
    return results


def report(results: Results, load_before: float, load_after: float) -> None:
    small, large, n = results.small, results.large, results.repetitions
    judged = (small, large) == (1_000, 10_000)

    def verdict(met: bool) -> str:
        if not judged:
            return "not judged (the goals are for 1,000 and 10,000 lines)"
        return "met" if met else "NOT met"

    print(
        f"keystroke -> publishDiagnostics of its version, through one plain stdio client; "
        f"{n} per series, debounce 0 ms; load average {load_before:.1f} -> {load_after:.1f}"
    )
    print(f"{'series':<54} {'p50 ms':>8} {'p95 ms':>8} {'CPU ms/key':>11}")
    for name, series in results.keystrokes.items():
        print(
            f"{'type/delete a char, ' + name:<54} {series.p50:8.1f} {series.p95:8.1f} "
            f"{series.cpu_ms:11.2f}"
        )
    rows = [
        (f"Enter/delete it, prose-ls, {large:,} lines", results.enter),
        (f"completion, prose-ls, {large:,} lines", results.completion),
        (f"hover, prose-ls, {large:,} lines", results.hover),
    ]
    for name, series in rows:
        print(f"{name:<54} {series.p50:8.1f} {series.p95:8.1f} {series.cpu_ms:11.2f}")
    if results.ruff_skipped:
        print(f"ruff anchor skipped: {results.ruff_skipped}")
    unversioned = {name: count for name, count in results.unversioned.items() if count}
    for name, count in unversioned.items():
        print(
            f"note: {name}: {count} publications had no version (matched as the first after "
            f"the change)"
        )
    initialize = ", ".join(f"{name} {ms:.0f} ms" for name, ms in results.initialize_ms.items())
    print(f"initialize response: {initialize}")
    memory = ", ".join(f"{when} {mb:.1f} MB" for when, mb in results.memory_mb.items())
    print(f"prose-ls resident memory, {large:,} lines: {memory}")
    if not results.ruff_skipped:
        print(
            f"(ruff server resident memory after its keystrokes: {results.ruff_memory_mb:.1f} MB)"
        )

    print("goals (issue 15):")
    ours = results.keystrokes[f"prose-ls, {large:,} lines"]
    print(
        f"  keystroke p95 on {large:,} lines <= 30 ms: {ours.p95:.1f} ms, {verdict(ours.p95 <= 30)}"
    )
    ruff = next((s for name, s in results.keystrokes.items() if name.startswith("ruff")), None)
    if ruff is None:
        print("  ... and no slower than ruff's p95: skipped (no ruff)")
    else:
        print(
            f"  ... and no slower than ruff's p95 on {results.python_lines:,} Python lines "
            f"({ruff.p95:.1f} ms): {verdict(ours.p95 <= ruff.p95)}; CPU per keystroke "
            f"{ours.cpu_ms:.2f} ms vs ruff's {ruff.cpu_ms:.2f} ms"
        )
    small_series = results.keystrokes[f"prose-ls, {small:,} lines"]
    print(
        f"  keystroke p95 on {small:,} lines <= 8 ms: {small_series.p95:.1f} ms, "
        f"{verdict(small_series.p95 <= 8)}"
    )
    print(
        f"  Enter costs what a one-character edit costs: p95 {results.enter.p95:.1f} ms vs "
        f"{ours.p95:.1f} ms"
    )
    print(
        f"  completion and hover p95 <= 20 ms: {results.completion.p95:.1f} / "
        f"{results.hover.p95:.1f} ms, "
        f"{verdict(max(results.completion.p95, results.hover.p95) <= 20)}"
    )
    peak = max(results.memory_mb.values())
    print(f"  resident memory <= 80 MB: at most {peak:.1f} MB, {verdict(peak <= 80)}")
    if not judged or n < 20:
        print("(a smoke run: these figures mean nothing)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repetitions", type=int, default=300, help="keystrokes per series")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 100 and 1,000 lines, 3 keystrokes"
    )
    args = parser.parse_args()
    small, large = (100, 1_000) if args.quick else (1_000, 10_000)
    repetitions = 3 if args.quick else args.repetitions
    load_before = os.getloadavg()[0]
    results = asyncio.run(measure(small, large, repetitions))
    report(results, load_before, os.getloadavg()[0])


if __name__ == "__main__":
    main()
