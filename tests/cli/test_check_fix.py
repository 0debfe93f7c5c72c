"""``prose check --fix`` and ``--diff``, and the "did you mean" hints, end to end: the real
command in a child process, on files we write."""

from __future__ import annotations

import os
import stat
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openprose.diagnostics import Diagnostic
from tests.cli.fixture_types import RunProse, WriteSource

# Three safe fixes (a reassigned const, a bare loop, a one-letter typo of a variable) and one
# problem without a fix (an undefined block).
FIXABLE = """\
# Drafts a piece, then polishes it.
const draft = session "Draft the piece"
draft = session "Draft it again"  # on purpose

loop:
  session "Polish"
    context: drat

do publish
"""
FIXED = """\
# Drafts a piece, then polishes it.
let draft = session "Draft the piece"
draft = session "Draft it again"  # on purpose

loop (max: 10):
  session "Polish"
    context: draft

do publish
"""
ALL_FIXABLE = FIXABLE.replace("do publish\n", "")
ALL_FIXED = FIXED.replace("do publish\n", "")
CLEAN = 'session "Hello"\n'


def test_fix_writes_the_safe_fixes_and_reports_what_is_left(
    prose: RunProse, source: WriteSource
) -> None:
    path = source("draft.prose", FIXABLE)
    result = prose("check", "--fix", "draft.prose")
    assert path.read_text(encoding="utf-8") == FIXED
    assert result.returncode == 1, result.stderr  # the undefined block is still an error
    assert "E051" in result.stdout
    assert "E048" not in result.stdout and "W018" not in result.stdout
    assert "E045" not in result.stdout
    assert result.stderr.splitlines()[-1] == (
        "Found 4 problems in 1 file (1 checked): 3 fixed, 1 remaining (1 error)."
    )


def test_fix_of_everything_exits_0(prose: RunProse, source: WriteSource) -> None:
    path = source("draft.prose", ALL_FIXABLE)
    result = prose("check", "--fix", "draft.prose")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text(encoding="utf-8") == ALL_FIXED
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        "Found 3 problems in 1 file (1 checked): 3 fixed, 0 remaining."
    )


def test_second_fix_changes_nothing(prose: RunProse, source: WriteSource) -> None:
    path = source("draft.prose", FIXABLE)
    assert prose("check", "--fix", "draft.prose").returncode == 1
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    again = prose("check", "--fix", "draft.prose")
    assert again.returncode == 1
    assert path.read_text(encoding="utf-8") == FIXED
    assert path.stat().st_mtime_ns == 1_000_000_000, "a file with nothing to fix is not rewritten"
    # Nothing fixed: the summary plain `prose check` gives.
    assert again.stderr.splitlines()[-1] == "Found 1 error in 1 file (1 checked)."


def test_diff_prints_the_fixes_and_writes_nothing(prose: RunProse, source: WriteSource) -> None:
    path = source("draft.prose", FIXABLE)
    result = prose("check", "--diff", "draft.prose")
    assert result.returncode == 1
    assert path.read_text(encoding="utf-8") == FIXABLE
    lines = result.stdout.splitlines()
    assert lines[0] == "--- draft.prose (original)"
    assert lines[1] == "+++ draft.prose (fixed)"
    assert '-const draft = session "Draft the piece"' in lines
    assert '+let draft = session "Draft the piece"' in lines
    assert "+loop (max: 10):" in lines
    assert "+    context: draft" in lines
    assert "E051" not in result.stdout  # the diff only, as ruff prints it
    assert result.stderr.splitlines()[-1] == (
        "Would fix 3 problems in 1 file (1 checked); 1 would remain (1 error)."
    )


def test_diff_wins_over_fix(prose: RunProse, source: WriteSource) -> None:
    path = source("draft.prose", FIXABLE)
    result = prose("check", "--fix", "--diff", "draft.prose")
    assert result.returncode == 1
    assert path.read_text(encoding="utf-8") == FIXABLE
    assert "+loop (max: 10):" in result.stdout.splitlines()


def test_diff_without_fixes_exits_0_even_with_errors(prose: RunProse, source: WriteSource) -> None:
    source("clean.prose", CLEAN)
    source("stuck.prose", "do publish\n")
    result = prose("check", "--diff", "clean.prose", "stuck.prose")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        "No fixes available (2 checked); 1 would remain (1 error)."
    )


