/* Generated from schema/bridge.schema.json by scripts/gen_protocol_ts.sh
 * (json-schema-to-typescript 16.0.0). Do not edit: change bridge/rpc/wire/,
 * run `claude-bridge schema`, then `npm run gen:protocol`. */

/**
 * claude-duplex-bridge protocol 1.0: any JSON-RPC message of either direction. Validate with `$defs/ClientMessage` or `$defs/ServerMessage` to check one direction.
 */
export type BridgeMessage = ClientMessage | ServerMessage;
/**
 * Any message a client sends to the bridge: a request, a notification, or the answer to a bridge request.
 */
export type ClientMessage =
  | InitializeRequest
  | InitializedNotification
  | ShutdownRequest
  | ExitNotification
  | SessionCreateRequest
  | SessionSendRequest
  | SessionMessageRequest
  | SessionInterruptRequest
  | SessionRespondPermissionRequest
  | SessionSetModelRequest
  | SessionSetPermissionModeRequest
  | SessionGetContextUsageRequest
  | SessionStatusRequest
  | SessionListRequest
  | SessionHistoryRequest
  | SessionTranscriptRequest
  | SessionRenameHistoryRequest
  | SessionDeleteHistoryRequest
  | SessionCloseRequest
  | CancelRequestNotification
  | SessionRequestPermissionResponse
  | SessionCallToolResponse
  | ClientErrorResponse;
/**
 * A request id: an integer or a string. The bridge numbers its own requests 1, 2, 3, ...
 */
export type RequestId = number | string;
/**
 * Any message the bridge sends: the answer to a client request (a result or an error), a notification, or a request.
 */
export type ServerMessage =
  | CancelRequestNotification
  | SessionEventNotification
  | SessionExitedNotification
  | SessionRequestPermissionRequest
  | SessionCallToolRequest
  | WindowLogMessageNotification
  | ProgressNotification
  | InitializeResponse
  | ShutdownResponse
  | SessionCreateResponse
  | SessionSendResponse
  | SessionMessageResponse
  | SessionInterruptResponse
  | SessionRespondPermissionResponse
  | SessionSetModelResponse
  | SessionSetPermissionModeResponse
  | SessionGetContextUsageResponse
  | SessionStatusResponse
  | SessionListResponse
  | SessionHistoryResponse
  | SessionTranscriptResponse
  | SessionRenameHistoryResponse
  | SessionDeleteHistoryResponse
  | SessionCloseResponse
  | ErrorResponse;
/**
 * One session event; `type` says which. The set is closed for this protocol version, but clients must ignore event types they do not know (a later 1.x bridge may add some).
 */
export type Event =
  | InitEvent
  | StatusEvent
  | SystemEvent
  | TextDeltaEvent
  | ThinkingDeltaEvent
  | ToolInputDeltaEvent
  | AssistantTextEvent
  | ThinkingEvent
  | ToolUseEvent
  | ToolResultEvent
  | UserTextEvent
  | ResultEvent
  | CommandLifecycleEvent
  | PermissionDeniedEvent
  | LaggedEvent
  | InvalidLineEvent
  | UnknownEvent
  | RawEvent;
/**
 * JSON-RPC error codes the bridge returns. The standard codes keep their JSON-RPC meaning; the bridge's own codes lie in -31099..-31001, outside the reserved ranges.
 */
export type ErrorCode =
  | ParseError
  | InvalidRequest
  | MethodNotFound
  | InvalidParams
  | InternalError
  | RequestCancelled
  | SessionNotFound
  | TurnInFlight
  | SessionClosed
  | LimitExceeded
  | DeadlineExceeded
  | BudgetExceeded
  | CliNotFound
  | ProcessFailed
  | NotSent
  | UnknownRequest
  | ControlError
  | MessageTooLarge
  | TranscriptNotFound
  | TranscriptInUse
  | Unsupported
  | ServerNotInitialized
  | ConnectionClosed;
/**
 * The message is not valid JSON.
 */
export type ParseError = -32700;
/**
 * The message is JSON but not a JSON-RPC 2.0 request or notification (missing or wrong `jsonrpc`, `method` not a string, bad `id`, a batch).
 */
export type InvalidRequest = -32600;
/**
 * No such method.
 */
export type MethodNotFound = -32601;
/**
 * The params do not match the method's params type; `data.path` names the field.
 */
export type InvalidParams = -32602;
/**
 * A bug in the bridge; it keeps serving.
 */
export type InternalError = -32603;
/**
 * Cancelled by `$/cancelRequest`.
 */
export type RequestCancelled = -32800;
/**
 * No session has this `sessionId`.
 */
export type SessionNotFound = -31001;
/**
 * `session/send` while a turn runs; use `session/message` or `session/interrupt`.
 */
export type TurnInFlight = -31002;
/**
 * The session is closed or closing.
 */
export type SessionClosed = -31003;
/**
 * A session limit (frame, turn bytes, turn events) tripped; the session was closed.
 */
export type LimitExceeded = -31004;
/**
 * A turn or control deadline passed; the session was closed.
 */
export type DeadlineExceeded = -31005;
/**
 * The session spent its `budget`; no new turn is started.
 */
export type BudgetExceeded = -31006;
/**
 * No usable `claude` executable; `data.tried` lists every place looked at.
 */
export type CliNotFound = -31007;
/**
 * The CLI could not start or exited while work was pending; `data` has its exit status.
 */
export type ProcessFailed = -31008;
/**
 * A live message was not written (no turn running, queue full, not taken in 10 s).
 */
export type NotSent = -31009;
/**
 * `session/respondPermission` names no pending deferred permission request.
 */
export type UnknownRequest = -31010;
/**
 * The CLI answered a control request with an error.
 */
export type ControlError = -31011;
/**
 * The incoming message is larger than the bridge's `--max-message-bytes`; it was skipped.
 */
export type MessageTooLarge = -31012;
/**
 * No transcript with this `claudeSessionId` in the history of this `cwd`.
 */
export type TranscriptNotFound = -31013;
/**
 * A live session holds the transcript (`data.sessionId`); close it first.
 */
export type TranscriptInUse = -31014;
/**
 * The session's CLI lacks what the request needs (`data.capability` names it), e.g. `cancelQueued` on a CLI without `interrupt_cancel_queued_v1`; nothing was done.
 */
export type Unsupported = -31015;
/**
 * A request other than `initialize` arrived before `initialize` (as in LSP).
 */
export type ServerNotInitialized = -32002;
/**
 * Never sent by the bridge: what a client reports for a request of its own whose answer cannot come because the connection ended (the bridge exited or closed its output).
 */
export type ConnectionClosed = -32099;

/**
 * Start the connection; declare whether the client answers permission prompts.
 */
export interface InitializeRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "initialize";
  /**
   * May be omitted (or null).
   */
  params?: InitializeParams | null;
}
/**
 * `initialize` params (the LSP shape; unknown members are ignored).
 */
