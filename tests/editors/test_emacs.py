"""prose-ls in a real Emacs (batch mode), through prose-mode and eglot (editors/emacs).

One Emacs run (tests/editors/emacs/driver.el) opens a program in a project directory and
records what the editor shows: the mode, its faces, the eglot connection and project root,
flymake diagnostics, hover, go to definition (xref), completion (completion-at-point),
rename, formatting, format on save and indentation. The tests below assert on that record.
CI installs Emacs and eglot (`apt-get install -y emacs-nox elpa-eglot`);
without them these tests skip, and under CI they fail.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from openprose.format import format_module
from openprose.syntax import parse
from tests.editors.editor_tools import (
    INDENTED,
    MISINDENTED,
    PROGRAM,
    editor,
    editor_env,
    line_of,
    run_editor,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "research-brief.prose"
DRIVER = Path(__file__).resolve().parent / "emacs" / "driver.el"
LISP = ROOT / "editors" / "emacs"

TYPED = """\
agent a:
  model: opus
  prompt: "p"
let x = session: a
  prompt: "q"
if **c**:
  session "a"
else:
  session "b\""""


def formatted(lines: list[str]) -> list[str]:
    text = "\n".join(lines)
    return format_module(parse(text), text).text.split("\n")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    emacs = editor("emacs", "emacs-nox elpa-eglot")
    tmp = tmp_path_factory.mktemp("emacs")
    project = tmp / "project"
    (project / "flows").mkdir(parents=True)
    (project / "prose.toml").write_text("", encoding="utf-8")  # the root marker
    program = project / "flows" / "brief.prose"
    program.write_text(PROGRAM, encoding="utf-8")
    out = tmp / "result.json"
    home = tmp / "home"
    home.mkdir()
    env = editor_env(
        home,
        out=str(out),
        emacs_lisp=str(LISP),
        server_cmd=json.dumps([sys.executable, "-m", "openprose.lsp"]),
        indent_samples=json.dumps(
            {
                "example": EXAMPLE.read_text(encoding="utf-8"),
                "misindented": MISINDENTED,
            }
        ),
    )
    argv = [emacs, "--batch", "-Q", "-l", str(DRIVER), str(program)]
    completed = run_editor(argv, env, cwd=project / "flows")
    if not out.exists():
        pytest.fail(
            f"Emacs wrote no results (exit {completed.returncode})\n"
            f"{completed.stdout}\n{completed.stderr}"
        )
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["error"] is None, f"{result['error']}\n{completed.stderr}"
    result["steps"] = {s["name"]: s for s in result["steps"]}
    result["project"] = project
    result["program"] = program
    return result


def step(run: dict[str, Any], name: str) -> Any:
    found = run["steps"].get(name)
    assert found is not None, f"step {name} did not run ({list(run['steps'])})"
    assert found["ok"], f"step {name} failed: {found['error']}"
    return found["value"]


def test_prose_mode_is_registered(run: dict[str, Any]) -> None:
    assert step(run, "load") is True  # an eglot-server-programs entry for prose-mode
    assert step(run, "mode") == {
        "major_mode": "prose-mode",
        "indent_line_function": "prose-indent-line",
        "comment_start": "# ",
        "indent_tabs_mode": False,
        "format_on_save": True,
    }


def test_font_lock(run: dict[str, Any]) -> None:
    assert step(run, "highlight") == {
        "agent_keyword": "font-lock-keyword-face",
        "agent_name": "font-lock-type-face",
        "model": "font-lock-constant-face",
        "property": "prose-property-face",
        "comment": "font-lock-comment-face",
        "string": "font-lock-string-face",
        "triple_string": "font-lock-string-face",  # after a quote inside """..."""
        "after_triple_string": "prose-property-face",  # the string ended where it should
        "interpolation": "prose-interpolation-face",
        "discretion": "prose-discretion-face",
        "agent_ref": "font-lock-type-face",
        "variable": "font-lock-variable-name-face",
    }


def test_eglot_starts_the_server_at_the_project_root(run: dict[str, Any]) -> None:
    value = step(run, "attach")
    assert Path(value["root"]).resolve() == run["project"].resolve()
    assert value["command"] == [sys.executable, "-m", "openprose.lsp"]


def test_undefined_agent_is_reported(run: dict[str, Any]) -> None:
    diagnostics = step(run, "diagnostics")
    e007 = [d for d in diagnostics if "E007" in d["text"]]
    assert len(e007) == 1, diagnostics
    line = line_of("let summary")
    assert (e007[0]["line"], e007[0]["col"]) == (line, PROGRAM.split("\n")[line].index("editor"))
    assert "`editor` is not defined" in e007[0]["text"]
    assert e007[0]["type"] == "eglot-error"


