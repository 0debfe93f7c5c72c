-- OpenProse for Neovim: starts prose-ls for `prose` buffers and formats them on save.
--
--   require("openprose").setup({
--     cmd = { "prose-ls" },                      -- how to run the server
--     root_markers = { "prose.toml", "pyproject.toml", ".git" },
--     settings = { ignore = { "W" } },           -- prose-ls settings (see the README)
--     format_on_save = true,
--     on_attach = function(client, bufnr) end,   -- your keymaps
--     capabilities = nil,                        -- e.g. from your completion plugin
--   })
--
-- Neovim 0.11+: registered with vim.lsp.config("prose", ...) and vim.lsp.enable("prose").
-- Neovim 0.7-0.10: a FileType autocmd starts the server (vim.lsp.start on 0.8+,
-- vim.lsp.start_client + vim.lsp.buf_attach_client on 0.7), one client per project root.
local M = {}

M.defaults = {
  name = "prose",
  cmd = { "prose-ls" },
  filetypes = { "prose" },
  -- The nearest directory holding any of these is the project root; without one, the
  -- file's own directory.
  root_markers = { ".git", "prose.toml", "pyproject.toml" },
  -- prose-ls settings: select, extend-select, ignore, severity, format = { enable = bool },
  -- debounce (ms), trace. Sent as initializationOptions and answered for
  -- workspace/configuration (section "prose").
  settings = {},
  format_on_save = true,
  format_timeout_ms = 3000,
  on_attach = nil,
  capabilities = nil,
  -- Registered with vim.lsp.config on 0.11+ (false: the autocmd path everywhere).
  use_lsp_config = true,
  -- :ProseRun runs this with the program's path and the command's arguments appended.
  run_cmd = { "prose", "run" },
}

M.options = nil

local has = function(feature)
  return vim.fn.has(feature) == 1
end

local uv = vim.uv or vim.loop

local function buf_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" then
    return uv.cwd()
  end
  return vim.fn.fnamemodify(name, ":p:h")
end

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

