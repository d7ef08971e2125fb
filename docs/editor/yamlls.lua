-- Neovim 0.11+ with nvim-lspconfig: yaml-language-server checks and completes TextRL configs.
-- A schema path starting with ./ is read from the project root (the folder holding .git).
vim.lsp.config("yamlls", {
  settings = {
    yaml = {
      schemas = {
        ["./generated/schema/textrl.schema.json"] = { "*.textrl.yaml", "/examples/*.yaml" },
      },
    },
  },
})
vim.lsp.enable("yamlls")

-- nvim-lspconfig before Neovim 0.11: require("lspconfig").yamlls.setup({ settings = { yaml = { schemas = { ... } } } })
