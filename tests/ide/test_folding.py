"""Folding ranges: blocks, multi-line strings and conditions, comment runs."""

from __future__ import annotations

from openprose.ide import analyze_document
from openprose.ide.folding import folding_ranges
from openprose.ide.types import Folding


def folds(text: str) -> list[tuple[int, int, str | None]]:
    return [(f.start_line, f.end_line, f.kind) for f in folding_ranges(analyze_document(text))]


def test_agent_and_nested_property_block() -> None:
    text = """\
agent critic:
  model: opus
  permissions:
    write: deny
    bash: deny

session "next"
"""
    assert folds(text) == [(0, 4, None), (2, 4, None)]


def test_block_ends_at_last_content_line_not_blank_lines() -> None:
    text = 'block tidy(x):\n  session "one"\n  session "two"\n\n\n\nsession "after"\n'
    assert folds(text) == [(0, 2, None)]


def test_session_with_properties() -> None:
    text = 'let memo = session: critic\n  prompt: "Check"\n  context: memo_in\n'
    assert folds(text) == [(0, 2, None)]


def test_parallel_loops_and_do() -> None:
    text = """\
parallel (on-fail: "continue"):
  a = session "a"
  b = session "b"
for item in things:
  session "each"
repeat 3 as i:
  session "again"
loop until **calm** (max: 4):
  session "loop"
do:
  session "in do"
"""
    assert folds(text) == [(0, 2, None), (3, 4, None), (5, 6, None), (7, 8, None), (9, 10, None)]


def test_try_catch_finally_clauses_each_fold() -> None:
    text = """\
try:
  session "risky"
  session "more"
catch as oops:
  session "recover"
finally:
  session "tidy"
"""
    assert folds(text) == [(0, 2, None), (3, 4, None), (5, 6, None)]


def test_choice_and_options() -> None:
    text = """\
choice **best path**:
  option "quick":
    session "q"
  option "careful":
    session "c1"
    session "c2"
"""
    assert folds(text) == [(0, 5, None), (1, 2, None), (3, 5, None)]


def test_if_elif_else_clauses() -> None:
    text = """\
if **sunny**:
  session "out"
elif **rain**:
  session "in"
else:
  session "wait"
"""
    assert folds(text) == [(0, 1, None), (2, 3, None), (4, 5, None)]


def test_pipeline_and_its_stages() -> None:
    text = """\
let ranked = candidates
  | filter:
      session "keep?"
  | map:
      session "score"
"""
    assert folds(text) == [(0, 4, None), (1, 2, None), (3, 4, None)]


def test_multiline_string_and_condition() -> None:
    text = '''\
session "brief"
  prompt: """
    First line
    Second line
  """
loop until ***
  the reviewers
  agree
***:
  session "iterate"
'''
    # The loop folds from its header; the condition starts on the same line, so the
    # outer range wins (editors keep one range per start line).
    assert folds(text) == [(0, 4, None), (1, 4, None), (5, 9, None)]


def test_multiline_string_alone() -> None:
    text = 'let note = """\n  a\n  b\n"""\nlet c = 1\n'
    assert folds(text) == [(0, 3, None)]


def test_multiline_brackets() -> None:
    text = "let picks = [\n  one,\n  two,\n]\nlet call = research(\n  topic: picks,\n)\n"
    assert folds(text) == [(0, 3, None), (4, 6, None)]


def test_comment_runs() -> None:
    text = """\
# Title
# Subtitle

# single

agent a:  # trailing, not a run
  # first
  # second
  # third
  model: opus
let x = 1  # trailing one
# own line after a trailing one
"""
    assert folds(text) == [(0, 1, "comment"), (5, 9, None), (6, 8, "comment")]


def test_comments_at_end_of_file_without_newline() -> None:
    assert folds("let x = 1\n# one\n# two") == [(1, 2, "comment")]
    assert folds("# one\n# two\n\n# three\n# four\n") == [(0, 1, "comment"), (3, 4, "comment")]


def test_crlf_and_lone_cr() -> None:
    text = 'agent a:\r\n  model: opus\r\n  prompt: "p"\r\n# c1\r\n# c2\r\n'
    assert folds(text) == [(0, 2, None), (3, 4, "comment")]
    assert folds('agent a:\r  model: opus\r  prompt: "p"\r') == [(0, 2, None)]


def test_no_crash_on_garbage() -> None:
    garbage = ("", "\n", "agent", "   $$ \n  {[(", '"""', "***", "if **x:\n  y", "\ufeff# a\n# b\n")
    for text in garbage:
        for folding in folding_ranges(analyze_document(text)):
            assert isinstance(folding, Folding)
            assert 0 <= folding.start_line < folding.end_line


def test_ten_thousand_lines() -> None:
    chunk = """\
# section {i}
# more words
agent worker{i}:
  model: sonnet
  prompt: \"\"\"
    Work hard
  \"\"\"
if **ready**:
  session "go {i}"
else:
  session "wait"
"""
    text = "".join(chunk.format(i=i) for i in range(910))
    analysis = analyze_document(text)
    folding_ranges(analysis)
    result = folding_ranges(analysis)
    assert len(result) == 910 * 5
