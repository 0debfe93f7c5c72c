"""Kill a run at a random instant, resume it, and compare it with an uninterrupted run.

Issue 10's "kill at random points" test, shared by ``tests/vm/test_kill_resume.py`` (a few
hundred runs in CI) and ``bench/kill_resume.py`` (as many as asked).

Every program below is recorded once on the offline backend (with scripted failures, which
the CLI cannot give), then run on the ``replay`` backend as a real child process that is
sent SIGKILL at a random moment and resumed (``--resume RUN_ID`` or ``run_file(resume=)``)
until it completes; it may be killed more than once.  Its final outputs, bindings, agent
memory and journal must equal those of an uninterrupted run of the same recording on the
same state backend.

The child answers through ``Harnessed``, a wrapper around the replay backend defined here
(not in the product): it appends every call it actually makes to a calls log (O_APPEND, one
line per call, written before the answer so that a call killed in flight is in the log),
and sleeps a little before answering, so that a kill lands inside the run rather than in
the child's start-up.  After each attempt the harness reads the journal's step keys; a step
called again in a later attempt must not have been in the journal when that attempt began
(only steps in flight at a kill may run again).

Children are forked from a ``forkserver`` that has imported the VM already (a fork costs a
few milliseconds, a fresh interpreter a few hundred); a share of the attempts goes through
the CLI (``prose run --replay --state --run-dir --json [--resume]``) in the forked child,
and a smaller share through a fresh ``python -c`` process running the same CLI.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import re
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------------------- the programs


@dataclass(frozen=True)
class Program:
    name: str
    text: str
    files: dict[str, str] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)  # offline scripted failures
    # A race (parallel "first"/"any"): which losing branches reached the journal before
    # they were cancelled depends on timing, so the journal is compared step by step, not
    # as a set.  The bindings and outputs must still be identical.
    racy: bool = False


def _p(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


PROGRAMS: dict[str, Program] = {
    p.name: p
    for p in (
        Program(
            "parallel_all",
            _p(
                """
                let a = session "Open the study"
                parallel:
                  b = session "Branch one from {a}"
                  c = session "Branch two"
                  do:
                    let d = session "Inner d"
                    let e = session "Inner e after {d}"
                choice **the better branch**:
                  option "One":
                    let chosen = session "Pursue one"
                  option "Two":
                    let chosen = session "Pursue two"
                output out = session "Close"
                  context: [a, b, c, d, e, chosen]
                """
            ),
        ),
        Program(
            "parallel_race",
            _p(
                """
                let w = parallel ("first"):
                  session "Fast answer"
                  session "Second answer"
                let x = parallel ("any", count: 2):
                  p = session "Candidate p"
                  q = session "Candidate q"
                  r = session "Candidate r"
                output out = session "Pick from {w}"
                  context: x
                """
            ),
            racy=True,
        ),
        Program(
            "parallel_on_fail",
            _p(
                """
                parallel (on-fail: "continue"):
                  good = session "Good branch"
                  bad = session "Broken branch"
                let y = parallel ("any", count: 1, on-fail: "ignore"):
                  session "Broken again"
                  session "Fine again"
                parallel (on-fail: "ignore"):
                  kept = session "Kept branch"
                  lost = session "Broken third"
                output out = session "After failures"
                  context: [good, bad, y, kept]
                """
            ),
            failures={"Broken": 1000},
            racy=True,
        ),
        Program(
            "blocks",
            _p(
                """
                block refine(content, depth):
                  if depth <= 0:
                    output content
                  let better = session "Improve {content} at {depth}"
                  output do refine(better, depth - 1)

                block sweep(topic):
                  parallel:
                    docs = session "Docs for {topic}"
                    code = session "Code for {topic}"

                let result = do refine("draft", 3)
                do sweep("auth")
                do sweep("billing")
                output out = session "Plan"
                  context: [result, docs, code]
                """
            ),
        ),
        Program(
            "loops",
            _p(
                """
                let notes = session "Start notes"
                loop until **the notes are complete** (max: 4) as k:
                  notes = session "Extend notes round {k}"
                loop while **more remains** (max: 3):
                  session "While work"
                repeat 3 as i:
                  let r = session "Repeat {i}"
                for x in ["red", "green", "blue"]:
                  session "Paint {x}"
                let fanned = parallel for y in ["p", "q", "r", "s"]:
                  session "Fan {y}"
                let piped = ["a", "b", "c"] | pmap:
                  session "Pmap {item}"
                let total = piped | reduce(acc, v):
                  session "Fold {acc} with {v}"
                output out = session "Summarise"
                  context: [notes, fanned, total]
                """
            ),
        ),
        Program(
            "retry_try",
            _p(
                """
                let flaky = session "Flaky fetch"
                  retry: 3
                try:
                  session "Risky write"
                catch as err:
                  let handled = session "Handle the failure"
                    context: err
                finally:
                  session "Cleanup"
                try:
                  throw "manual"
                catch as e2:
                  let caught = session "Caught {e2.message}"
                output out = session "Done"
                  context: [flaky, handled, caught]
                """
            ),
            failures={"Flaky fetch": 2, "Risky write": 1000},
        ),
        Program(
            "pipeline",
            _p(
                """
                let items = ["alpha", "beta", "gamma", "delta"]
                let kept = items
                  | filter:
                      session "Keep {item}?"
                  | map:
                      session "Shape {item}"
                  | reduce(acc, x):
                      session "Join {acc} + {x}"
                output out = session "Report"
                  context: kept
                """
            ),
        ),
        Program(
            "program_calls",
            _p(
                """
                use "./helper" as helper
                let r = helper(topic: "bees")
                parallel:
                  s = helper(topic: "ants")
                  t = helper(topic: "wasps")
                let { facts, extra } = helper(topic: "moths")
                output out = session "Use {r.facts}"
                  context: [s, t, facts, extra]
                """
            ),
            files={
                "helper.prose": _p(
                    """
                    input topic: "What to look up"
                    let found = session "Find facts about {topic}"
                    let more = session "More on {topic}"
                    output facts = found
                    output extra = more
                    """
                )
            },
        ),
        Program(
            "agents",
            _p(
                """
                agent scribe:
                  model: opus
                  persist: true
                  prompt: "You keep notes"

                agent advisor:
                  model: sonnet
                  persist: project
                  prompt: "You advise"

                session: scribe
                  prompt: "First note"
                session: advisor
                  prompt: "First advice"
                resume: scribe
                  prompt: "Second note"
                repeat 2 as i:
                  resume: advisor
                    prompt: "Advice round {i}"
                let last = resume: scribe
                  prompt: "Final note"
                output out = resume: advisor
                  prompt: "Final advice"
                """
            ),
        ),
    )
}

# ---------------------------------------------------------------------------- the child


class Harnessed:
    """The replay backend, logging each call it makes and answering ``delay`` seconds
    later.  The line is appended before the answer: a call in flight at a kill is in the
    log, as a model call the killed process had paid for would be."""

    def __init__(self, inner: Any, log: Path, attempt: int, delay: float) -> None:
        self.inner = inner
        self.name = inner.name
        self.dry_run = inner.dry_run
        self.log = log
        self.attempt = attempt
        self.delay = delay

    async def _call(self, request: Any, method: str) -> Any:
        from openprose.vm.backends.replay import exchange_key

        kind, key = exchange_key(request)
        line = json.dumps([self.attempt, kind, key]) + "\n"
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
        if self.delay:
            await asyncio.sleep(self.delay)
        return await getattr(self.inner, method)(request)

    async def run_session(self, request: Any) -> Any:
        return await self._call(request, "run_session")

    async def judge(self, request: Any) -> Any:
        return await self._call(request, "judge")

    async def choose(self, request: Any) -> Any:
        return await self._call(request, "choose")

    async def summarise(self, request: Any) -> Any:
        return await self._call(request, "summarise")


def drive(spec: dict[str, Any]) -> None:
    """One attempt of a run, in the child: ``spec`` says how (api or cli), where, and
    whether it resumes.  Writes the result (status, outputs) to ``spec["result"]``."""
    out = os.open(spec["result"] + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    from openprose.vm.backends import replay

    log, attempt, delay = Path(spec["calls"]), int(spec["attempt"]), float(spec["delay"])
    if spec.get("forget"):
        _forget_journal()
    if spec["mode"] == "api":
        from openprose.vm.interpreter import Options
        from openprose.vm.runner import run_file
        from openprose.vm.state import open_catalog

        runs_root = Path(spec["runs_root"])
        store = None
        if spec.get("resume"):
            store = open_catalog(spec["state"], runs_root).open(spec["resume"])
        backend = Harnessed(replay.ReplayBackend(Path(spec["recording"])), log, attempt, delay)
        result = asyncio.run(
            run_file(
                Path(spec["program"]),
                {},
                backend=backend,
                runs_root=runs_root,
                state=spec["state"],
                resume=store,
                options=Options(jitter=False),
            )
        )
        payload = {"status": result.status, "outputs": result.outputs, "error": result.error}
        _write_result(spec["result"], payload)
        return
    # The CLI, in this process: its options, its resume checks, its JSON report.  Only the
    # replay backend it builds is wrapped.
    original = replay.ReplayBackend

    def wrapped(path: Path) -> Harnessed:
        return Harnessed(original(path), log, attempt, delay)

    replay.ReplayBackend = wrapped  # type: ignore[assignment, misc]
    from openprose.cli import main

    argv = ["run", spec["program"], "--replay", spec["recording"], "--state", spec["state"]]
    argv += ["--run-dir", spec["runs_root"], "--json"]
    if spec.get("resume"):
        argv += ["--resume", spec["resume"]]
    buffer = _Capture()
    with contextlib.redirect_stdout(buffer):
        code = main(argv)
    sys.stdout.flush()
    try:
        report = json.loads(buffer.text())
    except ValueError:
        report = {"status": "error", "outputs": {}, "error": f"cli exit {code}"}
    cli_payload: dict[str, Any] = {
        "status": report.get("status"),
        "outputs": report.get("outputs", {}),
        "error": report.get("error") or "",
        "exit": code,
    }
    _write_result(spec["result"], cli_payload)


def _forget_journal() -> None:
    """A broken product, to show that the harness notices one: the journal answers
    nothing, so a resumed run calls every step again."""
    from openprose.vm.backends.replay import JournalBackend

    class Forgetful:
        def __init__(self, journal: Any) -> None:
            self.journal = journal

        def step(self, kind: str, key: str) -> None:
            return None

        def __getattr__(self, name: str) -> Any:
            return getattr(self.journal, name)

    original = JournalBackend.__init__

    def init(self: Any, inner: Any, journal: Any, on_live: Any = None) -> None:
        original(self, inner, Forgetful(journal), on_live)

    JournalBackend.__init__ = init  # type: ignore[method-assign]


class _Capture:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        return "".join(self.parts)


def _write_result(path: str, payload: dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, default=str, sort_keys=True)
    os.replace(tmp, path)


def exec_main() -> None:
    """The entry of a fresh ``python -c`` child: the spec is argv[1]."""
    drive(json.loads(sys.argv[1]))


# ---------------------------------------------------------------------------- processes

_FORK: Any = None
_FORK_LOCK = threading.RLock()


def _context() -> Any:
    global _FORK
    with _FORK_LOCK:
        if _FORK is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(
                [
                    "openprose.vm.runner",
                    "openprose.cli",
                    "openprose.cli.run",
                    "openprose.vm.state.filesystem",
                    "openprose.vm.state.sqlite",
                    "openprose.vm.state.postgres",
                    "psycopg",
                    "tests.vm.kill_harness",
                ]
            )
            _FORK = context
        return _FORK


class Child:
    """One attempt as a process: forked from the forkserver, or a fresh interpreter."""

    def __init__(self, spec: dict[str, Any], fresh: bool) -> None:
        self.fresh = fresh
        self.spec = spec
        self.started = time.monotonic()
        if fresh:
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
            code = "from tests.vm.kill_harness import exec_main; exec_main()"
            self.popen: Any = subprocess.Popen(
                [sys.executable, "-c", code, json.dumps(spec)],
                cwd=str(REPO),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        else:
            with _FORK_LOCK:  # one start at a time through the forkserver's socket
                self.process = _context().Process(target=drive, args=(spec,), daemon=True)
                self.process.start()

    @property
    def pid(self) -> int:
        return int(self.popen.pid if self.fresh else self.process.pid)

    def wait(self, timeout: float | None) -> int | None:
        """The exit code, or None when still running after ``timeout`` seconds."""
        if self.fresh:
            try:
                return int(self.popen.wait(timeout))
            except subprocess.TimeoutExpired:
                return None
        self.process.join(timeout)
        code = self.process.exitcode
        return None if code is None else int(code)

    def kill(self) -> int:
        if self.fresh:
            self.popen.kill()
        else:
            self.process.kill()
        code = self.wait(30)
        assert code is not None, "a SIGKILLed child did not exit"
        return code


# ---------------------------------------------------------------------------- state


def prepare(program: Program, root: Path, database: str | None = None) -> Path:
    """A project for one run: the program, its imports, and ``.prose/`` (where project
    memory and the runs go; for postgres, ``.prose/.env`` names ``database``).  Returns
    the program's path."""
    project = root / "project"
    (project / ".prose" / "runs").mkdir(parents=True, exist_ok=True)
    if database is not None:
        (project / ".prose" / ".env").write_text(f"{_URL_VARIABLE}={database}\n")
    for name, text in program.files.items():
        (project / name).write_text(text, encoding="utf-8")
    main = project / "main.prose"
    main.write_text(program.text, encoding="utf-8")
    return main


