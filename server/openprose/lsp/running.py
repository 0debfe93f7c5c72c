"""``workspace/executeCommand prose.run``: run a program through the VM for clients that do
not run it themselves (VS Code runs ``prose run`` in a terminal instead).

``prose.run URI [INPUTS]``: the program as the editor has it (unsaved edits included) runs
on the configured backend (``offline`` by default: no model is called), with the document's
folder as the project, its run directory under ``.prose/runs`` there.  Its narration is
streamed as ``window/logMessage`` lines, its position as work-done progress when the client
shows progress; ``$/cancelRequest`` or cancelling the progress stops it.  The answer:
``{"runId", "runDir", "status", "outputs", "error"}``, or None when the program was refused
(errors, missing inputs), with a message saying why.  The run is an asyncio task, so the
server keeps answering other requests meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls import uris

log = logging.getLogger("prose-ls")
# Seconds between two log messages of a run's narration (each holds every line since the last).
NARRATION_INTERVAL = 0.1


async def run_in_editor(ls: Any, arguments: list[Any] | None) -> Any:
    """The server's ``runner``: ``ls`` is the ProseLanguageServer."""
    from openprose.syntax import parse
    from openprose.vm.interpreter import declared_inputs

    uri = arguments[0] if arguments else None
    given = arguments[1] if arguments and len(arguments) > 1 else {}
    if not isinstance(uri, str) or not isinstance(given, dict):
        return _refuse(ls, "prose.run needs a program's URI and, optionally, an object of inputs.")
    doc = ls.documents.get(uri)
    fs_path = uris.to_fs_path(uri)
    if fs_path is None:
        return _refuse(ls, f"{uri} is not a file: only program files can run.")
    path = Path(fs_path)
    if doc is not None:
        found = doc.analysis().diagnostics_with(ls.settings.config_for(doc.path))
        text, errors = doc.text, [d for d in found if d.is_error]
    else:
        from openprose.checking import check_text
        from openprose.files import read_text

        try:
            text = read_text(path)
        except (OSError, UnicodeDecodeError) as error:
            return _refuse(ls, f"Cannot read {path.name}: {error}")
        found = check_text(text, str(path))
        errors = [d for d in found if d.is_error]
    if errors:
        first = errors[0]
        return _refuse(
            ls,
            f"{path.name} has {len(errors)} error{'' if len(errors) == 1 else 's'} and cannot "
            f"run; the first, line "
            f"{first.start[0]}: {first.message}",
        )
    module = parse(text)
    inputs = {str(k): v for k, v in given.items()}
    missing = [name for name, _ in declared_inputs(module) if name not in inputs]
    if missing:
        return _refuse(
            ls,
            f"{path.name} needs the input {missing[0]!r}: give the inputs as the command's "
            'second argument, e.g. {"' + missing[0] + '": "..."}.',
        )
    return await _run(ls, path, text, module, inputs)


def _refuse(ls: Any, message: str) -> None:
    ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))


async def _run(ls: Any, path: Path, text: str, module: Any, inputs: dict[str, Any]) -> Any:
    from openprose.vm.backends.offline import OfflineBackend
    from openprose.vm.events import Position, render_text
    from openprose.vm.runner import run_file

    progress = _Progress(ls, f"Running {path.name}")
    await progress.start()

    # The narration goes out in batches, at most one log message per NARRATION_INTERVAL:
    # a fast loop narrates thousands of lines a second, one message each would flood the
    # client's log (and the connection).  Every line is sent; the last batch before the answer.
    loop = asyncio.get_running_loop()
    waiting: list[str] = []
    scheduled: list[asyncio.TimerHandle] = []

    def flush() -> None:
        for handle in scheduled:
            handle.cancel()
        scheduled.clear()
        if waiting:
            message = "\n".join(waiting)
            waiting.clear()
            ls.window_log_message(
                types.LogMessageParams(type=types.MessageType.Log, message=message)
            )

    def narrate(event: Any) -> None:
        text = render_text(event)
        if text:
            waiting.append(text)
            if not scheduled:
                scheduled.append(loop.call_later(NARRATION_INTERVAL, flush))
        if isinstance(event, Position):
            progress.report(f"line {event.line}: {event.statement}")

    folder = path.parent
    task = asyncio.ensure_future(
        run_file(
            path,
            inputs,
            backend=OfflineBackend(),  # the only backend prose.run offers so far (run.backend)
            runs_root=folder / ".prose" / "runs",
            sinks=[narrate],
            checked=(text, module),
            project_root=folder,
        )
    )
    request = _request_future(ls)
    if request is not None:  # $/cancelRequest cancels the request's future, not our task
        request.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)
    if progress.cancelled is not None:
        progress.cancelled.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)
    try:
        result = await task
    except asyncio.CancelledError:
        flush()
        progress.end("Cancelled")
        ls.window_log_message(
            types.LogMessageParams(type=types.MessageType.Info, message=f"{path.name}: cancelled")
        )
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # this handler itself was cancelled (the server is stopping)
        return {"runId": None, "runDir": None, "status": "cancelled", "outputs": {}, "error": ""}
    except OSError as error:
        flush()
        progress.end("Failed")
        return _refuse(ls, f"Cannot write the run directory of {path.name}: {error}")
    flush()
    progress.end("Succeeded" if result.status == "success" else "Failed")
    return {
        "runId": result.run_id,
        "runDir": str(result.run_dir) if result.run_dir else None,
        "status": result.status,
        "outputs": json.loads(json.dumps(result.outputs, default=str)),
        "error": result.error or None,
    }


def _request_future(ls: Any) -> Any:
    """The future pygls answers this request from (cancelled by ``$/cancelRequest``)."""
    protocol = ls.protocol
    msg_id = protocol.msg_id
    futures = getattr(protocol, "_request_futures", {})
    return futures.get(msg_id) if msg_id is not None else None


class _Progress:
    """Work-done progress, only for a client that says it shows it."""

    def __init__(self, ls: Any, title: str) -> None:
        self.ls = ls
        self.title = title
        self.token = str(uuid.uuid4())
        self.cancelled: Any = None  # pygls cancels this future on window/workDoneProgress/cancel
        window = ls.client_capabilities.window if ls.client_capabilities else None
        self.enabled = bool(window and window.work_done_progress)
        self.last_report = 0.0

    async def start(self) -> None:
        if not self.enabled:
            return
        try:
            await self.ls.work_done_progress.create_async(self.token)
        except Exception:
            self.enabled = False
            return
        self.ls.work_done_progress.begin(
            self.token, types.WorkDoneProgressBegin(title=self.title, cancellable=True)
        )
        self.cancelled = self.ls.work_done_progress.tokens.get(self.token)

    def report(self, message: str) -> None:
        # At most ten a second: a loop of quick statements would flood the client otherwise.
        now = time.monotonic()
        if self.enabled and now - self.last_report >= 0.1:
            self.last_report = now
            self.ls.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message)
            )

    def end(self, message: str) -> None:
        if self.enabled:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            self.ls.work_done_progress.tokens.pop(self.token, None)
            self.enabled = False
