--- The JSON-RPC connection to one `claude-bridge` process (newline-delimited JSON
--- over its stdin/stdout). No UI: requests with callbacks, handlers for the
--- bridge's notifications and requests, and a report when the process ends.
---
--- Incoming lines are decoded on the main loop in time slices, so a firehose of
--- events never holds the editor for long.

local protocol = require("claude_bridge.protocol")

local uv = vim.uv or vim.loop

local M = {}

---@class claude_bridge.Client
---@field cmd string[]
---@field proc vim.SystemObj?
---@field pid integer?
---@field state "starting"|"ready"|"dead"
---@field init_result table?
local Client = {}
Client.__index = Client

local SLICE_NS = 6 * 1e6 -- decode for at most 6 ms before yielding to the editor
local STDERR_TAIL = 8192

--- The error a pending request gets when the bridge is gone (ConnectionClosed).
local CONNECTION_CLOSED = protocol.errors.ConnectionClosed

---@class claude_bridge.ClientHandlers
---@field on_notification fun(method: string, params: table)
---@field on_request fun(method: string, params: table, respond: fun(result: any, err: table?), id: integer|string)
---@field on_exit fun(info: {code: integer, signal: integer, stderr: string})

---@param opts {cmd: string[], init_options: table, env: table<string,string>?, handlers: claude_bridge.ClientHandlers}
---@return claude_bridge.Client
function M.new(opts)
  local self = setmetatable({}, Client)
  self.cmd = opts.cmd
  self.env = opts.env
  self.init_options = opts.init_options
  self.handlers = opts.handlers
  self.state = "starting"
  self.next_id = 0
  self.pending = {} ---@type table<integer, fun(err: table?, result: any)>
  self.queued = {} ---@type string[] messages written once initialize is answered
  self.chunks = {} ---@type string[] raw stdout not yet split into lines
  self.lines = {} ---@type table<integer, string> complete lines not yet handled (a queue)
  self.line_pos = 1 -- the next line to handle
  self.line_end = 0 -- the last line queued
  self.drain_scheduled = false
  self.stderr_tail = ""
  return self
end

function Client:_schedule_drain()
  if self.drain_scheduled then
    return
  end
  self.drain_scheduled = true
  vim.schedule(function()
    self.drain_scheduled = false
    self:_drain()
  end)
end

--- Split what arrived into lines and handle them, for at most SLICE_NS.
function Client:_drain()
  local lines = self.lines
  if #self.chunks > 0 then
    local data = table.concat(self.chunks)
    self.chunks = {}
    local start = 1
    while true do
      local nl = data:find("\n", start, true)
      if not nl then
        break
      end
      self.line_end = self.line_end + 1
      lines[self.line_end] = data:sub(start, nl - 1)
      start = nl + 1
    end
    if start <= #data then
      self.chunks[1] = data:sub(start)
    end
  end
  local deadline = uv.hrtime() + SLICE_NS
  while self.line_pos <= self.line_end do
    local line = lines[self.line_pos]
    lines[self.line_pos] = nil
    self.line_pos = self.line_pos + 1
    if line ~= "" and line ~= "\r" then
      self:_handle_line(line)
    end
    if self.line_pos <= self.line_end and uv.hrtime() > deadline then
      self:_schedule_drain()
      return
    end
  end
  if self.exit_info and #self.chunks == 0 then
    self:_finish_exit()
  end
end

function Client:_handle_line(line)
  local ok, msg = pcall(vim.json.decode, line, { luanil = { object = true, array = true } })
  if not ok or type(msg) ~= "table" then
    vim.notify("claude-bridge: unreadable message: " .. line:sub(1, 200), vim.log.levels.WARN)
    return
  end
  if msg.method then
    if msg.id ~= nil then
      local id = msg.id
      local answered = false
      local function respond(result, err)
        if answered then
          return
        end
        answered = true
        if err then
          self:_write({ jsonrpc = "2.0", id = id, error = err })
        else
          self:_write({ jsonrpc = "2.0", id = id, result = result == nil and vim.NIL or result })
        end
      end
      local hok, herr = pcall(self.handlers.on_request, msg.method, msg.params or {}, respond, id)
      if not hok then
        respond(nil, { code = protocol.errors.InternalError, message = tostring(herr) })
      end
    else
      local hok, herr = pcall(self.handlers.on_notification, msg.method, msg.params or {})
      if not hok then
        vim.notify("claude-bridge: " .. tostring(herr), vim.log.levels.ERROR)
      end
    end
  elseif msg.id ~= nil then
    local cb = self.pending[msg.id]
    self.pending[msg.id] = nil
    if cb then
      local hok, herr = pcall(cb, msg.error, msg.result)
      if not hok then
        vim.notify("claude-bridge: " .. tostring(herr), vim.log.levels.ERROR)
      end
    end
  end