def record(program: Program, root: Path) -> Path:
    """The program's exchanges, recorded on the offline backend (in this process: the
    scripted failures are not a CLI option)."""
    from openprose.vm.backends.offline import OfflineBackend
    from openprose.vm.backends.replay import RecordingBackend
    from openprose.vm.interpreter import Options
    from openprose.vm.runner import run_file

    main = prepare(program, root)
    recording = root / "recording.jsonl"
    backend = RecordingBackend(OfflineBackend(failures=program.failures), recording)
    result = asyncio.run(
        run_file(
            main,
            {},
            backend=backend,
            runs_root=main.parent / ".prose" / "runs",
            options=Options(jitter=False),
        )
    )
    assert result.status == "success", f"{program.name} does not run: {result.error}"
    return recording


_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?Z?")
_VOLATILE = re.compile(r"(_at$|^timestamp$|^ts$|^pid$|^host$|^id$|^location$)")
_NARRATION_TABLES = {"run", "execution", "sqlite_sequence"}


def _normal(value: Any, run_id: str) -> Any:
    if isinstance(value, str):
        return _TIMESTAMP.sub("<ts>", value.replace(run_id, "<run>"))
    return value


def dump_database(path: Path, run_id: str) -> dict[str, Any]:
    """Every table but the narration (``run``, ``execution``), rows sorted, with the
    columns that hold times, process ids or row ids left out."""
    tables: dict[str, Any] = {}
    connection = sqlite3.connect(path, timeout=10)
    try:
        names = [
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        for table in sorted(names):
            if table in _NARRATION_TABLES:
                continue
            cursor = connection.execute(f'SELECT * FROM "{table}"')
            columns = [d[0] for d in cursor.description]
            keep = [i for i, c in enumerate(columns) if not _VOLATILE.search(c)]
            rows = [tuple(_normal(row[i], run_id) for i in keep) for row in cursor.fetchall()]
            if table.endswith("journal_runs"):
                # program_text/inputs/status are compared; the summary counters too.
                pass
            tables[table] = {
                "columns": [columns[i] for i in keep],
                "rows": sorted(rows, key=repr),
            }
    finally:
        connection.close()
    return tables


_URL_VARIABLE = "OPENPROSE_POSTGRES_URL"


def project_database(project: Path) -> str | None:
    """The postgres database ``prepare`` gave the project, if any."""
    try:
        text = (project / ".prose" / ".env").read_text()
    except OSError:
        return None
    name, _, value = text.strip().partition("=")
    return value if name == _URL_VARIABLE else None


def new_database(admin_url: str) -> str:
    """A fresh database of the cluster at ``admin_url``: one a run, so that a run's rows
    are all the rows."""
    import uuid

    import psycopg

    name = f"kill_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


def drop_database(admin_url: str, url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with (
        contextlib.suppress(psycopg.Error),
        psycopg.connect(admin_url, autocommit=True) as admin,
    ):
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def dump_postgres(url: str, run_id: str) -> dict[str, Any]:
    """``dump_database`` for a postgres database: every table of every schema but the
    narration."""
    import psycopg

    tables: dict[str, Any] = {}
    with psycopg.connect(url, autocommit=True) as connection:
        names = connection.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') "
            "AND table_type = 'BASE TABLE'"
        ).fetchall()
        for schema, table in sorted(names):
            if table in _NARRATION_TABLES:
                continue
            cursor = connection.execute(f'SELECT * FROM "{schema}"."{table}"')
            columns = [d.name for d in cursor.description or ()]
            keep = [i for i, c in enumerate(columns) if not _VOLATILE.search(c)]
            rows = [
                tuple(_normal(_plain(row[i]), run_id) for i in keep) for row in cursor.fetchall()
            ]
            tables[f"{schema}.{table}"] = {
                "columns": [columns[i] for i in keep],
                "rows": sorted(rows, key=repr),
            }
    return tables


def _plain(value: Any) -> Any:
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return value


def snapshot(project: Path, run_id: str) -> dict[str, Any]:
    """What a run left that must not depend on how often it was killed: every file under
    the run's ``bindings/``, ``agents/``, ``attachments/`` and ``imports/`` (narration
    files aside), every database's tables but the narration, and the project's agents."""
    found: dict[str, Any] = {}
    run_dir = project / ".prose" / "runs" / run_id
    roots = [(run_dir, "run"), (project / ".prose", "project")]
    for root, label in roots:
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            parts = relative.parts
            if label == "project" and (not parts or parts[0] == "runs"):
                continue
            if not path.is_file() or path.name.endswith(("-wal", "-shm", "-journal", ".lock")):
                continue
            if path.name in ("state.md", "events.jsonl", "inputs.json", "program.prose", ".env"):
                continue
            name = f"{label}/{relative.as_posix()}".replace(run_id, "<run>")
            if path.suffix == ".db":
                found[name] = dump_database(path, run_id)
            else:
                text = path.read_bytes().decode("utf-8", errors="replace")
                found[name] = _normal(text, run_id)
    database = project_database(project)
    if database is not None:
        found["postgres"] = dump_postgres(database, run_id)
    return found


def journal_path(project: Path, run_id: str, state: str) -> tuple[Path, str]:
    run_dir = project / ".prose" / "runs" / run_id
    if state == "sqlite":
        return run_dir / "state.db", "x_"
    return run_dir / "journal.db", ""


def journal_steps(project: Path, run_id: str, state: str) -> set[tuple[str, str]]:
    if state == "postgres":
        import psycopg

        url = project_database(project)
        assert url is not None
        with psycopg.connect(url, autocommit=True) as pg:
            try:
                found = pg.execute(
                    "SELECT kind, key FROM openprose.journal_steps WHERE run_id = %s", (run_id,)
                ).fetchall()
            except psycopg.errors.UndefinedTable:  # killed before the tables were made
                return set()
        return {(kind, key) for kind, key in found}
    path, prefix = journal_path(project, run_id, state)
    if not path.is_file():
        return set()
    connection = sqlite3.connect(path, timeout=10)
    try:
        rows = connection.execute(
            f"SELECT kind, key FROM {prefix}journal_steps WHERE run_id = ?", (run_id,)
        ).fetchall()
    except sqlite3.OperationalError:  # killed before the tables were made
        return set()
    finally:
        connection.close()
    return {(kind, key) for kind, key in rows}


def run_ids(project: Path, state: str) -> list[str]:
    from openprose.vm.state import open_catalog

    return [info.run_id for info in open_catalog(state, project / ".prose" / "runs").runs()]


# ---------------------------------------------------------------------------- one run


@dataclass
class Reference:
    program: Program
    state: str
    recording: Path
    outputs: dict[str, Any]
    snapshot: dict[str, Any]
    calls: list[tuple[str, str]]
    duration: float  # seconds of an uninterrupted attempt, child start to exit


@dataclass
class Outcome:
    program: str
    state: str
    seed: str
    kills: int = 0
    resumes: int = 0
    fresh_starts: int = 0  # killed before the run existed: started again
    attempts: int = 0
    calls: int = 0
    reexecuted: int = 0  # calls of a step an earlier attempt had called (in flight at a kill)
    delays: list[float] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    known: list[str] = field(default_factory=list)  # KNOWN bugs that explain problems

    def describe(self) -> str:
        delays = ", ".join(f"{d:.3f}" for d in self.delays)
        return (
            f"{self.program} on {self.state}, seed {self.seed!r}, kill delays [{delays}] s, "
            f"modes {self.modes}: " + "; ".join(self.problems)
        )


@dataclass
class Settings:
    delay: float = 0.015  # seconds before each backend answer
    max_kills: int = 3  # per run; the last attempt is left to complete
    again: float = 0.5  # chance that a resumed attempt is killed too
    cli_share: float = 0.3  # attempts through the CLI
    fresh_share: float = 0.05  # attempts in a fresh interpreter (through the CLI)
    timeout: float = 120.0
    # Instead of a random instant: kill the first attempt once this many calls are logged.
    kill_at_call: int | None = None
    forget: bool = False  # the child's journal answers nothing (see _forget_journal)
    postgres_admin: str | None = None  # the cluster's URL: each run gets a database of its own


def _spec(
    program_path: Path,
    recording: Path,
    state: str,
    work: Path,
    attempt: int,
    mode: str,
    delay: float,
    resume: str | None,
) -> dict[str, Any]:
    return {
        "program": str(program_path),
        "recording": str(recording),
        "state": state,
        "runs_root": str(program_path.parent / ".prose" / "runs"),
        "calls": str(work / "calls.jsonl"),
        "attempt": attempt,
        "delay": delay,
        "mode": mode,
        "resume": resume,
        "result": str(work / f"result-{attempt}.json"),
        "forget": False,
    }


def _wait_for_calls(child: Child, log: Path, count: int) -> int | None:
    """Polls the calls log until ``count`` calls are in it (None: the child is still
    running then) or the child exits (its code)."""
    while True:
        code = child.wait(0.002)
        if code is not None:
            return code
        with contextlib.suppress(OSError):
            if log.read_bytes().count(b"\n") >= count:
                return None


def reference(program: Program, state: str, root: Path, settings: Settings) -> Reference:
    """The program recorded, then run once on the replay backend, uninterrupted."""
    recording = record(program, root / "record")
    work = root / "reference"
    main = prepare(program, work, _database(state, settings))
    spec = _spec(main, recording, state, work, 0, "api", settings.delay, None)
    child = Child(spec, fresh=False)
    code = child.wait(settings.timeout)
    duration = time.monotonic() - child.started
    assert code == 0, f"the reference run of {program.name} exited with {code}"
    result = json.loads(Path(spec["result"]).read_text(encoding="utf-8"))
    assert result["status"] == "success", f"{program.name} on replay: {result['error']}"
    (run_id,) = run_ids(main.parent, state)
    calls = [(kind, key) for _, kind, key in _calls(work)]
    return Reference(
        program, state, recording, result["outputs"], snapshot(main.parent, run_id), calls, duration
    )


def _calls(work: Path) -> list[tuple[int, str, str]]:
    path = work / "calls.jsonl"
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    # A kill can cut the last line short; what is cut was never a call the process made.
    calls = []
    for line in lines:
        with contextlib.suppress(ValueError):
            attempt, kind, key = json.loads(line)
            calls.append((int(attempt), str(kind), str(key)))
    return calls


def killed_run(ref: Reference, root: Path, seed: str, settings: Settings) -> Outcome:
    """One run of ``ref``'s program killed at random instants and resumed to its end,
    compared with ``ref``."""
    rng = random.Random(seed)
    outcome = Outcome(ref.program.name, ref.state, seed)
    database = _database(ref.state, settings)
    main = prepare(ref.program, root, database)
    project = main.parent
    run_id: str | None = None
    journaled: dict[int, set[tuple[str, str]]] = {}  # the journal when attempt n began
    result: dict[str, Any] | None = None
    for attempt in range(settings.max_kills + 2):
        outcome.attempts += 1
        kill = attempt < settings.max_kills and (attempt == 0 or rng.random() < settings.again)
        draw = rng.random()
        mode = "api"
        fresh = draw < settings.fresh_share
        if fresh or draw < settings.fresh_share + settings.cli_share:
            mode = "cli"
        outcome.modes.append(mode + ("/fresh" if fresh else ""))
        journaled[attempt] = journal_steps(project, run_id, ref.state) if run_id else set()
        if run_id is not None:
            outcome.resumes += 1
        spec = _spec(main, ref.recording, ref.state, root, attempt, mode, settings.delay, run_id)
        spec["forget"] = settings.forget
        # A fresh interpreter takes a few hundred milliseconds to start: give it that.
        span = ref.duration + (0.4 if fresh else 0.0)
        delay = rng.uniform(0.0, span) if kill else settings.timeout
        child = Child(spec, fresh)
        if settings.kill_at_call is not None and attempt == 0:
            code = _wait_for_calls(child, root / "calls.jsonl", settings.kill_at_call)
            delay = time.monotonic() - child.started
        else:
            code = child.wait(delay)
        if code is None:
            if not kill:
                child.kill()
                outcome.problems.append(f"attempt {attempt} did not finish in {delay:.0f} s")
                break
            outcome.delays.append(delay)
            outcome.kills += 1
            child.kill()
            if run_id is None:
                found = run_ids(project, ref.state)
                if len(found) > 1:
                    outcome.problems.append(f"one run made {len(found)} runs: {found}")
                    break
                if found:
                    run_id = found[0]
                else:
                    outcome.fresh_starts += 1
            continue
        if kill:
            outcome.delays.append(-delay)  # finished before the kill: noted, not a kill
        out = Path(spec["result"] + ".out")
        tail = out.read_text(encoding="utf-8", errors="replace")[-800:] if out.exists() else ""
        if code != 0 and not Path(spec["result"]).exists():
            outcome.problems.append(f"attempt {attempt} ({mode}) exited {code}: {tail}")
            break
        result = json.loads(Path(spec["result"]).read_text(encoding="utf-8"))
        if result["status"] != "success":
            outcome.problems.append(
                f"attempt {attempt} ({mode}) failed: {result['error']}; output: {tail}"
            )
            break
        if run_id is None:
            found = run_ids(project, ref.state)
            run_id = found[0] if len(found) == 1 else None
            if run_id is None:
                outcome.problems.append(f"a completed run left runs {found}")
                break
        break
    if outcome.problems or result is None or run_id is None:
        if not outcome.problems:
            outcome.problems.append("never completed")
    else:
        _compare(ref, outcome, result, snapshot(project, run_id))
        _check_calls(outcome, _calls(root), journaled)
    classify(outcome)
    if database is not None and settings.postgres_admin is not None:
        drop_database(settings.postgres_admin, database)
    return outcome


def _database(state: str, settings: Settings) -> str | None:
    if state != "postgres":
        return None
    assert settings.postgres_admin is not None, "postgres needs Settings.postgres_admin"
    return new_database(settings.postgres_admin)


# Product bugs this harness found and that are still open, each reproduced by a strict
# xfail test in test_kill_resume.py.  A run whose every problem one of them explains counts
# as "known", not as a failure, so that the campaign keeps watching for anything new.
KNOWN: dict[str, str] = {}  # none open: the five found are fixed (test_kill_resume.py)


def _known(problem: str, racy: bool) -> str | None:
    return None


def classify(outcome: Outcome) -> None:
    """Moves the problems a known bug explains from ``problems`` to ``known``."""
    racy = PROGRAMS[outcome.program].racy
    left = []
    for problem in outcome.problems:
        bug = _known(problem, racy)
        if bug is None:
            left.append(problem)
        elif bug not in outcome.known:
            outcome.known.append(bug)
    outcome.problems = left


def _compare(ref: Reference, outcome: Outcome, result: dict[str, Any], got: dict[str, Any]) -> None:
    if result["outputs"] != ref.outputs:
        outcome.problems.append(f"outputs differ: {result['outputs']} != {ref.outputs}")
    want = ref.snapshot
    for name in sorted(set(want) | set(got)):
        if name not in got:
            outcome.problems.append(f"missing {name}")
        elif name not in want:
            outcome.problems.append(f"extra {name}")
        elif isinstance(want[name], dict):
            _compare_tables(ref, outcome, name, want[name], got[name])
        elif want[name] != got[name]:
            outcome.problems.append(f"{name} differs:\n{got[name]!r}\n!= {want[name]!r}")


def _compare_tables(
    ref: Reference, outcome: Outcome, name: str, want: dict[str, Any], got: dict[str, Any]
) -> None:
    for table in sorted(set(want) | set(got)):
        if table not in got or table not in want:
            outcome.problems.append(f"{name}: table {table} only on one side")
            continue
        rows, expected = got[table]["rows"], want[table]["rows"]
        if table.endswith("journal_runs") and not rows:
            outcome.problems.append(f"{name}:{table} has no row for the run")
            continue
        if len(set(rows)) != len(rows):
            outcome.problems.append(f"{name}:{table} has duplicated rows")
        if ref.program.racy and table.endswith("journal_steps"):
            # Cancelled losers may or may not have been journaled: every row must still be
            # one the uninterrupted run would have written (the replay answers).
            unexpected = set(rows) - set(expected)
            columns = got[table]["columns"]
            known = {_step_id(columns, r) for r in expected}
            strange = [r for r in unexpected if _step_id(columns, r) in known]
            if strange:
                outcome.problems.append(f"{name}:{table} rows differ: {strange[:3]}")
            continue
        if ref.program.racy and table.endswith("journal_runs"):
            continue  # its counters count the losers that were journaled
        if ref.program.racy and table.endswith("journal_commits"):
            # A loser numbers its anonymous session only if it got that far before the
            # race was decided: those numbers are timing, not state (no binding uses them).
            # Its calls are accounted (@account:, vm/accounting.py) only if they ended before
            # then, like its journal_steps rows: each must still be the uninterrupted run's.
            accounted = {(r[1], r[2]): r for r in expected if str(r[2]).startswith("@account:")}
            strange = [
                r
                for r in rows
                if str(r[2]).startswith("@account:") and accounted.get((r[1], r[2]), r) != r
            ]
            if strange:
                outcome.problems.append(f"{name}:{table} accounting differs: {strange[:3]}")
            timing = ("@anon:", "@account:")
            rows = [r for r in rows if not str(r[2]).startswith(timing)]
            expected = [r for r in expected if not str(r[2]).startswith(timing)]
        if rows != expected:
            missing = [r for r in expected if r not in rows][:3]
            extra = [r for r in rows if r not in expected][:3]
            outcome.problems.append(f"{name}:{table} differs: missing {missing}, extra {extra}")


def _step_id(columns: list[str], row: tuple[Any, ...]) -> tuple[Any, ...]:
    return (row[columns.index("kind")], row[columns.index("key")])


def _check_calls(
    outcome: Outcome,
    calls: list[tuple[int, str, str]],
    journaled: dict[int, set[tuple[str, str]]],
) -> None:
    seen: set[tuple[str, str]] = set()
    per_attempt: Counter[tuple[int, str, str]] = Counter(calls)
    for (attempt, kind, key), n in sorted(per_attempt.items()):
        if n > 1:
            outcome.problems.append(f"attempt {attempt} called {kind} {key} {n} times")
    for attempt, kind, key in calls:
        outcome.calls += 1
        step = (kind, key)
        if step in journaled.get(attempt, set()):
            outcome.problems.append(
                f"attempt {attempt} called {kind} {key}, journaled before it began"
            )
        if step in seen:
            outcome.reexecuted += 1
        seen.add(step)


# ---------------------------------------------------------------------------- many runs


@dataclass
class Totals:
    runs: int = 0
    kills: int = 0
    resumes: int = 0
    fresh_starts: int = 0
    attempts: int = 0
    calls: int = 0
    reexecuted: int = 0
    finished_before_kill: int = 0
    cli_attempts: int = 0
    fresh_attempts: int = 0
    failures: list[Outcome] = field(default_factory=list)
    known: Counter[str] = field(default_factory=Counter)
    per_program: Counter[str] = field(default_factory=Counter)

    def add(self, outcome: Outcome) -> None:
        self.runs += 1
        self.kills += outcome.kills
        self.resumes += outcome.resumes
        self.fresh_starts += outcome.fresh_starts
        self.attempts += outcome.attempts
        self.calls += outcome.calls
        self.reexecuted += outcome.reexecuted
        self.finished_before_kill += sum(1 for d in outcome.delays if d < 0)
        self.cli_attempts += sum(1 for m in outcome.modes if m.startswith("cli"))
        self.fresh_attempts += sum(1 for m in outcome.modes if m.endswith("fresh"))
        self.per_program[outcome.program] += 1
        self.known.update(outcome.known)
        if outcome.problems:
            self.failures.append(outcome)

    def summary(self, state: str) -> str:
        return (
            f"{state}: {self.runs} runs, {self.kills} kills, {self.resumes} resumes, "
            f"{self.fresh_starts} killed before the run existed, {self.attempts} attempts "
            f"({self.cli_attempts} through the CLI, {self.fresh_attempts} in a fresh "
            f"interpreter), {self.finished_before_kill} finished before their kill, "
            f"{self.calls} backend calls, {self.reexecuted} steps re-executed (in flight at "
            f"a kill), {len(self.failures)} runs with new problems, runs hitting known bugs: "
            f"{dict(self.known) or 'none'}"
        )


def campaign(
    state: str,
    root: Path,
    runs: int,
    *,
    seed: int,
    programs: Iterable[str] | None = None,
    settings: Settings | None = None,
    workers: int = 2,
    progress: Callable[[Outcome], None] | None = None,
) -> tuple[Totals, dict[str, Reference]]:
    """``runs`` killed-and-resumed runs spread over ``programs`` (all by default), two
    children at a time."""
    settings = settings or Settings()
    names = list(programs or PROGRAMS)
    references = {
        name: reference(PROGRAMS[name], state, root / "ref" / name, settings) for name in names
    }
    jobs = [(names[n % len(names)], n) for n in range(runs)]
    totals = Totals()

    def one(job: tuple[str, int]) -> Outcome:
        name, n = job
        return killed_run(
            references[name], root / "runs" / f"{n:04d}", f"{seed}:{name}:{n}", settings
        )

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for outcome in pool.map(one, jobs):
            totals.add(outcome)
            if progress is not None:
                progress(outcome)
    return totals, references
