"""prose-ls resident memory while a user types, through the real stdio server.

Opens a generated program and sends ``--edits`` keystrokes (alternately inserting and deleting
one character in the middle, as ``lsp_latency.py`` does), waiting for the diagnostics of every
50th version so the server keeps up, and prints the server's resident memory (VmRSS) at
checkpoints.  Memory that levels off is what a long editing session needs: the figure to
watch is the growth per edit between the later checkpoints, which should be near zero
(a leak shows as a steady slope; before issue 12 it was 2-3 KB per edit).  Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from generate import flat_program
from lsprotocol import types
from pygls.lsp.client import LanguageClient


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def measure(lines: int, edits: int, checkpoints: list[int]) -> list[tuple[int, float]]:
    client = LanguageClient("bench", "1")
    published: set[int] = set()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        if params.version is not None:
            published.add(params.version)

    await client.start_io(sys.executable, "-m", "openprose.lsp")
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={"debounce": 0},
        )
    )
    client.initialized(types.InitializedParams())
    pid = client._server.pid if client._server is not None else 0

    text = flat_program(lines)
    uri = f"file:///bench/memory-{lines}.prose"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="prose", version=1, text=text)
        )
    )

    async def caught_up(version: int) -> None:
        deadline = time.monotonic() + 60
        while version not in published:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no diagnostics for version {version}")
            await asyncio.sleep(0.001)

    await caught_up(1)
    figures = [(0, rss_mb(pid))]
    text_lines = text.split("\n")
    target = next(
        i
        for i in range(len(text_lines) // 2, len(text_lines))
        if text_lines[i].startswith("session ")
    )
    column = len("session ") + 3
    start = types.Position(line=target, character=column)
    version = 1
    for done in range(1, edits + 1):
        version += 1
        insert = done % 2 == 1
        end = start if insert else types.Position(line=target, character=column + 1)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=start, end=end), text="x" if insert else ""
                    )
                ],
            )
        )
        if done % 50 == 0 or done in checkpoints:
            await caught_up(version)
        if done in checkpoints:
            figures.append((done, rss_mb(pid)))
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=1_000)
    parser.add_argument("--edits", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 100 lines, 1,000 edits")
    args = parser.parse_args()
    if args.quick:
        args.lines, args.edits = 100, 1_000
    checkpoints = sorted(
        {n for n in (1_000, 2_000, 5_000, 10_000, 20_000, args.edits) if n <= args.edits}
    )
    started = time.perf_counter()
    figures = asyncio.run(measure(args.lines, args.edits, checkpoints))
    seconds = time.perf_counter() - started
    print(f"prose-ls resident memory, {args.lines:,}-line program, {args.edits:,} keystrokes")
    print(f"{'after edits':>12} {'RSS (MB)':>10} {'KB/edit since previous':>24}")
    previous: tuple[int, float] | None = None
    for done, mb in figures:
        slope = ""
        if previous is not None and done > previous[0]:
            slope = f"{(mb - previous[1]) * 1024 / (done - previous[0]):8.2f}"
        print(f"{done:>12,} {mb:>10.1f} {slope:>24}")
        previous = (done, mb)
    first_k = next((f for f in figures if f[0] >= 1_000), figures[0])
    last = figures[-1]
    if last[0] > first_k[0]:
        growth = (last[1] - first_k[1]) * 1024 / (last[0] - first_k[0])
        print(f"growth from {first_k[0]:,} to {last[0]:,} edits: {growth:.2f} KB per edit")
    print(f"({seconds:.0f} s in all; goal: memory levels off, growth near 0 KB per edit)")


if __name__ == "__main__":
    main()