end

function Client:_write(msg)
  if self.state == "dead" or not self.proc then
    return false
  end
  local ok = pcall(self.proc.write, self.proc, vim.json.encode(msg) .. "\n")
  return ok
end

--- Start the process and send `initialize`; requests made meanwhile wait for its answer.
function Client:start()
  local env = self.env
  local ok, proc = pcall(vim.system, self.cmd, {
    stdin = true,
    env = env,
    stdout = function(_, data)
      if data then
        self.chunks[#self.chunks + 1] = data
        self:_schedule_drain()
      end
    end,
    stderr = function(_, data)
      if data then
        self.stderr_tail = (self.stderr_tail .. data):sub(-STDERR_TAIL)
      end
    end,
  }, function(result)
    self.exit_info = { code = result.code, signal = result.signal }
    self:_schedule_drain()
  end)
  if not ok then
    self.state = "dead"
    return false, tostring(proc)
  end
  self.proc = proc
  self.pid = proc.pid
  self.next_id = self.next_id + 1
  local id = self.next_id
  self.pending[id] = function(err, result)
    if err then
      self:_fail_all(err)
      self:stop()
      return
    end
    self.init_result = result
    self.state = "ready"
    self:_write({ jsonrpc = "2.0", method = "initialized", params = vim.empty_dict() })
    local queued = self.queued
    self.queued = {}
    for _, line in ipairs(queued) do
      pcall(self.proc.write, self.proc, line)
    end
  end
  self:_write({
    jsonrpc = "2.0",
    id = id,
    method = "initialize",
    params = {
      processId = vim.fn.getpid(),
      clientInfo = { name = "claude_bridge.nvim", version = "0.1.0" },
      capabilities = vim.empty_dict(),
      initializationOptions = self.init_options,
    },
  })
  return true
end

--- Send a request; `cb(err, result)` runs on the main loop with the answer.
---@return integer id
function Client:request(method, params, cb)
  self.next_id = self.next_id + 1
  local id = self.next_id
  if self.state == "dead" then
    vim.schedule(function()
      cb({ code = CONNECTION_CLOSED, message = "the bridge is not running" })
    end)
    return id
  end
  self.pending[id] = cb or function() end
  local msg = { jsonrpc = "2.0", id = id, method = method, params = params or vim.empty_dict() }
  if self.state == "starting" then
    self.queued[#self.queued + 1] = vim.json.encode(msg) .. "\n"
  else
    self:_write(msg)
  end
  return id
end

function Client:notify(method, params)
  local msg = { jsonrpc = "2.0", method = method, params = params or vim.empty_dict() }
  if self.state == "starting" then
    self.queued[#self.queued + 1] = vim.json.encode(msg) .. "\n"
  else
    self:_write(msg)
  end
end

--- Ask the bridge to cancel a request (on `session/send` it interrupts the turn).
function Client:cancel(id)
  self:notify("$/cancelRequest", { id = id })
end

function Client:is_alive()
  return self.state ~= "dead"
end

function Client:_fail_all(err)
  local pending = self.pending
  self.pending = {}
  for _, cb in pairs(pending) do
    pcall(cb, err)
  end
end

function Client:_finish_exit()
  if self.state == "dead" and self.exit_reported then
    return
  end
  self.state = "dead"
  self.exit_reported = true
  local info = self.exit_info or { code = -1, signal = 0 }
  local message = ("the bridge exited (code %s%s)"):format(
    tostring(info.code),
    (info.signal and info.signal ~= 0) and (", signal " .. info.signal) or ""
  )
  self:_fail_all({ code = CONNECTION_CLOSED, message = message })
  self.handlers.on_exit({ code = info.code, signal = info.signal, stderr = self.stderr_tail })
end

--- End the bridge: close its stdin (it closes every session and exits), wait up
--- to `timeout_ms`, then kill it. Blocking only when `wait` is true (VimLeavePre).
function Client:stop(wait, timeout_ms)
  local proc = self.proc
  if not proc then
    self.state = "dead"
    return
  end
  self.stopping = true
  pcall(proc.write, proc, nil)
  if wait then
    local done = vim.wait(timeout_ms or 5000, function()
      return self.exit_info ~= nil
    end, 20)
    if not done then
      pcall(proc.kill, proc, "sigkill")
    end
  end
end

return M
