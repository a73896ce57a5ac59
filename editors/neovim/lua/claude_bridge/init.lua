--- claude_bridge: hold long conversations with Claude Code in Neovim, through one
--- `claude-bridge` process per Neovim (started on first use).
---
--- Every command is also a function here: setup, chat, send, interrupt,
--- set_model, set_mode, sessions, resume, close, add, permissions, statusline.

local config = require("claude_bridge.config")
local client_mod = require("claude_bridge.client")
local model_mod = require("claude_bridge.model")
local view = require("claude_bridge.view")
local permission = require("claude_bridge.permission")

local api = vim.api

local M = {}

local state = {
  client = nil, ---@type claude_bridge.Client?
  chats = {}, -- every chat, in creation order
  by_session = {}, -- sessionId -> chat
  by_cwd = {}, -- cwd -> the chat :ClaudeChat opens there
  counter = 0,
  server_requests = {}, -- bridge request id -> permission requestId
  early_events = {}, -- sessionId -> events that came before its session/create answer
  setup_done = false,
}
M._state = state

local MODES = { "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto" }

local function fire(event, data)
  local ok, err = pcall(api.nvim_exec_autocmds, "User", { pattern = event, modeline = false, data = data })
  if not ok then
    vim.notify(("claude_bridge: a User %s autocommand failed: %s"):format(event, err), vim.log.levels.WARN)
  end
end

local function notify(msg, level)
  vim.notify("Claude: " .. msg, level or vim.log.levels.INFO)
end

local function redraw(chat)
  view.schedule(chat)
end

-- The bridge --------------------------------------------------------------

local on_notification, on_request, on_exit

local function init_options()
  local o = config.options
  local opts = { permissions = true }
  if o.permission_timeout then
    opts.permissionTimeout = o.permission_timeout
  end
  local pool = o.warm_pool or {}
  if (pool.size or 0) > 0 then
    opts.warmPool = { size = pool.size }
    if pool.idle_timeout then
      opts.warmPool.idleTimeout = pool.idle_timeout
    end
    if pool.prestart then
      opts.warmPool.presets = { M._create_params(vim.fn.getcwd()) }
    end
  end
  return opts
end

--- The bridge client, started on first use (and again after it exited).
function M.client()
  local c = state.client
  if c and c:is_alive() then
    return c
  end
  local o = config.options
  c = client_mod.new({
    cmd = o.cmd,
    env = o.env,
    init_options = init_options(),
    handlers = {},
  })
  c.handlers.on_notification = function(method, params)
    on_notification(c, method, params)
  end
  c.handlers.on_request = function(method, params, respond, id)
    on_request(c, method, params, respond, id)
  end
  c.handlers.on_exit = function(info)
    on_exit(c, info)
  end
  state.client = c
  local ok, err = c:start()
  if not ok then
    local msg = ("could not start the bridge %s: %s (see :checkhealth claude_bridge)"):format(
      table.concat(o.cmd, " "),
      err
    )
    vim.schedule(function() -- after the command that needed it has shown its chat
      notify(msg, vim.log.levels.ERROR)
    end)
  end
  return c
end