export interface InitializeParams {
  /**
   * LSP client capabilities; accepted and ignored (`null` too).
   */
  capabilities?: {
    [k: string]: unknown;
  } | null;
  /**
   * Who the client is (informative).
   */
  clientInfo?: ClientInfo | null;
  /**
   * The bridge's own options, above all `permissions`.
   */
  initializationOptions?: InitializationOptions | null;
  /**
   * The client's process id (informative).
   */
  processId?: number | null;
}
/**
 * The client's name and version (informative).
 */
export interface ClientInfo {
  /**
   * The client's name.
   */
  name: string;
  /**
   * The client's version.
   */
  version?: string | null;
}
/**
 * Bridge options a client passes in `initialize`.
 */
export interface InitializationOptions {
  /**
   * Seconds to wait for a permission answer before denying (default: wait forever).
   */
  permissionTimeout?: number | null;
  /**
   * True when the client answers `session/requestPermission`. Without it every permission prompt is denied and the client is never asked.
   */
  permissions?: boolean;
  /**
   * True when the client answers `session/callTool`: only then may its sessions offer host tools (`session/create`'s `tools`).
   */
  tools?: boolean;
  /**
   * Keep spare CLI processes ready so that `session/create` answers in milliseconds.
   */
  warmPool?: WarmPoolOptions | null;
}
/**
 * The warm pool: spare, already-initialized CLI processes per session key.
 *
 * A key is everything that fixes a process at spawn (CLI, flags, environment, cwd): a `session/create` whose params give the same key as a spare takes it at once (`warm: true` in its result) and a new spare is started.
 */
export interface WarmPoolOptions {
  /**
   * Seconds an unused spare lives before it is reaped (default 300).
   */
  idleTimeout?: number | null;
  /**
   * `session/create` params to warm up now, before the first create.
   */
  presets?: CreateParams[];
  /**
   * Spares per key (0 turns the pool off).
   */
  size?: number;
  /**
   * Also have each spare build its system prompt and tool schemas before it is handed out (a context-usage request; the CLI calls the free `count_tokens` endpoint, no model call): its first turn is then about 0.1 s faster.
   */
  warmContext?: boolean;
}
/**
 * `session/create` params. Only `cwd` is required.
 */
export interface CreateParams {
  /**
   * More directories the tools may reach besides `cwd`.
   */
  addDirs?: string[] | null;
  /**
   * Tools, or rules such as `Bash(git diff:*)`, allowed without asking.
   */
  allowedTools?: string[] | null;
  /**
   * Appended to the default system prompt.
   */
  appendSystemPrompt?: string | null;
  /**
   * A USD ceiling (a number, or `{"maxCostUsd": n}`); `session/send` fails with BudgetExceeded once the session spent it.
   */
  budget?: number | Budget | null;
  /**
   * The CLI to run (default: the bridge's discovery).
   */
  claudePath?: string | null;
  /**
   * Continue the most recent conversation in `cwd`.
   */
  continueConversation?: boolean;
  /**
   * The session's working directory (absolute, or relative to the bridge's).
   */
  cwd: string;
  /**
   * Tools, or rules, the model may not use.
   */
  disallowedTools?: string[] | null;
  /**
   * Reasoning effort (`low`, `medium`, `high`, ...).
   */
  effort?: string | null;
  /**
   * Extra environment variables for the CLI.
   */
  env?: {
    [k: string]: string;
  } | null;
  /**
   * More CLI arguments, passed as they are.
   */
  extraArgs?: string[] | null;
  /**
   * With `resume`: continue under a new CLI session id.
   */
  forkSession?: boolean;
  /**
   * Per-session limits; when one trips the session is closed.
   */
  limits?: Limits | null;
  /**
   * Most model round trips per turn.
   */
  maxTurns?: number | null;
  /**
   * MCP configuration (`{"mcpServers": {...}}`), or a path to one.
   */
  mcpConfig?:
    | string
    | {
        [k: string]: unknown;
      }
    | null;
  /**
   * A model alias or id (`opus`, `claude-haiku-4-5`, ...); default: the CLI's.
   */
  model?: string | null;
  /**
   * Stream text as `textDelta` events (`--include-partial-messages`).
   */
  partialMessages?: boolean;
  /**
   * The CLI's permission mode at start (`session/setPermissionMode` switches it later).
   */
  permissionMode?: ("acceptEdits" | "auto" | "bypassPermissions" | "default" | "dontAsk" | "plan") | null;
  /**
   * Seconds to wait for a permission answer before denying (overrides initialize's).
   */
  permissionTimeout?: number | null;
  /**
   * Also send every CLI frame as a `raw` event.
   */
  rawEvents?: boolean;
  /**
   * With `resume`: before the create answer, send the conversation's past messages as `session/event`s marked `replay: true` (TranscriptNotFound when it has no transcript).
   */
  replay?: boolean;
  /**
   * A CLI session id to resume (`claudeSessionId` of `session/history`, or of a session whose CLI died).
   */
  resume?: string | null;
  /**
   * Settings JSON object, or a path to a settings file.
   */
  settings?:
    | string
    | {
        [k: string]: unknown;
      }
    | null;
  /**
   * Replaces the default system prompt.
   */
  systemPrompt?: string | null;
  /**
   * Seconds the client may take to answer a `session/callTool`; then the bridge cancels it (`$/cancelRequest`) and the model reads that the tool did not answer.
   */
  toolTimeout?: number;
  /**
   * Tools the client implements, offered to the model from the first turn on; each call is a `session/callTool` request (the client must have declared `initializationOptions.tools`). See "Host tools" in the reference.
   */
  tools?: HostTool[] | null;
}
/**
 * A spending ceiling for the session.
 */
export interface Budget {
  /**
   * The ceiling, in USD (0 refuses every turn).
   */
  maxCostUsd: number;
}
/**
 * Opt-in per-session limits; when one trips the session is closed and killed.
 */
export interface Limits {
  /**
   * Seconds the CLI may take to answer a control request.
   */
  controlTimeout?: number | null;
  /**
   * Largest single CLI frame (default 64 MiB).
   */
  maxFrameBytes?: number | null;
  /**
   * Most bytes of CLI output one turn may produce.
   */
  maxTurnBytes?: number | null;
  /**
   * Most CLI frames one turn may produce.
   */
  maxTurnEvents?: number | null;
  /**
   * Seconds a turn may run.
   */
  turnTimeout?: number | null;
}
/**
 * A tool the client implements, offered to the model (`session/create`'s `tools`).
 *
 * The model sees it as `mcp__ide__<name>` for `getDiagnostics` and `executeCode`, `mcp__editor__<name>` for every other name (see "Host tools" in the reference); `session/callTool` carries the plain `name`.
 */
export interface HostTool {
  /**
   * True: the CLI asks before each call (`session/requestPermission`, so the client must have declared `initializationOptions.permissions`). Default: the tool is the client's own and runs without a prompt.
   */
  askPermission?: boolean;
  /**
   * What the tool does, for the model: when to call it, what it returns.
   */
  description: string;
  /**
   * JSON Schema of the tool's input: an object schema (`{"type": "object", "properties": {...}, "required": [...]}`).
   */
  inputSchema: {
    [k: string]: unknown;
  };
  /**
   * The tool's name: 1 to 51 letters, digits, `_` or `-` (`getDiagnostics`); unique among the session's tools.
   */
  name: string;
}
/**
 * The client got the initialize result.
 */
