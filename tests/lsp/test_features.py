"""Every capability of prose-ls end to end, for VS Code and Neovim client capabilities and for
UTF-16 and UTF-8 position encodings (see conftest.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.support.characters import ASTRAL
from tests.support.edits import apply_edits, from_lsp

Session = Any  # the conftest's Session: a live client plus position helpers

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROGRAM = (
    "agent researcher:\n"  # 0
    "  model: sonnet\n"  # 1
    '  prompt: "You research"\n'  # 2
    "\n"  # 3
    "block review(topic):\n"  # 4
    "  session: researcher\n"  # 5
    '    prompt: "Review {topic}"\n'  # 6
    "\n"  # 7
    'let notes = session "Collect notes"\n'  # 8
    "do review(notes)\n"  # 9
    'session "Summarise {notes}"\n'  # 10
    "  context: notes\n"  # 11
)


# ---------------------------------------------------------------- sync and diagnostics


async def test_diagnostics_follow_edits_and_carry_code_links(session: Session) -> None:
    text = f'session "{ASTRAL} ok"\nsession: ghost\n'
    uri, diagnostics = await session.open(text)
    assert [d.code for d in diagnostics] == ["E007"]
    (diagnostic,) = diagnostics
    assert diagnostic.range.start == session.position(text, 1, 9)
    assert diagnostic.code_description is not None
    assert diagnostic.code_description.href.endswith("#e007-undefined-agent-reference")
    # Insert a bad escape right after the astral character: positions in the client's units.
    where = session.position(text, 0, 10)
    diagnostics = await session.change(uri, 2, where, where, "\\q")
    codes = sorted(d.code for d in diagnostics)
    assert codes == ["E002", "E007"]
    e002 = next(d for d in diagnostics if d.code == "E002")
    assert e002.range.start == where


async def test_clean_document_gets_an_empty_list_and_close_clears(session: Session) -> None:
    uri, diagnostics = await session.open('session "fine"\n')
    assert diagnostics == []
    if session.pulls:
        return
    waiter = asyncio.ensure_future(session.published(uri, None))
    session.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=session.doc(uri))
    )
    assert await waiter == []


async def test_related_information_points_at_the_first_definition(session: Session) -> None:
    text = 'let x = session "a"\nlet x = session "b"\n'
    _, diagnostics = await session.open(text)
    (duplicate,) = diagnostics
    assert duplicate.code == "E019"
    assert duplicate.related_information
    assert duplicate.related_information[0].location.range.start == session.position(text, 0, 4)


async def test_unnecessary_tag(session: Session) -> None:
    _, diagnostics = await session.open('session "a"\n  backoff: linear\n')
    (w031,) = [d for d in diagnostics if d.code == "W031"]
    assert list(w031.tags or []) == [types.DiagnosticTag.Unnecessary]


# ---------------------------------------------------------------- completion, hover, help


async def test_completion_of_agents_after_session_colon(session: Session) -> None:
    text, position = session.at_cursor(PROGRAM + "session: ‸\n")
    uri, _ = await session.open(text)
    result = await session.client.text_document_completion_async(
        types.CompletionParams(text_document=session.doc(uri), position=position)
    )
    labels = [item.label for item in (result.items if result else [])]
    assert "researcher" in labels


async def test_completion_of_properties_and_models(session: Session) -> None:
    text, position = session.at_cursor("agent writer:\n  model: ‸\n")
    uri, _ = await session.open(text)
    result = await session.client.text_document_completion_async(
        types.CompletionParams(text_document=session.doc(uri), position=position)
    )
    labels = {item.label for item in (result.items if result else [])}
    assert {"sonnet", "opus", "haiku"} <= labels


async def test_completion_of_use_paths(session: Session) -> None:
    for line, expected in [
        ('use "‸"', {("library.prose", "File"), ("tools/", "Folder")}),
        ('use "./tools/‸"', {("helpers.prose", "File")}),
    ]:
        text, position = session.at_cursor(line + "\n")
        uri, _ = await session.open(text)
        result = await session.client.text_document_completion_async(
            types.CompletionParams(text_document=session.doc(uri), position=position)
        )
        found = {
            (item.label, types.CompletionItemKind(item.kind).name if item.kind else "")
            for item in (result.items if result else [])
        }
        assert found == expected


async def test_hover_on_an_agent(session: Session) -> None:
    uri, _ = await session.open(PROGRAM)
    hover = await session.client.text_document_hover_async(
        types.HoverParams(text_document=session.doc(uri), position=session.position(PROGRAM, 5, 12))
    )
    assert hover is not None
    assert "researcher" in hover.contents.value and "sonnet" in hover.contents.value


async def test_hover_after_an_astral_character(session: Session) -> None:
    text = f'let notes = session "{ASTRAL}"\nsession "{ASTRAL} {{notes}}"\n'
    uri, _ = await session.open(text)
    hover = await session.client.text_document_hover_async(
        types.HoverParams(text_document=session.doc(uri), position=session.position(text, 1, 12))
    )
    assert hover is not None and "notes" in hover.contents.value
    assert hover.range is not None
    assert hover.range.start.character <= session.position(text, 1, 12).character


async def test_signature_help_and_inlay_hints(session: Session) -> None:
    text, position = session.at_cursor(PROGRAM + "do review(‸\n")
    uri, _ = await session.open(text)
    help = await session.client.text_document_signature_help_async(
        types.SignatureHelpParams(text_document=session.doc(uri), position=position)
    )
    assert help is not None and "topic" in help.signatures[0].label
    hints = await session.client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=session.doc(uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=20, character=0)
            ),
        )
    )
    assert hints is not None
    assert any(h.label == "topic:" for h in hints)


# ---------------------------------------------------------------- navigation and rename


async def test_definition_references_and_highlights(session: Session) -> None:
    uri, _ = await session.open(PROGRAM)
    use = session.position(PROGRAM, 11, 11)  # `notes` in context
    found = await session.client.text_document_definition_async(
        types.DefinitionParams(text_document=session.doc(uri), position=use)
    )
    assert found and found[0].range.start == session.position(PROGRAM, 8, 4)
    refs = await session.client.text_document_references_async(
        types.ReferenceParams(
            text_document=session.doc(uri),
            position=use,
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert refs is not None and len(refs) >= 4  # definition, do argument, interpolation, context
    highlights = await session.client.text_document_document_highlight_async(
        types.DocumentHighlightParams(text_document=session.doc(uri), position=use)
    )
    assert highlights and any(h.kind == types.DocumentHighlightKind.Write for h in highlights)


async def test_rename_a_variable_everywhere(session: Session) -> None:
    uri, _ = await session.open(PROGRAM)
    where = session.position(PROGRAM, 8, 5)
    prepared = await session.client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=session.doc(uri), position=where)
    )
    assert prepared is not None
    edit = await session.client.text_document_rename_async(
        types.RenameParams(text_document=session.doc(uri), position=where, new_name="jottings")
    )
    assert edit is not None and edit.changes is not None
    renamed = apply_edits(PROGRAM, from_lsp(PROGRAM, edit.changes[uri], session.encoding))
    assert renamed.count("jottings") == 4  # definition, argument, interpolation, context
    assert renamed.count("notes") == 1  # only the prompt text "Collect notes" keeps the word


async def test_rename_refuses_a_keyword_with_a_message(session: Session) -> None:
    uri, _ = await session.open(PROGRAM)
    keyword = session.position(PROGRAM, 8, 1)  # `let`
    with pytest.raises(JsonRpcException) as refused:
        await session.client.text_document_prepare_rename_async(
            types.PrepareRenameParams(text_document=session.doc(uri), position=keyword)
        )
    assert "keyword" in refused.value.message.lower()


# ---------------------------------------------------------------- structure


async def test_document_and_workspace_symbols(session: Session) -> None:
    uri, _ = await session.open(PROGRAM)
    symbols = await session.client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=session.doc(uri))
    )
    names = {s.name for s in symbols or []}
    assert {"researcher", "review", "notes"} <= names
    found: list[types.WorkspaceSymbol] = []
    for _ in range(50):  # the workspace is indexed in the background
        found = list(
            await session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="librar"))
            or []
        )
        if found:
            break
        await asyncio.sleep(0.1)
    assert any(s.name == "librarian" for s in found)


async def test_folding_and_selection_ranges(session: Session) -> None:
    uri, _ = await session.open(PROGRAM)
    folds = await session.client.text_document_folding_range_async(
        types.FoldingRangeParams(text_document=session.doc(uri))
    )
    assert folds and any(f.start_line == 0 and f.end_line == 2 for f in folds)
    chains = await session.client.text_document_selection_range_async(
        types.SelectionRangeParams(
            text_document=session.doc(uri), positions=[session.position(PROGRAM, 6, 20)]
        )
    )
    assert chains and chains[0].parent is not None


async def test_semantic_tokens_full_and_range(session: Session) -> None:
    uri, _ = await session.open(PROGRAM)
    full = await session.client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=session.doc(uri))
    )
    assert full is not None and full.data and len(full.data) % 5 == 0
    part = await session.client.text_document_semantic_tokens_range_async(
        types.SemanticTokensRangeParams(
            text_document=session.doc(uri),
            range=types.Range(
                start=types.Position(line=8, character=0), end=types.Position(line=9, character=0)
            ),
        )
    )
    assert part is not None and 0 < len(part.data) < len(full.data)


async def test_document_links_for_local_use_paths(session: Session) -> None:
    text = 'use "./library.prose" as library\nlet r = library(topic: "x")\n'
    uri, _ = await session.open(text)
    links = await session.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=session.doc(uri))
    )
    assert links and links[0].target.endswith("library.prose")
    # The tooltip goes only to a client that says it shows one (pytest-lsp warns otherwise).
    capabilities = session.client.capabilities
    text_document = capabilities.text_document if capabilities else None
    link_capabilities = text_document.document_link if text_document else None
    shows_tooltips = bool(link_capabilities and link_capabilities.tooltip_support)
    assert (links[0].tooltip is not None) == shows_tooltips


# ---------------------------------------------------------------- formatting and actions


async def test_document_and_range_formatting(session: Session) -> None:
    text = "agent  writer :\n    model:sonnet\nsession:writer\n"
    uri, _ = await session.open(text)
    edits = await session.client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=session.doc(uri),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert edits is not None
    assert (
        apply_edits(text, from_lsp(text, list(edits), session.encoding))
        == "agent writer:\n  model: sonnet\nsession: writer\n"
    )
    ranged = await session.client.text_document_range_formatting_async(
        types.DocumentRangeFormattingParams(
            text_document=session.doc(uri),
            range=types.Range(
                start=types.Position(line=2, character=0), end=types.Position(line=2, character=5)
            ),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert ranged is not None
    assert (
        apply_edits(text, from_lsp(text, list(ranged), session.encoding))
        == "agent  writer :\n    model:sonnet\nsession: writer\n"
    )


async def test_quick_fix_for_an_undefined_agent_and_fix_all(session: Session) -> None:
    text = 'session: scribe\nconst c = session "a"\nc = session "b"\n'
    uri, diagnostics = await session.open(text)
    e007 = next(d for d in diagnostics if d.code == "E007")
    actions = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=session.doc(uri),
            range=e007.range,
            context=types.CodeActionContext(diagnostics=[e007]),
        )
    )
    titles = [a.title for a in actions or [] if isinstance(a, types.CodeAction)]
    assert any("scribe" in t for t in titles)
    fix_all = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=session.doc(uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
            ),
            context=types.CodeActionContext(
                diagnostics=[], only=[types.CodeActionKind.SourceFixAll]
            ),
        )
    )
    assert fix_all and all(a.kind == types.CodeActionKind.SourceFixAll for a in fix_all)


# ---------------------------------------------------------------- lens, commands, robustness


async def test_the_run_command_without_a_program_explains_and_does_not_fail(
    session: Session,
) -> None:
    # Running programs is tested in test_run_program.py.
    shown = len(session.client.messages)
    result = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="prose.run", arguments=[])
    )
    assert result is None
    for _ in range(100):
        if len(session.client.messages) > shown:
            break
        await asyncio.sleep(0.02)
    assert "URI" in session.client.messages[-1].message


async def test_requests_on_unknown_documents_and_out_of_range_positions(session: Session) -> None:
    ghost = session.doc(session.uri("never-opened"))
    hover = await session.client.text_document_hover_async(
        types.HoverParams(text_document=ghost, position=types.Position(line=0, character=0))
    )
    assert hover is None
    uri, _ = await session.open('session "a"\n')
    far = types.Position(line=500, character=900)
    assert (
        await session.client.text_document_hover_async(
            types.HoverParams(text_document=session.doc(uri), position=far)
        )
        is None
    )
    result = await session.client.text_document_completion_async(
        types.CompletionParams(text_document=session.doc(uri), position=far)
    )
    assert result is not None
