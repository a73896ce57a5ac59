--- One session's conversation as data, built from the bridge's `session/event`s
--- and the plugin's own actions. Nothing here draws: the view reads `blocks` and
--- the `dirty` index (the first block that changed since it last drew).
---
--- Blocks, in order:
---   {kind="user", text, live?, context?}     a prompt (or a live message)
---   {kind="text", parts, index, done}        assistant reply text (parts joined lazily)
---   {kind="thinking", parts, done}
---   {kind="tool", id, name, input, result?, is_error?, denied?}
---   {kind="done", cost, duration, turns, context?, interrupted?, is_error?, subtype}
---   {kind="error", text}   {kind="info", text}

local M = {}

---@class claude_bridge.Model
local Model = {}
Model.__index = Model

---@return claude_bridge.Model
function M.new(fields)
  local self = setmetatable({
    session_id = nil,
    cwd = nil,
    pid = nil,
    claude_session_id = nil,
    model = nil,
    mode = nil,
    models = {},
    state = "starting", -- starting | idle | running | exited
    ended = false, -- the session's process is gone (a new one is needed)
    total_cost = 0,
    turn_start_cost = 0,
    context = nil, -- last getContextUsage percentage
    blocks = {},
    dirty = nil,
    tools = {}, -- toolUseId -> block
    permissions = {}, -- requestId -> params (asked, not answered yet)
  }, Model)
  for k, v in pairs(fields or {}) do
    self[k] = v
  end
  return self
end

function Model:_touch(i)
  if self.dirty == nil or i < self.dirty then
    self.dirty = i
  end
end