export interface InitializedNotification {
  jsonrpc: "2.0";
  method: "initialized";
  /**
   * May be omitted (or null).
   */
  params?: Empty | null;
}
/**
 * An empty object.
 */
export interface Empty {}
/**
 * Close every session (their processes are reaped); then only `exit` is accepted.
 */
export interface ShutdownRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "shutdown";
  /**
   * No params: omit the member.
   */
  params?: null;
}
/**
 * Exit the bridge (code 0 after shutdown, 1 without); sessions are closed first.
 */
export interface ExitNotification {
  jsonrpc: "2.0";
  method: "exit";
  /**
   * No params: omit the member.
   */
  params?: null;
}
/**
 * Spawn a CLI session and wait until it answered its handshake (with `resume` and `replay`, the conversation's past messages come first as events).
 */
export interface SessionCreateRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/create";
  params: CreateParams;
}
/**
 * Run a turn; events stream as `session/event`; the result comes when the turn ends. `$/cancelRequest` on it interrupts the turn (the result then has `interrupted: true`).
 */
export interface SessionSendRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/send";
  params: SendParams;
}
/**
 * `session/send` params. `prompt` is text or Messages API content blocks.
 */
export interface SendParams {
  /**
   * Text, or a non-empty list of content blocks (text, image, document). A file is best brought in by a mention in the text, `@path` (see "Prompt content" in the reference); a malformed block is InvalidParams.
   */
  prompt: string | [TextBlock | ImageBlock | DocumentBlock, ...(TextBlock | ImageBlock | DocumentBlock)[]];
  /**
   * The session, as `session/create` named it.
   */
  sessionId: string;
  /**
   * When given, the bridge reports the turn through `$/progress` with this token.
   */
  workDoneToken?: string | number | null;
}
/**
 * Text. A mention of a file in it (`@src/app.py`) makes the CLI read the file into the prompt (see "Prompt content" in the reference).
 */
export interface TextBlock {
  /**
   * The Messages API's prompt-caching marker, passed on.
   */
  cache_control?: {
    [k: string]: unknown;
  } | null;
  /**
   * The text.
   */
  text: string;
  type: "text";
}
/**
 * An image (a screenshot, a pasted picture).
 */
export interface ImageBlock {
  /**
   * The Messages API's prompt-caching marker, passed on.
   */
  cache_control?: {
    [k: string]: unknown;
  } | null;
  /**
   * The image's bytes.
   */
  source: Base64ImageSource;
  type: "image";
}
/**
 * An image's bytes, base64.
 */
export interface Base64ImageSource {
  /**
   * The image, base64 (padded, no line breaks).
   */
  data: string;
  /**
   * `image/png`, `image/jpeg`, `image/gif` or `image/webp` (the CLI corrects a wrong one of these from the data).
   */
  media_type: "image/gif" | "image/jpeg" | "image/png" | "image/webp";
  type: "base64";
}
/**
 * A document the model reads (a PDF, a text), passed on as it is. For a file of the workspace a mention in a text block is better: the CLI reads the file itself.
 */
export interface DocumentBlock {
  /**
   * The Messages API's prompt-caching marker, passed on.
   */
  cache_control?: {
    [k: string]: unknown;
  } | null;
  /**
   * The Messages API's citations setting (`{"enabled": true}`).
   */
  citations?: {
    [k: string]: unknown;
  } | null;
  /**
   * What it is, for the model.
   */
  context?: string | null;
  /**
   * The document's content.
   */
  source: Base64PdfSource | PlainTextSource;
  /**
   * Its title (a file name).
   */
  title?: string | null;
  type: "document";
}
/**
 * A PDF's bytes, base64.
 */
export interface Base64PdfSource {
  /**
   * The PDF, base64 (padded, no line breaks).
   */
  data: string;
  /**
   * `application/pdf`.
   */
  media_type: "application/pdf";
  type: "base64";
}
/**
 * A plain-text document.
 */
export interface PlainTextSource {
  /**
   * The document's text.
   */
  data: string;
  /**
   * `text/plain`.
   */
  media_type: "text/plain";
  type: "text";
}
/**
 * Write more input into the running turn; it gets its own result within the turn.
 */
export interface SessionMessageRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/message";
  params: MessageParams;
}
/**
 * `session/message` params: more input for the running turn.
 */
export interface MessageParams {
  /**
   * Text, or a non-empty list of content blocks, as `session/send` takes them.
   */
  prompt: string | [TextBlock | ImageBlock | DocumentBlock, ...(TextBlock | ImageBlock | DocumentBlock)[]];
  /**
   * The session, as `session/create` named it.
   */
  sessionId: string;
}
/**
 * Stop the running turn and keep the process (harmless with no turn).
 */
export interface SessionInterruptRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/interrupt";
  params: InterruptParams;
}
/**
 * `session/interrupt` params.
 */
export interface InterruptParams {
  /**
   * Also cancel live messages the CLI has queued. Refused with Unsupported (and nothing interrupted) when the CLI lacks `interrupt_cancel_queued_v1`.
   */
  cancelQueued?: boolean;
  /**
   * The session, as `session/create` named it.
   */
  sessionId: string;
}
/**
 * Answer a permission request the client deferred.
 */
export interface SessionRespondPermissionRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/respondPermission";
  params: RespondPermissionParams;
}
/**
 * `session/respondPermission` params: answer a request the client deferred.
 */
export interface RespondPermissionParams {
  /**
   * `allow` or `deny` (`defer` is refused with InvalidParams).
   */
  decision: PermissionDecision;
  /**
   * The `requestId` of the deferred `session/requestPermission`.
   */
  requestId: string;
  /**
   * The session, as `session/create` named it.
   */
  sessionId: string;
}
/**
 * The answer to a permission request (`session/requestPermission` result).
 */
export interface PermissionDecision {
  /**
   * `allow`, `deny`, or `defer` (answer later with `session/respondPermission`).
   */
  behavior: "allow" | "defer" | "deny";
  /**
   * For deny: also stop the turn.
   */
  interrupt?: boolean;
  /**
   * For deny: what the model is told.
   */
  message?: string | null;
  /**
   * For allow: the input to run instead (default: the original input).
   */
  updatedInput?: {
    [k: string]: unknown;
  } | null;
  /**
   * For allow: permission updates to apply, typically some of the request's `suggestions`.
   */
  updatedPermissions?:
    | {
        [k: string]: unknown;
      }[]
    | null;
}
/**
 * Switch the model for the next turns.
 */
export interface SessionSetModelRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/setModel";
  params: SetModelParams;
}
/**
 * `session/setModel` params (`model` null: the default model).
 */
export interface SetModelParams {
  /**
   * A model alias or id; null for the default model.
   */
  model: string | null;
  /**
   * The session, as `session/create` named it.
   */
  sessionId: string;
}
/**
 * Switch the permission mode.
 */