def test_diff_marks_a_last_line_without_a_line_break(prose: RunProse, source: WriteSource) -> None:
    source("tail.prose", 'loop:\n  session "Again"')
    result = prose("check", "--diff", "tail.prose")
    assert result.returncode == 1
    assert "-loop:\n+loop (max: 10):\n" in result.stdout
    assert result.stdout.endswith('   session "Again"\n\\ No newline at end of file\n')


def test_a_file_with_syntax_errors_is_not_touched(prose: RunProse, source: WriteSource) -> None:
    text = FIXABLE + 'sesion "typo"\n'
    path = source("broken.prose", text)
    result = prose("check", "--fix", "broken.prose")
    assert result.returncode == 1
    assert path.read_text(encoding="utf-8") == text
    assert "prose: broken.prose: not fixed: 1 syntax error (fix it first)" in result.stderr
    assert "W018" in result.stdout and "E005" in result.stdout
    diff = prose("check", "--diff", "broken.prose")
    assert diff.returncode == 0 and diff.stdout == ""


def test_a_fix_never_takes_a_comment_with_it(prose: RunProse, source: WriteSource) -> None:
    # Both duplicates repeat the same value; deleting the second `model` line would delete
    # its comment too, so only the `prompt` line goes.
    text = (
        "agent writer:\n"
        "  model: sonnet\n"
        '  prompt: "Write"\n'
        "  model: sonnet  # the cheaper one on purpose\n"
        '  prompt: "Write"\n'
    )
    path = source("agent.prose", text)
    result = prose("check", "--fix", "agent.prose")
    expected = (
        "agent writer:\n"
        "  model: sonnet\n"
        '  prompt: "Write"\n'
        "  model: sonnet  # the cheaper one on purpose\n"
    )
    assert path.read_text(encoding="utf-8") == expected
    assert result.returncode == 1
    assert "E009" in result.stdout
    assert "1 fixed, 1 remaining (1 error)" in result.stderr


def test_fix_leaves_ignored_and_suppressed_rules_alone(
    prose: RunProse, source: WriteSource
) -> None:
    path = source("draft.prose", ALL_FIXABLE)
    result = prose("check", "--fix", "--ignore", "W018", "draft.prose")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text(encoding="utf-8") == ALL_FIXED.replace("loop (max: 10):", "loop:")
    path = source("kept.prose", 'const c = "x"\nc = "y"  # prose: ignore[E048]\n')
    result = prose("check", "--fix", "kept.prose")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text(encoding="utf-8") == 'const c = "x"\nc = "y"  # prose: ignore[E048]\n'


def test_fix_keeps_byte_order_mark_and_line_endings(prose: RunProse, source: WriteSource) -> None:
    path = source("crlf.prose", "\ufeff" + ALL_FIXABLE.replace("\n", "\r\n"))
    result = prose("check", "--fix", "crlf.prose")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == b"\xef\xbb\xbf" + ALL_FIXED.replace("\n", "\r\n").encode()


def test_fix_on_standard_input_prints_the_fixed_text(prose: RunProse) -> None:
    result = prose("check", "--fix", "-", stdin=FIXABLE)
    assert result.returncode == 1
    assert result.stdout == FIXED
    # The report goes to standard error, out of the way of the text.
    assert "<stdin>:9:4: error[E051]" in result.stderr
    assert "3 fixed, 1 remaining (1 error)." in result.stderr


def test_fix_on_standard_input_with_syntax_errors_prints_it_unchanged(prose: RunProse) -> None:
    text = 'loop:\n  session "x"\nsesion "typo"\n'
    result = prose("check", "--fix", "-", stdin=text)
    assert result.returncode == 1
    assert result.stdout == text


def test_diff_on_standard_input(prose: RunProse) -> None:
    result = prose("check", "--diff", "-", stdin=ALL_FIXABLE)
    assert result.returncode == 1
    assert result.stdout.splitlines()[:2] == ["--- <stdin> (original)", "+++ <stdin> (fixed)"]


