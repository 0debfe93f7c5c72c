-- prose-ls for Neovim 0.11+, found by `vim.lsp.enable("prose")` on the runtimepath (the
-- `lsp/<name>.lua` convention, as nvim-lspconfig ships its configurations).
--
--   vim.lsp.enable("prose")
--   vim.lsp.config("prose", { cmd = { "python3", "-m", "openprose.lsp" } })  -- to change any
--
-- The same root markers as require("openprose").setup(): the project root is the nearest
-- directory holding any of them.
return {
  cmd = { "prose-ls" },
  filetypes = { "prose" },
  root_markers = { ".git", "prose.toml", "pyproject.toml" },
}