export interface SessionSetPermissionModeRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/setPermissionMode";
  params: SetPermissionModeParams;
}
/**
 * `session/setPermissionMode` params.
 */
export interface SetPermissionModeParams {
  /**
   * The new permission mode.
   */
  mode: "acceptEdits" | "auto" | "bypassPermissions" | "default" | "dontAsk" | "plan";
  /**
   * The session, as `session/create` named it.
   */
  sessionId: string;
}
/**
 * The CLI's context-window usage.
 */
export interface SessionGetContextUsageRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/getContextUsage";
  params: SessionParams;
}
/**
 * Params naming one session.
 */
export interface SessionParams {
  /**
   * The session, as `session/create` named it.
   */
  sessionId: string;
}
/**
 * Liveness, exit status, turn in flight, costs.
 */
export interface SessionStatusRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/status";
  params: SessionParams;
}
/**
 * Every session of this connection, open or exited.
 */
export interface SessionListRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/list";
  /**
   * May be omitted (or null).
   */
  params?: ListParams | null;
}
/**
 * `session/list` params (none needed).
 */
export interface ListParams {}
/**
 * The transcripts (earlier conversations) the CLI keeps for a directory, newest first.
 */
export interface SessionHistoryRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/history";
  params: ListTranscriptsParams;
}
/**
 * `session/history` params: the transcripts the CLI keeps for `cwd`.
 */
export interface ListTranscriptsParams {
  /**
   * The project directory (as `session/create` takes it).
   */
  cwd: string;
  /**
   * At most this many transcripts (null or 0: all).
   */
  limit?: number | null;
  /**
   * Skip this many of the newest first.
   */
  offset?: number;
}
/**
 * One transcript's messages, as session events.
 */
export interface SessionTranscriptRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/transcript";
  params: TranscriptParams;
}
/**
 * Params naming one transcript of a directory.
 */
export interface TranscriptParams {
  /**
   * The transcript, as `session/history` lists it.
   */
  claudeSessionId: string;
  /**
   * The project directory.
   */
  cwd: string;
}
/**
 * Give a transcript a title.
 */
export interface SessionRenameHistoryRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/renameHistory";
  params: RenameTranscriptParams;
}
/**
 * `session/renameHistory` params.
 */
export interface RenameTranscriptParams {
  /**
   * The transcript.
   */
  claudeSessionId: string;
  /**
   * The project directory.
   */
  cwd: string;
  /**
   * The new title (not blank).
   */
  title: string;
}
/**
 * Delete a transcript (refused while a live session holds it).
 */
export interface SessionDeleteHistoryRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/deleteHistory";
  params: TranscriptParams;
}
/**
 * Close gracefully (stdin closed, then SIGTERM/SIGKILL to the process group); returns the exit status. Closing an exited session returns its status again.
 */
export interface SessionCloseRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/close";
  params: SessionParams;
}
/**
 * Cancel a request. From the client: on a pending `session/send` it interrupts the turn, any other request answers RequestCancelled. From the bridge: a `session/requestPermission` or `session/callTool` is no longer wanted (it timed out, or its turn was interrupted or ended).
 */
export interface CancelRequestNotification {
  jsonrpc: "2.0";
  method: "$/cancelRequest";
  params: CancelParams;
}
/**
 * `$/cancelRequest` params: the id of the request to cancel.
 */
export interface CancelParams {
  /**
   * The id of the request to cancel.
   */
  id: string | number;
}
/**
 * The successful answer to `session/requestPermission`.
 */
export interface SessionRequestPermissionResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: PermissionDecision;
}
/**
 * The successful answer to `session/callTool`.
 */
export interface SessionCallToolResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: CallToolResult;
}
/**
 * The answer to `session/callTool`: what the model reads as the tool's result.
 */
export interface CallToolResult {
  /**
   * The result's content blocks (may be empty).
   */
  content: (TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink)[];
  /**
   * True: the tool failed, and `content` says why (the model reads it as an error).
   */
  isError?: boolean;
}
/**
 * Text for the model.
 */
export interface TextContent {
  /**
   * The text.
   */
  text: string;
  type: "text";
}
/**
 * An image for the model (the Messages API's types only).
 */
export interface ImageContent {
  /**
   * The image, base64 (padded, no line breaks).
   */
  data: string;
  /**
   * `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
   */
  mimeType: "image/gif" | "image/jpeg" | "image/png" | "image/webp";
  type: "image";
}
/**
 * Audio: the CLI saves it to a file and tells the model where.
 */
export interface AudioContent {
  /**
   * The audio, base64 (padded, no line breaks).
   */
  data: string;
  /**
   * An audio type (`audio/wav`, ...).
   */
  mimeType: string;
  type: "audio";
}
/**
 * A resource's content, for the model.
 */
export interface EmbeddedResource {
  /**
   * The resource.
   */
  resource: ResourceContents;
  type: "resource";
}
/**
 * What an embedded resource holds: `text`, or a base64 `blob` (one of them).
 */
export interface ResourceContents {
  /**
   * Its bytes, base64 (the CLI saves them to a file and tells the model where).
   */
  blob?: string | null;
  /**
   * Its type.
   */
  mimeType?: string | null;
  /**
   * Its text (the model reads it).
   */
  text?: string | null;
  /**
   * Where it comes from (`file:///...`).
   */
  uri: string;
}
/**
 * A link to a resource (the model reads its name and URI).
 */
export interface ResourceLink {
  /**
   * What it is.
   */
  description?: string | null;
  /**
   * Its type.
   */
  mimeType?: string | null;
  /**
   * Its name.
   */
  name: string;
  /**
   * A title for display.
   */
  title?: string | null;
  type: "resource_link";
  /**
   * The resource's URI.
   */
  uri: string;
}
/**
 * A client's error answer to a bridge request. For `session/requestPermission` it denies the tool use.
 */
export interface ClientErrorResponse {
  error: {
    code: number;
    data?: unknown;
    message: string;
  };
  id: RequestId;
  jsonrpc: "2.0";
}
/**
 * One typed session event.
 */
export interface SessionEventNotification {
  jsonrpc: "2.0";
  method: "session/event";
  params: EventParams;
}
/**
 * `session/event` notification params. `seq` counts 1, 2, 3, ... per session.
 */
export interface EventParams {
  /**
   * The event; `type` says which.
   */
  event: Event;
  /**
   * True for a past message of a resumed conversation (`session/create` with `replay`); false for live events.
   */
  replay: boolean;
  /**
   * 1, 2, 3, ... per session, without gaps.
   */
  seq: number;
  /**
   * The session the event belongs to.
   */
  sessionId: string;
}
/**
 * The CLI started a turn (`system/init` comes at the start of every turn).
 */