--- The project root for a buffer: the nearest ancestor directory (the file's own directory
--- included) holding one of `markers`, else the file's directory.
function M.find_root(bufnr, markers)
  markers = markers or (M.options or M.defaults).root_markers
  local start = buf_dir(bufnr)
  local dir = start
  while dir and dir ~= "" do
    for _, marker in ipairs(markers) do
      if exists(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      break
    end
    dir = parent
  end
  return start
end

local function clients_for(bufnr, name)
  local found = {}
  local all
  if vim.lsp.get_clients then
    all = vim.lsp.get_clients({ bufnr = bufnr })
  else
    all = vim.lsp.buf_get_clients(bufnr)
  end
  for _, client in pairs(all) do
    if client.name == name then
      found[#found + 1] = client
    end
  end
  return found
end

--- Formats a buffer through the prose client, synchronously (what format-on-save runs).
function M.format(bufnr)
  local opts = M.options or M.defaults
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if #clients_for(bufnr, opts.name) == 0 then
    return
  end
  if vim.lsp.buf.format then -- 0.8+
    vim.lsp.buf.format({
      bufnr = bufnr,
      name = opts.name,
      async = false,
      timeout_ms = opts.format_timeout_ms,
    })
  else -- 0.7: formatting_sync works on the current buffer
    vim.api.nvim_buf_call(bufnr, function()
      vim.lsp.buf.formatting_sync(nil, opts.format_timeout_ms)
    end)
  end
end

local function on_attach(client, bufnr)
  local opts = M.options
  if opts.format_on_save then
    local group = vim.api.nvim_create_augroup("openprose_format_" .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd("BufWritePre", {
      group = group,
      buffer = bufnr,
      desc = "prose-ls: format before saving",
      callback = function(args)
        M.format(args.buf)
      end,
    })
  end
  if opts.on_attach then
    opts.on_attach(client, bufnr)
  end
end

local function client_config(root_dir)
  local opts = M.options
  -- An empty Lua table would be sent as a JSON array.
  local settings = next(opts.settings) and opts.settings or vim.empty_dict()
  local config = {
    name = opts.name,
    cmd = opts.cmd,
    root_dir = root_dir,
    init_options = settings,
    settings = { prose = settings },
    on_attach = on_attach,
  }
  if opts.capabilities then
    config.capabilities = opts.capabilities
  end
  return config
end

-- 0.7: one client per root, reused while it runs.
local clients_by_root = {}

local function start(bufnr)
  local opts = M.options
  if vim.b[bufnr] and vim.b[bufnr].openprose_disable then
    return
  end
  if vim.bo[bufnr].buftype ~= "" then
    return
  end
  local root_dir = M.find_root(bufnr, opts.root_markers)
  if vim.lsp.start then -- 0.8+: reuses a running client with the same name and root
    vim.lsp.start(client_config(root_dir), { bufnr = bufnr })
    return
  end
  if #clients_for(bufnr, opts.name) > 0 then
    return
  end
  local id = clients_by_root[root_dir]
  local client = id and vim.lsp.get_client_by_id(id)
  if not client or client:is_stopped() then
    id = vim.lsp.start_client(client_config(root_dir))
    clients_by_root[root_dir] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

--- Runs a buffer's program (`run_cmd FILE ARGS...`) in a terminal split, in the program's
--- folder (its runs go to `.prose/runs` there), after saving it: `prose run` reads the file.
--- Returns the terminal's buffer and job id, or nil when the buffer has no file.
function M.run(bufnr, extra_args)
  if bufnr == nil or bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local opts = M.options or M.defaults
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" then
    vim.notify("ProseRun: save the program to a file first", vim.log.levels.WARN)
    return nil
  end
  if vim.bo[bufnr].modified then
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd("silent write")
    end)
  end
  local file = vim.fn.fnamemodify(name, ":p")
  local cmd = vim.list_extend(vim.list_extend({}, opts.run_cmd), { file })
  vim.list_extend(cmd, extra_args or {})
  vim.cmd("botright new")
  local job = vim.fn.termopen(cmd, { cwd = vim.fn.fnamemodify(file, ":h") })
  return vim.api.nvim_get_current_buf(), job
end

--- Configures and enables the server for `prose` buffers. Safe to call again (options are
--- replaced).
function M.setup(user_opts)
  -- Shallow: a list given by the user (cmd, root_markers) replaces the default whole.
  M.options = vim.tbl_extend("force", {}, M.defaults, user_opts or {})
  local opts = M.options

  -- :ProseRun [--input name=value ...]: the current buffer's program in a terminal.
  vim.api.nvim_create_user_command("ProseRun", function(command)
    M.run(0, command.fargs)
  end, { nargs = "*", desc = "Run the current OpenProse program (prose run)" })

  -- Detection for *.prose even where ftdetect/ is not on 'runtimepath' yet (lazy loading).
  if vim.filetype and vim.filetype.add and has("nvim-0.8") then
    vim.filetype.add({ extension = { prose = "prose" } })
  end

  if opts.use_lsp_config and has("nvim-0.11") and vim.lsp.config and vim.lsp.enable then
    local config = client_config(nil)
    config.root_dir = function(bufnr, on_dir)
      on_dir(M.find_root(bufnr, opts.root_markers))
    end
    config.filetypes = opts.filetypes
    vim.lsp.config(opts.name, config)
    vim.lsp.enable(opts.name)
    return M
  end

  local group = vim.api.nvim_create_augroup("openprose_lsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = opts.filetypes,
    desc = "prose-ls: start or attach the language server",
    callback = function(args)
      start(args.buf)
    end,
  })
  -- Buffers opened before setup() ran (a plugin manager loading on the FileType event).
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr)
      and vim.tbl_contains(opts.filetypes, vim.bo[bufnr].filetype)
    then
      start(bufnr)
    end
  end
  return M
end

return M
