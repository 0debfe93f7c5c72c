"""What the server publishes as a code's link: the reference on GitHub at this version's
release tag, or the page the docs-url setting names (none for "")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types

from openprose.reference import diagnostics_reference

Session = Any  # the conftest's Session: a live client plus position helpers

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = "session: ghost\n"  # E007
ANCHOR = "#e007-undefined-agent-reference"


def href(diagnostics: list[types.Diagnostic]) -> str | None:
    (e007,) = diagnostics
    return e007.code_description.href if e007.code_description is not None else None


async def test_a_code_links_to_the_reference_of_this_version(session: Session) -> None:
    _, diagnostics = await session.open(TEXT)
    assert href(diagnostics) == diagnostics_reference() + ANCHOR
    assert diagnostics_reference().startswith("https://github.com/")


async def test_the_docs_url_setting_moves_or_removes_the_links(session: Session) -> None:
    uri, _ = await session.open(TEXT)

    async def settle(expected: str | None) -> None:
        # Settings are applied asynchronously: pull until the diagnostics reflect them.
        while href(await session.pull(uri)) != expected:
            await asyncio.sleep(0.01)

    def configure(url: str) -> None:
        session.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"prose": {"docs-url": url}})
        )

    try:
        configure("https://docs.example/diagnostics.html")
        await asyncio.wait_for(settle("https://docs.example/diagnostics.html" + ANCHOR), 10)
        configure("")
        await asyncio.wait_for(settle(None), 10)
        configure("javascript:alert(1)")  # not a link a client should open: ignored
        configure("https://docs.example/v2.html")
        await asyncio.wait_for(settle("https://docs.example/v2.html" + ANCHOR), 10)
    finally:
        configure(diagnostics_reference())
        await asyncio.wait_for(settle(diagnostics_reference() + ANCHOR), 10)
