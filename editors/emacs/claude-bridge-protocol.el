;;; claude-bridge-protocol.el --- The bridge's wire constants  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Generated from bridge/rpc/wire/ by `claude-bridge schema`.  Do not edit.
;; Error codes, permission modes, event types and method names of the
;; bridge's JSON-RPC protocol (schema/PROTOCOL.md).

;;; Code:

(defconst claude-bridge-protocol-version "1.0"
  "The protocol version this package was generated for.")

(defconst claude-bridge-protocol-error-parse-error -32700
  "Error code ParseError.\nThe message is not valid JSON.")

(defconst claude-bridge-protocol-error-invalid-request -32600
  "Error code InvalidRequest.\nThe message is JSON but not a JSON-RPC 2.0 request or notification\n(missing or wrong 'jsonrpc', 'method' not a string, bad 'id', a\nbatch).")

(defconst claude-bridge-protocol-error-method-not-found -32601
  "Error code MethodNotFound.\nNo such method.")

(defconst claude-bridge-protocol-error-invalid-params -32602
  "Error code InvalidParams.\nThe params do not match the method's params type; 'data.path' names\nthe field.")

(defconst claude-bridge-protocol-error-internal-error -32603
  "Error code InternalError.\nA bug in the bridge; it keeps serving.")

(defconst claude-bridge-protocol-error-request-cancelled -32800
  "Error code RequestCancelled.\nCancelled by '$/cancelRequest'.")

(defconst claude-bridge-protocol-error-session-not-found -31001
  "Error code SessionNotFound.\nNo session has this 'sessionId'.")

(defconst claude-bridge-protocol-error-turn-in-flight -31002
  "Error code TurnInFlight.\n'session/send' while a turn runs; use 'session/message' or\n'session/interrupt'.")

(defconst claude-bridge-protocol-error-session-closed -31003
  "Error code SessionClosed.\nThe session is closed or closing.")

(defconst claude-bridge-protocol-error-limit-exceeded -31004
  "Error code LimitExceeded.\nA session limit (frame, turn bytes, turn events) tripped; the session\nwas closed.")

(defconst claude-bridge-protocol-error-deadline-exceeded -31005
  "Error code DeadlineExceeded.\nA turn or control deadline passed; the session was closed.")

(defconst claude-bridge-protocol-error-budget-exceeded -31006
  "Error code BudgetExceeded.\nThe session spent its 'budget'; no new turn is started.")

(defconst claude-bridge-protocol-error-cli-not-found -31007
  "Error code CliNotFound.\nNo usable 'claude' executable; 'data.tried' lists every place looked\nat.")

(defconst claude-bridge-protocol-error-process-failed -31008
  "Error code ProcessFailed.\nThe CLI could not start or exited while work was pending; 'data' has\nits exit status.")

(defconst claude-bridge-protocol-error-not-sent -31009
  "Error code NotSent.\nA live message was not written (no turn running, queue full, not taken\nin 10 s).")

(defconst claude-bridge-protocol-error-unknown-request -31010
  "Error code UnknownRequest.\n'session/respondPermission' names no pending deferred permission\nrequest.")

(defconst claude-bridge-protocol-error-control-error -31011
  "Error code ControlError.\nThe CLI answered a control request with an error.")

(defconst claude-bridge-protocol-error-message-too-large -31012
  "Error code MessageTooLarge.\nThe incoming message is larger than the bridge's '--max-message-\nbytes'; it was skipped.")

(defconst claude-bridge-protocol-error-transcript-not-found -31013
  "Error code TranscriptNotFound.\nNo transcript with this 'claudeSessionId' in the history of this\n'cwd'.")

(defconst claude-bridge-protocol-error-transcript-in-use -31014
  "Error code TranscriptInUse.\nA live session holds the transcript ('data.sessionId'); close it\nfirst.")

(defconst claude-bridge-protocol-error-unsupported -31015
  "Error code Unsupported.\nThe session's CLI lacks what the request needs ('data.capability'\nnames it), e.g. 'cancelQueued' on a CLI without\n'interrupt_cancel_queued_v1'; nothing was done.")

