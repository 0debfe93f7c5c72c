"""prose-ls latencies through the real stdio server, on generated 1,000- and 10,000-line programs.

Prints: time to the initialize response; keystroke (didChange) to published diagnostics with
the debounce set to 0 ms (so the figure excludes the debounce delay); completion and hover
round trips (p50, p95); the server's resident memory after opening the program and after the
keystrokes.  Goals from the language-server issue, on 10,000 lines: completion and hover p95
<= 20 ms, keystroke to diagnostics p95 <= 50 ms, at most 80 MB resident.  Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from generate import flat_program
from lsprotocol import types
from pygls.lsp.client import LanguageClient


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))
    return ordered[index]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def measure(lines: int, repetitions: int) -> dict[str, str]:
    client = LanguageClient("bench", "1")
    published: dict[str, asyncio.Future[types.PublishDiagnosticsParams]] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        waiter = published.pop(f"{params.uri}@{params.version}", None)
        if waiter is not None and not waiter.done():
            waiter.set_result(params)

    start = time.perf_counter()
    await client.start_io(sys.executable, "-m", "openprose.lsp")
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={"debounce": 0},
        )
    )
    initialize_ms = (time.perf_counter() - start) * 1000
    client.initialized(types.InitializedParams())

    text = flat_program(lines)
    uri = f"file:///bench/program-{lines}.prose"
    loop = asyncio.get_running_loop()

    def expect(version: int) -> asyncio.Future[types.PublishDiagnosticsParams]:
        waiter: asyncio.Future[types.PublishDiagnosticsParams] = loop.create_future()
        published[f"{uri}@{version}"] = waiter
        return waiter

    waiter = expect(1)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="prose", version=1, text=text)
        )
    )
    await asyncio.wait_for(waiter, 60)
    pid = client._server.pid if client._server is not None else 0
    memory = rss_mb(pid) if pid else float("nan")

    text_lines = text.split("\n")
    middle = len(text_lines) // 2
    target = next(i for i in range(middle, len(text_lines)) if text_lines[i].startswith("session "))
    column = len("session ") + 3
    keystrokes: list[float] = []
    version = 1
    for i in range(repetitions):
        version += 1
        waiter = expect(version)
        position = types.Position(line=target, character=column)
        insert = i % 2 == 0
        change = types.TextDocumentContentChangePartial(
            range=types.Range(
                start=position,
                end=position if insert else types.Position(line=target, character=column + 1),
            ),
            text="x" if insert else "",
        )
        begin = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[change],
            )
        )
        await asyncio.wait_for(waiter, 30)
        keystrokes.append((time.perf_counter() - begin) * 1000)

    memory_after_edits = rss_mb(pid) if pid else float("nan")

    session_line = next(i for i in range(middle, len(text_lines)) if "session: " in text_lines[i])
    agent_column = text_lines[session_line].index("session: ") + len("session: ")
    completions: list[float] = []
    hovers: list[float] = []
    doc = types.TextDocumentIdentifier(uri=uri)
    for _ in range(repetitions):
        begin = time.perf_counter()
        await client.text_document_completion_async(
            types.CompletionParams(
                text_document=doc,
                position=types.Position(line=session_line, character=agent_column),
            )
        )
        completions.append((time.perf_counter() - begin) * 1000)
        begin = time.perf_counter()
        await client.text_document_hover_async(
            types.HoverParams(
                text_document=doc,
                position=types.Position(line=session_line, character=agent_column + 1),
            )
        )
        hovers.append((time.perf_counter() - begin) * 1000)

    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()

    def summary(values: list[float]) -> str:
        return f"{statistics.median(values):6.1f} / {percentile(values, 0.95):6.1f}"

    return {
        "initialize response (ms)": f"{initialize_ms:6.0f}",
        "keystroke -> diagnostics p50/p95 (ms)": summary(keystrokes),
        "completion p50/p95 (ms)": summary(completions),
        "hover p50/p95 (ms)": summary(hovers),
        "resident memory after open (MB)": f"{memory:6.1f}",
        "resident memory after the keystrokes (MB)": f"{memory_after_edits:6.1f}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repetitions", type=int, default=60)
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 100 and 1,000 lines, 3 requests"
    )
    args = parser.parse_args()
    small, large = (100, 1_000) if args.quick else (1_000, 10_000)
    if args.quick:
        args.repetitions = 3
    results = {n: asyncio.run(measure(n, args.repetitions)) for n in (small, large)}
    print(f"prose-ls through stdio, {args.repetitions} requests per figure (debounce 0 ms)")
    print(f"{'figure':<40} {f'{small:,} lines':>16} {f'{large:,} lines':>16}")
    for key in results[small]:
        print(f"{key:<40} {results[small][key]:>16} {results[large][key]:>16}")
    print("goals on 10,000 lines: completion and hover p95 <= 20 ms; keystroke to diagnostics")
    print("p95 <= 50 ms (debounce excluded); resident memory <= 80 MB")


if __name__ == "__main__":
    main()