export interface InitEvent {
  /**
   * Capabilities the CLI announces; null when it announces none (a legacy CLI).
   */
  capabilities: string[] | null;
  /**
   * The CLI's version.
   */
  claudeCodeVersion: string | null;
  /**
   * The CLI's own session id.
   */
  claudeSessionId: string | null;
  /**
   * The CLI's working directory.
   */
  cwd: string | null;
  /**
   * MCP servers and their status.
   */
  mcpServers: {
    [k: string]: unknown;
  }[];
  /**
   * The model of this turn.
   */
  model: string | null;
  /**
   * The permission mode of this turn.
   */
  permissionMode: string | null;
  /**
   * The tools the model may call.
   */
  tools: string[];
  /**
   * Says which event this is.
   */
  type: "init";
}
/**
 * A status change: `requesting`, a new permission mode, ...
 */
export interface StatusEvent {
  /**
   * The new permission mode, after a switch.
   */
  permissionMode: string | null;
  /**
   * `requesting` while the model is being asked; absent otherwise.
   */
  status: string | null;
  /**
   * Says which event this is.
   */
  type: "status";
}
/**
 * Another `system` frame, with all its data.
 */
export interface SystemEvent {
  /**
   * The whole frame, as the CLI printed it.
   */
  data: {
    [k: string]: unknown;
  };
  /**
   * The frame's subtype (`compact_boundary`, `hook_response`, ...).
   */
  subtype: string;
  /**
   * Says which event this is.
   */
  type: "system";
}
/**
 * A piece of streaming reply text. Consecutive deltas may arrive coalesced.
 */
export interface TextDeltaEvent {
  /**
   * The content block's index within its message (deltas of one block share it).
   */
  index: number | null;
  /**
   * Set for output of a subagent: the `toolUseId` of the Task tool call running it.
   */
  parentToolUseId: string | null;
  /**
   * The next piece of text.
   */
  text: string;
  /**
   * Says which event this is.
   */
  type: "textDelta";
}
/**
 * A piece of streaming thinking.
 */
export interface ThinkingDeltaEvent {
  /**
   * The content block's index within its message (deltas of one block share it).
   */
  index: number | null;
  /**
   * Set for output of a subagent: the `toolUseId` of the Task tool call running it.
   */
  parentToolUseId: string | null;
  /**
   * The next piece of thinking.
   */
  thinking: string;
  /**
   * Says which event this is.
   */
  type: "thinkingDelta";
}
/**
 * A piece of a tool call's JSON input as it streams.
 */
export interface ToolInputDeltaEvent {
  /**
   * The content block's index within its message (deltas of one block share it).
   */
  index: number | null;
  /**
   * Set for output of a subagent: the `toolUseId` of the Task tool call running it.
   */
  parentToolUseId: string | null;
  /**
   * The next piece of the input's JSON text.
   */
  partialJson: string;
  /**
   * Says which event this is.
   */
  type: "toolInputDelta";
}
/**
 * A complete text block of the assistant. `aborted` on an interrupted reply.
 */
export interface AssistantTextEvent {
  /**
   * True when the reply was cut short by an interrupt.
   */
  aborted: boolean;
  /**
   * The Messages API id of the message the block belongs to.
   */
  messageId: string | null;
  /**
   * Set for output of a subagent: the `toolUseId` of the Task tool call running it.
   */
  parentToolUseId: string | null;
  /**
   * The block's text.
   */
  text: string;
  /**
   * Says which event this is.
   */
  type: "assistantText";
}
/**
 * A complete thinking block.
 */
export interface ThinkingEvent {
  /**
   * The Messages API id of the message the block belongs to.
   */
  messageId: string | null;
  /**
   * Set for output of a subagent: the `toolUseId` of the Task tool call running it.
   */
  parentToolUseId: string | null;
  /**
   * The block's thinking.
   */
  thinking: string;
  /**
   * Says which event this is.
   */
  type: "thinking";
}
/**
 * The assistant calls a tool.
 */
export interface ToolUseEvent {
  /**
   * The tool's input.
   */
  input: {
    [k: string]: unknown;
  };
  /**
   * The Messages API id of the message the block belongs to.
   */
  messageId: string | null;
  /**
   * The tool's name.
   */
  name: string;
  /**
   * Set for output of a subagent: the `toolUseId` of the Task tool call running it.
   */
  parentToolUseId: string | null;
  /**
   * Pairs the call with its `toolResult` and permission request.
   */
  toolUseId: string;
  /**
   * Says which event this is.
   */
  type: "toolUse";
}
/**
 * A tool's result, as the model will see it.
 */
export interface ToolResultEvent {
  /**
   * The result as text (text blocks joined by newlines, other blocks as JSON).
   */
  content: string;
  /**
   * True when the tool failed or was denied.
   */
  isError: boolean;
  /**
   * Set for output of a subagent: the `toolUseId` of the Task tool call running it.
   */
  parentToolUseId: string | null;
  /**
   * How the run was decided (`decision`, `source`), as the CLI reported it.
   */
  permissionDecision: {
    [k: string]: unknown;
  } | null;
  /**
   * The `toolUse` this result answers.
   */
  toolUseId: string;
  /**
   * Says which event this is.
   */
  type: "toolResult";
}
/**
 * User-side text the CLI printed: a replay, or `[Request interrupted by user]`.
 */
export interface UserTextEvent {
  /**
   * True when the CLI replays input (e.g. a local command's output).
   */
  isReplay: boolean;
  /**
   * The text.
   */
  text: string;
  /**
   * Says which event this is.
   */
  type: "userText";
}
/**
 * One CLI result (a turn has one per user input).
 */
export interface ResultEvent {
  /**
   * The HTTP status of an API error, if one ended it.
   */
  apiErrorStatus: number | null;
  /**
   * How long the CLI took.
   */
  durationMs: number;
  /**
   * True when this result is an error.
   */
  isError: boolean;
  /**
   * Model round trips.
   */
  numTurns: number;
  /**
   * The model's stop reason.
   */
  stopReason: string | null;
  /**
   * `success`, `error_during_execution`, `error_max_turns`, ...
   */
  subtype: string;
  /**
   * Why the CLI ended: `completed`, `aborted_streaming`, `api_error` (also when an older CLI said `completed` for a result with an API error status), ...
   */
  terminalReason: string | null;
  /**
   * The result text.
   */
  text: string | null;
  /**
   * The CLI process's running total, in USD.
   */
  totalCostUsd: number;
  /**
   * Says which event this is.
   */
  type: "result";
  /**
   * Token usage, as the CLI reported it.
   */
  usage: {
    [k: string]: unknown;
  } | null;
}
/**
 * A user input's lifecycle: queued, started, completed or cancelled.
 */
export interface CommandLifecycleEvent {
  /**
   * The user input: the turn's prompt or a `session/message`.
   */
  commandUuid: string;
  /**
   * `queued`, `started`, `completed` or `cancelled`.
   */
  state: string;
  /**
   * Says which event this is.
   */
  type: "commandLifecycle";
}
/**
 * A permission prompt the bridge answered itself (client does not answer, or timeout).
 */
export interface PermissionDeniedEvent {
  /**
   * Why; the model is told this.
   */
  message: string;
  /**
   * The permission request's id.
   */
  requestId: string;
  /**
   * The tool that was denied.
   */
  toolName: string;
  /**
   * Says which event this is.
   */
  type: "permissionAutoDenied";
}
/**
 * The client fell so far behind that `missed` events were dropped.
 */
