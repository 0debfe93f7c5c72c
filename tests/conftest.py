"""A guard for the whole suite: no real keys, and no traffic beyond this machine.

The real backends are tested against loopback fake servers; a test that reached a provider
by mistake would spend money and flake, so any connection outside 127.0.0.0/8 and ::1 fails.

It also selects the corpus tests (tests/corpus/location.py says how).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.corpus import location as corpus_location

_PROVIDER_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
)


def _loopback(address: Any) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # Unix sockets and other local families
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{corpus_location.MARK}: reads the shared corpus (../shared/corpus)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    corpus_location.select(config, items)


class NonLoopbackConnection(RuntimeError):
    pass


@pytest.fixture(autouse=True)
def _no_real_traffic(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in _PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    connect = socket.socket.connect
    connect_ex = socket.socket.connect_ex
    create_connection = socket.create_connection

    def checked(address: Any) -> None:
        if not _loopback(address):
            raise NonLoopbackConnection(f"tests may not connect to {address!r}")

    def guarded_connect(self: socket.socket, address: Any) -> None:
        checked(address)
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        checked(address)
        return connect_ex(self, address)

    def guarded_create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        checked(address)
        return create_connection(address, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "create_connection", guarded_create_connection)
    yield
