"""checking.check_text: a checked text's tree and model leave nothing to the cyclic collector.

``check_text`` makes its tree and reads it once; ``analysis.dismantle`` breaks the cycles
(children and parent, scope and symbols, an issue and its node's leaf) so that everything is
freed when it returns.  ``prose check`` of many files paid about an eighth of its time for
the collector tracing those trees.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from openprose.checking import _KEPT_UNTIL_EXIT, check_module, check_text
from openprose.syntax import parse

PROGRAMS = {
    "scopes and blocks": (
        "agent writer:\n"
        "  model: sonnet\n"
        "block draft(topic):\n"
        "  let notes = session: writer\n"
        '    prompt: "Notes on {topic}"\n'
        "  output text = notes\n"
        "for item in [1, 2]:\n"
        '  let seen = session "Look at {item}"\n'
        'do draft("rivers")\n'
    ),
    "syntax errors and error nodes": (
        'session "unterminated\n'
        "if **ready**\n"
        '  session "no colon above"\n'
        "let = \n"
        ")))\n"
        "parallel:\n"
        '  a = session "x"\n'
        "    b = oops(\n"
    ),
    "undefined names": 'session "Use {missing}"\nlet x = y\ndo nowhere()\n',
    "empty": "",
}


@pytest.fixture
def collector_paused() -> Iterator[None]:
    # First checks import modules and fill caches, which make cycles of their own.
    for text in PROGRAMS.values():
        check_text(text, "/nowhere/program.prose")
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("text", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_a_checked_text_leaves_no_cycles(text: str, collector_paused: None) -> None:
    diagnostics = check_text(text, "/nowhere/program.prose")
    assert gc.collect() == 0
    # What was found is what a check of a tree that nothing takes apart finds.
    assert diagnostics == check_module(parse(text), "/nowhere/program.prose", None, text)


def test_the_program_checks_are_what_they_claim(collector_paused: None) -> None:
    # Without the dismantling, the same checks leave the tree to the collector: the test
    # above would see it.
    check_module(parse(PROGRAMS["scopes and blocks"]), "/nowhere/program.prose")
    assert gc.collect() > 100
    broken = check_text(PROGRAMS["syntax errors and error nodes"])
    assert any(d.code.startswith("E") for d in broken)
    assert {d.code for d in check_text(PROGRAMS["undefined names"])} >= {"E043"}


def test_the_last_file_of_a_process_is_kept_whole(collector_paused: None) -> None:
    kept = len(_KEPT_UNTIL_EXIT)
    try:
        text = PROGRAMS["scopes and blocks"]
        found = check_text(text, "/nowhere/program.prose", process_ends=True)
        assert len(_KEPT_UNTIL_EXIT) == kept + 1
        ctx = _KEPT_UNTIL_EXIT[-1]
        # Not taken apart: the tree still has its statements and the model its names.
        assert ctx.module.children and ctx.model.program_scope.symbols
        assert found == check_text(PROGRAMS["scopes and blocks"], "/nowhere/program.prose")
    finally:
        del _KEPT_UNTIL_EXIT[kept:]
