--- Options and their defaults (every one works as it is).

local M = {}

M.defaults = {
  --- The bridge command, as a list.
  cmd = { "claude-bridge" },
  --- Extra environment for the bridge (and the CLI it starts), or nil.
  env = nil,
  --- Chat layout: "vertical" (a split on the right), "horizontal", "float" or "tab".
  layout = "vertical",
  --- Width of the vertical split: columns, or a fraction of the screen below 1.
  width = 0.4,
  --- Height of the horizontal split.
  height = 20,
  --- Height of the prompt window under the transcript.
  prompt_height = 6,
  float = { width = 0.8, height = 0.8, border = "rounded" },
  --- Keys in the chat's buffers (false turns one off).
  keymaps = {
    send = "<C-s>", -- send the prompt (Normal and Insert mode)
    submit = "<CR>", -- send the prompt (Normal mode, prompt buffer)
    interrupt = "<C-c>", -- stop the turn (Normal mode; Insert mode in the prompt)
    close = "q", -- hide the chat (Normal mode)
    answer = "ga", -- go to the prompt waiting for your answer (Normal mode)
    switch = "<Tab>", -- between the transcript and the prompt (Normal mode)
    next_turn = "]]", -- next "## You" in the transcript
    prev_turn = "[[", -- previous "## You" in the transcript
    yank_code = "gy", -- yank the code block under the cursor (transcript)
    paste_image = "<M-v>", -- attach the clipboard's image (prompt, Normal and Insert mode)
  },
  --- Open the completion menu while typing `@` (files, folders) and `/` (commands).
  complete_while_typing = true,
  --- Warm pool: spare `claude` processes, so a new chat starts at once.
  --- size: spares per configuration (0: none); prestart: start the bridge when
  --- Neovim starts and warm a spare for its working directory.
  warm_pool = { size = 1, prestart = false, idle_timeout = 300 },
  --- Seconds the bridge waits for a permission answer before denying (nil: forever).
  permission_timeout = nil,
  --- Extra `session/create` params for every new session (model, permissionMode,
  --- allowedTools, appendSystemPrompt, ...: see the bridge's PROTOCOL.md).
  session = {},
  --- Show an edit's change (a unified diff) in its permission prompt.
  diff = true,
}

M.options = vim.deepcopy(M.defaults)

function M.set(opts)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  if type(M.options.warm_pool) == "number" then
    M.options.warm_pool = { size = M.options.warm_pool, prestart = false }
  elseif M.options.warm_pool == false then
    M.options.warm_pool = { size = 0, prestart = false }
  end
  if type(M.options.cmd) == "string" then
    M.options.cmd = { M.options.cmd }
  end
  return M.options
end

return M