(defconst claude-bridge-protocol-error-server-not-initialized -32002
  "Error code ServerNotInitialized.\nA request other than 'initialize' arrived before 'initialize' (as in\nLSP).")

(defconst claude-bridge-protocol-error-connection-closed -32099
  "Error code ConnectionClosed.\nNever sent by the bridge: what a client reports for a request of its\nown whose answer cannot come because the connection ended (the bridge\nexited or closed its output).")

(defconst claude-bridge-protocol-error-names
  '((-32700 . "ParseError")
    (-32600 . "InvalidRequest")
    (-32601 . "MethodNotFound")
    (-32602 . "InvalidParams")
    (-32603 . "InternalError")
    (-32800 . "RequestCancelled")
    (-31001 . "SessionNotFound")
    (-31002 . "TurnInFlight")
    (-31003 . "SessionClosed")
    (-31004 . "LimitExceeded")
    (-31005 . "DeadlineExceeded")
    (-31006 . "BudgetExceeded")
    (-31007 . "CliNotFound")
    (-31008 . "ProcessFailed")
    (-31009 . "NotSent")
    (-31010 . "UnknownRequest")
    (-31011 . "ControlError")
    (-31012 . "MessageTooLarge")
    (-31013 . "TranscriptNotFound")
    (-31014 . "TranscriptInUse")
    (-31015 . "Unsupported")
    (-32002 . "ServerNotInitialized")
    (-32099 . "ConnectionClosed"))
  "Error names by code.")

(defconst claude-bridge-protocol-permission-modes
  '(("default" . "Ask before each tool that changes something (edits, most Bash commands).")
    ("acceptEdits" . "Accept file edits without asking; other tools still ask.")
    ("plan" . "Plan only: Claude reads and proposes, changes nothing until the plan is approved.")
    ("bypassPermissions" . "Run every tool without asking. Dangerous: nothing is checked.")
    ("dontAsk" . "Never ask: a tool that no rule allows is denied.")
    ("auto" . "Let the CLI's classifier decide which tools run without asking."))
  "The permission modes, in order, with what each does.")

(defconst claude-bridge-protocol-event-types
  '("init"
    "status"
    "system"
    "textDelta"
    "thinkingDelta"
    "toolInputDelta"
    "assistantText"
    "thinking"
    "toolUse"
    "toolResult"
    "userText"
    "result"
    "commandLifecycle"
    "permissionAutoDenied"
    "lagged"
    "invalidLine"
    "unknown"
    "raw")
  "Every session/event type.")

(defconst claude-bridge-protocol-methods
  '(("initialize" "clientToServer" "request")
    ("initialized" "clientToServer" "notification")
    ("shutdown" "clientToServer" "request")
    ("exit" "clientToServer" "notification")
    ("session/create" "clientToServer" "request")
    ("session/send" "clientToServer" "request")
    ("session/message" "clientToServer" "request")
    ("session/interrupt" "clientToServer" "request")
    ("session/respondPermission" "clientToServer" "request")
    ("session/setModel" "clientToServer" "request")
    ("session/setPermissionMode" "clientToServer" "request")
    ("session/getContextUsage" "clientToServer" "request")
    ("session/status" "clientToServer" "request")
    ("session/list" "clientToServer" "request")
    ("session/history" "clientToServer" "request")
    ("session/transcript" "clientToServer" "request")
    ("session/renameHistory" "clientToServer" "request")
    ("session/deleteHistory" "clientToServer" "request")
    ("session/close" "clientToServer" "request")
    ("$/cancelRequest" "both" "notification")
    ("session/event" "serverToClient" "notification")
    ("session/exited" "serverToClient" "notification")
    ("session/requestPermission" "serverToClient" "request")
    ("session/callTool" "serverToClient" "request")
    ("window/logMessage" "serverToClient" "notification")
    ("$/progress" "serverToClient" "notification"))
  "Every method: name, direction, kind.")

(provide 'claude-bridge-protocol)
;;; claude-bridge-protocol.el ends here
