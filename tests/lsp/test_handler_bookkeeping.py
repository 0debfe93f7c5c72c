"""What the server keeps per message: nothing, once the message is handled.

pygls files the future of each generator or async handler under a message id for
``$/cancelRequest``, and only a request's answer removed it, so every ``didChange`` left a
future (and its lock and condition) behind for the life of the server: 2-3 KB a keystroke.
The bench (``bench/lsp_memory.py``) measures resident memory over 20,000 keystrokes; this
test checks the mechanism, in a separate interpreter so the module-level server is fresh.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

DRIVER = textwrap.dedent(
    """
    import asyncio, json

    from openprose.lsp.framing import Message
    from openprose.lsp.server import server

    class Sink:
        def __init__(self):
            self.answers = {}
        def write(self, data):
            body = json.loads(data.split(b"\\r\\n\\r\\n", 1)[1])
            if "id" in body and "method" not in body:
                self.answers[body["id"]] = body
        def close(self):
            pass

    async def main():
        protocol = server.protocol
        sink = Sink()
        protocol.set_writer(sink)

        def send(**message):
            protocol.receive(Message({"jsonrpc": "2.0", **message}))

        send(id=1, method="initialize", params={
            "capabilities": {}, "initializationOptions": {"debounce": 0}})
        await asyncio.sleep(0.05)
        send(method="initialized", params={})
        uri = "file:///memory/doc.prose"
        send(method="textDocument/didOpen", params={"textDocument": {
            "uri": uri, "languageId": "prose", "version": 1, "text": 'session "ab"\\n'}})
        here = {"line": 0, "character": 10}
        for version in range(2, 402):
            inserting = version % 2 == 0
            end = here if inserting else {"line": 0, "character": 11}
            send(method="textDocument/didChange", params={
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": here, "end": end},
                                    "text": "x" if inserting else ""}]})
            if version % 50 == 0:
                await asyncio.sleep(0)
        send(id=2, method="textDocument/hover", params={
            "textDocument": {"uri": uri}, "position": {"line": 0, "character": 1}})
        for _ in range(200):
            await asyncio.sleep(0.01)
            if 2 in sink.answers:
                break
        await asyncio.sleep(0.1)
        print(json.dumps({
            "kept": len(protocol._request_futures),
            "answered": sorted(sink.answers),
        }))

    asyncio.run(main())
    """
)


def test_handled_notifications_and_requests_leave_nothing_behind() -> None:
    run = subprocess.run(
        [sys.executable, "-c", DRIVER], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    # The server really handled the traffic (the hover request was answered)...
    assert report["answered"] == [1, 2]
    # ...and kept no future for any of the 400 didChange notifications or the requests.
    assert report["kept"] == 0
