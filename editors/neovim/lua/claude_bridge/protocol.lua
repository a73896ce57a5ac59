-- Generated from bridge/rpc/wire/ by `claude-bridge schema`.  Do not edit.
-- The bridge's wire constants: :help claude_bridge-protocol.
local M = {}

M.PROTOCOL_VERSION = "1.0"

--- Error codes by name.
M.errors = {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  RequestCancelled = -32800,
  SessionNotFound = -31001,
  TurnInFlight = -31002,
  SessionClosed = -31003,
  LimitExceeded = -31004,
  DeadlineExceeded = -31005,
  BudgetExceeded = -31006,
  CliNotFound = -31007,
  ProcessFailed = -31008,
  NotSent = -31009,
  UnknownRequest = -31010,
  ControlError = -31011,
  MessageTooLarge = -31012,
  TranscriptNotFound = -31013,
  TranscriptInUse = -31014,
  Unsupported = -31015,
  ServerNotInitialized = -32002,
  ConnectionClosed = -32099,
}

--- Error names by code.
M.error_names = {
  [-32700] = "ParseError",
  [-32600] = "InvalidRequest",
  [-32601] = "MethodNotFound",
  [-32602] = "InvalidParams",
  [-32603] = "InternalError",
  [-32800] = "RequestCancelled",
  [-31001] = "SessionNotFound",
  [-31002] = "TurnInFlight",
  [-31003] = "SessionClosed",
  [-31004] = "LimitExceeded",
  [-31005] = "DeadlineExceeded",
  [-31006] = "BudgetExceeded",
  [-31007] = "CliNotFound",
  [-31008] = "ProcessFailed",
  [-31009] = "NotSent",
  [-31010] = "UnknownRequest",
  [-31011] = "ControlError",
  [-31012] = "MessageTooLarge",
  [-31013] = "TranscriptNotFound",
  [-31014] = "TranscriptInUse",
  [-31015] = "Unsupported",
  [-32002] = "ServerNotInitialized",
  [-32099] = "ConnectionClosed",
}

--- The permission modes, in order, with what each does.
M.permission_modes = {
  { name = "default", description = "Ask before each tool that changes something (edits, most Bash commands)." },
  { name = "acceptEdits", description = "Accept file edits without asking; other tools still ask." },
  { name = "plan", description = "Plan only: Claude reads and proposes, changes nothing until the plan is approved." },
  { name = "bypassPermissions", description = "Run every tool without asking. Dangerous: nothing is checked." },
  { name = "dontAsk", description = "Never ask: a tool that no rule allows is denied." },
  { name = "auto", description = "Let the CLI's classifier decide which tools run without asking." },
}

--- Every session/event type.
M.event_types = {
  "init",
  "status",
  "system",
  "textDelta",
  "thinkingDelta",
  "toolInputDelta",
  "assistantText",
  "thinking",
  "toolUse",
  "toolResult",
  "userText",
  "result",
  "commandLifecycle",
  "permissionAutoDenied",
  "lagged",
  "invalidLine",
  "unknown",
  "raw",
}

--- Every method: name, direction, kind.
M.methods = {
  { name = "initialize", direction = "clientToServer", kind = "request" },
  { name = "initialized", direction = "clientToServer", kind = "notification" },
  { name = "shutdown", direction = "clientToServer", kind = "request" },
  { name = "exit", direction = "clientToServer", kind = "notification" },
  { name = "session/create", direction = "clientToServer", kind = "request" },
  { name = "session/send", direction = "clientToServer", kind = "request" },
  { name = "session/message", direction = "clientToServer", kind = "request" },
  { name = "session/interrupt", direction = "clientToServer", kind = "request" },
  { name = "session/respondPermission", direction = "clientToServer", kind = "request" },
  { name = "session/setModel", direction = "clientToServer", kind = "request" },
  { name = "session/setPermissionMode", direction = "clientToServer", kind = "request" },
  { name = "session/getContextUsage", direction = "clientToServer", kind = "request" },
  { name = "session/status", direction = "clientToServer", kind = "request" },
  { name = "session/list", direction = "clientToServer", kind = "request" },
  { name = "session/history", direction = "clientToServer", kind = "request" },
  { name = "session/transcript", direction = "clientToServer", kind = "request" },
  { name = "session/renameHistory", direction = "clientToServer", kind = "request" },
  { name = "session/deleteHistory", direction = "clientToServer", kind = "request" },
  { name = "session/close", direction = "clientToServer", kind = "request" },
  { name = "$/cancelRequest", direction = "both", kind = "notification" },
  { name = "session/event", direction = "serverToClient", kind = "notification" },
  { name = "session/exited", direction = "serverToClient", kind = "notification" },
  { name = "session/requestPermission", direction = "serverToClient", kind = "request" },
  { name = "session/callTool", direction = "serverToClient", kind = "request" },
  { name = "window/logMessage", direction = "serverToClient", kind = "notification" },
  { name = "$/progress", direction = "serverToClient", kind = "notification" },
}

return M