def test_hover_on_an_agent(run: dict[str, Any]) -> None:
    hover = step(run, "hover")
    assert "writer" in hover
    assert "sonnet" in hover


def test_definition_jumps_to_the_agent(run: dict[str, Any]) -> None:
    value = step(run, "definition")
    assert value["from"] == line_of("let draft")
    assert value["line"] == line_of("agent writer")
    assert value["same_buffer"]


def test_completion_after_session_lists_the_agents(run: dict[str, Any]) -> None:
    value = step(run, "completion")
    assert value["eglot_capf"]
    assert "writer" in value["labels"]


def test_rename_changes_every_occurrence(run: dict[str, Any]) -> None:
    lines = step(run, "rename")
    text = "\n".join(lines)
    assert "let outline = session: writer" in lines
    assert "Summarise {outline} and keep" in text
    assert "  context: outline" in lines
    assert '    prompt: "Write a draft"' in lines  # prose inside a string is not a reference
    assert re.findall(r"\bdraft\b", text) == ["draft"]


def test_diagnostics_follow_edits(run: dict[str, Any]) -> None:
    value = step(run, "diagnostics_after_edit")
    assert value["cleared"], value["diagnostics"]


def test_formatting_fixes_indentation(run: dict[str, Any]) -> None:
    value = step(run, "format")
    assert value["before"] != value["after"]
    assert "    model: sonnet" in value["before"]
    assert "  model: sonnet" in value["after"]
    assert value["after"] == formatted(value["before"])


def test_format_on_save_writes_the_formatted_file(run: dict[str, Any]) -> None:
    value = step(run, "format_on_save")
    assert "      model: sonnet" in value["before"]
    expected = formatted(value["before"])
    assert expected != value["before"]
    assert value["buffer"] == expected
    assert value["disk"] == expected
    assert run["program"].read_text(encoding="utf-8") == "\n".join(expected)


def test_indentation(run: dict[str, Any]) -> None:
    value = step(run, "indent")
    example = EXAMPLE.read_text(encoding="utf-8")
    assert value["example"] == example  # canonical code is left as it is
    assert value["misindented"] == INDENTED
    assert value["typed"] == TYPED
    assert value["after_property"] == 2  # a new line after a property stays with them
    assert value["else_typed"] == 0
    assert value["commented"] == "# agent a:"


def test_the_server_stops_with_the_editor(run: dict[str, Any]) -> None:
    assert step(run, "shutdown") is None


RUN_DRIVER = r"""
(add-to-list 'load-path (getenv "PROSE_LISP"))
(require 'prose-mode)
(require 'json)
(setq prose-run-command (list (getenv "PROSE_PYTHON") "-m" "openprose" "run"))
(find-file (getenv "PROSE_PROGRAM"))
(goto-char (point-max))
(insert "output farewell = session \"Wave goodbye\"\n")
(let ((finished nil))
  (add-hook 'compilation-finish-functions (lambda (_buffer status) (setq finished status)))
  (prose-run '("--json"))
  (with-timeout (60 (setq finished "timeout"))
    (while (not finished) (accept-process-output nil 0.1)))
  (with-temp-file (getenv "PROSE_OUT")
    (insert (json-encode
             (list (cons 'status finished)
                   (cons 'output (with-current-buffer "*prose run*" (buffer-string))))))))
"""


def test_prose_run_runs_the_saved_program_in_a_compilation_buffer(tmp_path: Path) -> None:
    emacs = editor("emacs", "emacs-nox")
    folder = tmp_path / "flows"
    folder.mkdir()
    program = folder / "hello.prose"
    program.write_text('output greeting = session "Say hello"\n', encoding="utf-8")
    driver = tmp_path / "run.el"
    driver.write_text(RUN_DRIVER, encoding="utf-8")
    out = tmp_path / "result.json"
    env = editor_env(
        tmp_path / "home", out=str(out), lisp=str(LISP), python=sys.executable, program=str(program)
    )
    completed = run_editor([emacs, "--batch", "-Q", "-l", str(driver)], env, tmp_path)
    assert out.exists(), f"{completed.stdout}\n{completed.stderr}"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["status"].startswith("finished"), result
    assert '"status": "success"' in result["output"]
    assert "Wave goodbye" in result["output"]  # the unsaved line was saved before the run
    assert "Wave goodbye" in program.read_text(encoding="utf-8")
    assert any((folder / ".prose" / "runs").glob("*/state.md"))
