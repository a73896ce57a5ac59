/**
 * One session's conversation as data, built from `session/event`s and the client's own
 * actions: messages, text accumulated from deltas, thinking, tool cards (use + result),
 * permission prompts, cost and context usage, and the session's state. No drawing, no
 * `vscode` import: the view renders it, tests assert on it.
 *
 * Every change bumps the changed item's `version` and lands its id in `dirty`, so a view can
 * redraw only what changed, in batches (`takeDirty()`).
 */
import type {
  CreateResult,
  Event,
  EventParams,
  ExitedParams,
  PermissionParams,
  TurnResult,
} from "../protocol";

export type SessionState = "starting" | "idle" | "running" | "exited";

export type PermissionState = "pending" | "allowed" | "denied" | "expired";

interface ItemBase {
  id: number;
  version: number;
}

export interface UserItem extends ItemBase {
  kind: "user";
  text: string;
  /** Sent into a running turn (`session/message`). */
  live: boolean;
  /** From a resumed conversation's history. */
  replay: boolean;
}

export interface AssistantItem extends ItemBase {
  kind: "assistant";
  text: string;
  streaming: boolean;
  aborted: boolean;
}

export interface ThinkingItem extends ItemBase {
  kind: "thinking";
  text: string;
  streaming: boolean;
}

export interface ToolItem extends ItemBase {
  kind: "tool";
  toolUseId: string;
  name: string;
  input: Record<string, unknown>;
  result: string | null;
  isError: boolean;
}

export interface PermissionItem extends ItemBase {
  kind: "permission";
  request: PermissionParams;
  state: PermissionState;
  /** What the user answered, or why it expired. */
  outcome: string | null;
}

export interface NoticeItem extends ItemBase {
  kind: "notice";
  level: "info" | "warning" | "error";
  text: string;
  /** A restart action belongs with it (the bridge or the CLI died). */
  restart: boolean;
}

export interface TurnItem extends ItemBase {
  kind: "turn";
  costUsd: number;
  durationMs: number;
  interrupted: boolean;
  isError: boolean;
  inputTokens: number | null;
  outputTokens: number | null;
}

export type Item =
  | UserItem
  | AssistantItem
  | ThinkingItem
  | ToolItem
  | PermissionItem
  | NoticeItem
  | TurnItem;

export interface ModelChoice {
  value: string;
  displayName: string;
  description: string;
}

export interface SessionMeta {
  sessionId: string;
  title: string;
  state: SessionState;
  model: string | null;
  permissionMode: string | null;
  totalCostUsd: number;
  contextPercent: number | null;
  contextTokens: number | null;
  contextMax: number | null;
  claudeSessionId: string | null;
  pid: number | null;
  models: ModelChoice[];
  cwd: string;
}

let nextItemId = 1;

export class Conversation {
  readonly items: Item[] = [];
  readonly meta: SessionMeta;
  private readonly byTool = new Map<string, ToolItem>();
  private readonly byPermission = new Map<string, PermissionItem>();
  private openText: AssistantItem | null = null;
  private openThinking: ThinkingItem | null = null;
  private readonly dirtyIds = new Set<number>();
  private metaDirty = true;
  /** What earlier processes of this chat spent (the CLI reports its own running total). */
  private costOffset = 0;
  /** The last `seq` applied (events are numbered 1, 2, 3, ... per session). */
  lastSeq = 0;

  constructor(sessionId: string, cwd: string, title = "New chat") {
    this.meta = {
      sessionId,
      title,
      state: "starting",
      model: null,
      permissionMode: null,
      totalCostUsd: 0,
      contextPercent: null,
      contextTokens: null,
      contextMax: null,
      claudeSessionId: null,
      pid: null,
      models: [],
      cwd,
    };
  }

