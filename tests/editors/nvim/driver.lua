-- Drives prose-ls from a real, headless Neovim through editors/nvim (the set-up users get).
--
--   PROSE_NVIM_RUNTIME=editors/nvim PROSE_SERVER_CMD='["python", "-m", "openprose.lsp"]' \
--   PROSE_OUT=result.json nvim --headless --clean -u driver.lua path/to/file.prose
--
-- Every step runs under pcall and records what the editor shows (values, not verdicts where
-- the Python test can judge); the steps go to PROSE_OUT as JSON and Neovim quits. The Python
-- side (tests/editors/test_neovim.py) writes the file and asserts on the results.
local uv = vim.uv or vim.loop
local t0 = uv.hrtime()
local out_path = os.getenv("PROSE_OUT") or "nvim-result.json"
local TIMEOUT = tonumber(os.getenv("PROSE_TIMEOUT_MS") or "15000")
local DEADLINE = tonumber(os.getenv("PROSE_DEADLINE_MS") or "60000")
local result = { steps = {}, order = {} }

-- Whatever happens, write what we have and quit: a headless Neovim with an error in its
-- init file would otherwise wait for input forever.
local function bail(message)
  result.error = message
  vim.fn.writefile({ vim.fn.json_encode(result) }, out_path)
  vim.cmd("cquit! 3")
end

local openprose
local setup_ok, setup_err = pcall(function()
  local runtime = assert(os.getenv("PROSE_NVIM_RUNTIME"), "set PROSE_NVIM_RUNTIME")
  local server_cmd = vim.fn.json_decode((assert(os.getenv("PROSE_SERVER_CMD"))))
  local v = vim.version()
  result.version = string.format("%d.%d.%d", v.major, v.minor, v.patch)

  vim.opt.swapfile = false
  vim.opt.shadafile = "NONE"
  vim.opt.more = false
  -- Before filetype detection is switched on (after this file), so ftdetect/ is found.
  vim.opt.runtimepath:prepend(runtime)

  openprose = require("openprose")
  openprose.setup({ cmd = server_cmd, settings = { debounce = 0 } })
end)
if not setup_ok then
  bail("set-up failed: " .. tostring(setup_err))
end
vim.defer_fn(function()
  bail("the driver did not finish in " .. DEADLINE .. " ms")
end, DEADLINE)

local function ms()
  return math.floor((uv.hrtime() - t0) / 1e6)
end

local function step(name, fn)
  local ok, value = pcall(fn)
  if ok then
    result.steps[name] = { ok = true, value = value, t_ms = ms() }
  else
    result.steps[name] = { ok = false, error = tostring(value), t_ms = ms() }
  end
  result.order[#result.order + 1] = name
  return ok and value or nil
end

local function wait(pred, timeout)
  return vim.wait(timeout or TIMEOUT, pred, 20)
end

local function prose_client(buf)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf })
    or vim.lsp.buf_get_clients(buf)
  for _, client in pairs(clients) do
    if client.name == "prose" then
      return client
    end
  end
end

local function all_clients()
  return vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function find(buf, pattern, nth)
  nth = nth or 1
  local seen = 0
  for i, line in ipairs(lines(buf)) do
    local col = 1
    while true do
      local s = line:find(pattern, col)
      if not s then
        break
      end
      seen = seen + 1
      if seen == nth then
        return i - 1, s - 1
      end
      col = s + 1
    end
  end
  error("not found: " .. pattern)
end

local function request(buf, method, line, col, extra)
  vim.api.nvim_win_set_cursor(0, { line + 1, col })
  local client = prose_client(buf)
  local params = vim.lsp.util.make_position_params(0, client and client.offset_encoding)
  params = vim.tbl_extend("force", params, extra or {})
  local responses, err = vim.lsp.buf_request_sync(buf, method, params, TIMEOUT)
  assert(responses, "no response: " .. tostring(err))
  for _, response in pairs(responses) do
    assert(not response.error, vim.inspect(response.error))
    return response.result
  end
end

