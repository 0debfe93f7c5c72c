"""The suite's guard (tests/conftest.py): no provider keys, no traffic off this machine."""

from __future__ import annotations

import os
import socket

import pytest


def test_provider_variables_are_unset() -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        assert name not in os.environ


@pytest.mark.parametrize(
    "address", [("192.0.2.1", 443), ("2001:db8::1", 443, 0, 0), ("api.openai.com", 443)]
)
def test_a_connection_off_this_machine_is_refused(address: tuple) -> None:
    family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    with socket.socket(family) as sock, pytest.raises(RuntimeError, match="may not connect"):
        sock.connect(address)
    with pytest.raises(RuntimeError, match="may not connect"):
        socket.create_connection(address[:2], timeout=0.1)


def test_loopback_is_allowed() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=1):
            pass
