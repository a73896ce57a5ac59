--- :checkhealth claude_bridge: checks what sessions will really use: the same
--- bridge command and flags (`cmd`), the same environment (`env`), and the CLI
--- sessions run (`session.claudePath`, else `--claude-path` in `cmd`, else what the
--- bridge finds in that environment).

local M = {}

local function run(cmd, env, timeout)
  local ok, obj = pcall(vim.system, cmd, { text = true, env = env })
  if not ok then
    return nil, tostring(obj)
  end
  return obj:wait(timeout)
end

--- Split the bridge command into the program (with its own arguments, before
--- `serve`) and the flags given to `serve`.
function M.split_cmd(cmd)
  for i, arg in ipairs(cmd) do
    if i > 1 and arg == "serve" then
      return vim.list_slice(cmd, 1, i - 1), vim.list_slice(cmd, i + 1, #cmd)
    end
  end
  return vim.deepcopy(cmd), {}
end

local function flag_value(args, flag)
  for i, arg in ipairs(args) do
    if arg == flag then
      return args[i + 1]
    end
    local v = arg:match("^" .. vim.pesc(flag) .. "=(.*)$")
    if v then
      return v
    end
  end
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
  local tags = vim.api.nvim_get_runtime_file("doc/claude_bridge.txt", false)[1]
  if tags and vim.fn.filereadable(vim.fs.dirname(tags) .. "/tags") == 1 then
    health.ok(":help claude_bridge works (doc/tags is there)")
  elseif tags then
    health.warn("no help tags: :help claude_bridge fails", {
      ("run :helptags %s (the README's install steps do)"):format(vim.fs.dirname(tags)),
    })
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
  local env = config.env
  if env and next(env) then
    local names = vim.tbl_keys(env)
    table.sort(names)
    health.info("environment from setup `env`: " .. table.concat(names, ", "))
  end
  local program, serve_args = M.split_cmd(cmd)
  local r = run(vim.list_extend(vim.deepcopy(program), { "--version" }), env, 10000)
  if r and r.code == 0 then
    health.ok(vim.trim(r.stdout) .. " (" .. vim.fn.exepath(exe) .. ")")
  else
    health.error("`" .. table.concat(program, " ") .. " --version` failed", { r and r.stderr or "" })
    return
  end

  health.start("claude CLI (claude-bridge doctor, as sessions start it)")
  local session = config.session or {}
  local doctor = vim.list_extend(vim.deepcopy(program), { "doctor" })
  local claude_path = session.claudePath or flag_value(serve_args, "--claude-path")
  if session.claudePath then
    health.info("sessions run the CLI of setup `session.claudePath`: " .. session.claudePath)
  elseif claude_path then
    health.info("sessions run the CLI of `--claude-path` in `cmd`: " .. claude_path)
  elseif env and env.CLAUDE_BRIDGE_CLAUDE then
    health.info("sessions run the CLI of CLAUDE_BRIDGE_CLAUDE in setup `env`: " .. env.CLAUDE_BRIDGE_CLAUDE)
  end
  if claude_path then
    vim.list_extend(doctor, { "--claude-path", claude_path })
  end
  local denv = env
  if session.env and next(session.env) then
    denv = vim.tbl_extend("force", env or {}, session.env)
  end
  local d = run(doctor, denv, 60000)
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
      "or set CLAUDE_BRIDGE_CLAUDE (setup `env`), or pass --claude-path in `cmd`",
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
