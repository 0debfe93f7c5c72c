"""The throwaway PostgreSQL cluster of the postgres state tests: where it finds PostgreSQL,
and what a machine without it does (skip locally, fail under CI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import postgres_cluster
from tests.postgres_cluster import Cluster, Unavailable, session_cluster


@pytest.fixture
def no_postgresql(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres_cluster, "find_binary", lambda name: None)
    monkeypatch.setattr(postgres_cluster, "_shared", {})


@pytest.mark.usefixtures("no_postgresql")
def test_without_postgresql_the_cluster_says_how_to_install_it() -> None:
    with pytest.raises(Unavailable, match="apt-get install postgresql"):
        Cluster()


@pytest.mark.usefixtures("no_postgresql")
def test_without_postgresql_the_tests_skip_locally(
    monkeypatch: pytest.MonkeyPatch, pytestconfig: pytest.Config
) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install postgresql"):
        session_cluster(pytestconfig)


@pytest.mark.usefixtures("no_postgresql")
def test_without_postgresql_the_tests_fail_under_ci(
    monkeypatch: pytest.MonkeyPatch, pytestconfig: pytest.Config
) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"apt-get install postgresql.*CI runs"):
        session_cluster(pytestconfig)


def test_binaries_are_found_under_debians_versioned_directories(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(postgres_cluster.shutil, "which", lambda name: None)
    found = ["/usr/lib/postgresql/9.6/bin/initdb", "/usr/lib/postgresql/16/bin/initdb"]
    monkeypatch.setattr(postgres_cluster.glob, "glob", lambda pattern: list(found))
    assert postgres_cluster.find_binary("initdb") == "/usr/lib/postgresql/16/bin/initdb"


def test_the_cluster_listens_on_loopback_only(postgres_url: str) -> None:
    import psycopg

    with psycopg.connect(postgres_url) as db:
        shown = db.execute("SHOW listen_addresses").fetchone()
        sockets = db.execute("SHOW unix_socket_directories").fetchone()
        user = db.execute("SELECT current_user").fetchone()
    assert shown == ("127.0.0.1",) and sockets == ("",) and user == ("postgres",)
    cluster = postgres_cluster._shared["cluster"]
    assert isinstance(cluster, Cluster) and cluster.directory is not None
    assert Path(cluster.directory).stat().st_uid != 0 or cluster.owner is None


def test_a_stopped_cluster_leaves_nothing_behind(postgres_url: str) -> None:
    import socket

    cluster = Cluster().start()
    directory, port = cluster.directory, cluster.port
    assert directory is not None and (directory / "data" / "postmaster.pid").is_file()
    cluster.stop()
    assert not directory.exists()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0


postgres_url = postgres_cluster.postgres_url
