"""The human format's "did you mean" hints come from the analysis the diagnostics came from:
a file is parsed once, not once for its diagnostics and again for its hints (on a big file
the second analysis took as long as the check)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from openprose.cli import main
from openprose.syntax import parse

PROGRAM = 'let result = session "a"\nsession "use {reslt}"\nsession "b"\n  context: reslt\n'


def test_a_file_with_hints_is_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "typo.prose"
    path.write_text(PROGRAM)
    parsed: list[str] = []

    def counting(text: str) -> Any:
        parsed.append(text)
        return parse(text)

    monkeypatch.setattr("openprose.checking.parse", counting)
    monkeypatch.setattr("openprose.ide.analysis.parse", counting)
    assert main(["check", "--color", "never", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.count("help: did you mean `result`?") == 2
    assert parsed == [PROGRAM]


@pytest.mark.parametrize("form", ["human", "concise", "json"])
def test_the_formats_report_the_same_diagnostics(
    tmp_path: Path, form: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "typo.prose"
    path.write_text(PROGRAM)
    assert main(["check", "--color", "never", "--format", form, str(path)]) == 1
    out = capsys.readouterr().out
    assert out.count("E044") == 1
    assert out.count("E045") == 1


def test_the_hints_of_an_undefined_variable_load_no_fix_and_no_formatter(tmp_path: Path) -> None:
    # Their names are found without making the quick fixes: loading every fix module, the
    # formatter their edits come from and the editor's types took a tenth of a second's
    # share of the human report of a big program.
    path = tmp_path / "typo.prose"
    path.write_text(PROGRAM)
    script = (
        "import sys\nfrom openprose.cli import main\n"
        f"main(['check', '--color', 'never', {str(path)!r}])\n"
        "print('\\n'.join(sys.modules), file=sys.stderr)"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.stdout.count("help: did you mean `result`?") == 2
    loaded = set(run.stderr.split())
    assert "openprose.ide.fixes.variables" in loaded
    unwanted = {"openprose.format", "openprose.ide.fixes.registry", "openprose.ide.types"}
    assert not unwanted & loaded
