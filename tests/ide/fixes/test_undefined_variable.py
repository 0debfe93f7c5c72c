"""Quick fixes for an undefined variable: "did you mean" a visible variable, else define it
with an `input` at the top of the program or a `let` on the line before the statement
that uses it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.checking import check_text
from openprose.diagnostics import Diagnostic
from openprose.ide import analyze_document
from openprose.ide.analysis import Analysis
from openprose.ide.fixes.fix_all import fix_all
from openprose.ide.fixes.registry import code_actions, near_names
from openprose.ide.fixes.variables import expect_references, near_variable_names
from openprose.ide.types import Range
from tests.ide.fixes.fixes_support import actions_for, fixed, preferred, titles
from tests.ide.fixes.test_did_you_mean import difflib_answer
from tests.support.edits import apply_edits


@pytest.mark.parametrize(
    ("code", "text", "title", "expected"),
    [
        (
            "E043",
            'let summary = session "Summarise the thread"\noutput result = sumary\n',
            "Change to `summary`",
            "output result = summary\n",
        ),
        (
            "E043",
            'let tally = session "Count"\ntaly = session "Count again"\n',
            "Change to `tally`",
            'tally = session "Count again"\n',
        ),
        (
            "E044",
            'input topic: "A topic"\nsession "Write a haiku about {topc}"\n',
            "Change to `topic`",
            'session "Write a haiku about {topic}"\n',
        ),
        (
            "E045",
            'let notes = session "Take notes"\nsession "Write minutes"\n  context: nots\n',
            "Change to `notes`",
            "  context: notes\n",
        ),
        (
            "E045",
            'let notes = session "Take notes"\nsession "Write minutes"\n  context: { nots }\n',
            "Change to `notes`",
            "  context: { notes }\n",
        ),
        (
            "E061",
            'let chapters = session "List chapters"\nfor c in chaptrs:\n  session "Sum {c}"\n',
            "Change to `chapters`",
            "for c in chapters:\n",
        ),
    ],
)
def test_undefined_variable_did_you_mean(code: str, text: str, title: str, expected: str) -> None:
    assert preferred(text, code) == [title]
    assert expected in fixed(text, code, title)


def test_undefined_variable_suggests_only_names_in_scope() -> None:
    # `draft` is defined after the use, `inner` inside a loop body: neither is visible.
    text = (
        "repeat 2:\n"
        '  let innerr = session "Loop work"\n'
        'session "Use {drafts} and {inner}"\n'
        'let draft = session "Draft"\n'
    )
    analysis = analyze_document(text)
    assert [d.code for d in analysis.diagnostics] == ["E044", "E044"]
    found = code_actions(analysis, Range((0, 0), (10, 0)))
    assert [a for a in found if a.title.startswith("Change to")] == []


def test_only_names_defined_before_the_use_are_suggested_among_many() -> None:
    # The program scope's variables are kept by position once per analysis; a use sees
    # those before it (`name_19` and `name_20` are defined after the use: not suggested).
    before = "".join(f'let name_{k}{k} = session "x"\n' for k in range(10))
    after = 'let name_19 = session "y"\nlet name_20 = session "z"\n'
    text = before + 'session "{name_1}"\n' + after
    found = titles(text, "E044")
    assert found and all(title.startswith("Change to `name_") for title in found)
    assert not {"Change to `name_19`", "Change to `name_20`"} & set(found)


def test_assignment_never_suggests_a_constant() -> None:
    text = "const counter = 1\nlet counted = 2\ncountr = 3\n"
    assert titles(text, "E043") == ["Change to `counted`"]


def test_several_close_names_none_preferred() -> None:
    text = 'let draft1 = session "A"\nlet draft2 = session "B"\nsession "x"\n  context: draft\n'
    assert set(titles(text, "E045")) == {"Change to `draft1`", "Change to `draft2`"}
    assert preferred(text, "E045") == []


def test_block_parameter_is_suggested_inside_the_block() -> None:
    text = 'block review(topic):\n  session "Review {topik}"\ndo review("tests")\n'
    assert "Change to `topic`" in titles(text, "E044")
    fixed(text, "E044", "Change to `topic`")


INPUT = "Create input `{}`"


LET = "Create `let {}` before this statement"


UNDEFINED = ("E043", "E044", "E045", "E061")


def test_input_goes_after_the_other_inputs() -> None:
    text = 'use "@acme/search"\ninput a: "An A"\n\nsession "About {topic}"\n'
    assert titles(text, "E044") == [INPUT.format("topic"), LET.format("topic")]
    assert fixed(text, "E044", INPUT.format("topic")) == (
        'use "@acme/search"\ninput a: "An A"\n'
        'input topic: "The topic: describe what the caller provides"\n'
        '\nsession "About {topic}"\n'
    )


def test_input_goes_after_the_imports_in_its_own_group() -> None:
    text = 'use "@acme/search"\n\nagent w:\n  model: opus\n\nsession "About {topic}"\n'
    assert fixed(text, "E044", INPUT.format("topic")) == (
        'use "@acme/search"\n\n'
        'input topic: "The topic: describe what the caller provides"\n\n'
        'agent w:\n  model: opus\n\nsession "About {topic}"\n'
    )


def test_input_goes_at_the_top_after_a_header_comment() -> None:
    text = '# Writes a note.\nsession "About {topic}"'
    assert fixed(text, "E044", INPUT.format("topic")) == (
        "# Writes a note.\n\n"
        'input topic: "The topic: describe what the caller provides"\n\n'
        'session "About {topic}"'
    )


def test_let_goes_before_the_statement_at_its_indentation() -> None:
    text = 'block r:\n  # Why.\n  session "Sum up"\n    context: notes\ndo r\n'
    assert fixed(text, "E045", LET.format("notes")) == (
        "block r:\n"
        '  let notes = session "Produce the notes: describe the task here"\n'
        '  # Why.\n  session "Sum up"\n    context: notes\ndo r\n'
    )


def test_let_goes_before_a_parallel_not_into_its_branches() -> None:
    text = 'parallel:\n  a = session "x {topic}"\n  b = session "y"\n'
    result = fixed(text, "E044", LET.format("topic"))
    assert result.startswith('let topic = session "Produce the topic')
    assert check_text(result) == []


def test_collection_of_a_for_loop() -> None:
    text = 'for c in chapters:\n  session "Sum up {c}"\n'
    for title in (INPUT.format("chapters"), LET.format("chapters")):
        assert check_text(fixed(text, "E061", title)) == []


@pytest.mark.parametrize(
    ("text", "code"),
    [
        # A similar name: the use is a typo (the "did you mean" fix is offered instead).
        ('let notes = session "A"\nsession "B"\n  context: nots\n', "E045"),
        # Defined later: defining it again would be a duplicate.
        ('session "About {draft}"\nlet draft = session "Draft"\n', "E044"),
        # A block's name.
        ('block critic:\n  session "A"\nsession "B"\n  context: critic\n', "E045"),
        # An assignment needs `let` on that line, not a second definition.
        ("total = 3\n", "E043"),
    ],
)
def test_no_definition_offered(text: str, code: str) -> None:
    assert [a for a in actions_for(text, code) if a.title.startswith("Create")] == []


def test_never_automatic() -> None:
    assert fix_all(analyze_document('session "About {topic}"\n')) == []


def test_a_placeholder_in_a_multiline_prompt_gets_no_definition() -> None:
    text = 'session """\nFill in {the_name} here.\n"""\n'
    found = [d for d in check_text(text) if d.code == "W034"]
    assert found, check_text(text)
    assert [a for a in actions_for(text, "W034") if a.title.startswith("Create")] == []


_USES = {
    "interpolation": ('session "Write about {missing}"', "E044"),
    "context": ('session "Write"\n{i}  context: missing', "E045"),
    "context list": ('session "Write"\n{i}  context: [missing]', "E045"),
    "collection": ('for c in missing:\n{i}  session "Sum up {{c}}"', "E061"),
    "pipeline source": ('let ys = missing | map:\n{i}  session "Sum up {{item}}"', "E061"),
    "context object": ('session "Write"\n{i}  context: { missing }', "E045"),
    "let value": ('let out = session "Use {missing}"', "E044"),
}


_WRAPPERS = {
    "top": ("", ""),
    "block": ("block r(x):\n", "do r(1)\n"),
    "loop": ("loop until **done** (max: 2):\n", ""),
    "repeat": ("repeat 2:\n", ""),
    "if": ("if **ready**:\n", ""),
    "parallel": ("parallel:\n", ""),
    "try": ("try:\n", 'catch:\n  session "Report"\n'),
    "pipeline": ('let xs = ["a"]\nlet ys = xs | map:\n', ""),
}


_HEADERS = [
    "",
    "# A program.\n",
    'input a: "An A"\n',
    'use "@acme/search"\n\n',
    'use "@acme/search"\ninput a: "An A"\nagent w:\n  model: opus\n',
]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(_USES)),
    st.sampled_from(sorted(_WRAPPERS)),
    st.sampled_from(_HEADERS),
    st.booleans(),
    st.sampled_from(["\n", "\r\n"]),
)
def test_each_definition_resolves_the_name_and_brings_no_error(
    use: str, wrapper: str, header: str, sibling: bool, newline: str
) -> None:
    template, code = _USES[use]
    opening, closing = _WRAPPERS[wrapper]
    indent = "  " if opening else ""
    if wrapper == "pipeline" and use in ("collection", "pipeline source"):
        return  # not a statement a pipeline stage takes
    body = indent + template.replace("{i}", indent).replace("{{", "{").replace("}}", "}")
    body += "\n"
    if sibling and opening:
        body = f'{indent}session "Warm up"\n' + body
    text = (header + opening + body + closing).replace("\n", newline)
    before = check_text(text)
    assert [d.code for d in before if d.code in UNDEFINED] == [code], before
    offered = [a for a in actions_for(text, code) if a.title.startswith("Create")]
    assert [a.title for a in offered] == [INPUT.format("missing"), LET.format("missing")]
    for action in offered:
        result = apply_edits(text, action.edits)
        after = check_text(result)
        assert not [d for d in after if d.code in UNDEFINED and "missing" in d.message], result
        new = {d.code for d in after if d.is_error} - {d.code for d in before if d.is_error}
        assert not new, (result, after)
        line_breaks = re.findall(r"\r\n|\n", result)
        assert set(line_breaks) == {newline}, result


def test_definitions_go_after_a_byte_order_mark() -> None:
    text = '\ufeffsession "About {topic}"\n'
    for title in (INPUT.format("topic"), LET.format("topic")):
        result = fixed(text, "E044", title)
        assert result.startswith("\ufeff") and result.count("\ufeff") == 1
        assert check_text(result) == []


# Programs of variables with close names (constants, block parameters and results, loop
# variables), used before, after and inside the bodies that define them, misspelt.
_NAMES = st.sampled_from(["ab_1", "ab_2", "ab1", "ab_12", "ba_1", "abc", "AB_1", "ab_", "é_1"])
_LINE = st.one_of(
    st.builds('let {} = session "x"'.format, _NAMES),
    st.builds('const {} = session "x"'.format, _NAMES),
    st.builds('{} = session "y"'.format, _NAMES),
    st.builds('session "use {{{}}}"'.format, _NAMES),
    st.builds('session "z"\n  context: {}'.format, _NAMES),
    st.builds('for {} in {}:\n  session "{{{}}}"'.format, _NAMES, _NAMES, _NAMES),
    st.builds(
        'block blk_{}({}):\n  let {} = session "b"\n  session "{{{}}}"'.format,
        st.integers(0, 3),
        _NAMES,
        _NAMES,
        _NAMES,
    ),
    st.builds('do blk_{}("a")'.format, st.integers(0, 3)),
)


def plain_near_names(analysis: Analysis, diagnostic: Diagnostic) -> list[str]:
    """The names the "did you mean" of an undefined variable offers, found the plain way:
    every reference searched, every visible variable's name compared by difflib."""
    reference = next(
        (
            r
            for r in analysis.model.references
            if r.start == diagnostic.start and r.end == diagnostic.end
        ),
        None,
    )
    if reference is None or reference.symbol is not None:
        return []
    (line, start), (end_line, end) = reference.start, reference.end
    if line != end_line or analysis.lines[line - 1].find(reference.name, start, end) < 0:
        return []
    in_block = False
    scope: Any = reference.scope
    while scope is not None:
        in_block = in_block or scope.kind == "block"
        scope = scope.parent
    names: set[str] = set()
    scope = reference.scope
    while scope is not None:
        for symbol in scope.symbols.values():
            kind = symbol.kind
            if not kind.is_variable or (reference.role == "assignment" and kind.is_constant):
                continue
            anywhere = symbol.exported or kind.is_scoped
            if anywhere or (in_block and scope.kind == "program") or symbol.start < reference.start:
                names.add(symbol.name)
        scope = scope.parent
    return difflib_answer(reference.name, list(names))


@settings(max_examples=150, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=14), st.booleans())
def test_near_names_are_the_plain_computations(lines: list[str], expected: bool) -> None:
    """The variables visible at a use, prepared once per scope by length and position, and
    the references of the diagnostics asked about found together (as `prose check` does,
    or not): the names of the plain computation."""
    analysis = analyze_document("\n".join(lines) + "\n")
    asked = [d for d in analysis.diagnostics if d.code in (*UNDEFINED, "W034")]
    if expected:
        expect_references(analysis, [d.start for d in asked[::2]])
    for diagnostic in asked:
        plain = plain_near_names(analysis, diagnostic)
        assert near_names(analysis, diagnostic) == plain
        assert near_variable_names(analysis, diagnostic) == plain
