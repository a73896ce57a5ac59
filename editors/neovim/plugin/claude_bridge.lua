-- claude_bridge: commands (each is also a function of require("claude_bridge")).
if vim.g.loaded_claude_bridge then
  return
end
vim.g.loaded_claude_bridge = true

local function cb()
  return require("claude_bridge")
end

local command = vim.api.nvim_create_user_command

command("ClaudeChat", function(a)
  cb().chat({ new = a.bang })
end, { bang = true, desc = "Open or focus the Claude chat of the working directory (!: a new chat)" })

command("ClaudeToggle", function()
  cb().toggle()
end, { desc = "Show or hide the Claude chat of the working directory" })

command("ClaudeSend", function(a)
  cb().send(a.args)
end, {
  nargs = "*",
  complete = function(arglead)
    return cb().complete_send(arglead)
  end,
  desc = "Send a prompt (a live message while a turn runs)",
})

command("ClaudeInterrupt", function()
  cb().interrupt()
end, { desc = "Stop the running turn (the session stays)" })

command("ClaudeModel", function(a)
  cb().set_model(a.args ~= "" and a.args or nil)
end, { nargs = "?", desc = "Switch the model (no argument: pick)" })

command("ClaudeMode", function(a)
  cb().set_mode(a.args ~= "" and a.args or nil)
end, {
  nargs = "?",
  complete = function()
    return cb().mode_names()
  end,
  desc = "Switch the permission mode (no argument: pick)",
})

command("ClaudeSessions", function()
  cb().sessions()
end, { desc = "Pick among the open Claude chats" })

command("ClaudeResume", function()
  cb().resume()
end, { desc = "Continue a past conversation of this directory" })

command("ClaudeClose", function()
  cb().close()
end, { desc = "Close the Claude chat and end its session" })

command("ClaudeAdd", function(a)
  cb().add({ args = a.args, range = a.range, line1 = a.line1, line2 = a.line2 })
end, {
  range = true,
  nargs = "?",
  complete = "file",
  desc = "Mention a file, the selected lines, an explorer's entry or the quickfix list in the prompt",
})

command("ClaudePaste", function()
  cb().paste_image()
end, { desc = "Attach the clipboard's image to the prompt" })

command("ClaudePermissions", function()
  cb().permissions()
end, { desc = "Go to the prompt waiting for your answer" })

-- The chat's bars are clickable (model, mode, state): they call this.
vim.cmd([[
function! ClaudeBridgeClick(minwid, clicks, button, mods) abort
  call v:lua.require'claude_bridge'._click(a:minwid)
endfunction
]])

vim.api.nvim_create_autocmd("VimLeavePre", {
  group = vim.api.nvim_create_augroup("claude_bridge", { clear = true }),
  callback = function()
    if package.loaded["claude_bridge"] then
      require("claude_bridge").shutdown()
    end
  end,
})

pcall(vim.treesitter.language.register, "markdown", "claude_bridge")
