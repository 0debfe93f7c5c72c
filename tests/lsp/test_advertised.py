"""What the server advertises in its initialize result is what it does: the semantic tokens
it sends decode, against the legend it advertises, to the standard types and modifiers themes
colour; each completion and signature trigger character it advertises brings answers after
it, and no character that does is missing."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types

from tests.support.characters import ASTRAL
from tests.support.edits import units

Session = Any  # the conftest's Session: a live client plus position helpers

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROGRAM = (
    f"# notes {ASTRAL}\n"  # 0
    'use "./library.prose" as library\n'  # 1
    "agent researcher:\n"  # 2
    "  model: sonnet\n"  # 3
    "block review(topic):\n"  # 4
    "  session: researcher\n"  # 5
    f'    prompt: "Review {ASTRAL} {{topic}}"\n'  # 6
    'const notes = library(topic: "tides")\n'  # 7
    "do review(notes)\n"  # 8
    "loop until **done** (max: 3):\n"  # 9
    '  let items = session "x"\n'  # 10
)

# (line, text, type, modifiers): a token of each kind, as themes know them.
EXPECTED = [
    (0, f"# notes {ASTRAL}", "comment", set()),
    (1, '"./library.prose"', "string", set()),
    (1, "library", "namespace", {"declaration"}),
    (2, "agent", "keyword", set()),
    (2, "researcher", "class", {"declaration"}),
    (3, "model", "property", set()),
    (4, "review", "function", {"declaration"}),
    (4, "topic", "parameter", {"declaration", "readonly"}),
    (5, "researcher", "class", set()),
    (6, f'"Review {ASTRAL} ', "string", set()),
    (6, "{topic}", "variable", set()),
    (7, "notes", "variable", {"declaration", "readonly"}),
    (7, "=", "operator", set()),
    (7, "library", "namespace", set()),
    (8, "review", "function", set()),
    (8, "notes", "variable", {"readonly"}),
    (9, "**done**", "regexp", set()),
    (9, "3", "number", set()),
    (10, "items", "variable", {"declaration"}),
]


def code_points(line: str, count: int, encoding: str) -> int:
    """How many code points of ``line`` make ``count`` units of the encoding."""
    for index in range(len(line) + 1):
        if units(line[:index], encoding) >= count:
            return index
    return len(line)


def decode(session: Session, data: list[int], text: str) -> list[tuple[int, str, str, set[str]]]:
    """The tokens as (line, text, type name, modifier names), read with the advertised
    legend and the negotiated encoding."""
    provider = session.server.semantic_tokens_provider
    assert provider is not None
    legend = provider.legend
    lines = text.split("\n")
    found = []
    line = start = 0
    assert len(data) % 5 == 0
    for i in range(0, len(data), 5):
        delta_line, delta_start, length, kind, bits = data[i : i + 5]
        line += delta_line
        start = start + delta_start if delta_line == 0 else delta_start
        assert 0 <= kind < len(legend.token_types)
        assert bits >> len(legend.token_modifiers) == 0, "a modifier bit outside the legend"
        begin = code_points(lines[line], start, session.encoding)
        end = code_points(lines[line], start + length, session.encoding)
        assert units(lines[line][:end], session.encoding) == start + length  # whole characters
        modifiers = {m for b, m in enumerate(legend.token_modifiers) if bits >> b & 1}
        found.append((line, lines[line][begin:end], legend.token_types[kind], modifiers))
    return found


async def test_semantic_tokens_decode_with_the_advertised_legend(session: Session) -> None:
    uri, _ = await session.open(PROGRAM)
    full = await session.client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=session.doc(uri))
    )
    assert full is not None
    tokens = decode(session, list(full.data), PROGRAM)
    for row in EXPECTED:
        assert row in tokens, row
    # Every type is one the LSP specification defines, so that themes colour it.
    standard = {t.value for t in types.SemanticTokenTypes}
    assert {kind for _, _, kind, _ in tokens} <= standard
    assert {m for *_, mods in tokens for m in mods} <= {
        m.value for m in types.SemanticTokenModifiers
    }

    part = await session.client.text_document_semantic_tokens_range_async(
        types.SemanticTokensRangeParams(
            text_document=session.doc(uri),
            range=types.Range(
                start=types.Position(line=6, character=0), end=types.Position(line=8, character=0)
            ),
        )
    )
    assert part is not None
    assert decode(session, list(part.data), PROGRAM) == [t for t in tokens if 6 <= t[0] < 8]


# Text with ‸ just after a trigger character, and a label completion must offer there.
COMPLETION_CASES = {
    ":": ("agent writer:\n  model: sonnet\nsession:‸\n", "writer"),
    " ": ("agent writer:\n  model: sonnet\nsession: ‸\n", "writer"),
    "{": ('let notes = session "a"\nsession "Summarise {‸"\n', "notes"),
    "(": (
        'let notes = session "a"\nblock review(topic):\n  session "{topic}"\ndo review(‸\n',
        "notes",
    ),
    ",": (
        'let notes = session "a"\nblock review(a, b):\n  session "{a} {b}"\ndo review(notes,‸\n',
        "notes",
    ),
    "|": ('let items = session "a"\nlet x = items |‸\n', "map"),
    "[": ('let notes = session "a"\nsession "b"\n  context: [‸\n', "notes"),
    ".": (
        'use "./library.prose" as library\nlet r = library(topic: "x")\nlet f = r.‸\n',
        "findings",
    ),
    "/": ('use "./‸"\n', "library.prose"),
    '"': ('use "‸"\n', "library.prose"),
}
SIGNATURE_CASES = {
    "(": 'block review(a, b):\n  session "{a} {b}"\ndo review(‸\n',
    ",": 'block review(a, b):\n  session "{a} {b}"\ndo review(x,‸\n',
}


async def test_each_advertised_completion_trigger_brings_completions(session: Session) -> None:
    provider = session.server.completion_provider
    assert provider is not None and provider.trigger_characters is not None
    assert sorted(provider.trigger_characters) == sorted(COMPLETION_CASES)
    for character, (marked, label) in COMPLETION_CASES.items():
        text, position = session.at_cursor(marked)
        uri, _ = await session.open(text)
        found = await session.client.text_document_completion_async(
            types.CompletionParams(
                text_document=session.doc(uri),
                position=position,
                context=types.CompletionContext(
                    trigger_kind=types.CompletionTriggerKind.TriggerCharacter,
                    trigger_character=character,
                ),
            )
        )
        assert isinstance(found, types.CompletionList)
        labels = [item.label for item in found.items]
        assert any(label in item for item in labels), (character, labels)


async def test_each_advertised_signature_trigger_brings_signature_help(session: Session) -> None:
    provider = session.server.signature_help_provider
    assert provider is not None and provider.trigger_characters is not None
    assert sorted(provider.trigger_characters) == sorted(SIGNATURE_CASES)
    for active, (character, marked) in enumerate(SIGNATURE_CASES.items()):
        text, position = session.at_cursor(marked)
        uri, _ = await session.open(text)
        found = await session.client.text_document_signature_help_async(
            types.SignatureHelpParams(
                text_document=session.doc(uri),
                position=position,
                context=types.SignatureHelpContext(
                    trigger_kind=types.SignatureHelpTriggerKind.TriggerCharacter,
                    trigger_character=character,
                    is_retrigger=False,
                ),
            )
        )
        assert found is not None and "review" in found.signatures[0].label
        assert found.active_parameter == active