export interface LaggedEvent {
  /**
   * How many events were dropped.
   */
  missed: number;
  /**
   * Says which event this is.
   */
  type: "lagged";
}
/**
 * The CLI printed a line that is not JSON (reported, never fatal).
 */
export interface InvalidLineEvent {
  /**
   * Why it is not a frame.
   */
  error: string;
  /**
   * The line (at most 4096 bytes).
   */
  line: string;
  /**
   * Says which event this is.
   */
  type: "invalidLine";
}
/**
 * A CLI frame of a type the bridge does not model, with all its data.
 */
export interface UnknownEvent {
  /**
   * The whole frame.
   */
  frame: {
    [k: string]: unknown;
  };
  /**
   * The frame's `type`.
   */
  frameType: string;
  /**
   * Says which event this is.
   */
  type: "unknown";
}
/**
 * A CLI frame exactly as printed (sessions created with `rawEvents: true`).
 */
export interface RawEvent {
  /**
   * The frame, byte for byte as the CLI printed it.
   */
  frame: {
    [k: string]: unknown;
  };
  /**
   * Says which event this is.
   */
  type: "raw";
}
/**
 * A session is gone; its terminal status.
 */
export interface SessionExitedNotification {
  jsonrpc: "2.0";
  method: "session/exited";
  params: ExitedParams;
}
/**
 * `session/exited` notification params: the session is gone.
 */
export interface ExitedParams {
  /**
   * What went wrong, for `failed`, `limit` and `deadline`.
   */
  error: string | null;
  /**
   * `closed` by session/close; `exited` on its own; `failed` crashed; `limit`/`deadline` a limit tripped; `shutdown` the bridge is exiting.
   */
  reason: "closed" | "deadline" | "exited" | "failed" | "limit" | "shutdown";
  /**
   * The session that is gone.
   */
  sessionId: string;
  /**
   * How the CLI process ended.
   */
  status: ExitStatus;
}
/**
 * A process's state: running, completed (exit 0) or failed (non-zero code or a signal).
 */
export interface ExitStatus {
  /**
   * The exit code, when the process exited.
   */
  code: number | null;
  /**
   * The signal that ended the process, when one did.
   */
  signal: number | null;
  /**
   * `running`, `completed` (exit code 0) or `failed`.
   */
  state: "completed" | "failed" | "running";
  /**
   * The end of the CLI's stderr (at most 64 KiB).
   */
  stderrTail: string;
}
/**
 * Ask the client whether a tool may run (only clients that declared `initializationOptions.permissions: true`). An error response denies.
 */
export interface SessionRequestPermissionRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/requestPermission";
  params: PermissionParams;
}
/**
 * `session/requestPermission` params (bridge -> client request).
 */
export interface PermissionParams {
  /**
   * The path outside the allowed directories that made the CLI ask.
   */
  blockedPath: string | null;
  /**
   * Why the CLI asks (a rule, a hook, the mode), when it says.
   */
  decisionReason: string | null;
  /**
   * What the call does, when the model said.
   */
  description: string | null;
  /**
   * The tool's name for display.
   */
  displayName: string | null;
  /**
   * The tool's input as the model wrote it.
   */
  input: {
    [k: string]: unknown;
  };
  /**
   * Names this request in `session/respondPermission`, `pendingPermissions` and `permissionAutoDenied`.
   */
  requestId: string;
  /**
   * True for AskUserQuestion (also when an older CLI does not say so): answer with `allow` and `updatedInput.answers`.
   */
  requiresUserInteraction: boolean;
  /**
   * The session, as `session/create` named it.
   */
  sessionId: string;
  /**
   * Permission updates the CLI suggests (pass them back as `updatedPermissions`).
   */
  suggestions: {
    [k: string]: unknown;
  }[];
  /**
   * The tool to run (`Bash`, `Edit`, `mcp__server__tool`, ...).
   */
  toolName: string;
  /**
   * The `toolUse` event this request is about.
   */
  toolUseId: string | null;
}
/**
 * The model calls one of the client's tools (only for sessions created with `tools`, by clients that declared `initializationOptions.tools: true`). An error response, a malformed result or no answer within `toolTimeout` is an error the model reads; `$/cancelRequest` follows when the call is no longer wanted.
 */
export interface SessionCallToolRequest {
  id: RequestId;
  jsonrpc: "2.0";
  method: "session/callTool";
  params: CallToolParams;
}
/**
 * `session/callTool` params (bridge -> client request): the model calls a host tool.
 */
export interface CallToolParams {
  /**
   * The tool's input as the model wrote it (the CLI checked it against `inputSchema`).
   */
  input: {
    [k: string]: unknown;
  };
  /**
   * The tool's name, as the client gave it in `session/create` (`getDiagnostics`).
   */
  name: string;
  /**
   * The session, as `session/create` named it.
   */
  sessionId: string;
  /**
   * The `id` of the `toolUse` event of this call (its `name` is `mcp__ide__getDiagnostics`, ...); null if the CLI did not say.
   */
  toolUseId: string | null;
}
/**
 * Bridge diagnostics.
 */
export interface WindowLogMessageNotification {
  jsonrpc: "2.0";
  method: "window/logMessage";
  params: LogMessageParams;
}
/**
 * `window/logMessage` params (type: 1 error, 2 warning, 3 info, 4 log).
 */
export interface LogMessageParams {
  /**
   * The diagnostic.
   */
  message: string;
  /**
   * 1 error, 2 warning, 3 info, 4 log.
   */
  type: number;
}
/**
 * Turn progress for a `session/send` that carried a `workDoneToken`.
 */
export interface ProgressNotification {
  jsonrpc: "2.0";
  method: "$/progress";
  params: ProgressParams;
}
/**
 * `$/progress` params (LSP work-done progress for `session/send`).
 */
export interface ProgressParams {
  /**
   * The `workDoneToken` of the `session/send`.
   */
  token: string | number;
  /**
   * `{kind: begin, title, cancellable}`, then `{kind: report, message}` per tool run, then `{kind: end, message}` with `done`, `interrupted` or `error`.
   */
  value: {
    [k: string]: unknown;
  };
}
/**
 * The successful answer to `initialize`.
 */
export interface InitializeResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: InitializeResult;
}
/**
 * `initialize` result.
 */
export interface InitializeResult {
  /**
   * What this bridge can do.
   */
  capabilities: ServerCapabilities;
  /**
   * That CLI's version, whether it is supported, and the minimum (null when none was found). A CLI below the minimum is also reported with a `window/logMessage` warning.
   */
  cli: CliInfo | null;
  /**
   * The CLI the bridge found (absent when none was found; sessions may still name one).
   */
  cliPath: string | null;
  /**
   * `claude --version` of that CLI, when known.
   */
  cliVersion: string | null;
  /**
   * `MAJOR.MINOR` of this protocol (see the compatibility policy).
   */
  protocolVersion: string;
  /**
   * The bridge's name and version.
   */
  serverInfo: ServerInfo;
}
/**
 * What this bridge can do.
 */