# The mode bits refuse the write even to root (writeback.py): no skip for root.
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX mode bits")
def test_a_file_that_cannot_be_written_exits_2(prose: RunProse, source: WriteSource) -> None:
    path = source("locked.prose", ALL_FIXABLE)
    path.chmod(stat.S_IRUSR)
    try:
        result = prose("check", "--fix", "locked.prose")
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert result.returncode == 2
    assert "prose: error: cannot write locked.prose: the file is read-only" in result.stderr
    assert path.read_text(encoding="utf-8") == ALL_FIXABLE
    # What could not be written is still reported as there.
    assert "W018" in result.stdout
    assert result.stderr.splitlines()[-1].endswith("; 1 file could not be written.")


def test_fix_in_a_directory_counts_files(prose: RunProse, source: WriteSource) -> None:
    source("d/a.prose", ALL_FIXABLE)
    source("d/b.prose", CLEAN)
    source("d/c.prose", FIXABLE)
    result = prose("check", "--fix", "d")
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "Found 7 problems in 2 files (3 checked): 6 fixed, 1 remaining (1 error)."
    )


# --------------------------------------------------------------------------- did you mean


def test_near_names_are_shown_as_help(prose: RunProse, source: WriteSource) -> None:
    source(
        "names.prose",
        'agent writer:\n  model: sonnet\n\nlet draft = session: writter\n  prompt: "x"\n'
        'session "Polish"\n  context: drat\n'
        'parallel (on-fial: "continue"):\n  a = session "a"\n  b = session "b"\n',
    )
    result = prose("check", "--color", "never", "names.prose")
    lines = result.stdout.splitlines()

    def help_after(code: str) -> str:
        start = next(i for i, line in enumerate(lines) if f"[{code}]" in line)
        return next(line for line in lines[start + 1 :] if line.startswith("  help:"))

    assert help_after("E007") == "  help: did you mean `writer`?"
    assert help_after("E045") == "  help: did you mean `draft`?"
    assert help_after("W005") == "  help: did you mean `on-fail`?"


def test_blocks_and_keywords_get_help_from_the_same_measure(
    prose: RunProse, source: WriteSource
) -> None:
    # Neither has a quick fix; the hint measures closeness as the fixes do.
    source(
        "blocks.prose",
        'block review(x):\n  session "r {x}"\n\ndo reveiw("a")\nsesion "typo"\nzzz "far"\n',
    )
    result = prose("check", "--color", "never", "blocks.prose")
    lines = result.stdout.splitlines()
    block = next(i for i, line in enumerate(lines) if "[E051]" in line)
    assert lines[block + 3] == "  help: did you mean `review`?"
    keyword = next(i for i, line in enumerate(lines) if "`sesion` does not start" in line)
    assert lines[keyword + 3] == "  help: did you mean `session`?"
    far = next(i for i, line in enumerate(lines) if "`zzz` does not start" in line)
    assert not any(line.startswith("  help:") for line in lines[far + 1 :])


def test_a_message_that_already_asks_gets_no_second_help(
    prose: RunProse, source: WriteSource
) -> None:
    source("prop.prose", 'agent writer:\n  modle: sonnet\n  prompt: "x"\n')
    result = prose("check", "--color", "never", "prop.prose")
    assert "(did you mean `model`?)" in result.stdout
    assert "help:" not in result.stdout


def test_several_near_names_are_listed(prose: RunProse, source: WriteSource) -> None:
    source(
        "many.prose",
        'let draft1 = session "a"\nlet draft2 = session "b"\nsession "c"\n  context: draft\n',
    )
    result = prose("check", "--color", "never", "many.prose")
    helps = [line for line in result.stdout.splitlines() if line.startswith("  help:")]
    # Equally close: in the order difflib ranks them.
    assert helps in (
        ["  help: did you mean `draft1` or `draft2`?"],
        ["  help: did you mean `draft2` or `draft1`?"],
    )


def test_no_help_without_a_near_name(prose: RunProse, source: WriteSource) -> None:
    source("far.prose", 'session "c"\n  context: zzzzzz\n')
    result = prose("check", "--color", "never", "far.prose")
    assert "E045" in result.stdout
    assert "help:" not in result.stdout


def test_concise_format_has_no_help_lines(prose: RunProse, source: WriteSource) -> None:
    source("names.prose", 'let draft = "x"\nsession "Polish"\n  context: drat\n')
    result = prose("check", "--format", "concise", "names.prose")
    assert "E045" in result.stdout
    assert "help" not in result.stdout


# --------------------------------------------------------------------------- unsafe fixes

