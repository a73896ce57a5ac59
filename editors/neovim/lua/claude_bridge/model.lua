--- A chat: one session's conversation as data, built from the bridge's
--- `session/event`s and the plugin's own actions. Nothing here draws: the view
--- reads `blocks` and the `dirty` index (the first block that changed since it
--- last drew).
---
--- Blocks, in order:
---   {kind="user", text, live?}                 a prompt (or a live message)
---   {kind="text", parts, index, done, header?}  assistant reply text (parts joined lazily)
---   {kind="thinking", parts, done, header?}
---   {kind="tool", id, name, input, result?, is_error?, header?, before?}
---   {kind="todo", items, result?, is_error?, header?}   TodoWrite, updated in place
---   {kind="ask", params, state, ...}            a permission prompt (see Chat:ask)
---   {kind="done", cost, duration, turns, context?, interrupted?, is_error?}
---   {kind="exit", text, restart}               the process ended; `restart` until used
---   {kind="error", text}   {kind="info", text}   {kind="notice", text} (quiet)
--- `header` marks the first block of a reply ("## Claude" is drawn above it).

local M = {}

---@class claude_bridge.Chat
local Chat = {}
Chat.__index = Chat
M.Chat = Chat

---@return claude_bridge.Chat
function M.new(fields)
  local self = setmetatable({
    n = 0, -- the chat's number, for its name and buffer names
    cwd = nil,
    session_id = nil,
    pid = nil,
    claude_session_id = nil,
    model = nil,
    mode = nil,
    models = {},
    commands = {},
    state = "starting", -- starting | idle | running | exited
    ended = false, -- the session's process is gone (a new one is needed)
    total_cost = 0,
    turn_start_cost = 0,
    context = nil, -- last getContextUsage percentage
    blocks = {},
    dirty = nil,
    tools = {}, -- toolUseId -> block
    asks = {}, -- requestId -> pending ask block
    history = {}, -- prompts sent, oldest first
    attachments = {}, -- mention name -> {kind = "snippet"|"image", ...}
    replying = false, -- the last block is part of Claude's reply (no header needed)
    turn_error = false, -- an error was shown for the running turn
    todo = nil, -- the running turn's checklist block
  }, Chat)
  for k, v in pairs(fields or {}) do
    self[k] = v
  end
  return self
end

--- "project #2": the chat's directory and number, as notifications and bars name it.
function Chat:title()
  local dir = self.cwd and vim.fn.fnamemodify(self.cwd, ":t") or "?"
  if dir == "" then
    dir = self.cwd or "?"
  end
  return ("%s #%d"):format(dir, self.n)
end

function Chat:_touch(i)
  if self.dirty == nil or i < self.dirty then
    self.dirty = i
  end
end