  /** The reply text streamed so far in the last assistant message. */
  get lastAssistantText(): string {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item.kind === "assistant") return item.text;
    }
    return "";
  }

  /** Pending permission prompts, oldest first. */
  get pendingPermissions(): PermissionItem[] {
    return this.items.filter(
      (i): i is PermissionItem => i.kind === "permission" && i.state === "pending",
    );
  }

  /** Ids of items changed since the last call, and whether the meta changed. */
  takeDirty(): { items: Item[]; meta: boolean } {
    const items = this.items.filter((i) => this.dirtyIds.has(i.id));
    const meta = this.metaDirty;
    this.dirtyIds.clear();
    this.metaDirty = false;
    return { items, meta };
  }

  /** The session started: what `session/create` answered. */
  created(result: CreateResult): void {
    this.meta.sessionId = result.sessionId;
    this.meta.pid = result.pid;
    this.meta.cwd = result.cwd;
    this.meta.model = result.model ?? null;
    this.meta.permissionMode = result.permissionMode ?? null;
    this.meta.models = (result.models ?? []).map((m) => ({
      value: String(m.value ?? ""),
      displayName: String(m.displayName ?? m.value ?? ""),
      description: String(m.description ?? ""),
    }));
    if (this.meta.state === "starting") this.meta.state = "idle";
    this.metaDirty = true;
  }

  /** The chat goes on in a new process (after its old one died). */
  reopened(result: CreateResult, resumed: boolean): void {
    this.costOffset = this.meta.totalCostUsd;
    this.meta.state = "starting";
    this.created(result);
    this.notice("info", resumed ? "Restarted: the conversation goes on in a new process." : "Restarted in a new process.");
  }

  /** The user sent a prompt: a new turn, or a live message into the running one. */
  userPrompt(text: string): UserItem {
    const live = this.meta.state === "running";
    this.closeOpen();
    if (this.meta.title === "New chat") this.setTitle(text);
    if (!live) this.setState("running");
    return this.add<UserItem>({ kind: "user", text, live, replay: false });
  }

  /** The turn's `session/send` answered. */
  turnEnded(result: TurnResult): void {
    this.closeOpen();
    const usage = (result.usage ?? {}) as Record<string, unknown>;
    const num = (v: unknown) => (typeof v === "number" ? v : null);
    this.add<TurnItem>({
      kind: "turn",
      costUsd: result.costUsd,
      durationMs: result.durationMs,
      interrupted: result.interrupted,
      isError: result.isError,
      inputTokens: num(usage.input_tokens),
      outputTokens: num(usage.output_tokens),
    });
    this.meta.totalCostUsd = this.costOffset + result.totalCostUsd;
    if (result.claudeSessionId) this.meta.claudeSessionId = result.claudeSessionId;
    this.expirePermissions("the turn ended");
    if (this.meta.state === "running") this.setState("idle");
    this.metaDirty = true;
  }

  /** The turn's `session/send` failed (not an interrupt: those have a result). */
  turnFailed(message: string): void {
    this.closeOpen();
    this.notice("error", message);
    this.expirePermissions("the turn failed");
    if (this.meta.state === "running") this.setState("idle");
  }

  /** A permission request arrived. */
  permissionRequested(request: PermissionParams): PermissionItem {
    this.closeOpen();
    const item = this.add<PermissionItem>({
      kind: "permission",
      request,
      state: "pending",
      outcome: null,
    });
    this.byPermission.set(request.requestId, item);
    return item;
  }

  /** The user (or the bridge) settled a permission request. */
  permissionSettled(requestId: string, state: PermissionState, outcome: string | null): void {
    const item = this.byPermission.get(requestId);
    if (!item || item.state !== "pending") return;
    item.state = state;
    item.outcome = outcome;
    this.touch(item);
  }

  permission(requestId: string): PermissionItem | undefined {
    return this.byPermission.get(requestId);
  }

  notice(level: NoticeItem["level"], text: string, restart = false): NoticeItem {
    this.closeOpen();
    return this.add<NoticeItem>({ kind: "notice", level, text, restart });
  }

  setModel(model: string | null): void {
    this.meta.model = model;
    this.metaDirty = true;
  }

  setPermissionMode(mode: string): void {
    this.meta.permissionMode = mode;
    this.metaDirty = true;
  }

  setContextUsage(usage: Record<string, unknown>): void {
    const n = (v: unknown) => (typeof v === "number" ? v : null);
    this.meta.contextTokens = n(usage.totalTokens);
    this.meta.contextMax = n(usage.maxTokens);
    this.meta.contextPercent = n(usage.percentage);
    this.metaDirty = true;
  }

  setTitle(text: string): void {
    const line = (text.trim().split("\n")[0] ?? "").replace(/[*_`#>]+/g, "").replace(/\s+/g, " ").trim();
    this.meta.title = line.length > 40 ? `${line.slice(0, 39)}…` : line || "New chat";
    this.metaDirty = true;
  }

  /** The session's process ended (`session/exited`). */
  exited(params: ExitedParams): void {
    this.closeOpen();
    this.expirePermissions("the session ended");
    this.setState("exited");
    if (params.reason !== "closed" && params.reason !== "shutdown") {
      const how =
        params.status.signal != null
          ? `signal ${params.status.signal}`
          : `exit code ${params.status.code ?? "?"}`;
      const tail = (params.status.stderrTail ?? "").trim().split("\n").slice(-2).join(" ");
      this.notice(
        "error",
        `Claude exited (${params.reason}, ${how})${params.error ? `: ${params.error}` : ""}${
          tail ? ` — ${tail}` : ""
        }`,
        true,
      );
    }
  }

  /** The bridge process died: every session of it is gone. */
  bridgeDied(message: string): void {
    this.closeOpen();
    this.expirePermissions("the bridge exited");
    this.setState("exited");
    this.notice("error", message, true);
  }

  /** Apply one `session/event`. */
  apply(params: EventParams): void {
    if (params.seq > this.lastSeq) this.lastSeq = params.seq;
    this.applyEvent(params.event, params.replay === true);
  }

  private applyEvent(event: Event, replay: boolean): void {
    switch (event.type) {
      case "textDelta": {
        if (event.parentToolUseId) return;
        this.closeThinking();
        if (!this.openText) {
          this.openText = this.add<AssistantItem>({
            kind: "assistant",
            text: "",
            streaming: true,
            aborted: false,
          });
        }
        this.openText.text += event.text;
        this.touch(this.openText);
        return;
      }
      case "assistantText": {
        if (event.parentToolUseId) return;
        this.closeThinking();
        const item =
          this.openText ??
          this.add<AssistantItem>({ kind: "assistant", text: "", streaming: false, aborted: false });
        item.text = event.text;
        item.streaming = false;
        item.aborted = event.aborted ?? false;
        this.touch(item);
        this.openText = null;
        return;
      }
      case "thinkingDelta": {
        if (event.parentToolUseId) return;
        if (!this.openThinking) {
          this.openThinking = this.add<ThinkingItem>({
            kind: "thinking",
            text: "",
            streaming: true,
          });
        }
        this.openThinking.text += event.thinking;
        this.touch(this.openThinking);
        return;
      }
      case "thinking": {
        if (event.parentToolUseId) return;
        const item =
          this.openThinking ??
          this.add<ThinkingItem>({ kind: "thinking", text: "", streaming: false });
        item.text = event.thinking;
        item.streaming = false;
        this.touch(item);
        this.openThinking = null;
        return;
      }
      case "toolUse": {
        if (event.parentToolUseId) return;
        this.closeOpen();
        const item = this.add<ToolItem>({
          kind: "tool",
          toolUseId: event.toolUseId,
          name: event.name,
          input: event.input as Record<string, unknown>,
          result: null,
          isError: false,
        });
        this.byTool.set(event.toolUseId, item);
        return;
      }
      case "toolResult": {
        const item = this.byTool.get(event.toolUseId);
        if (!item) return;
        item.result = event.content;
        item.isError = event.isError ?? false;
        this.touch(item);
        return;
      }
      case "userText": {
        if (replay && !event.text.startsWith("[Request interrupted")) {
          this.closeOpen();
          if (this.meta.title === "New chat") this.setTitle(event.text);
          this.add<UserItem>({ kind: "user", text: event.text, live: false, replay: true });
        }
        // "[Request interrupted by user]": the turn's footer says so.
        return;
      }
      case "init": {
        if (event.model) this.setModel(event.model);
        if (event.permissionMode) this.setPermissionMode(event.permissionMode);
        if (event.claudeSessionId) this.meta.claudeSessionId = event.claudeSessionId;
        return;
      }
      case "status": {
        if (event.permissionMode) this.setPermissionMode(event.permissionMode);
        return;
      }
      case "result": {
        this.closeOpen();
        if (event.totalCostUsd !== undefined) this.meta.totalCostUsd = this.costOffset + event.totalCostUsd;
        this.metaDirty = true;
        return;
      }
      case "permissionAutoDenied": {
        this.permissionSettled(event.requestId, "expired", event.message);
        return;
      }
      case "lagged": {
        this.notice("warning", `The view fell behind: ${event.missed} events were dropped.`);
        return;
      }
      default:
        return;
    }
  }

  private closeThinking(): void {
    if (this.openThinking) {
      this.openThinking.streaming = false;
      this.touch(this.openThinking);
      this.openThinking = null;
    }
  }

  private closeOpen(): void {
    this.closeThinking();
    if (this.openText) {
      this.openText.streaming = false;
      this.touch(this.openText);
      this.openText = null;
    }
  }

  private expirePermissions(why: string): void {
    for (const item of this.pendingPermissions) this.permissionSettled(item.request.requestId, "expired", why);
  }

  private setState(state: SessionState): void {
    this.meta.state = state;
    this.metaDirty = true;
  }

  private add<T extends Item>(fields: Omit<T, "id" | "version">): T {
    const item = { ...fields, id: nextItemId++, version: 1 } as T;
    this.items.push(item);
    this.dirtyIds.add(item.id);
    return item;
  }

  private touch(item: Item): void {
    item.version++;
    this.dirtyIds.add(item.id);
  }
}
