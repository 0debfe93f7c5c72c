"""Code lenses: "Run program" only on programs that would run."""

from __future__ import annotations

from pathlib import Path

from openprose.ide import analyze_document
from openprose.ide.commands import (
    CLIENT_RUN_COMMAND,
    CLIENT_RUN_WITH_INPUTS_COMMAND,
    RUN_COMMAND,
)
from openprose.ide.lens import code_lenses
from openprose.ide.types import CodeLens

PLAIN = 'let x = session "Say hello"\noutput greeting = x\n'
WITH_INPUTS = 'input topic: "What to research"\noutput findings = session "Research {topic}"\n'
BROKEN = 'output greeting = missing_name\nsession "x"\n'


def lenses(text: str, client_runs: bool = False, runnable: bool = True) -> list[CodeLens]:
    path = Path("/work/programs/demo.prose")
    return code_lenses(analyze_document(text, path=path), runnable, client_runs=client_runs)


def titles(found: list[CodeLens]) -> list[tuple[str, str]]:
    return [(lens.title, lens.command) for lens in found]


def test_a_clean_program_gets_the_server_side_run_lens_on_its_first_statement() -> None:
    (lens,) = lenses(PLAIN)
    assert (lens.title, lens.command) == ("▶ Run program", RUN_COMMAND)
    assert lens.arguments == (Path("/work/programs/demo.prose").resolve().as_uri(),)
    assert (lens.range.start, lens.range.end) == ((0, 0), (0, 3))


def test_a_program_with_an_error_has_no_lens() -> None:
    diagnostics = analyze_document(BROKEN).diagnostics
    assert any(d.is_error for d in diagnostics)
    assert lenses(BROKEN) == []
    assert lenses(BROKEN, client_runs=True) == []


def test_the_diagnostics_the_user_sees_decide() -> None:
    analysis = analyze_document(PLAIN)
    errors = analyze_document(BROKEN).diagnostics
    assert code_lenses(analysis, True, diagnostics=errors) == []
    assert len(code_lenses(analysis, True, diagnostics=[])) == 1


def test_nothing_without_a_runner_or_without_statements() -> None:
    assert lenses(PLAIN, runnable=False) == []
    assert lenses("# only a comment\n") == []
    assert lenses("") == []


def test_a_client_that_runs_programs_gets_its_own_commands() -> None:
    assert titles(lenses(PLAIN, client_runs=True)) == [("▶ Run program", CLIENT_RUN_COMMAND)]
    assert titles(lenses(WITH_INPUTS, client_runs=True)) == [
        ("▶ Run program", CLIENT_RUN_COMMAND),
        ("Run with inputs…", CLIENT_RUN_WITH_INPUTS_COMMAND),
    ]


def test_run_with_inputs_only_where_the_client_can_ask_for_them() -> None:
    assert titles(lenses(WITH_INPUTS)) == [("▶ Run program", RUN_COMMAND)]