function on_notification(c, method, params)
  if method == "session/event" then
    local chat = state.by_session[params.sessionId]
    if chat then
      chat.model:event(params)
      redraw(chat)
      local ev = params.event
      if ev and ev.type == "toolResult" and not ev.isError and not params.replay then
        -- A tool may have changed files that are open: reload them.
        vim.schedule(function()
          pcall(vim.cmd, "checktime")
        end)
      end
    else
      -- A session being created (a resume replays its past before the answer).
      local early = state.early_events[params.sessionId] or {}
      early[#early + 1] = params
      state.early_events[params.sessionId] = early
    end
  elseif method == "session/exited" then
    local chat = state.by_session[params.sessionId]
    if chat and chat.model.session_id == params.sessionId then
      local reason = params.reason
      if reason ~= "closed" and reason ~= "shutdown" then
        local status = params.status or {}
        local detail = params.error
          or (status.stderrTail and status.stderrTail ~= "" and vim.trim(status.stderrTail))
          or ("exit code " .. tostring(status.code) .. (status.signal and (", signal " .. status.signal) or ""))
        chat.model:exited(
          ("The Claude process ended (%s): %s. Send again to start a new session."):format(reason, detail)
        )
        notify("the session ended (" .. reason .. ")", vim.log.levels.WARN)
      else
        chat.model:exited(nil)
      end
      redraw(chat)
      fire("ClaudeBridgeExited", { session_id = params.sessionId, reason = reason, status = params.status })
    end
  elseif method == "$/cancelRequest" then
    local request_id = state.server_requests[params.id]
    if request_id then
      permission.cancel(request_id)
    end
  elseif method == "window/logMessage" then
    if params.type == 1 then
      notify(params.message, vim.log.levels.ERROR)
    end
  end
end

local function respond_permission(chat, params, decision)
  local c = state.client
  if not (c and c:is_alive()) then
    return
  end
  chat.model.permissions[params.requestId] = nil
  redraw(chat)
  c:request("session/respondPermission", {
    sessionId = params.sessionId,
    requestId = params.requestId,
    decision = decision,
  }, function(err)
    if err and err.code ~= -31010 then -- UnknownRequest: answered or withdrawn meanwhile
      chat.model:error("permission answer failed: " .. (err.message or ""))
      redraw(chat)
    end
  end)
end

function on_request(c, method, params, respond, id)
  if method ~= "session/requestPermission" then
    return respond(nil, { code = -32601, message = "unknown method " .. method })
  end
  local chat = state.by_session[params.sessionId]
  if not chat then
    return respond({ behavior = "deny", message = "No chat holds this session." })
  end
  -- Never block the bridge on the user: defer now, answer with respondPermission.
  respond({ behavior = "defer" })
  chat.model.permissions[params.requestId] = params
  redraw(chat)
  fire("ClaudeBridgePermission", params)
  permission.ask(params, function(decision)
    respond_permission(chat, params, decision)
  end, function(item)
    chat.model:info(
      ("%s is waiting for your answer: :ClaudePermissions to answer."):format(params.toolName)
    )
    chat.left_open = chat.left_open or {}
    chat.left_open[#chat.left_open + 1] = item
    redraw(chat)
  end)
  -- The bridge's request id is what its $/cancelRequest names.
  state.server_requests[id] = params.requestId
end

function on_exit(c, info)
  if state.client == c then
    state.client = nil
  end
  if c.stopping then
    return
  end
  local tail = info.stderr and vim.trim(info.stderr) or ""
  local msg = ("The bridge exited (code %s%s).%s The next command starts a new one."):format(
    tostring(info.code),
    (info.signal and info.signal ~= 0) and (", signal " .. info.signal) or "",
    tail ~= "" and (" " .. tail:sub(-500)) or ""
  )
  for _, chat in ipairs(state.chats) do
    if chat.client == c and not chat.model.ended then
      chat.model:exited(msg)
      redraw(chat)
      fire("ClaudeBridgeExited", { session_id = chat.model.session_id, reason = "bridge", code = info.code })
    end
  end
  notify(msg, vim.log.levels.ERROR)
end

-- Chats and sessions --------------------------------------------------------

function M._create_params(cwd)
  local params = vim.deepcopy(config.options.session or {})
  params.cwd = cwd
  return params
end

local function new_chat(cwd)
  state.counter = state.counter + 1
  local chat = {
    n = state.counter,
    cwd = cwd,
    model = model_mod.new({ cwd = cwd }),
    contexts = {},
    waiting = {}, -- callbacks for when the session is ready
  }
  view.create_buffers(chat, chat.n)
  M._keymaps(chat)
  state.chats[#state.chats + 1] = chat
  api.nvim_create_autocmd("BufWipeout", {
    buffer = chat.buf,
    once = true,
    callback = function()
      M._close_chat(chat)
    end,
  })
  return chat
end

--- Start the chat's session (if it has none, or it ended); `cb(ok)` once it is ready.
local ensure_session
function ensure_session(chat, cb, extra)
  local m = chat.model
  if m.session_id and not m.ended and chat.client and chat.client:is_alive() then
    return cb(true)
  end
  chat.waiting[#chat.waiting + 1] = cb
  if chat.creating then
    return
  end
  chat.creating = true
  local c = M.client()
  chat.client = c
  if m.state == "exited" then
    m.state = "starting"
  end
  local params = M._create_params(chat.cwd)
  for k, v in pairs(extra or {}) do
    params[k] = v
  end
  -- After a crash the conversation goes on: the new process resumes it.
  local resuming = not params.resume and m.ended and m.claude_session_id
  if resuming then
    params.resume = m.claude_session_id
  end
  local started = vim.uv.hrtime()
  c:request("session/create", params, function(err, result)
    chat.creating = false
    if err and resuming and err.code ~= client_mod.BRIDGE_EXITED then
      -- The conversation cannot be resumed (its transcript is gone): start afresh.
      m:info("Could not continue the conversation (" .. (err.message or "") .. "); a new one starts.")
      m.claude_session_id = nil
      chat.creating = false
      local waiting = chat.waiting
      chat.waiting = {}
      for _, w in ipairs(waiting) do
        ensure_session(chat, w, extra)
      end
      return
    end
    local waiting = chat.waiting
    chat.waiting = {}
    if resuming and not err then
      m:info("A new Claude process continues the conversation.")
    end
    if err then
      m.state = "exited"
      m:error("could not start a session: " .. (err.message or vim.inspect(err)))
      redraw(chat)
      for _, w in ipairs(waiting) do
        w(false)
      end
      return
    end
    if m.session_id then
      state.by_session[m.session_id] = nil
    end
    m:created(result)
    chat.create_ms = (vim.uv.hrtime() - started) / 1e6
    state.by_session[result.sessionId] = chat
    for _, early in ipairs(state.early_events[result.sessionId] or {}) do
      m:event(early)
    end
    state.early_events[result.sessionId] = nil
    redraw(chat)
    for _, w in ipairs(waiting) do
      w(true)
    end
  end)
end

--- The chat a command acts on: the current buffer's, else the working directory's.
function M.current()
  local buf = api.nvim_get_current_buf()
  for _, chat in ipairs(state.chats) do
    if chat.buf == buf or chat.prompt_buf == buf then
      return chat
    end
  end
  return state.by_cwd[vim.fn.getcwd()]
end

local function current_or_new()
  local chat = M.current()
  if not chat then
    chat = new_chat(vim.fn.getcwd())
    state.by_cwd[chat.cwd] = chat
  end
  return chat
end

--- :ClaudeChat: open (or focus) the chat of the working directory, starting its session.
function M.chat()
  local chat = current_or_new()
  view.open(chat)
  ensure_session(chat, function() end)
  redraw(chat)
  return chat
end

local function context_prefix(contexts)
  local parts = {}
  for _, c in ipairs(contexts) do
    parts[#parts + 1] = ("%s:\n```%s\n%s\n```"):format(c.label, c.filetype or "", c.text)
  end
  return table.concat(parts, "\n\n")
end

--- :ClaudeSend {text}: send a prompt (the prompt buffer's text without one); while
--- a turn runs it goes into that turn as a live message.
function M.send(text)
  local chat = current_or_new()
  if text == nil or text == "" then
    text = view.take_prompt(chat)
  end
  if text == "" then
    return
  end
  local contexts = chat.contexts
  chat.contexts = {}
  view.update_prompt_hint(chat)
  local prompt = text
  if #contexts > 0 then
    prompt = context_prefix(contexts) .. "\n\n" .. text
  end
  local m = chat.model
  local live = m.state == "running" and not m.ended
  m:user(text, live)
  m.blocks[#m.blocks].context = contexts
  redraw(chat)
  ensure_session(chat, function(ok)
    if not ok then
      m.state = "exited"
      return
    end
    if chat.send_id then -- a turn runs (or was just started): the prompt goes into it
      chat.client:request("session/message", { sessionId = m.session_id, prompt = prompt }, function(err)
        if err then
          m:error("the message was not sent: " .. (err.message or ""))
          redraw(chat)
        end
      end)
      return
    end
    m.state = "running"
    local sid = m.session_id
    fire("ClaudeBridgeTurnStart", { session_id = sid, prompt = text })
    chat.send_id = chat.client:request("session/send", { sessionId = sid, prompt = prompt }, function(err, result)
      chat.send_id = nil
      -- Prompts of the turn that are still open are no longer wanted.
      for request_id in pairs(m.permissions) do
        permission.cancel(request_id)
      end
      m.permissions = {}
      local done = m:turn_done(result, err)
      redraw(chat)
      fire("ClaudeBridgeTurnDone", { session_id = sid, result = result, error = err })
      if done and chat.client and chat.client:is_alive() and not m.ended then
        chat.client:request("session/getContextUsage", { sessionId = sid }, function(cerr, usage)
          if not cerr and usage then
            m:context_usage(done, usage.usage)
            redraw(chat)
          end
        end)
      end
    end)
  end)
end

local function with_session(fn)
  local chat = M.current()
  if not (chat and chat.model.session_id and not chat.model.ended and chat.client) then
    notify("no running chat here (:ClaudeChat starts one)", vim.log.levels.WARN)
    return
  end
  return fn(chat, chat.model)
end

--- Completion of :ClaudeSend: the slash commands the CLI reported.
function M.complete_send(arglead)
  local chat = M.current()
  local out = {}
  if chat and arglead:sub(1, 1) == "/" then
    for _, c in ipairs(chat.model.commands or {}) do
      local name = "/" .. c.name
      if vim.startswith(name, arglead) then
        out[#out + 1] = name
      end
    end
  end
  table.sort(out)
  return out
end

--- :ClaudeInterrupt: stop the running turn; the session (and its process) stays.
function M.interrupt()
  with_session(function(chat, m)
    chat.client:request("session/interrupt", { sessionId = m.session_id, cancelQueued = true }, function(err)
      if err then
        m:error("interrupt failed: " .. (err.message or ""))
        redraw(chat)
      end
    end)
  end)
end

--- :ClaudeModel [name]: switch the model (without a name: pick one the CLI offers).
function M.set_model(name)
  with_session(function(chat, m)
    local function apply(value)
      chat.client:request("session/setModel", { sessionId = m.session_id, model = value }, function(err, result)
        if err then
          m:error("model switch failed: " .. (err.message or ""))
        else
          m.model = result.model or value
          m:info("Model: " .. tostring(m.model or "default"))
        end
        redraw(chat)
      end)
    end
    if name and name ~= "" then
      return apply(name)
    end
    local models = m.models or {}
    if #models == 0 then
      return notify("the CLI reported no models; give one: :ClaudeModel <name>", vim.log.levels.WARN)
    end
    vim.ui.select(models, {
      prompt = "Model",
      kind = "claude_bridge.model",
      format_item = function(item)
        return (item.displayName or item.value)
          .. (item.description and ("  " .. item.description) or "")
      end,
    }, function(choice)
      if choice then
        apply(choice.value)
      end
    end)
  end)
end

--- :ClaudeMode [mode]: switch the permission mode (without one: pick).
function M.set_mode(mode)
  with_session(function(chat, m)
    local function apply(value)
      chat.client:request("session/setPermissionMode", { sessionId = m.session_id, mode = value }, function(err, result)
        if err then
          m:error("mode switch failed: " .. (err.message or ""))
        else
          m.mode = result.mode or value
          m:info("Permission mode: " .. m.mode)
        end
        redraw(chat)
      end)
    end
    if mode and mode ~= "" then
      return apply(mode)
    end
    vim.ui.select(MODES, { prompt = "Permission mode", kind = "claude_bridge.mode" }, function(choice)
      if choice then
        apply(choice)
      end
    end)
  end)
end

--- :ClaudeSessions: pick among the live chats and open it.
function M.sessions()
  local items = {}
  for _, chat in ipairs(state.chats) do
    if chat.buf and api.nvim_buf_is_valid(chat.buf) then
      items[#items + 1] = chat
    end
  end
  if #items == 0 then
    return notify("no sessions yet (:ClaudeChat starts one)")
  end
  vim.ui.select(items, {
    prompt = "Claude sessions",
    kind = "claude_bridge.session",
    format_item = function(chat)
      local m = chat.model
      local first = ""
      for _, b in ipairs(m.blocks) do
        if b.kind == "user" then
          first = b.text:gsub("\n", " "):sub(1, 60)
          break
        end
      end
      return ("%d  %s  [%s, %s]  %s"):format(
        chat.n,
        vim.fn.fnamemodify(chat.cwd, ":~"),
        m.state,
        ("$%.4f"):format(m.total_cost or 0),
        first
      )
    end,
  }, function(chat)
    if chat then
      state.by_cwd[chat.cwd] = chat
      view.open(chat)
    end
  end)
end

--- :ClaudeResume: pick a past conversation of this directory and continue it.
function M.resume()
  local cwd = vim.fn.getcwd()
  local c = M.client()
  c:request("session/history", { cwd = cwd, limit = 50 }, function(err, result)
    if err then
      return notify("could not list past conversations: " .. (err.message or ""), vim.log.levels.ERROR)
    end
    local entries = result.transcripts or {}
    if #entries == 0 then
      return notify("no past conversation in " .. vim.fn.fnamemodify(cwd, ":~"))
    end
    vim.ui.select(entries, {
      prompt = "Resume a conversation",
      kind = "claude_bridge.history",
      format_item = function(e)
        local when = e.lastModified and os.date("%Y-%m-%d %H:%M", math.floor(e.lastModified / 1000)) or ""
        local title = e.customTitle or e.title or e.summary or e.firstPrompt or e.claudeSessionId
        return ("%s  %s  (%d messages)%s"):format(
          when,
          tostring(title):gsub("\n", " "):sub(1, 70),
          e.messageCount or 0,
          e.liveSessionId and "  [open]" or ""
        )
      end,
    }, function(entry)
      if not entry then
        return
      end
      local live = entry.liveSessionId and state.by_session[entry.liveSessionId]
      if live and not live.model.ended then
        state.by_cwd[live.cwd] = live
        return view.open(live) -- open here already: show it
      end
      M.resume_id(entry.claudeSessionId)
    end)
  end)
end

--- Continue the conversation `claude_session_id` of this directory in a new chat.
function M.resume_id(claude_session_id)
  local chat = new_chat(vim.fn.getcwd())
  state.by_cwd[chat.cwd] = chat
  chat.model:info("Resuming " .. claude_session_id)
  view.open(chat)
  ensure_session(chat, function() end, { resume = claude_session_id, replay = true })
  redraw(chat)
  return chat
end

function M._close_chat(chat)
  local m = chat.model
  if m.session_id and chat.client and chat.client:is_alive() and not m.ended then
    chat.client:request("session/close", { sessionId = m.session_id }, function() end)
  end
  m.state = "exited"
  for i, c in ipairs(state.chats) do
    if c == chat then
      table.remove(state.chats, i)
      break
    end
  end
  if state.by_cwd[chat.cwd] == chat then
    state.by_cwd[chat.cwd] = nil
  end
end

--- :ClaudeClose: end the chat's session and close its windows and buffers.
function M.close()
  local chat = M.current()
  if not chat then
    return notify("no chat here", vim.log.levels.WARN)
  end
  M._close_chat(chat)
  view.hide(chat)
  for _, b in ipairs({ chat.prompt_buf, chat.buf }) do
    if b and api.nvim_buf_is_valid(b) then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
end

--- :'<,'>ClaudeAdd: add lines line1..line2 of the current buffer as context for the next prompt.
function M.add(line1, line2, buf)
  buf = buf or api.nvim_get_current_buf()
  if line1 == nil then
    line1 = vim.fn.line("'<")
    line2 = vim.fn.line("'>")
  end
  local name = api.nvim_buf_get_name(buf)
  local label = (name ~= "" and vim.fn.fnamemodify(name, ":~:.") or "[No Name]")
    .. (line1 == line2 and (":" .. line1) or (":" .. line1 .. "-" .. line2))
  local text = table.concat(api.nvim_buf_get_lines(buf, line1 - 1, line2, false), "\n")
  local chat = state.by_cwd[vim.fn.getcwd()]
  if not chat then
    chat = new_chat(vim.fn.getcwd())
    state.by_cwd[chat.cwd] = chat
  end
  chat.contexts[#chat.contexts + 1] = { label = label, text = text, filetype = vim.bo[buf].filetype }
  view.update_prompt_hint(chat)
  notify("added " .. label .. " to the next prompt")
  return chat
end

--- :ClaudePermissions: ask again the permission prompts that were dismissed.
function M.permissions()
  local chat = M.current()
  local items = chat and chat.left_open or {}
  if #items == 0 then
    return notify("no permission prompt is waiting")
  end
  chat.left_open = {}
  for _, item in ipairs(items) do
    if chat.model.permissions[item.params.requestId] then
      permission.reask(item)
    end
  end
end

--- For the statusline: "Claude <model> <state> $cost" of the current chat ("" without one).
function M.statusline()
  local chat = M.current()
  if not chat then
    return ""
  end
  local m = chat.model
  local st = m.state
  if st == "running" and next(m.permissions) then
    st = "waiting for you"
  end
  return ("Claude %s %s $%.4f"):format(m.model or "default", st, m.total_cost or 0)
end

function M._keymaps(chat)
  local keys = config.options.keymaps
  local function map(bufs, modes, lhs, fn, desc)
    if not lhs or lhs == false then
      return
    end
    for _, b in ipairs(bufs) do
      vim.keymap.set(modes, lhs, fn, { buffer = b, desc = desc, nowait = true })
    end
  end
  local both = { chat.buf, chat.prompt_buf }
  local function send()
    vim.cmd("stopinsert")
    local text = view.take_prompt(chat)
    state.by_cwd[chat.cwd] = chat
    if text ~= "" then
      api.nvim_buf_call(chat.prompt_buf, function()
        M.send(text)
      end)
    end
  end
  map({ chat.prompt_buf }, { "n", "i" }, keys.send, send, "Claude: send the prompt")
  map({ chat.prompt_buf }, "n", keys.submit, send, "Claude: send the prompt")
  map(both, "n", keys.interrupt, function()
    api.nvim_buf_call(chat.buf, M.interrupt)
  end, "Claude: interrupt the turn")
  map(both, "n", keys.close, function()
    view.hide(chat)
  end, "Claude: hide the chat")
end

--- Options: see :help claude_bridge-config.
function M.setup(opts)
  config.set(opts)
  state.setup_done = true
  if config.options.warm_pool.prestart then
    vim.schedule(function()
      M.client()
    end)
  end
end

--- End the bridge (VimLeavePre): its sessions are closed and no process is left.
function M.shutdown()
  local c = state.client
  if c and c:is_alive() then
    c:stop(true, 5000)
  end
end

return M