export interface ServerCapabilities {
  /**
   * The framings the bridge reads (it answers in the client's).
   */
  framings: string[];
  /**
   * The bridge asks the client with `session/requestPermission`.
   */
  permissions: boolean;
  /**
   * `$/progress` for a `session/send` that carries a `workDoneToken`.
   */
  progress: boolean;
  /**
   * Sessions can also stream every CLI frame (`rawEvents` in `session/create`).
   */
  rawEvents: boolean;
  /**
   * Sessions can offer the client's own tools to the model (`tools` in `session/create`, calls as `session/callTool`).
   */
  tools: boolean;
}
/**
 * A `claude` CLI and what it can do: `initialize` describes the CLI the bridge found, `session/create` and `session/status` the session's. See "CLI versions and fallbacks" in the reference for what the bridge does when a capability is missing.
 */
export interface CliInfo {
  /**
   * What the CLI advertised in its `system/init` (`msg_lifecycle_v1`, `interrupt_receipt_v1`, `interrupt_cancel_queued_v1`, ...). The CLI says so at the start of a turn: null until one started (for `session/create`, unless an earlier session of the same executable showed it), and null for a legacy CLI (`legacy`).
   */
  capabilities: string[] | null;
  /**
   * True when the CLI advertises no capabilities at all (2.1.176 and older): it has none of them. False when it advertised a list; null while that is not known.
   */
  legacy: boolean | null;
  /**
   * The oldest CLI version the bridge supports.
   */
  minimumVersion: string;
  /**
   * The executable.
   */
  path: string;
  /**
   * False below `minimumVersion`: the bridge still runs it, but untested; null when the version is unknown.
   */
  supported: boolean | null;
  /**
   * `claude --version` (e.g. `2.1.332`); null when it could not be read.
   */
  version: string | null;
}
/**
 * The bridge's name and version.
 */
export interface ServerInfo {
  /**
   * `claude-duplex-bridge`.
   */
  name: string;
  /**
   * The bridge's version.
   */
  version: string;
}
/**
 * The successful answer to `shutdown`.
 */
export interface ShutdownResponse {
  id: RequestId;
  jsonrpc: "2.0";
  /**
   * Always null.
   */
  result: null;
}
/**
 * The successful answer to `session/create`.
 */
export interface SessionCreateResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: CreateResult;
}
/**
 * `session/create` result: the session id and what the CLI reported at start.
 */
export interface CreateResult {
  /**
   * The CLI's account information (API key source, provider).
   */
  account: {
    [k: string]: unknown;
  } | null;
  /**
   * The session's CLI: version, support, and its capabilities when already known.
   */
  cli: CliInfo | null;
  /**
   * The CLI executable that runs.
   */
  cliPath: string;
  /**
   * Slash commands the CLI offers.
   */
  commands: {
    [k: string]: unknown;
  }[];
  /**
   * The session's working directory, absolute.
   */
  cwd: string;
  /**
   * The CLI's full `initialize` answer.
   */
  initialize: {
    [k: string]: unknown;
  };
  /**
   * The model, when the CLI reported one at start.
   */
  model: string | null;
  /**
   * Models the CLI offers.
   */
  models: {
    [k: string]: unknown;
  }[];
  /**
   * The permission mode the CLI reported at start.
   */
  permissionMode: string | null;
  /**
   * The CLI's process id.
   */
  pid: number;
  /**
   * The bridge's id of the session: every `session/*` call names it.
   */
  sessionId: string;
  /**
   * True when a warm spare from the pool was handed out (no spawn wait).
   */
  warm: boolean;
}
/**
 * The successful answer to `session/send`.
 */
export interface SessionSendResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: TurnResult;
}
/**
 * The outcome of a turn (`session/send` result).
 */
export interface TurnResult {
  /**
   * The HTTP status of the API error that ended the turn, if one did.
   */
  apiErrorStatus: number | null;
  /**
   * The CLI's own session id (`resume` takes it).
   */
  claudeSessionId: string | null;
  /**
   * One per user input of the turn (the prompt, then each `session/message`).
   */
  commandUuids: string[];
  /**
   * What this turn cost (the change of the CLI's running total).
   */
  costUsd: number;
  /**
   * How long the turn took, as the bridge measured it.
   */
  durationMs: number;
  /**
   * True when the turn was interrupted (`session/interrupt`, `$/cancelRequest`, or a deny with `interrupt`).
   */
  interrupted: boolean;
  /**
   * True when a result of the turn was an error (an interrupted turn is one).
   */
  isError: boolean;
  /**
   * Model round trips in the turn.
   */
  numTurns: number;
  /**
   * How many CLI results the turn had (live messages each get one).
   */
  results: number;
  /**
   * The model's stop reason (`end_turn`, ...); null when interrupted.
   */
  stopReason: string | null;
  /**
   * The CLI's result subtype of the last result: `success`, `error_during_execution`, `error_max_turns`, ...
   */
  subtype: string;
  /**
   * Why the CLI ended the turn: `completed`, `aborted_streaming`, `api_error` (also when an older CLI said `completed` for a result with an API error status), ...
   */
  terminalReason: string | null;
  /**
   * The final reply text (for an interrupted turn, what was produced).
   */
  text: string;
  /**
   * The CLI process's running total.
   */
  totalCostUsd: number;
  /**
   * Token usage of the last result, as the CLI reported it.
   */
  usage: {
    [k: string]: unknown;
  } | null;
}
/**
 * The successful answer to `session/message`.
 */
export interface SessionMessageResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: MessageResult;
}
/**
 * `session/message` result: the message was written; `uuid` names its command.
 */
export interface MessageResult {
  /**
   * The message's command uuid, as `commandLifecycle` events and the turn's `commandUuids` name it.
   */
  uuid: string;
}
/**
 * The successful answer to `session/interrupt`.
 */
export interface SessionInterruptResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: InterruptResult;
}
/**
 * What the CLI still had queued when interrupted, and what it cancelled. A CLI without `interrupt_receipt_v1` does not say: both are then null (unknown), never `[]`.
 */
export interface InterruptResult {
  /**
   * Command uuids of the live messages it cancelled; null when unknown.
   */
  cancelled: string[] | null;
  /**
   * Command uuids of live messages the CLI still has queued; null when unknown.
   */
  stillQueued: string[] | null;
}
/**
 * The successful answer to `session/respondPermission`.
 */
export interface SessionRespondPermissionResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: Empty;
}
/**
 * The successful answer to `session/setModel`.
 */
export interface SessionSetModelResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: SetModelResult;
}
/**
 * `session/setModel` result.
 */
export interface SetModelResult {
  /**
   * The model now set (null: the default).
   */
  model: string | null;
}
/**
 * The successful answer to `session/setPermissionMode`.
 */
export interface SessionSetPermissionModeResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: SetPermissionModeResult;
}
/**
 * `session/setPermissionMode` result.
 */
export interface SetPermissionModeResult {
  /**
   * The permission mode now set.
   */
  mode: string;
}
/**
 * The successful answer to `session/getContextUsage`.
 */
