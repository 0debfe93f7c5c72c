"""prose-ls in a real, headless Neovim, through the set-up users get (editors/nvim).

One Neovim run (tests/editors/nvim/driver.lua) opens a program in a project directory and
records what the editor's own LSP client shows: filetype, syntax groups, the attached client,
diagnostics, hover, go to definition, completion, rename, formatting, format on save and `=`
indentation. The tests below assert on that record. CI installs Neovim (`apt-get install -y
neovim`); without it these tests skip,
and under CI they fail.
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
DRIVER = Path(__file__).resolve().parent / "nvim" / "driver.lua"
RUNTIME = ROOT / "editors" / "nvim"


def formatted(lines: list[str]) -> list[str]:
    text = "\n".join(lines) + "\n"
    return format_module(parse(text), text).text.rstrip("\n").split("\n")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    nvim = editor("nvim", "neovim")
    tmp = tmp_path_factory.mktemp("nvim")
    project = tmp / "project"
    (project / ".git").mkdir(parents=True)  # the root marker
    (project / "flows").mkdir()
    program = project / "flows" / "brief.prose"
    program.write_text(PROGRAM, encoding="utf-8")
    out = tmp / "result.json"
    home = tmp / "home"
    env = {
        **editor_env(
            home,
            out=str(out),
            nvim_runtime=str(RUNTIME),
            server_cmd=json.dumps([sys.executable, "-m", "openprose.lsp"]),
            indent_samples=json.dumps(
                {
                    "example": EXAMPLE.read_text(encoding="utf-8").rstrip("\n"),
                    "misindented": MISINDENTED.rstrip("\n"),
                }
            ),
        ),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
    }
    argv = [nvim, "--headless", "--clean", "-u", str(DRIVER), str(program)]
    completed = run_editor(argv, env, cwd=project / "flows")
    if not out.exists():
        pytest.fail(
            f"Neovim wrote no results (exit {completed.returncode})\n"
            f"{completed.stdout}\n{completed.stderr}"
        )
    result = json.loads(out.read_text(encoding="utf-8"))
    result["project"] = project
    result["program"] = program
    assert "error" not in result, result["error"]
    return result


def step(run: dict[str, Any], name: str) -> Any:
    found = run["steps"].get(name)
    assert found is not None, f"step {name} did not run ({run['order']})"
    assert found["ok"], f"step {name} failed: {found['error']}"
    return found["value"]


def test_filetype_and_buffer_settings(run: dict[str, Any]) -> None:
    value = step(run, "filetype")
    assert value == {
        "filetype": "prose",
        "syntax": "prose",
        "shiftwidth": 2,
        "expandtab": True,
        "commentstring": "# %s",
        "indentexpr": "ProseIndent(v:lnum)",
    }


def test_syntax_highlighting(run: dict[str, Any]) -> None:
    assert step(run, "highlight") == {
        "agent_keyword": "proseDefine",
        "agent_name": "proseAgentName",
        "model": "proseModel",
        "property": "proseProperty",
        "comment": "proseComment",
        "string": "proseString",
        "triple_string": "proseTripleString",
        "interpolation": "proseInterpolation",
        "discretion": "proseDiscretion",
        "agent_ref": "proseAgentRef",
        "variable": "proseVariable",
    }


def test_server_attaches_at_the_project_root(run: dict[str, Any]) -> None:
    value = step(run, "attach")
    assert value["name"] == "prose"
    assert Path(value["root_dir"]).resolve() == run["project"].resolve()
    assert value["cmd"] == [sys.executable, "-m", "openprose.lsp"]


def test_undefined_agent_is_reported(run: dict[str, Any]) -> None:
    diagnostics = step(run, "diagnostics")
    e007 = [d for d in diagnostics if d["code"] == "E007"]
    assert len(e007) == 1, diagnostics
    line = line_of("let summary")
    assert (e007[0]["lnum"], e007[0]["col"]) == (line, PROGRAM.split("\n")[line].index("editor"))
    assert "editor" in e007[0]["message"]
    assert e007[0]["severity"] == 1  # vim.diagnostic.severity.ERROR


def test_hover_on_an_agent(run: dict[str, Any]) -> None:
    hover = step(run, "hover")
    assert "writer" in hover
    assert "sonnet" in hover


def test_definition_jumps_to_the_agent(run: dict[str, Any]) -> None:
    value = step(run, "definition")
    assert value["line"] == line_of("agent writer") == value["agent_line"]
    assert value["from"] == line_of("let draft")
    assert value["buffer"]


def test_completion_after_session_lists_the_agents(run: dict[str, Any]) -> None:
    labels = step(run, "completion")
    assert "writer" in labels


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
    assert "  model: sonnet" in expected
    assert value["buffer"] == expected
    assert value["disk"] == expected
    assert run["program"].read_text(encoding="utf-8") == "\n".join(expected) + "\n"


def test_indent_expression(run: dict[str, Any]) -> None:
    value = step(run, "indent")
    example = EXAMPLE.read_text(encoding="utf-8")
    assert value["example"] == example.rstrip("\n")  # canonical code is left as it is
    assert value["misindented"] == INDENTED.rstrip("\n")
    assert value["typed_agent"] == 'agent a:\n  model: opus\n  prompt: "p"'
    assert value["typed_session"] == 'let x = session: a\n  prompt: "q"'


def test_the_server_stops_with_the_editor(run: dict[str, Any]) -> None:
    assert run["clients_stopped"]


RUN_DRIVER = """
vim.opt.runtimepath:append(os.getenv("PROSE_NVIM_RUNTIME"))
local python = os.getenv("PROSE_PYTHON")
require("openprose").setup({
  cmd = { python, "-m", "openprose.lsp" },
  run_cmd = { python, "-m", "openprose", "run" },
})
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("PROSE_PROGRAM")))
vim.api.nvim_buf_set_lines(0, -1, -1, false, { 'output farewell = session "Wave goodbye"' })
vim.cmd("ProseRun --json")
local job = vim.b.terminal_job_id
local status = vim.fn.jobwait({ job }, 60000)[1]
vim.wait(200)
local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
local out = io.open(os.getenv("PROSE_OUT"), "w")
out:write(vim.fn.json_encode({ status = status, lines = lines }))
out:close()
vim.cmd("qall!")
"""


def test_prose_run_runs_the_saved_program_in_a_terminal(tmp_path: Path) -> None:
    nvim = editor("nvim", "neovim")
    folder = tmp_path / "flows"
    folder.mkdir()
    program = folder / "hello.prose"
    program.write_text('output greeting = session "Say hello"\n', encoding="utf-8")
    driver = tmp_path / "run.lua"
    driver.write_text(RUN_DRIVER, encoding="utf-8")
    out = tmp_path / "result.json"
    env = editor_env(
        tmp_path / "home",
        out=str(out),
        nvim_runtime=str(RUNTIME),
        python=sys.executable,
        program=str(program),
    )
    completed = run_editor([nvim, "--headless", "--clean", "-u", str(driver)], env, tmp_path)
    assert out.exists(), f"{completed.stdout}\n{completed.stderr}"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["status"] == 0, result["lines"]
    screen = "".join(result["lines"])  # the terminal wraps long lines
    assert '"status": "success"' in screen
    assert "Wave goodbye" in screen  # the unsaved line was saved before the run
    assert "Wave goodbye" in program.read_text(encoding="utf-8")
    assert any((folder / ".prose" / "runs").glob("*/state.md"))
