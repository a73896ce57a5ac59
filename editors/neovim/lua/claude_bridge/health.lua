--- :checkhealth claude_bridge

local M = {}

local function run(cmd, timeout)
  local ok, obj = pcall(vim.system, cmd, { text = true })
  if not ok then
    return nil, tostring(obj)
  end
  local r = obj:wait(timeout)
  return r
end

function M.check()
  local health = vim.health
  local config = require("claude_bridge.config").options

  health.start("Neovim")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. version)
  else
    health.error("Neovim " .. version .. " is too old", { "claude_bridge needs Neovim 0.10 or newer" })
  end
  if pcall(vim.treesitter.language.add, "markdown") then
    health.ok("markdown treesitter parser: the chat is highlighted as Markdown")
  else
    health.warn("no markdown treesitter parser", { "the chat falls back to the markdown syntax file" })
  end

  health.start("claude-bridge")
  local cmd = config.cmd
  local exe = cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    health.error(("`%s` not found (setup option `cmd` = %s)"):format(exe, vim.inspect(cmd)), {
      "pip install 'claude-duplex-bridge[cli]' (it bundles the claude CLI)",
      "or set cmd = { '/path/to/claude-bridge' } in require('claude_bridge').setup()",
    })
    return
  end
  local base = vim.list_slice(cmd, 1, #cmd)
  if base[#base] == "serve" then
    base[#base] = nil
  end
  local r = run(vim.list_extend(vim.deepcopy(base), { "--version" }), 10000)
  if r and r.code == 0 then
    health.ok(vim.trim(r.stdout) .. " (" .. vim.fn.exepath(exe) .. ")")
  else
    health.error("`" .. table.concat(base, " ") .. " --version` failed", { r and r.stderr or "" })
    return
  end

  health.start("claude CLI (claude-bridge doctor)")
  local d = run(vim.list_extend(vim.deepcopy(base), { "doctor" }), 60000)
  if not d then
    health.error("could not run claude-bridge doctor")
    return
  end
  for _, line in ipairs(vim.split(vim.trim(d.stdout or ""), "\n")) do
    if line ~= "" then
      health.info(line)
    end
  end
  if d.code == 0 then
    health.ok("the CLI starts and answers a session handshake")
  else
    health.error("claude-bridge doctor failed (exit " .. tostring(d.code) .. ")", {
      vim.trim(d.stderr or ""),
      "install the CLI: pip install 'claude-duplex-bridge[cli]', or put `claude` on PATH,",
      "or set CLAUDE_BRIDGE_CLAUDE, or pass --claude-path in `cmd`",
    })
  end

  health.start("claude_bridge state")
  local state = package.loaded["claude_bridge"] and require("claude_bridge")._state
  if state and state.client and state.client:is_alive() then
    health.ok(("bridge running (pid %d), %d chat(s)"):format(state.client.pid or -1, #state.chats))
  else
    health.info("no bridge running (it starts with the first :ClaudeChat)")
  end
end

return M
