"""Go to definition, references, highlights and rename (in one document and across the files
a document imports).  Programs mark the cursor with `‸`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openprose.analysis.contracts import clear_cache
from openprose.format import TextEdit
from openprose.ide import analyze_document
from openprose.ide.analysis import Analysis
from openprose.ide.navigation import (
    definition,
    highlights,
    index_of,
    prepare_rename,
    references,
    rename,
)
from openprose.ide.types import Highlight, Location, PrepareRename, Range, RenameError
from tests.fifos import finishes

CARET = "‸"


def split(source: str) -> tuple[str, tuple[int, int]]:
    for number, line in enumerate(source.split("\n")):
        if CARET in line:
            return source.replace(CARET, "", 1), (number, line.index(CARET))
    raise AssertionError("no caret")


def load(source: str, path: Path | None = None) -> tuple[Analysis, tuple[int, int]]:
    text, position = split(source)
    return analyze_document(text, path=path), position


def spot(text: str, needle: str, nth: int = 0, skip: int = 0) -> Range:
    """The range of the ``nth`` occurrence of ``needle``, ``skip`` characters trimmed from
    its start (``spot(t, "{x", skip=1)`` is the ``x`` of an interpolation)."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    at += skip
    line = text.count("\n", 0, at)
    column = at - (text.rfind("\n", 0, at) + 1)
    return Range((line, column), (line, column + len(needle) - skip))


def apply(text: str, edits: list[TextEdit]) -> str:
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        (l1, c1), (l2, c2) = edit.start, edit.end
        head = lines[l1][:c1]
        tail = lines[l2][c2:]
        lines[l1 : l2 + 1] = (head + edit.text + tail).split("\n")
    return "\n".join(lines)


def renamed(source: str, new_name: str, path: Path | None = None) -> str:
    analysis, position = load(source, path)
    result = rename(analysis, position, new_name)
    assert not isinstance(result, RenameError), result
    assert set(result) == {None}
    return apply(analysis.text, result[None])


def refused(source: str, new_name: str = "fresh", path: Path | None = None) -> str:
    analysis, position = load(source, path)
    result = rename(analysis, position, new_name)
    assert isinstance(result, RenameError), result
    return result.message


@pytest.fixture(autouse=True)
def fresh_contracts() -> None:
    clear_cache()


PROGRAM = """\
agent researcher:
  model: sonnet
  persist: true
block review(doc, depth):
  session "Review {doc} at {depth} depth"
    context: doc
input topic: "The subject"
let notes = session: researcher
  prompt: "Research {topic}"
notes = resume: researcher
  context: notes
parallel:
  a = session "A"
  b = session "B"
do review(notes, 2)
session "Combine {a.summary}"
  context: { a, b }
"""


# --------------------------------------------------------------------------- definition


def at_word(text: str, needle: str, nth: int = 0, offset: int = 1) -> tuple[int, int]:
    found = spot(text, needle, nth)
    return found.start[0], found.start[1] + offset


@pytest.mark.parametrize(
    ("needle", "nth", "target", "target_nth"),
    [
        ("researcher", 1, "researcher", 0),  # session: -> agent
        ("researcher", 2, "researcher", 0),  # resume: -> agent
        ("review", 1, "review", 0),  # do -> block
        ("{doc", 0, "doc", 0),  # interpolation -> parameter
        ("doc", 2, "doc", 0),  # context -> parameter
        ("{topic", 0, "topic", 0),  # interpolation -> input
        ("notes", 3, "notes", 0),  # context -> let
        ("{a.summary", 0, "a =", 0),  # dotted interpolation -> parallel branch
        ("{ a", 0, "a =", 0),  # object shorthand context -> parallel branch
    ],
)
def test_definition(needle: str, nth: int, target: str, target_nth: int) -> None:
    analysis = analyze_document(PROGRAM)
    position = at_word(PROGRAM, needle, nth, offset=2 if needle[0] in "{" else 1)
    expected = spot(PROGRAM, target, target_nth)
    expected = Range(
        expected.start, (expected.start[0], expected.start[1] + len(target.split()[0]))
    )
    assert definition(analysis, position) == [Location(expected)]