local function diagnostics(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = d.user_data and d.user_data.lsp or {}
    out[#out + 1] = {
      lnum = d.lnum,
      col = d.col,
      message = d.message,
      code = d.code or lsp.code,
      severity = d.severity,
    }
  end
  return out
end

local function has_code(buf, code)
  for _, d in ipairs(diagnostics(buf)) do
    if d.code == code then
      return true
    end
  end
  return false
end

local function syntax_group(line, col)
  return vim.fn.synIDattr(vim.fn.synID(line + 1, col + 1, 1), "name")
end

local function run()
  local buf = vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(buf)

  step("filetype", function()
    return {
      filetype = vim.bo[buf].filetype,
      syntax = vim.b[buf].current_syntax,
      shiftwidth = vim.bo[buf].shiftwidth,
      expandtab = vim.bo[buf].expandtab,
      commentstring = vim.bo[buf].commentstring,
      indentexpr = vim.bo[buf].indentexpr,
    }
  end)

  step("highlight", function()
    local groups = {}
    local l, c = find(buf, "^agent")
    groups.agent_keyword = syntax_group(l, c)
    l, c = find(buf, "writer")
    groups.agent_name = syntax_group(l, c)
    l, c = find(buf, "sonnet")
    groups.model = syntax_group(l, c)
    l, c = find(buf, "model:")
    groups.property = syntax_group(l, c)
    l, c = find(buf, "^#")
    groups.comment = syntax_group(l, c + 2)
    l, c = find(buf, '"Write')
    groups.string = syntax_group(l, c + 2)
    l, c = find(buf, "open questions")
    groups.triple_string = syntax_group(l, c)
    l, c = find(buf, "{draft}")
    groups.interpolation = syntax_group(l, c + 1)
    l, c = find(buf, "%*%*the")
    groups.discretion = syntax_group(l, c + 3)
    l, c = find(buf, "session: editor")
    groups.agent_ref = syntax_group(l, c + 9)
    l, c = find(buf, "let draft")
    groups.variable = syntax_group(l, c + 4)
    return groups
  end)

  local client = step("attach", function()
    assert(wait(function()
      local c = prose_client(buf)
      return c ~= nil and c.initialized == true and not c:is_stopped()
    end), "the prose client did not attach")
    local c = prose_client(buf)
    return { name = c.name, root_dir = c.config.root_dir, cmd = c.config.cmd }
  end)
  if not client then
    return
  end

  step("diagnostics", function()
    assert(wait(function()
      return has_code(buf, "E007")
    end), "no E007 diagnostic")
    return diagnostics(buf)
  end)

  step("hover", function()
    local l, c = find(buf, "session: writer")
    local hover = request(buf, "textDocument/hover", l, c + 9)
    local contents = hover and hover.contents
    if type(contents) == "table" and contents.value then
      return contents.value
    end
    return vim.inspect(contents)
  end)

  step("definition", function()
    local l, c = find(buf, "session: writer")
    vim.api.nvim_win_set_cursor(0, { l + 1, c + 9 })
    vim.lsp.buf.definition()
    local target, _ = find(buf, "^agent writer")
    wait(function()
      return vim.api.nvim_win_get_cursor(0)[1] == target + 1
    end)
    local cursor = vim.api.nvim_win_get_cursor(0)
    return { from = l, line = cursor[1] - 1, col = cursor[2], agent_line = target,
             buffer = vim.api.nvim_buf_get_name(0) == path }
  end)

  step("completion", function()
    local count = vim.api.nvim_buf_line_count(buf)
    vim.api.nvim_buf_set_lines(buf, count, count, false, { "let extra = session: " })
    local response = request(buf, "textDocument/completion", count, #"let extra = session: ")
    vim.api.nvim_buf_set_lines(buf, count, count + 1, false, {})
    local items = response and (response.items or response) or {}
    local labels = {}
    for _, item in ipairs(items) do
      labels[#labels + 1] = item.label
    end
    return labels
  end)

  step("rename", function()
    local l, c = find(buf, "let draft")
    vim.api.nvim_win_set_cursor(0, { l + 1, c + 4 })
    vim.lsp.buf.rename("outline")
    assert(wait(function()
      return table.concat(lines(buf), "\n"):find("{outline}", 1, true) ~= nil
    end), "the rename was not applied")
    return lines(buf)
  end)

  step("diagnostics_after_edit", function()
    local l = find(buf, "^let outline")
    vim.api.nvim_buf_set_lines(buf, l, l, false, { "agent editor:", "  model: opus", "" })
    local cleared = wait(function()
      return not has_code(buf, "E007")
    end)
    return { cleared = cleared, diagnostics = diagnostics(buf) }
  end)

  step("format", function()
    local before = lines(buf)
    openprose.format(buf)
    return { before = before, after = lines(buf) }
  end)

  step("format_on_save", function()
    local l = find(buf, "^  model: sonnet")
    vim.api.nvim_buf_set_lines(buf, l, l + 2, false, {
      "      model: sonnet",
      '      prompt: "You write \\"plain\\" briefs"',
    })
    local before = lines(buf)
    vim.cmd("write")
    return { before = before, buffer = lines(buf), disk = vim.fn.readfile(path) }
  end)

  step("indent", function()
    -- `=` through indent/prose.vim, in a scratch buffer (no server attached).
    vim.cmd("enew")
    local scratch = vim.api.nvim_get_current_buf()
    vim.bo[scratch].buftype = "nofile"
    local sample = vim.fn.json_decode(os.getenv("PROSE_INDENT_SAMPLES"))
    local out = {}
    for name, text in pairs(sample) do
      vim.api.nvim_buf_set_lines(scratch, 0, -1, false, vim.split(text, "\n", { plain = true }))
      vim.bo[scratch].filetype = "prose"
      vim.cmd("normal! gg=G")
      out[name] = table.concat(lines(scratch), "\n")
    end
    -- Typing: new lines (Enter in insert mode) indented by the indent expression.
    vim.api.nvim_buf_set_lines(scratch, 0, -1, false, { "agent a:" })
    vim.cmd('normal! GA\rmodel: opus\rprompt: "p"')
    out.typed_agent = table.concat(lines(scratch), "\n")
    vim.api.nvim_buf_set_lines(scratch, 0, -1, false, { "let x = session: a" })
    vim.cmd('normal! GA\rprompt: "q"')
    out.typed_session = table.concat(lines(scratch), "\n")
    return out
  end)
end

local function finish()
  result.total_ms = ms()
  for _, c in pairs(all_clients()) do
    vim.lsp.stop_client(c.id)
  end
  result.clients_stopped = wait(function()
    return #all_clients() == 0
  end, 3000)
  vim.fn.writefile({ vim.fn.json_encode(result) }, out_path)
  vim.cmd("qall!")
end

vim.api.nvim_create_autocmd("VimEnter", {
  once = true,
  callback = function()
    vim.schedule(function()
      local ok, err = pcall(run)
      if not ok then
        result.error = tostring(err)
      end
      finish()
    end)
  end,
})
