"""Quick fixes and "fix all" follow the rules the diagnostics were reported under (the
project's configuration file, else the editor's settings), and the diagnostics the client
says it shows."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

Session = Any  # the conftest's Session: a live client plus position helpers

pytestmark = pytest.mark.asyncio(loop_scope="module")

LOOP = 'loop:\n  session "Keep going"\n'  # W018, whose fix is safe: a fix-all candidate
LOOP_RANGE = types.Range(
    start=types.Position(line=0, character=0), end=types.Position(line=0, character=4)
)


def uri_in(session: Session, folder: str, config: str | None) -> str:
    """A document URI in a folder of the workspace, with ``config`` as its prose.toml."""
    directory = session.root / folder
    directory.mkdir(exist_ok=True)
    if config is not None:
        (directory / "prose.toml").write_text(config, encoding="utf-8")
    return (directory / f"{Path(session.uri()).name}").as_uri()


async def actions(
    session: Session,
    uri: str,
    diagnostics: list[types.Diagnostic],
    only: Sequence[types.CodeActionKind | str] | None = None,
    range: types.Range = LOOP_RANGE,
) -> list[types.CodeAction]:
    found = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=session.doc(uri),
            range=range,
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        )
    )
    return [a for a in found or [] if isinstance(a, types.CodeAction)]


async def test_a_code_the_project_ignores_gets_no_quick_fix_and_no_fix_all(
    session: Session,
) -> None:
    checked = uri_in(session, "checked", None)
    _, diagnostics = await session.open(LOOP, checked)
    assert [d.code for d in diagnostics] == ["W018"]
    assert [a.title for a in await actions(session, checked, [])] == [
        "Add `(max: 10)`",
        "Fix 1 problem that can be fixed safely",
    ]

    ignoring = uri_in(session, "ignoring", 'ignore = ["W018"]\n')
    _, diagnostics = await session.open(LOOP, ignoring)
    assert diagnostics == []
    assert await actions(session, ignoring, []) == []
    assert await actions(session, ignoring, [], only=[types.CodeActionKind.SourceFixAll]) == []


async def test_fix_all_follows_a_change_of_the_editor_settings(session: Session) -> None:
    """The same text and file under other settings: the fix-all answer is not reused."""
    uri = uri_in(session, "settings", None)
    await session.open(LOOP, uri)
    fix_all = [types.CodeActionKind.SourceFixAll]
    assert len(await actions(session, uri, [], only=fix_all)) == 1

    async def settle(codes: list[str]) -> None:
        # Settings are applied asynchronously: pull until the diagnostics reflect them.
        while [d.code for d in await session.pull(uri)] != codes:
            await asyncio.sleep(0.01)

    change = types.DidChangeConfigurationParams(settings={"prose": {"ignore": ["W018"]}})
    session.client.workspace_did_change_configuration(change)
    try:
        await asyncio.wait_for(settle([]), 10)
        assert await actions(session, uri, [], only=fix_all) == []
        assert await actions(session, uri, []) == []
    finally:
        session.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"prose": {}})
        )
        await asyncio.wait_for(settle(["W018"]), 10)


async def test_quick_fixes_are_for_the_diagnostics_the_client_shows(session: Session) -> None:
    text = "session: scribe\n" + LOOP  # E007 on line 0, W018 on line 1
    uri, diagnostics = await session.open(text, uri_in(session, "shown", None))
    e007 = next(d for d in diagnostics if d.code == "E007")
    everything = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=3, character=0)
    )
    # Asked with one diagnostic (a fix for this problem): no fix of the other one.
    found = await actions(
        session, uri, [e007], only=[types.CodeActionKind.QuickFix], range=everything
    )
    assert found and all(list(a.diagnostics or []) == [e007] for a in found)
    # Another tool's diagnostic is no reason to offer less: ours are found as usual.
    other = types.Diagnostic(range=e007.range, message="spelling", source="speller", code="S1")
    found = await actions(
        session, uri, [other], only=[types.CodeActionKind.QuickFix], range=everything
    )
    assert {"Add `(max: 10)`"} <= {a.title for a in found}
