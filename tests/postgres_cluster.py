"""A throwaway PostgreSQL cluster for the tests of the ``postgres`` state backend.

``initdb`` and ``pg_ctl`` (from PATH or ``/usr/lib/postgresql/*/bin``) make and start a
cluster in a temporary directory, listening only on 127.0.0.1 on a free port, without a
Unix socket; it is stopped and deleted when the session ends.  PostgreSQL refuses to run as
root, so as root the cluster belongs to Debian's ``postgres`` user (``runuser``).  Passwords
are checked on TCP (scram-sha-256), so the tests see real URLs with a password in them.

Use it from a conftest or a test module::

    from tests.postgres_cluster import postgres_db_url, postgres_url

``postgres_url`` is the cluster's administrative URL (session scope); ``postgres_db_url`` is
a fresh database for one test, dropped after it.  Without PostgreSQL or psycopg the tests
skip, and fail where ``CI`` is set (CI must run them).

The cluster trades durability for speed (``fsync=off``): the tests kill clients, never the
server.  ``Cluster(durable=True)`` keeps PostgreSQL's defaults, for figures.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

INSTALL = "apt-get install postgresql"
USER = "postgres"  # the database superuser, and the OS user when running as root
SUPERUSER_PASSWORD = "throwaway-" + secrets.token_hex(8)


class Unavailable(Exception):
    """PostgreSQL (or psycopg) is not installed, or the cluster cannot be started."""


def find_binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = glob.glob(f"/usr/lib/postgresql/*/bin/{name}")
    candidates.sort(key=lambda path: _version(path), reverse=True)
    return candidates[0] if candidates else None


def _version(path: str) -> tuple[int, ...]:
    part = Path(path).parent.parent.name
    return tuple(int(p) for p in part.split(".") if p.isdigit())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _reachable(path: Path, uid: int, gid: int) -> bool:
    """Whether ``uid`` can traverse every directory down to ``path``."""
    for directory in [path, *path.parents]:
        info = directory.stat()
        if info.st_uid == uid:
            bit = 0o100
        elif info.st_gid == gid:
            bit = 0o010
        else:
            bit = 0o001
        if not info.st_mode & bit:
            return False
    return True


class Cluster:
    """One cluster; ``start`` and ``stop`` it, or use it as a context manager."""

    def __init__(self, durable: bool = False) -> None:
        self.durable = durable
        self.initdb = find_binary("initdb")
        self.pg_ctl = find_binary("pg_ctl")
        if not self.initdb or not self.pg_ctl:
            raise Unavailable(f"PostgreSQL is not installed ({INSTALL})")
        self.prefix: list[str] = []
        self.owner: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            try:
                self.owner = pwd.getpwnam(USER)
            except KeyError:
                raise Unavailable(
                    f"running as root, and there is no {USER!r} user to run PostgreSQL as "
                    f"({INSTALL} creates it)"
                ) from None
            runuser = shutil.which("runuser")
            if runuser is None:
                raise Unavailable("running as root, and runuser is not installed")
            self.prefix = [runuser, "-u", USER, "--"]
        self.directory: Path | None = None
        self.port = 0

    @property
    def data(self) -> Path:
        assert self.directory is not None
        return self.directory / "data"

    def url(self, database: str = "postgres", password: str | None = None) -> str:
        secret = SUPERUSER_PASSWORD if password is None else password
        return f"postgresql://{USER}:{secret}@127.0.0.1:{self.port}/{database}"

    def _run(self, *command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.prefix, *command],
            cwd=self.directory,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def _temporary_directory(self) -> Path:
        base = Path(tempfile.gettempdir())
        if self.owner is not None and not _reachable(base, self.owner.pw_uid, self.owner.pw_gid):
            base = Path("/tmp")  # TMPDIR may be inside a checkout the postgres user cannot enter
        directory = Path(tempfile.mkdtemp(prefix="openprose-pg-", dir=base))
        if self.owner is not None:
            os.chown(directory, self.owner.pw_uid, self.owner.pw_gid)
        return directory

    def start(self) -> Cluster:
        self.directory = self._temporary_directory()
        password_file = self.directory / "password"
        password_file.write_text(SUPERUSER_PASSWORD + "\n")
        if self.owner is not None:
            os.chown(password_file, self.owner.pw_uid, self.owner.pw_gid)
        done = self._run(
            str(self.initdb),
            "-D",
            str(self.data),
            "-U",
            USER,
            f"--pwfile={password_file}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--encoding=UTF8",
            "--no-locale",
            "--no-sync",
        )
        password_file.unlink()
        if done.returncode != 0:
            self.stop()
            raise Unavailable(f"initdb failed: {done.stderr.strip() or done.stdout.strip()}")
        settings = [
            "listen_addresses=127.0.0.1",
            "unix_socket_directories=''",
            # docs/scale.md: three workers of 16 items each need up to about 160 (DBOS's
            # pool, the runs' and the items' own); the default of 100 is for one machine.
            "max_connections=200",
        ]
        if not self.durable:
            settings += ["fsync=off", "synchronous_commit=off", "full_page_writes=off"]
        for attempt in range(5):
            self.port = free_port()
            options = " ".join(f"-c {s}" for s in [f"port={self.port}", *settings])
            log = self.directory / "server.log"
            done = self._run(
                str(self.pg_ctl), "-D", str(self.data), "-l", str(log), "-o", options, "-w", "start"
            )
            if done.returncode == 0:
                return self
            if attempt == 4:  # the port was taken between free_port and the bind, five times
                text = log.read_text(errors="replace") if log.exists() else done.stderr
                self.stop()
                raise Unavailable(f"pg_ctl start failed: {text.strip()[-2000:]}")
        raise AssertionError("unreachable")  # pragma: no cover

    def stop(self) -> None:
        if self.directory is None:
            return
        if (self.data / "postmaster.pid").exists():
            self._run(str(self.pg_ctl), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory = None

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI runs the PostgreSQL tests", pytrace=False)
    pytest.skip(reason)


# A test module and a conftest may both import the fixtures, and a conftest may import
# `postgres_db_url` alone: the cluster is one per pytest process, started by whichever
# fixture needs it first and stopped when pytest ends.
_shared: dict[str, Cluster | str] = {}
_shared_lock = threading.Lock()


def session_cluster(config: pytest.Config) -> Cluster:
    """The pytest process's cluster; skips (fails under CI) where there can be none."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (pip install 'openprose[postgres]')")
    with _shared_lock:
        found = _shared.get("cluster")
        if found is None:
            try:
                found = Cluster().start()
            except Unavailable as error:
                found = str(error)
            _shared["cluster"] = found
            if isinstance(found, Cluster):
                config.add_cleanup(found.stop)
    if isinstance(found, str):
        _unavailable(found)
    return found


@pytest.fixture(scope="session")
def postgres_url(request: pytest.FixtureRequest) -> str:
    """The administrative URL of the session's throwaway cluster (database ``postgres``)."""
    return session_cluster(request.config).url()


_databases = itertools.count(1)


@pytest.fixture
def postgres_db_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh, empty database for one test (dropped after it)."""
    import psycopg

    postgres_url = session_cluster(request.config).url()
    name = f"t{os.getpid()}_{next(_databases)}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield postgres_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(postgres_url, autocommit=True) as admin,
        ):
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