function Chat:add(block)
  self.blocks[#self.blocks + 1] = block
  self:_touch(#self.blocks)
  return block
end

--- Mark a block as changed (it is drawn again).
function Chat:changed(block)
  for i = #self.blocks, 1, -1 do
    if self.blocks[i] == block then
      self:_touch(i)
      return
    end
  end
end

--- Everything is drawn again (the view lost its buffer).
function Chat:redraw_all()
  if #self.blocks > 0 then
    self.dirty = 1
  end
end

--- A block of Claude's reply: the first one after the user spoke gets the header.
function Chat:_reply(block)
  if not self.replying then
    block.header = true
    self.replying = true
  end
  return self:add(block)
end

--- The text of a text or thinking block (its parts are joined once, here).
function M.text(block)
  local parts = block.parts
  if #parts > 1 then
    local joined = table.concat(parts)
    block.parts = { joined }
    return joined
  end
  return parts[1] or ""
end

--- The block that streaming text of `kind` goes to: the open one of that kind.
--- (A live message shown meanwhile does not split the reply it arrived during.)
function Chat:_open(kind, index)
  local open = self.streaming
  if open and open.kind == kind and not open.done and open.index == index then
    return open
  end
  self.streaming = self:_reply({ kind = kind, parts = {}, index = index, done = false })
  return self.streaming
end

--- Apply the bridge's session info (the `session/create` result).
function Chat:created(result)
  self.session_id = result.sessionId
  self.pid = result.pid
  self.cwd = result.cwd
  self.model = result.model or self.model
  self.mode = result.permissionMode or self.mode
  self.models = result.models or {}
  self.commands = result.commands or {}
  self.cli = result.cli
  self.state = "idle"
  self.ended = false
  self.warm = result.warm
  -- A running session: the restart actions of earlier exits are spent.
  for _, b in ipairs(self.blocks) do
    if b.kind == "exit" and b.restart then
      b.restart = false
      self:changed(b)
    end
  end
end

--- A prompt the user sent (`live` for a message into the running turn).
function Chat:user(text, live)
  self:add({ kind = "user", text = text, live = live or false })
  self.replying = false
  if not live then
    self.state = "running"
    self.turn_start_cost = self.total_cost
    self.turn_error = false
    self.todo = nil
  end
end

function Chat:error(text)
  self.turn_error = self.state == "running" or self.turn_error
  self:add({ kind = "error", text = text })
end

function Chat:info(text)
  self:add({ kind = "info", text = text })
end

--- A quiet notice: something the CLI said for its own purposes.
function Chat:notice(text)
  self:add({ kind = "notice", text = text })
end

-- Events ------------------------------------------------------------------

local handlers = {}

function handlers.init(self, ev)
  self.claude_session_id = ev.claudeSessionId or self.claude_session_id
  self.model = ev.model or self.model
  self.mode = ev.permissionMode or self.mode
  if ev.capabilities ~= nil and self.cli then
    self.cli.capabilities = ev.capabilities
  end
end

function handlers.status(self, ev)
  if ev.permissionMode then
    self.mode = ev.permissionMode
  end
end

local function seconds(ms)
  local s = (tonumber(ms) or 0) / 1000
  return s < 10 and ("%.1f s"):format(s) or ("%d s"):format(math.floor(s + 0.5))
end

function handlers.system(self, ev)
  local d = ev.data or {}
  if ev.subtype == "api_retry" then
    local status = d.error_status and ("API error " .. tostring(d.error_status)) or "API error"
    local why = d.error and (" (" .. tostring(d.error) .. ")") or ""
    self:notice(
      ("%s%s: retrying, attempt %s of %s, in %s"):format(
        status,
        why,
        tostring(d.attempt or "?"),
        tostring(d.max_retries or "?"),
        seconds(d.retry_delay_ms)
      )
    )
  elseif ev.subtype == "compact_boundary" then
    self:notice("The conversation was compacted.")
  end
end

function handlers.unknown(self, ev)
  if ev.frameType == "rate_limit_event" then
    local info = (ev.frame or {}).rate_limit_info or {}
    if info.status and info.status ~= "allowed" then
      local resets = tonumber(info.resetsAt)
      local when = resets and (", resets at " .. os.date("%H:%M", math.floor(resets))) or ""
      local kind = info.rateLimitType and (" (" .. tostring(info.rateLimitType) .. ")") or ""
      self:notice(("Usage limit%s: %s%s"):format(kind, tostring(info.status), when))
    end
  end
end

function handlers.textDelta(self, ev)
  if ev.text == "" then
    return
  end
  local block = self:_open("text", ev.index)
  block.parts[#block.parts + 1] = ev.text
  self:changed(block)
end

function handlers.thinkingDelta(self, ev)
  local block = self:_open("thinking", ev.index)
  block.parts[#block.parts + 1] = ev.thinking
  self:changed(block)
end

--- A complete block: it replaces what streamed for it (the same text, unless deltas were lost).
local function complete(self, kind, text, ev)
  local open = self.streaming
  local block
  if open and open.kind == kind and not open.done then
    block = open
  else
    block = self:_reply({ kind = kind, parts = {}, index = ev.index })
  end
  block.parts = { text }
  block.done = true
  block.aborted = ev.aborted
  block.parent = ev.parentToolUseId
  self:changed(block)
end

function handlers.assistantText(self, ev, replay)
  if replay then
    self:_reply({ kind = "text", parts = { ev.text }, done = true })
    return
  end
  complete(self, "text", ev.text, ev)
end

function handlers.thinking(self, ev)
  complete(self, "thinking", ev.thinking, ev)
end

local EDIT_TOOLS = { Edit = true, Write = true, MultiEdit = true }
M.EDIT_TOOLS = EDIT_TOOLS

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local data = f:read("*a")
  f:close()
  return data
end
M.read_file = read_file

function handlers.toolUse(self, ev, replay)
  -- Streaming text before the call is complete by now.
  if self.streaming then
    self.streaming.done = true
    self:changed(self.streaming)
  end
  local input = ev.input or {}
  if ev.name == "TodoWrite" and type(input.todos) == "table" then
    local todo = self.todo
    if todo then -- the turn's checklist, updated in place
      todo.items = input.todos
      todo.result, todo.is_error = nil, nil
      self:changed(todo)
    else
      todo = self:_reply({ kind = "todo", items = input.todos })
      self.todo = todo
    end
    self.tools[ev.toolUseId] = todo
    return
  end
  local block = self:_reply({
    kind = "tool",
    id = ev.toolUseId,
    name = ev.name,
    input = input,
    parent = ev.parentToolUseId,
  })
  if EDIT_TOOLS[ev.name] and not replay and type(input.file_path) == "string" then
    -- The file before the tool runs, for showing what it changed (best effort:
    -- a tool that already ran leaves the file as it is after).
    block.before = read_file(input.file_path) or ""
  end
  self.tools[ev.toolUseId] = block
end

function handlers.toolResult(self, ev)
  local block = self.tools[ev.toolUseId]
  if not block then
    block = self:_reply({ kind = "tool", id = ev.toolUseId, name = "tool", input = {} })
    self.tools[ev.toolUseId] = block
  end
  block.result = ev.content
  block.is_error = ev.isError
  self:changed(block)
end

--- What the CLI echoes for its own purposes, as a quiet notice (or nothing):
--- returns the notice's text, `false` for nothing, nil when `text` is the user's.
function M.echo_notice(text)
  local t = vim.trim(text or "")
  if t:find("^%[Request interrupted by user") then
    return "Interrupted."
  end
  local out = t:match("^<local%-command%-stdout>(.-)</local%-command%-stdout>$")
  if out then
    out = vim.trim(out)
    return out ~= "" and out or false
  end
  local name = t:match("<command%-name>(.-)</command%-name>")
  if name then
    local args = vim.trim(t:match("<command%-args>(.-)</command%-args>") or "")
    return "Ran " .. vim.trim(name) .. (args ~= "" and (" " .. args) or "")
  end
  if
    t:find("^<local%-command%-caveat>")
    or t:find("^<system%-reminder>")
    or t:find("^<local%-command%-stderr>")
    or t == ""
  then
    return false
  end
  return nil
end

function handlers.userText(self, ev, replay)
  local notice = M.echo_notice(ev.text)
  if notice then
    self:notice(notice)
  elseif notice == false then
    return
  elseif replay then
    self:add({ kind = "user", text = ev.text })
    self.replying = false
  elseif not ev.isReplay then
    self:notice(ev.text)
  end
end

local function api_error_text(ev)
  local text = ev.text and ev.text ~= "" and ev.text or ev.subtype
  local status = ev.apiErrorStatus
  if status == 401 or status == 403 then
    return ("Authentication failed (API status %d): %s"):format(status, text)
  end
  if status then
    return ("%s (API status %d)"):format(text, status)
  end
  return text
end

function handlers.result(self, ev)
  self.total_cost = ev.totalCostUsd or self.total_cost
  if ev.isError and ev.subtype ~= "error_during_execution" and not self.turn_error then
    -- The CLI words an API error as a reply too: that reply becomes the error.
    local last = self.blocks[#self.blocks]
    if last and last.kind == "text" and ev.text and vim.trim(M.text(last)) == vim.trim(ev.text) then
      last.kind, last.text, last.parts = "error", api_error_text(ev), nil
      if self.streaming == last then
        self.streaming = nil
      end
      self.turn_error = true
      self:changed(last)
      return
    end
    self:error(api_error_text(ev))
  end
end

function handlers.permissionAutoDenied(self, ev)
  local ask = self.asks[ev.requestId]
  if ask then
    self:settle(ask, "withdrawn", ev.message)
  else
    self:notice(ev.message)
  end
end

function handlers.lagged(self, ev)
  self:error(("%d events were dropped (the editor fell behind)"):format(ev.missed))
end

function handlers.invalidLine(self, ev)
  self:notice("The CLI printed: " .. ev.line)
end

--- Apply one `session/event` params; unknown event types are ignored.
function Chat:event(params)
  local ev = params.event
  local handler = ev and handlers[ev.type]
  if handler then
    handler(self, ev, params.replay)
  end
end

--- The turn ended (`session/send` result, or its error; `gone`: it ended with
--- its process, whose exit is told apart).
function Chat:turn_done(result, err, gone)
  for _, b in ipairs(self.blocks) do
    if (b.kind == "text" or b.kind == "thinking") and not b.done then
      b.done = true
    end
  end
  if not self.ended then
    self.state = "idle"
  end
  self.todo = nil
  if gone then
    return nil
  end
  if err then
    self:error(err.message or vim.inspect(err))
    return nil
  end
  self.total_cost = result.totalCostUsd or self.total_cost
  self.claude_session_id = result.claudeSessionId or self.claude_session_id
  if result.isError and not result.interrupted and result.subtype ~= "success" and not self.turn_error then
    self:error(api_error_text(result))
  end
  self.turn_error = false
  return self:add({
    kind = "done",
    cost = result.costUsd or (self.total_cost - self.turn_start_cost),
    duration = result.durationMs,
    turns = result.numTurns,
    interrupted = result.interrupted,
    is_error = result.isError,
    subtype = result.subtype,
  })
end

--- Context usage arrived for the `done` block of a turn.
function Chat:context_usage(block, usage)
  if type(usage) ~= "table" then
    return
  end
  self.context = {
    percentage = usage.percentage,
    total = usage.totalTokens,
    max = usage.maxTokens,
  }
  if block then
    block.context = self.context
    self:changed(block)
  end
end

-- Permission prompts ------------------------------------------------------

--- A permission request (`session/requestPermission` params) becomes a prompt
--- drawn in the chat. `what`: "tool", "edit", "question" or "plan". The block's
--- `state` is "pending", then "answered" or "withdrawn" (with `outcome`).
function Chat:ask(params)
  local tool = params.toolName
  local what = "tool"
  if tool == "ExitPlanMode" then
    what = "plan"
  elseif params.requiresUserInteraction or tool == "AskUserQuestion" then
    what = "question"
  elseif EDIT_TOOLS[tool] then
    what = "edit"
  end
  local block = {
    kind = "ask",
    what = what,
    params = params,
    request_id = params.requestId,
    cwd = self.cwd,
    state = "pending",
    question = 1, -- the question being asked (AskUserQuestion)
    answers = {}, -- question text -> answer
    selected = {}, -- labels ticked for a multiSelect question
  }
  if what == "plan" then
    -- CLI 2.1.332 asks with an empty input: the plan is on the tool call.
    local input = params.input or {}
    local call = params.toolUseId and self.tools[params.toolUseId]
    block.plan = input.plan or (call and call.input and call.input.plan) or ""
  end
  self.asks[params.requestId] = block
  return self:_reply(block)
end

--- The prompts waiting for an answer, oldest first.
function Chat:pending()
  local out = {}
  for _, b in ipairs(self.blocks) do
    if b.kind == "ask" and b.state == "pending" then
      out[#out + 1] = b
    end
  end
  return out
end

--- A prompt is answered (`state` "answered") or withdrawn: `outcome` says how.
function Chat:settle(block, state, outcome)
  if block.state ~= "pending" then
    return
  end
  block.state = state
  block.outcome = outcome
  self.asks[block.request_id] = nil
  if block.close_diff then
    block.close_diff()
    block.close_diff = nil
  end
  self:changed(block)
end

--- Withdraw every prompt still waiting (the turn or the session ended).
function Chat:withdraw_all(reason)
  for _, b in ipairs(self:pending()) do
    self:settle(b, "withdrawn", reason)
  end
end

--- The process is gone; `message` (nil when the user closed it) is shown once,
--- with a restart action.
function Chat:exited(message)
  local first = not self.ended
  self.state = "exited"
  self.ended = true
  for _, b in ipairs(self.blocks) do
    if (b.kind == "text" or b.kind == "thinking") and not b.done then
      b.done = true
    end
  end
  self:withdraw_all("the session ended before it was answered")
  if message and first then
    self:add({ kind = "exit", text = message, restart = true })
  end
end

--- A one-line summary of a tool call's input (paths under `cwd` shown relative).
function M.tool_summary(name, input, cwd)
  input = input or {}
  if type(input.questions) == "table" then
    local qs = {}
    for _, q in ipairs(input.questions) do
      qs[#qs + 1] = q.question
    end
    input = { description = table.concat(qs, " / ") }
  end
  local s = input.command
    or input.file_path
    or input.notebook_path
    or input.path
    or input.pattern
    or input.url
    or input.query
    or input.description
    or input.prompt
  if s == nil then
    local ok, json = pcall(vim.json.encode, input)
    s = ok and json or ""
    if s == "[]" then
      s = ""
    end
  end
  s = tostring(s):gsub("\n", " ")
  if cwd and cwd ~= "" then
    s = s:gsub(vim.pesc(cwd .. "/"), "")
  end
  if #s > 120 then
    s = s:sub(1, 117) .. "..."
  end
  return s
end

--- The file a tool call is about, as an absolute path (nil when none).
function M.tool_path(input, cwd)
  local p = input and (input.file_path or input.notebook_path or input.path)
  if type(p) ~= "string" or p == "" then
    return nil
  end
  if p:sub(1, 1) ~= "/" and cwd then
    p = cwd .. "/" .. p
  end
  return p
end

return M
