--- claude_bridge: hold long conversations with Claude Code in Neovim, through one
--- `claude-bridge` process per Neovim (started on first use).
---
--- This module is the controller: it holds the chats (model.lua), talks to the
--- bridge (client.lua), has the view (view.lua) draw, and turns the user's
--- commands, keys and picks into requests. Every command is also a function
--- here: setup, chat, toggle, send, interrupt, set_model, set_mode, sessions,
--- resume, close, add, paste_image, permissions, statusline.

local config = require("claude_bridge.config")
local client_mod = require("claude_bridge.client")
local model = require("claude_bridge.model")
local view = require("claude_bridge.view")
local permission = require("claude_bridge.permission")
local mention = require("claude_bridge.mention")
local protocol = require("claude_bridge.protocol")

local api = vim.api
local errors = protocol.errors

local M = {}

local state = {
  client = nil, ---@type claude_bridge.Client?
  chats = {}, ---@type claude_bridge.Chat[] every chat, in creation order
  by_session = {}, -- sessionId -> chat
  by_cwd = {}, -- cwd -> the chat :ClaudeChat opens there
  counter = 0,
  server_requests = {}, -- bridge request id -> {chat, request_id} of a prompt still open
  early_events = {}, -- sessionId -> events that came before its session/create answer
  pasted = 0,
  setup_done = false,
}
M._state = state

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

--- Tell the user about a chat's event, unless the chat is in view (it says so itself).
local function tell(chat, msg, level)
  if not view.visible(chat) then
    vim.notify(("Claude (%s): %s"):format(chat:title(), msg), level or vim.log.levels.INFO)
  end
end

local function short(text, n)
  text = tostring(text or ""):gsub("%s+", " ")
  n = n or 70
  if #text > n then
    return text:sub(1, n - 1) .. "…"
  end
  return text
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

local SIGNALS = { [1] = "SIGHUP", [2] = "SIGINT", [6] = "SIGABRT", [9] = "SIGKILL", [11] = "SIGSEGV", [15] = "SIGTERM" }

--- How a process ended, in words: "killed by SIGKILL", "ended by SIGTERM (exit code 143)".
function M.how_it_ended(code, signal)
  if signal and signal ~= 0 and signal ~= vim.NIL then
    return ("killed by %s"):format(SIGNALS[signal] or ("signal " .. signal))
  end
  if type(code) == "number" then
    if code > 128 and SIGNALS[code - 128] then
      return ("ended by %s (exit code %d)"):format(SIGNALS[code - 128], code)
    end
    return "exit code " .. code
  end
  return "how is not known"
end