# An undefined agent with no near name: the preferred fix creates a stub, a guess at what
# was meant that the user must review.
UNDEFINED_AGENT = 'session: ghost\n  prompt: "boo"\n\nloop:\n  session "x"\n'


def test_unsafe_fixes_are_counted_but_not_applied_by_default(
    prose: RunProse, source: WriteSource
) -> None:
    path = source("ghost.prose", UNDEFINED_AGENT)
    result = prose("check", "--fix", "ghost.prose")
    assert result.returncode == 1
    assert path.read_text(encoding="utf-8") == UNDEFINED_AGENT.replace("loop:", "loop (max: 10):")
    assert result.stderr.splitlines()[-1] == (
        "Found 2 problems in 1 file (1 checked): 1 fixed, 1 remaining (1 error); "
        "1 more fixable with --unsafe-fixes."
    )


def test_unsafe_fixes_apply_the_preferred_fix(prose: RunProse, source: WriteSource) -> None:
    path = source("ghost.prose", UNDEFINED_AGENT)
    result = prose("check", "--fix", "--unsafe-fixes", "ghost.prose")
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = path.read_text(encoding="utf-8")
    assert fixed.startswith("agent ghost:\n  model: sonnet\n")
    assert "loop (max: 10):" in fixed
    assert result.stderr.splitlines()[-1] == (
        "Found 2 problems in 1 file (1 checked): 2 fixed, 0 remaining."
    )
    again = prose("check", "ghost.prose")
    assert again.returncode == 0 and again.stdout == ""


def test_unsafe_fixes_with_diff(prose: RunProse, source: WriteSource) -> None:
    path = source("ghost.prose", UNDEFINED_AGENT)
    result = prose("check", "--diff", "--unsafe-fixes", "ghost.prose")
    assert result.returncode == 1
    assert "+agent ghost:" in result.stdout.splitlines()
    assert path.read_text(encoding="utf-8") == UNDEFINED_AGENT


# --------------------------------------------------------------------------- property

# Fragments with fixable problems, most with a comment where a fix edits or deletes a line.
# `{i}` makes each fragment's names its own.
_FRAGMENTS = (
    'const c{i} = "x"\nc{i} = "y"  # on purpose\n',
    'loop:  # until someone stops it\n  session "Poll {i}"\n',
    'agent a{i}:\n  model: sonnet  # the cheap one\n  model: sonnet\n  prompt: "x"\n',
    'agent b{i}:\n  model: sonnet\n  prompt: "x"\n  prompt: "x"  # twice\n',
    'let draft{i} = session "Draft"\nsession "Polish"\n  context: draf{i}  # typo\n',
    'agent writer{i}:\n  model: sonnet\n  prompt: "x"\nsession: writter{i}  # typo\n',
    'parallel (on-fial: "continue"):  # typo\n  p{i} = session "a"\n  q{i} = session "b"\n',
    "# a comment on its own line\n",
    "\n",
)


@given(
    choices=st.lists(st.integers(0, len(_FRAGMENTS) - 1), min_size=1, max_size=8),
    crlf=st.booleans(),
    unsafe=st.booleans(),
)
@settings(max_examples=60, deadline=None)
def test_fixing_keeps_comments_brings_nothing_and_settles(
    choices: list[int], crlf: bool, unsafe: bool
) -> None:
    from collections import Counter

    from openprose.checking import check_text
    from openprose.cli.fix import fix_text
    from openprose.format import _comments
    from openprose.syntax import parse

    text = "".join(_FRAGMENTS[c].format(i=n) for n, c in enumerate(choices))
    if crlf:
        text = text.replace("\n", "\r\n")

    def check(source: str) -> list[Diagnostic]:
        return check_text(source, None)

    before = check(text)
    outcome = fix_text(text, None, None, before, check, unsafe)
    assert _comments(parse(outcome.text)) == _comments(parse(text))
    assert outcome.diagnostics == check(outcome.text)
    assert outcome.fixed == len(before) - len(outcome.diagnostics) >= 0
    left, was = Counter(d.code for d in outcome.diagnostics), Counter(d.code for d in before)
    assert all(left[code] <= was[code] for code in left), "a fix brought a new problem"
    if crlf:
        assert "\n" not in outcome.text.replace("\r\n", "")
    again = fix_text(outcome.text, None, None, outcome.diagnostics, check, unsafe)
    assert again.text == outcome.text and again.fixed == 0