export interface SessionGetContextUsageResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: ContextUsageResult;
}
/**
 * `session/getContextUsage` result: the CLI's report, as it gave it.
 */
export interface ContextUsageResult {
  /**
   * The CLI's report: `categories`, `totalTokens`, `maxTokens`, `percentage`, ...
   */
  usage: {
    [k: string]: unknown;
  };
}
/**
 * The successful answer to `session/status`.
 */
export interface SessionStatusResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: SessionStatus;
}
/**
 * `session/status` result and `session/list` entries.
 */
export interface SessionStatus {
  /**
   * The session's budget, when it has one.
   */
  budgetUsd: number | null;
  /**
   * The CLI's own session id, once it reported one.
   */
  claudeSessionId: string | null;
  /**
   * The session's CLI: version, support, and its capabilities once a turn started.
   */
  cli: CliInfo | null;
  /**
   * The session's working directory.
   */
  cwd: string;
  /**
   * The process's state (`running` while it lives).
   */
  exitStatus: ExitStatus;
  /**
   * The model, as last reported or set.
   */
  model: string | null;
  /**
   * Request ids of deferred permission requests awaiting `session/respondPermission`.
   */
  pendingPermissions: string[];
  /**
   * The permission mode, as last reported or set.
   */
  permissionMode: string | null;
  /**
   * The CLI's process id.
   */
  pid: number | null;
  /**
   * The session, as `session/create` named it.
   */
  sessionId: string;
  /**
   * `idle` (no turn), `busy` (a turn runs), `closing`, or `exited`.
   */
  state: "busy" | "closing" | "exited" | "idle";
  /**
   * What the session's process spent so far, in USD.
   */
  totalCostUsd: number;
  /**
   * True while a `session/send` runs.
   */
  turnInFlight: boolean;
  /**
   * Turns completed so far.
   */
  turnsCompleted: number;
}
/**
 * The successful answer to `session/list`.
 */
export interface SessionListResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: ListResult;
}
/**
 * `session/list` result.
 */
export interface ListResult {
  /**
   * One entry per session, in creation order.
   */
  sessions: SessionStatus[];
}
/**
 * The successful answer to `session/history`.
 */
export interface SessionHistoryResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: ListTranscriptsResult;
}
/**
 * `session/history` result, newest first.
 */
export interface ListTranscriptsResult {
  /**
   * One page of the directory's transcripts, newest first. (The member keeps the name it had in protocol 1.0, when transcripts were called conversations: a rename would break clients.)
   */
  conversations: TranscriptInfo[];
  /**
   * How many transcripts the directory has in all.
   */
  total: number;
}
/**
 * One transcript of a directory: an earlier conversation the CLI stored.
 */
export interface TranscriptInfo {
  /**
   * The CLI's session id: `session/create` resumes it with `resume`.
   */
  claudeSessionId: string;
  /**
   * When it started, in milliseconds since the epoch.
   */
  createdAt: number | null;
  /**
   * The title a rename gave it (`session/renameHistory` or the CLI's `/rename`).
   */
  customTitle: string | null;
  /**
   * The working directory the CLI recorded.
   */
  cwd: string | null;
  /**
   * The transcript's size in bytes.
   */
  fileSize: number | null;
  /**
   * The first thing the user typed (commands and IDE context skipped), at most 200 chars.
   */
  firstPrompt: string | null;
  /**
   * The git branch the CLI last recorded.
   */
  gitBranch: string | null;
  /**
   * When its transcript was last written, in milliseconds since the epoch.
   */
  lastModified: number;
  /**
   * The bridge session holding the transcript now, if any.
   */
  liveSessionId: string | null;
  /**
   * Messages `session/transcript` returns for it (one per content block, as the CLI stores them).
   */
  messageCount: number;
  /**
   * The CLI's own title or summary of the transcript, when it wrote one.
   */
  summary: string | null;
  /**
   * What to show: `customTitle`, else `summary`, else `firstPrompt` (one line).
   */
  title: string;
}
/**
 * The successful answer to `session/transcript`.
 */
export interface SessionTranscriptResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: TranscriptResult;
}
/**
 * `session/transcript` result: the transcript as the events a live turn sends.
 */
export interface TranscriptResult {
  /**
   * The transcript.
   */
  claudeSessionId: string;
  /**
   * `userText`, `assistantText`, `thinking`, `toolUse` and `toolResult` events, in order.
   */
  events: (
    | InitEvent
    | StatusEvent
    | SystemEvent
    | TextDeltaEvent
    | ThinkingDeltaEvent
    | ToolInputDeltaEvent
    | AssistantTextEvent
    | ThinkingEvent
    | ToolUseEvent
    | ToolResultEvent
    | UserTextEvent
    | ResultEvent
    | CommandLifecycleEvent
    | PermissionDeniedEvent
    | LaggedEvent
    | InvalidLineEvent
    | UnknownEvent
    | RawEvent
  )[];
}
/**
 * The successful answer to `session/renameHistory`.
 */
export interface SessionRenameHistoryResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: Empty;
}
/**
 * The successful answer to `session/deleteHistory`.
 */
export interface SessionDeleteHistoryResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: Empty;
}
/**
 * The successful answer to `session/close`.
 */
export interface SessionCloseResponse {
  id: RequestId;
  jsonrpc: "2.0";
  result: CloseResult;
}
/**
 * `session/close` result.
 */
export interface CloseResult {
  /**
   * How the CLI process ended.
   */
  exitStatus: ExitStatus;
  /**
   * True when the child process was reaped (no zombie, no orphan).
   */
  reaped: boolean;
  /**
   * The end of the CLI's stderr.
   */
  stderrTail: string;
}
/**
 * The bridge's answer to a request that failed. `id` is null when the request's id could not be read (a parse error).
 */
export interface ErrorResponse {
  error: ResponseError;
  id: RequestId | null;
  jsonrpc: "2.0";
}
/**
 * The `error` member of an error response from the bridge.
 */
export interface ResponseError {
  code: ErrorCode;
  data: ErrorData;
  /**
   * What went wrong, written for a person.
   */
  message: string;
}
/**
 * The `data` member of a bridge error: which error, and its details.
 */
export interface ErrorData {
  /**
   * For Unsupported: the CLI capability that is missing.
   */
  capability: string | null;
  /**
   * For TranscriptNotFound and TranscriptInUse: the transcript.
   */
  claudeSessionId: string | null;
  /**
   * For ProcessFailed: how the CLI ended.
   */
  exitStatus: ExitStatus | null;
  /**
   * The error's name, e.g. `SessionNotFound`.
   */
  kind: string;
  /**
   * For LimitExceeded / DeadlineExceeded: which limit.
   */
  limit: string | null;
  /**
   * For InvalidParams: the offending field, e.g. `$.prompt`.
   */
  path: string | null;
  /**
   * For SessionNotFound: the id that was asked for; for TranscriptInUse: the live session holding the transcript.
   */
  sessionId: string | null;
  /**
   * For CliNotFound: every place looked at.
   */
  tried: string[] | null;
}
