"""``prose compile`` end to end: validate, then print the canonical form without comments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli.fixture_types import RunProse, WriteSource

PROGRAM = """\
# A small program
agent  editor :   # the editor
    model:sonnet
    prompt: "You tighten prose"


    # where drafts come from
let draft=session "Write two sentences about tides"  # first



session: editor
    prompt:"Shorten {draft}"
    context:{ draft }
# the end
"""

COMPILED = """\
agent editor:
  model: sonnet
  prompt: "You tighten prose"
let draft = session "Write two sentences about tides"
session: editor
  prompt: "Shorten {draft}"
  context: { draft }
"""


def test_valid_program_prints_canonical_form_without_comments(
    prose: RunProse, source: WriteSource
) -> None:
    path = source("prog.prose", PROGRAM)
    result = prose("compile", "prog.prose")
    assert result.returncode == 0, result.stderr
    assert result.stdout == COMPILED
    assert "#" not in result.stdout
    assert path.read_bytes() == PROGRAM.encode(), "compile must not touch the file"


def test_compiled_output_compiles_to_itself(prose: RunProse, source: WriteSource) -> None:
    source("compiled.prose", COMPILED)
    result = prose("compile", "compiled.prose")
    assert result.returncode == 0, result.stderr
    assert result.stdout == COMPILED


def test_hash_inside_strings_is_kept(prose: RunProse, source: WriteSource) -> None:
    source("hash.prose", 'session  "Fix issue #12"  # a comment\n')
    result = prose("compile", "hash.prose")
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'session "Fix issue #12"\n'


def test_triple_quoted_prompt_is_kept_verbatim(prose: RunProse, source: WriteSource) -> None:
    program = 'agent a:\n    model: sonnet\n    prompt: """\n  # not a comment\n     odd\n"""\n'
    source("triple.prose", program)
    result = prose("compile", "triple.prose")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        'agent a:\n  model: sonnet\n  prompt: """\n  # not a comment\n     odd\n"""\n'
    )


def test_warnings_do_not_stop_compilation(prose: RunProse, source: WriteSource) -> None:
    # W019: an ambiguous condition is a warning, not an error.
    source("warn.prose", 'loop until **x** (max: 2):\n    session "go"\n')
    result = prose("compile", "warn.prose")
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'loop until **x** (max: 2):\n  session "go"\n'


def test_invalid_program_exits_1_with_diagnostics_on_stderr(
    prose: RunProse, source: WriteSource
) -> None:
    source("bad.prose", 'session "ok"\nsession "unterminated\n')
    result = prose("compile", "bad.prose")
    assert result.returncode == 1
    assert result.stdout == ""
    assert "E001" in result.stderr
    assert "bad.prose:2:" in result.stderr


def test_semantic_error_exits_1(prose: RunProse, source: WriteSource) -> None:
    source("undefined.prose", "session: nobody\n")
    result = prose("compile", "undefined.prose")
    assert result.returncode == 1
    assert result.stdout == ""
    assert "error[" in result.stderr


def test_missing_file_exits_2(prose: RunProse) -> None:
    result = prose("compile", "missing.prose")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "missing.prose" in result.stderr


def test_stdin(prose: RunProse) -> None:
    result = prose("compile", "-", stdin=PROGRAM)
    assert result.returncode == 0, result.stderr
    assert result.stdout == COMPILED


def test_crlf_program_compiles_with_crlf(source: WriteSource, tmp_path: Path) -> None:
    # The `prose` fixture reads output as text (CRLF would come back as LF): read bytes.
    source("crlf.prose", PROGRAM.replace("\n", "\r\n"))
    result = subprocess.run(
        [sys.executable, "-m", "openprose", "compile", "crlf.prose"],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == COMPILED.replace("\n", "\r\n").encode()