def test_definition_of_a_definition_is_itself_and_nothing_elsewhere() -> None:
    analysis = analyze_document(PROGRAM)
    assert definition(analysis, at_word(PROGRAM, "notes")) == [Location(spot(PROGRAM, "notes"))]
    assert definition(analysis, at_word(PROGRAM, "session")) == []
    assert definition(analysis, at_word(PROGRAM, "model")) == []
    assert definition(analysis, (200, 0)) == []


def test_definition_of_loop_and_pipeline_variables() -> None:
    source = 'let xs = ["a"]\nfor x, i in xs:\n  session "{x} {‸i}"\n'
    analysis, position = load(source)
    assert definition(analysis, position) == [Location(Range((1, 7), (1, 8)))]
    source = 'let xs = ["a"]\nlet ys = xs | map:\n  session "A"\n    context: ‸item\n'
    analysis, position = load(source)
    # The implicit `item` is introduced by the `map` keyword.
    assert definition(analysis, position) == [Location(Range((1, 14), (1, 17)))]


def test_definition_of_a_program_is_its_use() -> None:
    source = 'use "@acme/research"\nuse "./lib.prose" as lib\nlet r = ‸research(t: 1)\n'
    analysis, position = load(source)
    assert definition(analysis, position) == [Location(Range((0, 11), (0, 19)))]
    analysis = analyze_document(source.replace(CARET, ""))
    assert definition(analysis, (2, 5)) == [Location(Range((2, 4), (2, 5)))]


def test_definition_of_a_name_hidden_after_its_body() -> None:
    source = 'for x in ["a"]:\n  let inner = session "A"\nsession "B"\n  context: ‸inner\n'
    analysis, position = load(source)
    assert definition(analysis, position) == [Location(Range((1, 6), (1, 11)))]


# --------------------------------------------------------------------------- references


def test_references_with_and_without_the_declaration() -> None:
    analysis = analyze_document(PROGRAM)
    position = at_word(PROGRAM, "notes", 2)
    every = [
        spot(PROGRAM, "notes", 0),
        spot(PROGRAM, "notes", 1),
        spot(PROGRAM, "notes", 2),
        spot(PROGRAM, "notes", 3),
    ]
    assert references(analysis, position, True) == [Location(r) for r in every]
    assert references(analysis, position, False) == [Location(r) for r in every[1:]]


def test_references_of_agents_blocks_and_interpolated_names() -> None:
    analysis = analyze_document(PROGRAM)
    found = references(analysis, at_word(PROGRAM, "researcher"), True)
    assert [loc.range for loc in found] == [spot(PROGRAM, "researcher", n) for n in range(3)]
    found = references(analysis, at_word(PROGRAM, "review", 1), False)
    assert [loc.range for loc in found] == [spot(PROGRAM, "review", 1)]
    found = references(analysis, at_word(PROGRAM, "doc"), True)
    assert [loc.range for loc in found] == [
        spot(PROGRAM, "doc", 0),
        spot(PROGRAM, "{doc", skip=1),
        spot(PROGRAM, "doc", 2),
    ]


def test_block_parameters_are_scoped_to_their_block() -> None:
    source = (
        'block one(x):\n  session "{x}"\n'
        'block two(x):\n  session "{x}"\n    context: x\n'
        'let x = session "outer"\n'
    )
    analysis = analyze_document(source)
    found = references(analysis, (2, 10), True)
    assert [loc.range for loc in found] == [
        Range((2, 10), (2, 11)),
        Range((3, 12), (3, 13)),
        Range((4, 13), (4, 14)),
    ]


