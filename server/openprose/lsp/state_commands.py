"""``workspace/executeCommand`` for the runs and the state control plane of a program
(vm/state/control.py), what ``prose runs list`` and ``prose state ...`` do on the command
line:

- ``prose.runs.list URI [{"state", "allPrograms"}]``: the runs of the program at ``URI``
  (of every program of its folder with ``allPrograms``), newest first, each as
  ``prose runs list --json`` prints it;
- ``prose.state.describe URI {"runId" | "agent", "includeData"}``;
- ``prose.state.reset URI {"runId" | "agent" | "all": true}``;
- ``prose.state.compact URI {"runId" | "agent", "strategy", "maxMessages", "maxTokens"}``;

each answering the seed's report (``StateReport.to_json``).  The project is the program's
folder, its runs under ``.prose/runs`` there, as ``prose.run`` and VS Code's Run Program
make them.  A refusal (a bad argument, an unknown run, a store error) is shown to the user
as a message and the answer is None, or the report with its ``errors``; never an internal
error.  The work is done in a thread: the server keeps answering meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls import uris

log = logging.getLogger("prose-ls")

RUNS_LIST = "prose.runs.list"
STATE_DESCRIBE = "prose.state.describe"
STATE_RESET = "prose.state.reset"
STATE_COMPACT = "prose.state.compact"
LOCAL_STATES = ("filesystem", "sqlite")


class Refused(Exception):
    """A message for the user."""


def _show(ls: Any, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
    ls.window_show_message(types.ShowMessageParams(type=kind, message=message))


def _folder(arguments: list[Any], command: str) -> tuple[Path, Path | None, dict[str, Any]]:
    """The project folder, the program (None when the URI is a folder) and the options."""
    uri = arguments[0] if arguments else None
    options = arguments[1] if len(arguments) > 1 else {}
    if not isinstance(uri, str) or not isinstance(options, dict):
        raise Refused(f"{command} needs a program's URI and, optionally, an object of options.")
    fs_path = uris.to_fs_path(uri)
    if fs_path is None:
        raise Refused(f"{uri} is not a file: runs belong to program files.")
    path = Path(fs_path)
    if path.is_dir():
        return path, None, options
    return path.parent, path, options


def _states(options: dict[str, Any]) -> tuple[str, ...]:
    from openprose.vm.state.base import BACKENDS

    state = options.get("state")
    if state is None:
        return LOCAL_STATES
    if state not in BACKENDS:
        raise Refused(f"Unknown state backend {state!r} (one of {', '.join(BACKENDS)}).")
    return (str(state),)


def _target(arguments: list[Any], command: str) -> tuple[Any, dict[str, Any]]:
    from openprose.vm.state.control import Target

    folder, _, options = _folder(arguments, command)
    run_id, agent, everything = options.get("runId"), options.get("agent"), options.get("all")
    for name, value in (("runId", run_id), ("agent", agent)):
        if value is not None and not isinstance(value, str):
            raise Refused(f"{command}: {name} must be a string.")
    if everything is not None and not isinstance(everything, bool):
        raise Refused(f"{command}: all must be true or false.")
    target = Target(
        folder / ".prose" / "runs",
        run_id=run_id,
        agent=agent,
        all=bool(everything),
        project_root=folder,
        states=_states(options),
    )
    return target, options


def _count(options: dict[str, Any], name: str) -> int | None:
    value = options.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise Refused(f"{name} must be a whole number.")
    return value


def list_runs(arguments: list[Any]) -> list[dict[str, Any]]:
    from openprose.vm.state import StateError, open_catalog

    folder, program, options = _folder(arguments, RUNS_LIST)
    root = folder / ".prose" / "runs"
    found = []
    for state in _states(options):
        try:
            found.extend(open_catalog(state, root, project_root=folder).runs())
        except (StateError, ImportError) as error:
            if options.get("state"):
                raise Refused(f"Cannot list the runs of {state}: {error}") from None
    if program is not None and not options.get("allPrograms"):
        found = [info for info in found if info.program_name == program.name]
    found.sort(key=lambda info: (info.started_at, info.run_id), reverse=True)
    return [info.to_json() for info in found]


def describe(arguments: list[Any]) -> dict[str, Any]:
    from openprose.vm.state import control

    target, options = _target(arguments, STATE_DESCRIBE)
    report = control.describe(target, bool(options.get("includeData")))
    return report.to_json()


def reset(arguments: list[Any]) -> dict[str, Any]:
    from openprose.vm.state import control

    target, _ = _target(arguments, STATE_RESET)
    return control.reset(target).to_json()


def compact(arguments: list[Any]) -> dict[str, Any]:
    from openprose.vm.state import control

    target, options = _target(arguments, STATE_COMPACT)
    strategy = options.get("strategy", "recent")
    if not isinstance(strategy, str):
        raise Refused("strategy must be recent or tokens.")
    report = control.compact(
        target, strategy, _count(options, "maxMessages"), _count(options, "maxTokens")
    )
    return report.to_json()


async def answer(ls: Any, command: str, work: Callable[[list[Any]], Any], arguments: Any) -> Any:
    """Run ``work`` in a thread; refusals and store errors become messages for the user."""
    import sqlite3

    from openprose.vm.state import StateError

    try:
        result = await asyncio.to_thread(work, list(arguments))
    except (Refused, StateError, ValueError) as error:
        _show(ls, str(error))
        return None
    except (OSError, sqlite3.Error) as error:
        _show(ls, f"{command} could not read the state: {error}")
        return None
    except Exception:  # the command must answer, whatever went wrong
        log.exception("%s failed", command)
        _show(ls, f"{command} failed; the OpenProse output has the details.")
        return None
    errors = result.get("errors") if isinstance(result, dict) else None
    if errors:
        lines = "; ".join(f"{e['store']}: {e['message']}" for e in errors)
        _show(ls, f"{command}: {lines}", types.MessageType.Warning)
    return result


COMMANDS: dict[str, Callable[[list[Any]], Any]] = {
    RUNS_LIST: list_runs,
    STATE_DESCRIBE: describe,
    STATE_RESET: reset,
    STATE_COMPACT: compact,
}


def register(server: Any) -> None:
    """Register every command of this module on ``server`` (a pygls LanguageServer)."""
    for name, work in COMMANDS.items():
        server.command(name)(_handler(name, work))


def _handler(name: str, work: Callable[[list[Any]], Any]) -> Any:
    async def handle(ls: Any, *arguments: Any) -> Any:
        return await answer(ls, name, work, arguments)

    handle.__name__ = name.replace(".", "_")
    return handle