local function exit_message(params)
  local reason = params.reason
  local status = params.status or {}
  local how = M.how_it_ended(status.code, status.signal)
  local tail = status.stderrTail and vim.trim(status.stderrTail) or ""
  if tail ~= "" then
    local lines = vim.split(tail, "\n", { plain = true })
    how = how .. ": " .. table.concat(vim.list_slice(lines, math.max(1, #lines - 2)), " ")
  end
  if reason == "failed" then
    return ("The Claude process ended unexpectedly (%s)."):format(how)
  elseif reason == "limit" or reason == "deadline" then
    return ("The bridge closed the session: %s."):format(params.error or reason)
  elseif reason == "shutdown" then
    return "The bridge shut down, and the session with it."
  elseif reason == "exited" then
    return ("The Claude process exited (%s)."):format(how)
  end
  return ("The session ended (%s: %s)."):format(tostring(reason), how)
end

local function chat_of_request(id)
  local open = state.server_requests[id]
  return open and open.chat, open and open.chat.asks[open.request_id]
end

local function forget_request(request_id)
  for id, open in pairs(state.server_requests) do
    if open.request_id == request_id then
      state.server_requests[id] = nil
    end
  end
end

function on_notification(c, method, params)
  if method == "session/event" then
    local chat = state.by_session[params.sessionId]
    if chat then
      chat:event(params)
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
    if chat and chat.session_id == params.sessionId then
      local reason = params.reason
      if reason == "closed" or (reason == "shutdown" and c.stopping) then
        chat:exited(nil)
      else
        local msg = exit_message(params)
        chat:exited(msg .. " The conversation goes on in a new process when you restart or send.")
        tell(chat, msg, vim.log.levels.WARN)
      end
      for id, open in pairs(state.server_requests) do
        if open.chat == chat then
          state.server_requests[id] = nil
        end
      end
      redraw(chat)
      fire("ClaudeBridgeExited", { session_id = params.sessionId, reason = reason, status = params.status })
    end
  elseif method == "$/cancelRequest" then
    local chat, card = chat_of_request(params.id)
    state.server_requests[params.id] = nil
    if chat and card then
      chat:settle(card, "withdrawn", "the bridge no longer asks: it timed out or the turn ended")
      redraw(chat)
    end
  elseif method == "window/logMessage" then
    -- A session's end is told by its chat; other errors here.
    local sid = params.message and params.message:match("^session (%S+):")
    if params.type == 1 and not (sid and state.by_session[sid]) then
      notify(params.message, vim.log.levels.ERROR)
    end
  end
end

function on_request(c, method, params, respond, id)
  if method ~= "session/requestPermission" then
    return respond(nil, { code = errors.MethodNotFound, message = "unknown method " .. method })
  end
  local chat = state.by_session[params.sessionId]
  if not chat then
    return respond({ behavior = "deny", message = "No chat holds this session." })
  end
  -- Never block the bridge on the user: defer now, answer with respondPermission.
  respond({ behavior = "defer" })
  local card = chat:ask(params)
  state.server_requests[id] = { chat = chat, request_id = params.requestId }
  redraw(chat)
  fire("ClaudeBridgePermission", params)
  local what = card.what == "question" and "a question"
    or card.what == "plan" and "to approve a plan"
    or ("to use %s: %s"):format(params.displayName or params.toolName, short(model.tool_summary(params.toolName, params.input, chat.cwd), 60))
  tell(chat, ("asks %s (:ClaudePermissions answers)"):format(what), vim.log.levels.WARN)
end

function on_exit(c, info)
  if state.client == c then
    state.client = nil
  end
  if c.stopping then
    return
  end
  local tail = info.stderr and vim.trim(info.stderr) or ""
  local msg = ("The bridge exited (%s).%s"):format(
    M.how_it_ended(info.code, info.signal),
    tail ~= "" and (" " .. tail:sub(-300)) or ""
  )
  local told = false
  for _, chat in ipairs(state.chats) do
    if chat.client == c and not chat.ended then
      chat:exited(msg .. " The next prompt starts a new bridge and continues the conversation.")
      redraw(chat)
      fire("ClaudeBridgeExited", { session_id = chat.session_id, reason = "bridge", code = info.code })
      told = told or view.visible(chat) ~= nil
    end
  end
  state.server_requests = {}
  if not told then
    notify(msg, vim.log.levels.ERROR)
  end
end

-- Chats and sessions --------------------------------------------------------

function M._create_params(cwd)
  local params = vim.deepcopy(config.options.session or {})
  params.cwd = cwd
  return params
end

local function all_chats()
  return state.chats
end

local function new_chat(cwd)
  state.counter = state.counter + 1
  local chat = model.new({ n = state.counter, cwd = cwd })
  chat.ui = { drawn = {} }
  chat.waiting = {} -- callbacks for when the session is ready
  state.chats[#state.chats + 1] = chat
  view.ensure_buffers(chat)
  return chat
end

--- Start the chat's session (if it has none, or it ended); `cb(ok)` once it is ready.
local ensure_session
function ensure_session(chat, cb, extra)
  if chat.session_id and not chat.ended and chat.client and chat.client:is_alive() then
    return cb(true)
  end
  chat.waiting[#chat.waiting + 1] = cb
  if chat.creating then
    return
  end
  chat.creating = true
  local c = M.client()
  chat.client = c
  if chat.state == "exited" then
    chat.state = "starting"
  end
  local params = M._create_params(chat.cwd)
  for k, v in pairs(extra or {}) do
    params[k] = v
  end
  -- After a crash the conversation goes on: the new process resumes it.
  local resuming = not params.resume and chat.ended and chat.claude_session_id
  if resuming then
    params.resume = chat.claude_session_id
  end
  local started = vim.uv.hrtime()
  c:request("session/create", params, function(err, result)
    chat.creating = false
    if err and resuming and err.code ~= errors.ConnectionClosed then
      -- The conversation cannot be resumed (its transcript is gone): start afresh.
      chat:info("Could not continue the conversation (" .. (err.message or "") .. "); a new one starts.")
      chat.claude_session_id = nil
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
      chat:info("A new Claude process continues the conversation.")
    end
    if err then
      chat.state = "exited"
      chat:error("could not start a session: " .. (err.message or vim.inspect(err)))
      redraw(chat)
      for _, w in ipairs(waiting) do
        w(false)
      end
      return
    end
    if chat.session_id then
      state.by_session[chat.session_id] = nil
    end
    chat:created(result)
    chat.create_ms = (vim.uv.hrtime() - started) / 1e6
    state.by_session[result.sessionId] = chat
    for _, early in ipairs(state.early_events[result.sessionId] or {}) do
      chat:event(early)
    end
    state.early_events[result.sessionId] = nil
    redraw(chat)
    for _, w in ipairs(waiting) do
      w(true)
    end
  end)
end

--- The chat a buffer belongs to (its transcript or prompt), or nil.
function M.chat_of(buf)
  for _, chat in ipairs(state.chats) do
    if chat.ui.buf == buf or chat.ui.prompt_buf == buf then
      return chat
    end
  end
end

--- The chat a command acts on: the current buffer's, else the working directory's.
function M.current()
  return M.chat_of(api.nvim_get_current_buf()) or state.by_cwd[vim.fn.getcwd()]
end

local function current_or_new()
  local chat = M.current()
  if not chat then
    chat = new_chat(vim.fn.getcwd())
    state.by_cwd[chat.cwd] = chat
  end
  return chat
end

local function show(chat)
  state.by_cwd[chat.cwd] = chat
  view.open(chat, state.chats)
  redraw(chat)
end

--- :ClaudeChat: open (or focus) the chat of the working directory, starting its
--- session; with `opts.new` (:ClaudeChat!) a new chat in this directory.
function M.chat(opts)
  local cwd = vim.fn.getcwd()
  local chat = not (opts and opts.new) and state.by_cwd[cwd]
  if not chat then
    chat = new_chat(cwd)
  end
  show(chat)
  ensure_session(chat, function() end)
  return chat
end

--- :ClaudeToggle: show the chat of the working directory, or hide it when shown.
function M.toggle()
  local chat = M.current()
  if chat and view.visible(chat) then
    view.hide(chat)
    return chat
  end
  return M.chat()
end

local function turn_finished(chat, sid, result, err)
  chat.send_id = nil
  -- The bridge or the CLI died: its exit says so, once (with a restart action).
  local gone = err and (err.code == errors.ConnectionClosed or err.code == errors.ProcessFailed)
  -- Prompts of the turn that are still open are no longer wanted.
  chat:withdraw_all(gone and "the session ended before it was answered" or "the turn ended before it was answered")
  local done = chat:turn_done(result, (not gone) and err or nil, gone)
  redraw(chat)
  fire("ClaudeBridgeTurnDone", { session_id = sid, result = result, error = err })
  if not chat.ended and not gone then
    if err then
      tell(chat, "the turn failed: " .. short(err.message), vim.log.levels.WARN)
    elseif result.interrupted then
      tell(chat, "the turn was interrupted")
    else
      tell(chat, "finished: " .. short(result.text))
    end
  end
  if done and chat.client and chat.client:is_alive() and not chat.ended then
    chat.client:request("session/getContextUsage", { sessionId = sid }, function(cerr, usage)
      if not cerr and usage then
        chat:context_usage(done, usage.usage)
        redraw(chat)
      end
    end)
  end
end

--- Send `text` in `chat`: a new turn, or a live message into the running one.
function M.send_to(chat, text)
  local prompt, perr = mention.to_prompt(text, chat.cwd, chat.attachments)
  if perr then
    -- Nothing is lost: the text goes back into the prompt.
    chat:error("not sent: " .. perr)
    view.append_prompt(chat, text)
    redraw(chat)
    return
  end
  local live = chat.state == "running" and not chat.ended
  chat:user(text, live)
  if chat.history[#chat.history] ~= text then
    chat.history[#chat.history + 1] = text
  end
  redraw(chat)
  ensure_session(chat, function(ok)
    if not ok then
      chat.state = "exited"
      return
    end
    if chat.send_id then -- a turn runs (or was just started): the prompt goes into it
      chat.client:request("session/message", { sessionId = chat.session_id, prompt = prompt }, function(err)
        if err then
          chat:error("the message was not sent: " .. (err.message or ""))
          redraw(chat)
        end
      end)
      return
    end
    chat.state = "running"
    local sid = chat.session_id
    fire("ClaudeBridgeTurnStart", { session_id = sid, prompt = text })
    chat.send_id = chat.client:request("session/send", { sessionId = sid, prompt = prompt }, function(err, result)
      turn_finished(chat, sid, result, err)
    end)
  end)
end

--- :ClaudeSend {text}: send a prompt (the prompt buffer's text without one); while
--- a turn runs it goes into that turn as a live message.
function M.send(text)
  local existed = M.current() ~= nil
  local chat = current_or_new()
  if text == nil or text == "" then
    text = view.take_prompt(chat)
  end
  if text == "" then
    return
  end
  M.send_to(chat, text)
  if not view.visible(chat) then
    vim.notify(
      ("Claude (%s): %s (:ClaudeChat shows the chat)"):format(chat:title(), existed and "sent" or "a new chat, sent"),
      vim.log.levels.INFO
    )
  end
end

local function with_session(fn, chat)
  chat = chat or M.current()
  if not (chat and chat.session_id and not chat.ended and chat.client) then
    notify("no running chat here (:ClaudeChat starts one)", vim.log.levels.WARN)
    return
  end
  return fn(chat)
end

--- Completion of :ClaudeSend: the slash commands the CLI reported.
function M.complete_send(arglead)
  local chat = M.current()
  local out = {}
  if chat and arglead:sub(1, 1) == "/" then
    for _, c in ipairs(chat.commands or {}) do
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
--- Live messages the CLI queued are cancelled too where the CLI can; a CLI that
--- cannot (Unsupported) gets a plain interrupt, and its queued messages then run.
function M.interrupt(chat)
  with_session(function(ch)
    local sid = ch.session_id
    ch.client:request("session/interrupt", { sessionId = sid, cancelQueued = true }, function(err)
      if err and err.code == errors.Unsupported then
        ch.client:request("session/interrupt", { sessionId = sid }, function(err2)
          if err2 then
            ch:error("interrupt failed: " .. (err2.message or ""))
            redraw(ch)
          end
        end)
      elseif err then
        ch:error("interrupt failed: " .. (err.message or ""))
        redraw(ch)
      end
    end)
  end, chat)
end

--- :ClaudeModel [name]: switch the model (without a name: pick one the CLI offers).
function M.set_model(name, chat)
  with_session(function(ch)
    local function apply(value)
      ch.client:request("session/setModel", { sessionId = ch.session_id, model = value }, function(err, result)
        if err then
          ch:error("model switch failed: " .. (err.message or ""))
        else
          ch.model = result.model or value
          ch:info("Model: " .. tostring(ch.model or "default"))
        end
        redraw(ch)
      end)
    end
    if name and name ~= "" then
      return apply(name)
    end
    local models = ch.models or {}
    if #models == 0 then
      return notify("the CLI reported no models; give one: :ClaudeModel <name>", vim.log.levels.WARN)
    end
    vim.ui.select(models, {
      prompt = "Model for " .. ch:title(),
      kind = "claude_bridge.model",
      format_item = function(item)
        return (item.displayName or item.value) .. (item.description and ("  " .. item.description) or "")
      end,
    }, function(choice)
      if choice then
        apply(choice.value)
      end
    end)
  end, chat)
end

--- The permission mode names, from the generated wire constants.
function M.mode_names()
  local names = {}
  for _, m in ipairs(protocol.permission_modes) do
    names[#names + 1] = m.name
  end
  return names
end

--- :ClaudeMode [mode]: switch the permission mode (without one: pick).
function M.set_mode(mode, chat)
  with_session(function(ch)
    local function apply(value)
      ch.client:request("session/setPermissionMode", { sessionId = ch.session_id, mode = value }, function(err, result)
        if err then
          ch:error("mode switch failed: " .. (err.message or ""))
        else
          ch.mode = result.mode or value
          ch:info("Permission mode: " .. ch.mode)
        end
        redraw(ch)
      end)
    end
    if mode and mode ~= "" then
      return apply(mode)
    end
    vim.ui.select(protocol.permission_modes, {
      prompt = "Permission mode for " .. ch:title(),
      kind = "claude_bridge.mode",
      format_item = function(m)
        return ("%s%s — %s"):format(m.name, m.name == ch.mode and " (now)" or "", m.description)
      end,
    }, function(choice)
      if choice then
        apply(choice.name)
      end
    end)
  end, chat)
end

--- :ClaudeSessions: pick among the live chats and open it.
function M.sessions()
  if #state.chats == 0 then
    return notify("no chats yet (:ClaudeChat starts one)")
  end
  vim.ui.select(state.chats, {
    prompt = "Claude chats",
    kind = "claude_bridge.session",
    format_item = function(chat)
      local first = ""
      for _, b in ipairs(chat.blocks) do
        if b.kind == "user" then
          first = short(b.text, 60)
          break
        end
      end
      return ("%s  %s  [%s, %s]  %s"):format(
        chat:title(),
        vim.fn.fnamemodify(chat.cwd, ":~"),
        view.state_text(chat),
        ("$%.4f"):format(chat.total_cost or 0),
        first
      )
    end,
  }, function(chat)
    if chat then
      show(chat)
    end
  end)
end

--- A conversation title as plain text: one line, without Markdown syntax.
function M.plain_title(text)
  local t = tostring(text or ""):gsub("\n.*", "")
  t = t:gsub("%[([^%]]*)%]%([^%)]*%)", "%1") -- [text](url)
  t = t:gsub("^%s*#+%s*", ""):gsub("^%s*[-*>]%s+", "")
  t = t:gsub("%*%*", ""):gsub("__", ""):gsub("`", "")
  t = t:gsub("%s+", " ")
  return short(vim.trim(t), 70)
end

--- :ClaudeResume: pick a past conversation of this directory and continue it.
function M.resume()
  local cwd = vim.fn.getcwd()
  local c = M.client()
  c:request("session/history", { cwd = cwd, limit = 50 }, function(err, result)
    if err then
      return notify("could not list past conversations: " .. (err.message or ""), vim.log.levels.ERROR)
    end
    local entries = result.conversations or {}
    if #entries == 0 then
      return notify("no past conversation in " .. vim.fn.fnamemodify(cwd, ":~"))
    end
    vim.ui.select(entries, {
      prompt = "Resume a conversation (newest first)",
      kind = "claude_bridge.history",
      format_item = function(e)
        local when = e.lastModified and os.date("%Y-%m-%d %H:%M", math.floor(e.lastModified / 1000)) or ""
        local title = e.title or e.customTitle or e.summary or e.firstPrompt or e.claudeSessionId
        return ("%s  %s  (%d messages)%s"):format(
          when,
          M.plain_title(title),
          e.messageCount or 0,
          e.liveSessionId and "  [open]" or ""
        )
      end,
    }, function(entry)
      if not entry then
        return
      end
      local live = entry.liveSessionId and state.by_session[entry.liveSessionId]
      if live and not live.ended then
        return show(live) -- open here already: show it
      end
      M.resume_id(entry.claudeSessionId)
    end)
  end)
end

--- Continue the conversation `claude_session_id` of this directory in a new chat.
function M.resume_id(claude_session_id)
  local chat = new_chat(vim.fn.getcwd())
  chat:info("Resuming " .. claude_session_id)
  show(chat)
  ensure_session(chat, function() end, { resume = claude_session_id, replay = true })
  return chat
end

local function forget_chat(chat)
  if chat.session_id and chat.client and chat.client:is_alive() and not chat.ended then
    chat.client:request("session/close", { sessionId = chat.session_id }, function() end)
  end
  chat.state = "exited"
  chat:withdraw_all("the chat was closed")
  for i, c in ipairs(state.chats) do
    if c == chat then
      table.remove(state.chats, i)
      break
    end
  end
  for id, open in pairs(state.server_requests) do
    if open.chat == chat then
      state.server_requests[id] = nil
    end
  end
  if state.by_cwd[chat.cwd] == chat then
    state.by_cwd[chat.cwd] = nil
    for i = #state.chats, 1, -1 do -- another chat of the directory takes its place
      if state.chats[i].cwd == chat.cwd then
        state.by_cwd[chat.cwd] = state.chats[i]
        break
      end
    end
  end
end

--- :ClaudeClose: end the chat's session and close its windows and buffers.
function M.close(chat)
  chat = chat or M.current()
  if not chat then
    return notify("no chat here", vim.log.levels.WARN)
  end
  forget_chat(chat)
  view.hide(chat)
  for _, b in ipairs({ chat.ui.prompt_buf, chat.ui.buf }) do
    if b and api.nvim_buf_is_valid(b) then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
end

-- Context for the prompt ------------------------------------------------------

--- The file or folder a file explorer shows under the cursor (netrw, oil,
--- neo-tree, nvim-tree, mini.files), or nil.
local function explorer_path(buf)
  local ft = vim.bo[buf].filetype
  local ok, path = pcall(function()
    if ft == "netrw" then
      local dir = vim.b[buf].netrw_curdir
      local word = vim.fn["netrw#Call"]("NetrwGetWord")
      if dir and word and word ~= "" and word ~= "../" and word ~= "./" then
        return vim.fs.joinpath(dir, word)
      end
    elseif ft == "oil" then
      local oil = require("oil")
      local entry = oil.get_cursor_entry()
      return entry and vim.fs.joinpath(oil.get_current_dir(), entry.name)
    elseif ft == "neo-tree" then
      local st = require("neo-tree.sources.manager").get_state("filesystem")
      local node = st.tree:get_node()
      return node and node.path
    elseif ft == "NvimTree" then
      local node = require("nvim-tree.api").tree.get_node_under_cursor()
      return node and node.absolute_path
    elseif ft == "minifiles" then
      local entry = require("mini.files").get_fs_entry()
      return entry and entry.path
    end
  end)
  if ok and type(path) == "string" and path ~= "" then
    return (path:gsub("/$", ""))
  end
end

local function quickfix_snippet(chat)
  local items = vim.fn.getqflist()
  local lines = {}
  for _, it in ipairs(items) do
    local name = it.bufnr > 0 and vim.fn.fnamemodify(api.nvim_buf_get_name(it.bufnr), ":~:.") or ""
    lines[#lines + 1] = ("%s:%d:%d: %s"):format(name, it.lnum, it.col, vim.trim(it.text or ""))
  end
  if #lines == 0 then
    return nil
  end
  state.pasted = state.pasted + 1
  local name = "quickfix-" .. state.pasted
  chat.attachments[name] = { kind = "snippet", label = "The quickfix list", lines = lines, filetype = "" }
  return "@" .. name
end

--- :ClaudeAdd [path]: put a mention into the prompt of the working directory's
--- chat: `path`; else what the current window shows: the file (the lines of a
--- range: `:'<,'>ClaudeAdd`), the entry under the cursor of a file explorer, or
--- the quickfix list.
---@param opts {args: string?, range: integer?, line1: integer?, line2: integer?, buf: integer?}?
function M.add(opts)
  opts = opts or {}
  local buf = opts.buf or api.nvim_get_current_buf()
  local cwd = vim.fn.getcwd()
  local chat = state.by_cwd[cwd]
  if not chat then
    chat = new_chat(cwd)
    state.by_cwd[cwd] = chat
  end
  local token
  if opts.args and opts.args ~= "" then
    local path = vim.fn.fnamemodify(vim.fn.expand(opts.args), ":p"):gsub("/$", "")
    if not vim.uv.fs_stat(path) then
      return notify("no such file: " .. opts.args, vim.log.levels.ERROR)
    end
    token = mention.format(path, chat.cwd)
  elseif vim.bo[buf].buftype == "quickfix" then
    token = quickfix_snippet(chat)
    if not token then
      return notify("the quickfix list is empty", vim.log.levels.WARN)
    end
  else
    local path = explorer_path(buf)
    if path then
      token = mention.format(path, chat.cwd)
    else
      local name = api.nvim_buf_get_name(buf)
      local ranged = (opts.range or 0) > 0
      local line1, line2 = opts.line1, opts.line2
      if name ~= "" and vim.bo[buf].buftype == "" then
        token = ranged and mention.format(name, chat.cwd, line1, line2) or mention.format(name, chat.cwd)
      else
        -- A buffer without a file: its lines are held by the chat for the next prompt.
        line1, line2 = line1 or 1, line2 or api.nvim_buf_line_count(buf)
        state.pasted = state.pasted + 1
        local label = "snippet-" .. state.pasted
        chat.attachments[label] = {
          kind = "snippet",
          label = ("[No Name]:%d-%d"):format(line1, line2),
          lines = api.nvim_buf_get_lines(buf, line1 - 1, line2, false),
          filetype = vim.bo[buf].filetype,
        }
        token = "@" .. label
      end
    end
  end
  view.append_prompt(chat, token)
  redraw(chat)
  notify(("%s is in the prompt of %s"):format(token, chat:title()))
  return chat
end

local function clipboard_image()
  local tries = {
    { list = { "wl-paste", "--list-types" }, get = { "wl-paste", "--no-newline", "--type", "image/png" } },
    {
      list = { "xclip", "-selection", "clipboard", "-t", "TARGETS", "-o" },
      get = { "xclip", "-selection", "clipboard", "-t", "image/png", "-o" },
    },
    { get = { "pngpaste", "-" } },
  }
  for _, t in ipairs(tries) do
    if vim.fn.executable(t.get[1]) == 1 then
      local offers = true
      if t.list then
        local ok, r = pcall(function()
          return vim.system(t.list, { text = true }):wait(2000)
        end)
        offers = ok and r.code == 0 and (r.stdout or ""):find("image/png", 1, true) ~= nil
      end
      if offers then
        local ok, r = pcall(function()
          return vim.system(t.get):wait(5000)
        end)
        if ok and r.code == 0 and r.stdout and #r.stdout > 0 then
          return r.stdout
        end
      end
    end
  end
end

--- :ClaudePaste: attach the clipboard's image to the prompt (as `@pasted-N.png`).
function M.paste_image(chat)
  chat = chat or current_or_new()
  local data = clipboard_image()
  if not data then
    return notify("the clipboard holds no image (wl-paste, xclip or pngpaste reads it)", vim.log.levels.WARN)
  end
  local dir = vim.fn.stdpath("cache") .. "/claude_bridge"
  vim.fn.mkdir(dir, "p")
  state.pasted = state.pasted + 1
  local name = ("pasted-%d.png"):format(state.pasted)
  local path = ("%s/%d-%s"):format(dir, vim.fn.getpid(), name)
  local f = assert(io.open(path, "wb"))
  f:write(data)
  f:close()
  chat.attachments[name] = { kind = "image", path = path, media_type = "image/png" }
  view.append_prompt(chat, "@" .. name)
  return chat
end

-- Prompts and the transcript's actions ------------------------------------------

local function respond(chat, card, decision, outcome)
  if card.state ~= "pending" then
    return
  end
  chat:settle(card, "answered", outcome)
  -- Back to where the user was before going to the prompt.
  local back = chat.return_win
  chat.return_win = nil
  if back and api.nvim_win_is_valid(back) and api.nvim_get_current_win() == chat.ui.win and #chat:pending() == 0 then
    api.nvim_set_current_win(back)
  end
  forget_request(card.request_id)
  redraw(chat)
  local c = chat.client
  if not (c and c:is_alive()) then
    return
  end
  c:request("session/respondPermission", {
    sessionId = card.params.sessionId,
    requestId = card.request_id,
    decision = decision,
  }, function(err)
    if err then
      card.outcome = (card.outcome or "") .. " (too late: " .. (err.message or "not sent") .. ")"
      chat:changed(card)
      redraw(chat)
    end
  end)
end

--- Pick choice `index` of the prompt `card` of `chat`.
function M.pick(chat, card, index)
  if card.state ~= "pending" then
    return
  end
  local choice = permission.choices(card)[index]
  if not choice then
    return
  end
  if choice.decision then
    return respond(chat, card, choice.decision, choice.outcome)
  elseif choice.action == "reason" then
    vim.ui.input({ prompt = "Tell Claude why (optional): " }, function(reason)
      if reason == nil then
        return -- cancelled: the prompt stays
      end
      local decision, outcome = permission.deny_with(card, reason)
      respond(chat, card, decision, outcome)
    end)
  elseif choice.action == "diff" then
    if card.close_diff then
      card.close_diff()
    end
    local close, tab = permission.review(card, function(decision, outcome)
      respond(chat, card, decision, outcome)
    end)
    card.close_diff = close
    if tab then
      api.nvim_create_autocmd("TabClosed", {
        once = true,
        callback = function()
          if not api.nvim_tabpage_is_valid(tab) and card.close_diff == close then
            card.close_diff = nil
          end
        end,
      })
    end
  elseif choice.action == "toggle" then
    if vim.tbl_contains(card.selected, choice.value) then
      card.selected = vim.tbl_filter(function(l)
        return l ~= choice.value
      end, card.selected)
    else
      card.selected[#card.selected + 1] = choice.value
    end
    chat:changed(card)
    redraw(chat)
  else
    local function answer(text)
      local decision, outcome = permission.answer_question(card, text)
      if decision then
        respond(chat, card, decision, outcome)
      else
        chat:changed(card)
        redraw(chat)
      end
    end
    if choice.action == "option" then
      answer(choice.value)
    elseif choice.action == "submit" then
      answer(table.concat(card.selected, ", "))
    elseif choice.action == "other" then
      vim.ui.input({ prompt = "Your answer: " }, function(text)
        if text and vim.trim(text) ~= "" then
          answer(vim.trim(text))
        end
      end)
    end
  end
end

--- The chat holding the oldest prompt waiting for an answer (the current one's first).
local function waiting_chat(chat)
  if chat and #chat:pending() > 0 then
    return chat
  end
  for _, c in ipairs(state.chats) do
    if #c:pending() > 0 then
      return c
    end
  end
end

--- :ClaudePermissions (and the answer key): go to the prompt waiting for an
--- answer, in its chat, with the cursor on its first choice.
function M.permissions(chat)
  local from = api.nvim_get_current_win()
  chat = waiting_chat(chat or M.current())
  if not chat then
    return notify("no prompt is waiting for an answer")
  end
  if not view.visible(chat) then
    show(chat)
  end
  view.flush(chat)
  local card = chat:pending()[1]
  local row = view.choice_row(chat, card)
  if row and chat.ui.win and api.nvim_win_is_valid(chat.ui.win) then
    if from ~= chat.ui.win then
      chat.return_win = from
    end
    vim.cmd("stopinsert")
    api.nvim_set_current_win(chat.ui.win)
    api.nvim_win_set_cursor(chat.ui.win, { row + 1, 0 })
  end
end

--- Open `path` in a window that is not the chat's (the previous one, else a new split).
local function open_beside(chat, path)
  local target
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  local function usable(w)
    return w ~= 0 and api.nvim_win_is_valid(w) and w ~= chat.ui.win and w ~= chat.ui.prompt_win
      and api.nvim_win_get_config(w).relative == "" and not M.chat_of(api.nvim_win_get_buf(w))
  end
  if usable(prev) then
    target = prev
  else
    for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
      if usable(w) then
        target = w
        break
      end
    end
  end
  if target then
    api.nvim_set_current_win(target)
    vim.cmd.edit(vim.fn.fnameescape(path))
  else
    vim.cmd("topleft vsplit " .. vim.fn.fnameescape(path))
  end
end

--- gf in the transcript: open the file of the tool call under the cursor.
function M.open_file(chat, row)
  local block = view.at(chat, row)
  local path = block and (block.kind == "tool") and model.tool_path(block.input, chat.cwd)
  if not path then
    return notify("no file on this line", vim.log.levels.WARN)
  end
  open_beside(chat, path)
end

--- Enter in the transcript: pick the choice under the cursor, restart an ended
--- session, show what an edit changed, open a tool's file, or open/close a fold.
function M.enter(chat, row)
  local block, action = view.at(chat, row)
  if action and action.kind == "choice" then
    return M.pick(chat, block, action.index)
  elseif action and action.kind == "restart" then
    chat:info("Restarting…")
    redraw(chat)
    return ensure_session(chat, function() end)
  elseif action and action.kind == "tool" then
    if model.EDIT_TOOLS[block.name] and block.result ~= nil and not block.is_error then
      permission.show_change(block)
      return
    end
    local path = model.tool_path(block.input, chat.cwd)
    if path and vim.uv.fs_stat(path) then
      return open_beside(chat, path)
    end
  end
  pcall(vim.cmd, "normal! za")
end

--- For the statusline: "Claude <model> <mode> <state> $cost" of the current chat ("" without one).
function M.statusline()
  local chat = M.current()
  if not chat then
    return ""
  end
  return ("Claude %s %s %s $%.4f"):format(
    chat.model or "default",
    chat.mode or "default",
    view.state_text(chat),
    chat.total_cost or 0
  )
end

--- A click on a chat's bar (ClaudeBridgeClick): the model or mode picker, or the
--- state (answer the waiting prompt, or interrupt the running turn).
function M._click(minwid)
  local n, what = math.floor(minwid / 16), minwid % 16
  for _, chat in ipairs(state.chats) do
    if chat.n == n then
      if what == view.CLICK.model then
        M.set_model(nil, chat)
      elseif what == view.CLICK.mode then
        M.set_mode(nil, chat)
      elseif what == view.CLICK.state then
        if next(chat.asks) then
          M.permissions(chat)
        elseif chat.state == "running" then
          M.interrupt(chat)
        end
      end
      return
    end
  end
end

view.actions = {
  send = function(chat)
    state.by_cwd[chat.cwd] = chat
    local text = view.take_prompt(chat)
    if text ~= "" then
      M.send_to(chat, text)
    end
  end,
  interrupt = function(chat)
    M.interrupt(chat)
  end,
  answer = function(chat)
    M.permissions(chat)
  end,
  enter = M.enter,
  open_file = M.open_file,
  paste_image = M.paste_image,
  chat_of = M.chat_of,
}
view.watch_windows(all_chats)

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