def test_loop_variables_are_scoped_to_their_loop() -> None:
    source = (
        'let item = session "outer"\nlet xs = ["a"]\n'
        'for item in xs:\n  session "Look at {item}"\nsession "Then"\n  context: item\n'
    )
    analysis = analyze_document(source)
    loop_variable = [loc.range for loc in references(analysis, (2, 5), True)]
    assert loop_variable == [Range((2, 4), (2, 8)), Range((3, 20), (3, 24))]
    outer = [loc.range for loc in references(analysis, (5, 12), True)]
    assert outer == [Range((0, 4), (0, 8)), Range((5, 11), (5, 15))]


def test_undefined_names_group_together() -> None:
    source = 'session "A"\n  context: ghost\nsession "B {ghost}"\n'
    analysis = analyze_document(source)
    found = [loc.range for loc in references(analysis, (1, 12), True)]
    assert found == [Range((1, 11), (1, 16)), Range((2, 12), (2, 17))]


# --------------------------------------------------------------------------- highlights


def test_highlights_mark_writes_and_reads() -> None:
    analysis = analyze_document(PROGRAM)
    found = highlights(analysis, at_word(PROGRAM, "notes", 3))
    assert found == [
        Highlight(spot(PROGRAM, "notes", 0), "write"),
        Highlight(spot(PROGRAM, "notes", 1), "write"),
        Highlight(spot(PROGRAM, "notes", 2), "read"),
        Highlight(spot(PROGRAM, "notes", 3), "read"),
    ]
    found = highlights(analysis, at_word(PROGRAM, "researcher", 1))
    assert [h.kind for h in found] == ["write", "read", "read"]
    assert highlights(analysis, at_word(PROGRAM, "parallel")) == []


def test_highlights_of_a_program_without_alias() -> None:
    source = 'use "@acme/research"\nlet r = research(t: 1)\n'
    analysis = analyze_document(source)
    assert highlights(analysis, (1, 10)) == [
        Highlight(Range((0, 11), (0, 19)), "write"),
        Highlight(Range((1, 8), (1, 16)), "read"),
    ]


# --------------------------------------------------------------------------- prepare rename


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


@pytest.mark.parametrize("text", ["", "\n", "$$$ ;;", '"""open', "let = \n  :", "\ufeffagent"])
def test_garbage_does_not_crash(text: str) -> None:
    analysis = analyze_document(text)
    lines = text.split("\n")
    for line in range(len(lines) + 1):
        for column in range(len(lines[line]) + 2 if line < len(lines) else 1):
            position = (line, column)
            definition(analysis, position)
            references(analysis, position, True)
            highlights(analysis, position)
            prepare_rename(analysis, position)
            rename(analysis, position, "x")


# --------------------------------------------------------------------------- across files

LIBRARY = """\
input topic: "The subject to research"
input depth: "How deep to go"
let notes = session "Research {topic} to {depth}"
  context: topic
output findings = session "Summarise {topic}"
  context: notes
output sources = session "List the sources"
"""