function Model:add(block)
  self.blocks[#self.blocks + 1] = block
  self:_touch(#self.blocks)
  return block
end

function Model:_changed(block)
  for i = #self.blocks, 1, -1 do
    if self.blocks[i] == block then
      self:_touch(i)
      return
    end
  end
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

--- The block that streaming text of `kind` goes to: the last block if it is an open one of that kind.
--- (A live message shown meanwhile does not split the reply it arrived during.)
function Model:_open(kind, index)
  local open = self.streaming
  if open and open.kind == kind and not open.done and open.index == index then
    return open
  end
  self.streaming = self:add({ kind = kind, parts = {}, index = index, done = false })
  return self.streaming
end

--- Apply the bridge's session info (the `session/create` result).
function Model:created(result)
  self.session_id = result.sessionId
  self.pid = result.pid
  self.cwd = result.cwd
  self.model = result.model or self.model
  self.mode = result.permissionMode or self.mode
  self.models = result.models or {}
  self.commands = result.commands or {}
  self.state = "idle"
  self.ended = false
  self.warm = result.warm
end

--- A prompt the user sent (`live` for a message into the running turn).
function Model:user(text, live)
  self:add({ kind = "user", text = text, live = live or false })
  if not live then
    self.state = "running"
    self.turn_start_cost = self.total_cost
  end
end

function Model:error(text)
  self:add({ kind = "error", text = text })
end

function Model:info(text)
  self:add({ kind = "info", text = text })
end

local handlers = {}

function handlers.init(self, ev)
  self.claude_session_id = ev.claudeSessionId or self.claude_session_id
  self.model = ev.model or self.model
  self.mode = ev.permissionMode or self.mode
end

function handlers.status(self, ev)
  if ev.permissionMode then
    self.mode = ev.permissionMode
  end
end

function handlers.textDelta(self, ev)
  if ev.text == "" then
    return
  end
  local block = self:_open("text", ev.index)
  block.parts[#block.parts + 1] = ev.text
  self:_changed(block)
end

function handlers.thinkingDelta(self, ev)
  local block = self:_open("thinking", ev.index)
  block.parts[#block.parts + 1] = ev.thinking
  self:_changed(block)
end

--- A complete block: it replaces what streamed for it (the same text, unless deltas were lost).
local function complete(self, kind, text, ev)
  local open = self.streaming
  local block
  if open and open.kind == kind and not open.done then
    block = open
  else
    block = self:add({ kind = kind, parts = {}, index = ev.index })
  end
  block.parts = { text }
  block.done = true
  block.aborted = ev.aborted
  block.parent = ev.parentToolUseId
  self:_changed(block)
end

function handlers.assistantText(self, ev, replay)
  if replay then
    self:add({ kind = "text", parts = { ev.text }, done = true })
    return
  end
  complete(self, "text", ev.text, ev)
end

function handlers.thinking(self, ev)
  complete(self, "thinking", ev.thinking, ev)
end

function handlers.toolUse(self, ev)
  -- Streaming text before the call is complete by now.
  if self.streaming then
    self.streaming.done = true
    self:_changed(self.streaming)
  end
  local block = self:add({
    kind = "tool",
    id = ev.toolUseId,
    name = ev.name,
    input = ev.input or {},
    parent = ev.parentToolUseId,
  })
  self.tools[ev.toolUseId] = block
end

function handlers.toolResult(self, ev)
  local block = self.tools[ev.toolUseId]
  if not block then
    block = self:add({ kind = "tool", id = ev.toolUseId, name = "tool", input = {} })
    self.tools[ev.toolUseId] = block
  end
  block.result = ev.content
  block.is_error = ev.isError
  self:_changed(block)
end

function handlers.userText(self, ev, replay)
  if replay then
    self:add({ kind = "user", text = ev.text })
  elseif ev.text:find("[Request interrupted", 1, true) then
    self:info("Interrupted.")
  elseif not ev.isReplay then
    self:info(ev.text)
  end
end

function handlers.result(self, ev)
  self.total_cost = ev.totalCostUsd or self.total_cost
  if ev.isError and ev.subtype ~= "error_during_execution" then
    local status = ev.apiErrorStatus and (" (API status " .. ev.apiErrorStatus .. ")") or ""
    self:error((ev.text or ev.subtype) .. status)
  end
end

function handlers.permissionAutoDenied(self, ev)
  self.permissions[ev.requestId] = nil
  self:info(ev.message)
end

function handlers.lagged(self, ev)
  self:error(("%d events were dropped (the editor fell behind)"):format(ev.missed))
end

function handlers.invalidLine(self, ev)
  self:info("The CLI printed: " .. ev.line)
end

--- Apply one `session/event` params; unknown event types are ignored.
function Model:event(params)
  local ev = params.event
  local handler = ev and handlers[ev.type]
  if handler then
    handler(self, ev, params.replay)
  end
end

--- The turn ended (`session/send` result, or its error).
function Model:turn_done(result, err)
  for _, b in ipairs(self.blocks) do
    if (b.kind == "text" or b.kind == "thinking") and not b.done then
      b.done = true
    end
  end
  if not self.ended then
    self.state = "idle"
  end
  if err then
    self:error(err.message or vim.inspect(err))
    return nil
  end
  self.total_cost = result.totalCostUsd or self.total_cost
  self.claude_session_id = result.claudeSessionId or self.claude_session_id
  if result.isError and not result.interrupted and result.subtype ~= "success" then
    local last = self.blocks[#self.blocks]
    if not (last and last.kind == "error") then
      self:error(result.text ~= "" and result.text or result.subtype)
    end
  end
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
function Model:context_usage(block, usage)
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
    self:_changed(block)
  end
end

function Model:exited(message)
  self.state = "exited"
  self.ended = true
  for _, b in ipairs(self.blocks) do
    if (b.kind == "text" or b.kind == "thinking") and not b.done then
      b.done = true
    end
  end
  if message then
    self:error(message)
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
    or input.path
    or input.pattern
    or input.url
    or input.query
    or input.description
    or input.prompt
  if s == nil then
    local ok, json = pcall(vim.json.encode, input)
    s = ok and json or ""
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

return M
