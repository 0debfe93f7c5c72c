"""Prepare rename and rename in one document: what may be renamed, to what, and the edits."""

from __future__ import annotations

import pytest

from openprose.ide import analyze_document
from openprose.ide.rename import prepare_rename, rename
from openprose.ide.types import PrepareRename, Range, RenameError
from tests.ide.names_support import (
    PROGRAM,
    at_word,
    load,
    refused,
    renamed,
    spot,
)


@pytest.mark.parametrize(
    ("needle", "nth", "name"),
    [
        ("researcher", 1, "researcher"),
        ("review", 1, "review"),
        ("depth", 0, "depth"),
        ("topic", 1, "topic"),
        ("notes", 1, "notes"),
        ("a =", 0, "a"),
    ],
)
def test_prepare_rename_accepts_symbols(needle: str, nth: int, name: str) -> None:
    analysis = analyze_document(PROGRAM)
    found = prepare_rename(analysis, at_word(PROGRAM, needle, nth))
    assert isinstance(found, PrepareRename)
    assert found.placeholder == name
    start = spot(PROGRAM, needle, nth).start
    assert found.range == Range(start, (start[0], start[1] + len(name)))


def test_prepare_rename_inside_an_interpolation() -> None:
    analysis, position = load('let café = session "A"\nsession "Über {caf‸é.x}"\n')
    assert prepare_rename(analysis, position) == PrepareRename(Range((1, 15), (1, 19)), "café")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ('‸session "A"\n', "keyword"),
        ("agent a:\n  mo‸del: opus\n", "property name"),
        ("agent a:\n  model: op‸us\n", "property value"),
        ('session "some te‸xt"\n', "string text"),
        ('let xs = ["a"]\nlet ys = xs | map:\n  session "{it‸em}"\n', "implicit"),
        ('session "A"\n  context: gho‸st\n', "not defined"),
        ('if **rea‸dy**:\n  session "A"\n', "condition"),
        ('repeat ‸3:\n  session "A"\n', "number"),
        ('parallel ("any", cou‸nt: 1):\n  session "A"\n', "modifier"),
        ("agent a:\n  model: opus\nsession lab‸el: a\n", "label"),
        ("let x = tr‸ue\n", "literal"),
    ],
)
def test_prepare_rename_refuses_what_is_not_a_symbol(source: str, message: str) -> None:
    analysis, position = load(source)
    found = prepare_rename(analysis, position)
    assert isinstance(found, RenameError)
    assert message in found.message
    assert rename(analysis, position, "fresh") == found


def test_prepare_rename_on_nothing() -> None:
    analysis = analyze_document('session "A"   # note\n\n')
    assert prepare_rename(analysis, (0, 16)) is None
    assert prepare_rename(analysis, (1, 0)) is None
    assert prepare_rename(analysis, (40, 2)) is None
    assert isinstance(rename(analysis, (1, 0), "x"), RenameError)


# --------------------------------------------------------------------------- rename


def test_rename_a_variable_everywhere_including_interpolations() -> None:
    source = (
        'let dr‸aft = session "Write"\n'
        'draft = session "Again {draft} and {draft.title}"\n'
        "  context: [draft]\n"
        'session """\n  Use {draft}\n"""\n'
    )
    assert renamed(source, "text") == (
        'let text = session "Write"\n'
        'text = session "Again {text} and {text.title}"\n'
        "  context: [text]\n"
        'session """\n  Use {text}\n"""\n'
    )


def test_rename_agents_blocks_and_parameters() -> None:
    assert renamed(PROGRAM.replace("agent researcher", "agent ‸researcher"), "scout") == (
        PROGRAM.replace("researcher", "scout")
    )
    source = PROGRAM.replace("do review", "do re‸view")
    assert renamed(source, "critique") == PROGRAM.replace("review(", "critique(")
    source = PROGRAM.replace("{depth}", "{dep‸th}")
    assert renamed(source, "level") == PROGRAM.replace("doc, depth)", "doc, level)").replace(
        "{depth}", "{level}"
    )


def test_rename_a_scoped_variable_leaves_the_outer_one() -> None:
    source = (
        'let item = session "outer"\nlet xs = ["a"]\n'
        'for it‸em in xs:\n  session "Look at {item}"\nsession "Then"\n  context: item\n'
    )
    assert renamed(source, "entry") == (
        'let item = session "outer"\nlet xs = ["a"]\n'
        'for entry in xs:\n  session "Look at {entry}"\nsession "Then"\n  context: item\n'
    )


def test_rename_a_program_alias_and_add_one_where_there_was_none() -> None:
    source = 'use "@acme/research" as rese‸arch\nlet r = research(t: 1)\n'
    assert renamed(source, "dig") == 'use "@acme/research" as dig\nlet r = dig(t: 1)\n'
    source = 'use "@acme/research"\nlet r = rese‸arch(t: 1)\n'
    assert renamed(source, "dig") == 'use "@acme/research" as dig\nlet r = dig(t: 1)\n'


@pytest.mark.parametrize(
    ("new_name", "message"),
    [
        ("2fast", "not a valid name"),
        ("has space", "not a valid name"),
        ("", "not a valid name"),
        ("a-", "not a valid name"),
        ("session", "reserved word"),
        ("if", "reserved word"),
        ("true", "literal"),
        ("b", "already a parallel result"),
        ("researcher", "already names an agent"),
        ("topic", "already a input"),
        ("doc", "already a parameter"),
    ],
)
def test_rename_refuses_bad_names(new_name: str, message: str) -> None:
    source = PROGRAM.replace("  a = session", "  ‸a = session")
    assert message in refused(source, new_name)


def test_rename_refuses_collisions_between_agents_and_blocks() -> None:
    source = 'agent ‸writer:\n  model: opus\nblock edit():\n  session "E"\n'
    assert "already names a block" in refused(source, "edit")
    source = 'agent writer:\n  model: opus\nblock ‸edit():\n  session "E"\n'
    assert "already names an agent" in refused(source, "writer")
    source = "agent writer:\n  model: opus\nlet draft = session: ‸writer\n"
    assert "already names a variable" in refused(source, "draft")


def test_rename_refuses_a_name_that_would_capture_a_use() -> None:
    source = 'for ‸x in ["a"]:\n  session "A"\n    context: y\n'
    assert "would then name the renamed variable" in refused(source, "y")


def test_rename_to_the_same_name_changes_nothing() -> None:
    analysis, position = load('let ‸x = session "A"\n')
    assert rename(analysis, position, "x") == {None: []}


def test_rename_with_unicode_before_the_cursor() -> None:
    source = 'let naïve = session "☃ 🎉"\nsession "🎉 {na‸ïve}"\n'
    assert renamed(source, "simple") == 'let simple = session "☃ 🎉"\nsession "🎉 {simple}"\n'