CALLER = """\
use "./lib.prose" as lib
let r = lib(topic: "x", depth: "y")
let again = lib(topic: "z", depth: "w")
session "Report {r.findings}"
  context: r.findings
let { findings, sources } = lib(topic: "q", depth: "p")
session "More"
  context: findings
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path / "lib.prose", LIBRARY)
    return tmp_path / "main.prose"


def test_definition_of_inputs_and_outputs_in_the_imported_file(project: Path) -> None:
    analysis = analyze_document(CALLER, path=project)
    library = str((project.parent / "lib.prose").resolve())
    position = at_word(CALLER, "depth")
    assert definition(analysis, position) == [Location(Range((1, 6), (1, 11)), library)]
    findings = Location(Range((4, 7), (4, 15)), library)
    assert definition(analysis, at_word(CALLER, "findings", 1)) == [findings]
    assert definition(analysis, at_word(CALLER, "{r.findings", offset=4)) == [findings]
    # The destructured name's own definition leads to the output it receives.
    assert definition(analysis, at_word(CALLER, "findings", 2)) == [findings]
    # A use of it leads to the local name.
    assert definition(analysis, at_word(CALLER, "findings", 3)) == [
        Location(spot(CALLER, "findings", 2))
    ]


def test_definition_of_an_unknown_input_or_without_a_path(project: Path) -> None:
    source = CALLER.replace('depth: "y"', 'width: "y"')
    assert definition(analyze_document(source, path=project), at_word(source, "width")) == []
    assert definition(analyze_document(CALLER), at_word(CALLER, "depth")) == []


def test_references_of_an_input_name_across_calls(project: Path) -> None:
    analysis = analyze_document(CALLER, path=project)
    library = str((project.parent / "lib.prose").resolve())
    found = references(analysis, at_word(CALLER, "topic"), True)
    assert found == [
        Location(Range((0, 6), (0, 11)), library),
        Location(spot(CALLER, "topic", 0)),
        Location(spot(CALLER, "topic", 1)),
        Location(spot(CALLER, "topic", 2)),
    ]
    assert len(references(analysis, at_word(CALLER, "topic"), False)) == 3
    assert [h.range for h in highlights(analysis, at_word(CALLER, "topic"))] == [
        spot(CALLER, "topic", n) for n in range(3)
    ]


def test_rename_a_keyword_argument_renames_the_imported_input(project: Path) -> None:
    analysis = analyze_document(CALLER, path=project)
    result = rename(analysis, at_word(CALLER, "topic", 1), "subject")
    assert not isinstance(result, RenameError), result
    library = str((project.parent / "lib.prose").resolve())
    assert set(result) == {None, library}
    assert apply(CALLER, result[None]) == CALLER.replace("topic:", "subject:")
    assert apply(LIBRARY, result[library]) == LIBRARY.replace("topic", "subject")


def test_rename_an_output_from_the_caller(project: Path) -> None:
    analysis = analyze_document(CALLER, path=project)
    result = rename(analysis, at_word(CALLER, "findings", 1), "summary")
    assert not isinstance(result, RenameError), result
    library = str((project.parent / "lib.prose").resolve())
    assert apply(LIBRARY, result[library]) == LIBRARY.replace("findings", "summary")
    assert apply(CALLER, result[None]) == CALLER.replace("findings", "summary")
    # From the destructured name, the same edits.
    again = rename(analysis, at_word(CALLER, "findings", 3), "summary")
    assert again == result


def test_cross_file_rename_refuses_collisions(project: Path) -> None:
    analysis = analyze_document(CALLER, path=project)
    found = rename(analysis, at_word(CALLER, "topic", 1), "notes")
    assert isinstance(found, RenameError)
    assert "lib.prose" in found.message and "notes" in found.message
    found = rename(analysis, at_word(CALLER, "topic", 1), "depth")
    assert isinstance(found, RenameError)
    found = rename(analysis, at_word(CALLER, "findings", 1), "again")
    assert isinstance(found, RenameError) and "again" in found.message


def test_renaming_an_input_in_the_imported_program_renames_it_in_its_callers(
    project: Path,
) -> None:
    caller = write(project, CALLER)
    other = write(
        project.parent / "sub" / "other.prose", 'use "../lib" as l\nlet r = l(topic: "a")\n'
    )
    unrelated = write(project.parent / "plain.prose", 'session "topic: not a call"\n')
    library = project.parent / "lib.prose"
    analysis = analyze_document(LIBRARY, path=library)
    importers = [caller, other, unrelated, library]
    result = rename(analysis, at_word(LIBRARY, "topic"), "subject", importers)
    assert not isinstance(result, RenameError), result
    assert set(result) == {None, str(caller), str(other)}
    assert apply(LIBRARY, result[None]) == LIBRARY.replace("topic", "subject")
    assert apply(CALLER, result[str(caller)]) == CALLER.replace("topic:", "subject:")
    assert (
        apply(other.read_text(), result[str(other)])
        == 'use "../lib" as l\nlet r = l(subject: "a")\n'
    )
    # Without the workspace's files, only this document changes.
    assert set(rename(analysis, at_word(LIBRARY, "topic"), "subject")) == {None}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_rename_skips_workspace_files_that_are_not_regular(project: Path) -> None:
    caller = write(project, CALLER)
    fifo = project.parent / "pipe.prose"
    os.mkfifo(fifo)
    library = project.parent / "lib.prose"
    analysis = analyze_document(LIBRARY, path=library)
    importers = [fifo, caller]
    result = finishes(
        lambda: rename(analysis, at_word(LIBRARY, "topic"), "subject", importers), fifo
    )
    assert not isinstance(result, RenameError), result
    assert set(result) == {None, str(caller)}


def test_renaming_an_output_in_the_imported_program_renames_its_uses_in_callers(
    project: Path,
) -> None:
    caller = write(project, CALLER)
    library = project.parent / "lib.prose"
    analysis = analyze_document(LIBRARY, path=library)
    result = rename(analysis, at_word(LIBRARY, "findings"), "summary", [caller])
    assert not isinstance(result, RenameError), result
    assert apply(CALLER, result[str(caller)]) == CALLER.replace("findings", "summary")


def test_renaming_in_the_imported_program_refuses_a_collision_in_a_caller(
    project: Path,
) -> None:
    caller = write(project, CALLER.replace("let again = ", "let summary = "))
    library = project.parent / "lib.prose"
    analysis = analyze_document(LIBRARY, path=library)
    found = rename(analysis, at_word(LIBRARY, "findings"), "summary", [caller])
    assert isinstance(found, RenameError)
    assert "main.prose" in found.message and "summary" in found.message


def test_cross_file_rename_refuses_registry_and_unknown_programs(tmp_path: Path) -> None:
    write(tmp_path / ".prose" / "imports" / "acme--lib" / "program.prose", LIBRARY)
    source = CALLER.replace('"./lib.prose"', '"@acme/lib"')
    analysis = analyze_document(source, path=tmp_path / "main.prose")
    found = prepare_rename(analysis, at_word(source, "topic"))
    assert isinstance(found, RenameError) and "registry program" in found.message
    found = rename(analysis, at_word(source, "findings", 2), "x")
    assert isinstance(found, RenameError) and "output" in found.message
    found = prepare_rename(analyze_document(CALLER), at_word(CALLER, "topic"))
    assert isinstance(found, RenameError) and "not saved" in found.message
    found = prepare_rename(
        analyze_document(CALLER, path=tmp_path / "main.prose"), at_word(CALLER, "topic")
    )
    assert isinstance(found, RenameError) and "cannot be read" in found.message


def test_rename_an_input_declared_here_leaves_keyword_arguments_alone(project: Path) -> None:
    source = 'use "./lib.prose" as lib\ninput ‸topic: "T"\nlet r = lib(topic: topic, depth: "d")\n'
    assert renamed(source, "theme", project) == (
        'use "./lib.prose" as lib\ninput theme: "T"\nlet r = lib(topic: theme, depth: "d")\n'
    )


# --------------------------------------------------------------------------- large programs


def test_requests_on_a_large_program() -> None:
    parts = ['agent scout:\n  model: sonnet\nblock step(x):\n  session "Step {x}"\n']
    for n in range(3400):
        previous = f"v{max(n - 1, 0)}"
        parts.append(
            f'let v{n} = session: scout\n  prompt: "Go {{{previous}}}"\n  context: {previous}\n'
        )
        if n % 100 == 0:
            parts.append("do step(v0)\n")
    text = "".join(parts)
    assert text.count("\n") > 10_000
    analysis = analyze_document(text)
    index_of(analysis)  # built once per analysis
    lines = text.split("\n")
    line = next(i for i in range(5000, len(lines)) if lines[i].startswith("  context: "))
    position = (line, len("  context: ") + 1)  # a variable used deep in the program
    # Answers from the per-analysis index on a program of over 10,000 lines.
    assert definition(analysis, position)
    assert references(analysis, position, True)
    assert highlights(analysis, position)
    assert prepare_rename(analysis, position) is not None
