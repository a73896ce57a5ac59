/**
 * The chats of one window: the bridge client (started lazily, restarted on demand), one
 * `Conversation` per session, the active tab, and the answers to permission prompts.
 * No `vscode` import: the extension wires it to the UI, tests drive it in Node.
 */
import {
  BridgeClient,
  BridgeClientOptions,
  BridgeExit,
  CancellationToken,
  TranscriptInfo,
} from "../client";
import { Conversation } from "../model/conversation";
import type {
  CreateParams,
  LogMessageParams,
  PermissionDecision,
  PermissionParams,
  SetPermissionModeParams,
} from "../protocol";

export type PermissionMode = SetPermissionModeParams["mode"];
export const PERMISSION_MODES: PermissionMode[] = [
  "default",
  "acceptEdits",
  "plan",
  "bypassPermissions",
];

export type BridgeState = "stopped" | "starting" | "running" | "crashed";

export interface SessionsOptions {
  /** The client's options (command, env, warm pool); `onPermission` is the store's own. */
  client: () => Omit<BridgeClientOptions, "onPermission">;
  /** Defaults for `session/create` (cwd, model, permission mode). */
  createDefaults: () => Omit<CreateParams, "cwd"> & { cwd: string };
  /** How long a permission prompt keeps the bridge's request open before deferring it. */
  inlineAnswerMs?: number;
}

export interface SessionsListener {
  /** Something in this conversation changed (the view batches its redraws). */
  changed(conversation: Conversation): void;
  /** Tabs were added, removed or switched. */
  tabsChanged(): void;
  bridgeChanged(state: BridgeState, message: string | null): void;
  log(params: LogMessageParams): void;
}

interface Waiter {
  resolve: (decision: PermissionDecision) => void;
  deferred: boolean;
}

export class Sessions {
  readonly conversations = new Map<string, Conversation>();
  activeId: string | null = null;
  bridgeState: BridgeState = "stopped";
  private client: BridgeClient | null = null;
  private starting: Promise<BridgeClient> | null = null;
  private readonly waiters = new Map<string, Waiter>();
  private readonly turns = new Map<string, Promise<unknown>>();
  private pendingCount = 0;
  private readonly creating = new Map<Conversation, Promise<unknown>>();

  constructor(
    private readonly options: SessionsOptions,
    private readonly listener: SessionsListener,
  ) {}

  get active(): Conversation | undefined {
    return this.activeId ? this.conversations.get(this.activeId) : undefined;
  }

  get bridgePid(): number | undefined {
    return this.client?.pid;
  }

  /** The running client, started if needed. */
  async ensureClient(): Promise<BridgeClient> {
    if (this.client?.running) return this.client;
    if (this.starting) return this.starting;
    this.setBridge("starting", null);
    this.starting = BridgeClient.start({
      ...this.options.client(),
      onPermission: (params, token) => this.onPermission(params, token),
    }).then(
      (client) => {
        this.client = client;
        this.starting = null;
        client.onEvent((p) => {
          const conversation = this.conversations.get(p.sessionId);
          if (!conversation) return;
          conversation.apply(p);
          this.listener.changed(conversation);
        });
        client.onSessionExited((p) => {
          const conversation = this.conversations.get(p.sessionId);
          if (!conversation) return;
          conversation.exited(p);
          this.listener.changed(conversation);
          this.listener.tabsChanged();
        });
        client.onLogMessage((p) => this.listener.log(p));
        client.onDidExit((exit) => this.onBridgeExit(client, exit));
        this.setBridge("running", null);
        return client;
      },
      (error: Error) => {
        this.starting = null;
        this.setBridge("crashed", error.message);
        throw error;
      },
    );
    return this.starting;
  }

  /** A new chat: a session of its own, made the active tab. */
  newChat(extra: Partial<CreateParams> = {}): Promise<Conversation> {
    const defaults = this.options.createDefaults();
    const placeholder = `pending-${++this.pendingCount}`;
    const conversation = new Conversation(placeholder, defaults.cwd);
    const created = this.create(conversation, { ...defaults, ...extra });
    this.creating.set(conversation, created.catch(() => undefined));
    return created.finally(() => this.creating.delete(conversation));
  }

  private async create(conversation: Conversation, params: CreateParams): Promise<Conversation> {
    const placeholder = conversation.meta.sessionId;
    this.conversations.set(placeholder, conversation);
    this.activeId = placeholder;
    this.listener.tabsChanged();
    try {
      const client = await this.ensureClient();
      const replayed: Parameters<Conversation["apply"]>[0][] = [];
      // Replayed history arrives before the create answer, under the new session id.
      const early = client.onEvent((p) => {
        if (!this.conversations.has(p.sessionId)) replayed.push(p);
      });
      let result;
      try {
        result = await client.create(params);
      } finally {
        early.dispose();
      }
      this.conversations.delete(placeholder);
      conversation.created(result);
      this.conversations.set(result.sessionId, conversation);
      for (const p of replayed) if (p.sessionId === result.sessionId) conversation.apply(p);
      if (this.activeId === placeholder) this.activeId = result.sessionId;
      this.listener.tabsChanged();
      this.listener.changed(conversation);
      return conversation;
    } catch (error) {
      this.conversations.delete(placeholder);
      if (this.activeId === placeholder) this.activeId = this.firstId();
      this.listener.tabsChanged();
      throw error;
    }
  }

  /**
   * Send a prompt to the active chat (a new one if none): a turn, or a live message when a
   * turn is running. Resolves when the prompt was accepted, not when the turn ends.
   */
  async send(text: string): Promise<void> {
    let conversation = this.active;
    if (!conversation) conversation = await this.newChat();
    else if (conversation.meta.state === "starting") await this.creating.get(conversation);
    else if (conversation.meta.state === "exited") {
      // Typing into a chat whose process died continues it, as its Restart button would.
      await this.recover(conversation.meta.sessionId);
    }
    const client = await this.ensureClient();
    const sessionId = conversation.meta.sessionId;
    const live = conversation.meta.state === "running";
    conversation.userPrompt(text);
    this.listener.changed(conversation);
    this.listener.tabsChanged();
    if (live) {
      try {
        await client.message({ sessionId, prompt: text });
      } catch (error) {
        conversation.notice("error", `The message was not sent: ${messageOf(error)}`);
        this.listener.changed(conversation);
      }
      return;
    }
    const turn = client.send({ sessionId, prompt: text }).then(
      (result) => conversation.turnEnded(result),
      (error) => {
        if (conversation.meta.state !== "exited") conversation.turnFailed(messageOf(error));
      },
    );
    const tracked = turn.finally(() => {
      this.turns.delete(sessionId);
      this.listener.changed(conversation);
      this.listener.tabsChanged();
      void this.refreshContext(conversation);
    });
    this.turns.set(sessionId, tracked);
  }

  /** Resolves when the session's running turn (if any) has ended. */
  async turnDone(sessionId: string | null = this.activeId): Promise<void> {
    if (sessionId) await this.turns.get(sessionId);
  }

  async interrupt(): Promise<void> {
    const conversation = this.active;
    if (!conversation || !this.client || conversation.meta.state !== "running") return;
    await this.client.interrupt({ sessionId: conversation.meta.sessionId, cancelQueued: false });
  }

  async setModel(model: string | null): Promise<void> {
    const conversation = this.requireActive();
    const client = await this.ensureClient();
    const result = await client.setModel(conversation.meta.sessionId, model);
    conversation.setModel(result.model ?? model);
    this.listener.changed(conversation);
  }

  async setPermissionMode(mode: PermissionMode): Promise<void> {
    const conversation = this.requireActive();
    const client = await this.ensureClient();
    const result = await client.setPermissionMode(conversation.meta.sessionId, mode);
    conversation.setPermissionMode(result.mode);
    this.listener.changed(conversation);
  }

  /** Past conversations of the workspace, newest first. */
  async history(): Promise<TranscriptInfo[]> {
    const client = await this.ensureClient();
    const result = await client.history({ cwd: this.options.createDefaults().cwd, limit: 200 });
    return result.conversations;
  }

  /** A chat continuing a past conversation, its messages replayed first. */
  async resume(entry: TranscriptInfo): Promise<Conversation> {
    if (entry.liveSessionId && this.conversations.has(entry.liveSessionId)) {
      this.select(entry.liveSessionId);
      return this.conversations.get(entry.liveSessionId)!;
    }
    const conversation = await this.newChat({ resume: entry.claudeSessionId, replay: true });
    conversation.setTitle(entry.customTitle || entry.title || entry.firstPrompt || "Resumed chat");
    this.listener.changed(conversation);
    this.listener.tabsChanged();
    return conversation;
  }

  select(sessionId: string): void {
    if (!this.conversations.has(sessionId)) return;
    this.activeId = sessionId;
    this.listener.tabsChanged();
  }

  /** Close a chat: its process is ended and reaped, its tab removed. */
  async closeSession(sessionId: string | null = this.activeId): Promise<void> {
    if (!sessionId) return;
    const conversation = this.conversations.get(sessionId);
    if (!conversation) return;
    this.conversations.delete(sessionId);
    if (this.activeId === sessionId) this.activeId = this.firstId();
    this.listener.tabsChanged();
    if (this.client?.running && conversation.meta.state !== "exited") {
      await this.client.close(sessionId).catch(() => undefined);
    }
  }

  /** Answer a permission prompt from the UI: inline if the bridge still waits, else late. */
  async answerPermission(sessionId: string, requestId: string, decision: PermissionDecision): Promise<void> {
    const conversation = this.conversations.get(sessionId);
    const item = conversation?.permission(requestId);
    if (!conversation || !item || item.state !== "pending") return;
    const outcome =
      decision.behavior === "allow"
        ? decision.updatedPermissions?.length
          ? "Always allowed"
          : "Allowed"
        : `Denied${decision.message ? `: ${decision.message}` : ""}`;
    conversation.permissionSettled(requestId, decision.behavior === "allow" ? "allowed" : "denied", outcome);
    this.listener.changed(conversation);
    const waiter = this.waiters.get(requestId);
    this.waiters.delete(requestId);
    if (waiter && !waiter.deferred) {
      waiter.resolve(decision);
      return;
    }
    try {
      const client = await this.ensureClient();
      await client.respondPermission(sessionId, requestId, decision);
    } catch (error) {
      conversation.notice("warning", `The answer came too late: ${messageOf(error)}`);
      this.listener.changed(conversation);
    }
  }

  /** Stop the bridge and start it again; every chat of the old one is marked ended. */
  async restart(): Promise<void> {
    const old = this.client;
    this.client = null;
    if (old) await old.dispose();
    await this.ensureClient();
  }

  /**
   * The restart action of a chat whose process (or bridge) died: a running bridge (started
   * again if it crashed), and the chat continued in the same tab on a new process, resuming
   * its conversation when the CLI had one.
   */
  async recover(sessionId: string | null = this.activeId): Promise<void> {
    if (this.bridgeState !== "running") await this.restart();
    const conversation = sessionId ? this.conversations.get(sessionId) : undefined;
    if (!conversation || conversation.meta.state !== "exited") return;
    const client = await this.ensureClient();
    const resume = conversation.meta.claudeSessionId;
    const result = await client.create({
      ...this.options.createDefaults(),
      cwd: conversation.meta.cwd,
      ...(resume ? { resume } : {}),
    });
    const entries = [...this.conversations.entries()].map(([id, c]): [string, Conversation] =>
      id === conversation.meta.sessionId ? [result.sessionId, c] : [id, c],
    );
    this.conversations.clear();
    for (const [id, c] of entries) this.conversations.set(id, c);
    if (this.activeId === sessionId) this.activeId = result.sessionId;
    conversation.reopened(result, resume !== null);
    this.listener.changed(conversation);
    this.listener.tabsChanged();
  }

  /** Close every session and stop the bridge; nothing is left running. */
  async dispose(): Promise<void> {
    if (this.starting) await this.starting.catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.dispose();
  }

  private onPermission(params: PermissionParams, token: CancellationToken): Promise<PermissionDecision> {
    const conversation = this.conversations.get(params.sessionId);
    if (!conversation) return Promise.resolve({ behavior: "deny", message: "No chat shows this session." });
    conversation.permissionRequested(params);
    this.listener.changed(conversation);
    return new Promise((resolve) => {
      const waiter: Waiter = { resolve, deferred: false };
      this.waiters.set(params.requestId, waiter);
      // Non-blocking: an unanswered prompt stays in the chat and is answered late.
      const timer = setTimeout(() => {
        waiter.deferred = true;
        resolve({ behavior: "defer" });
      }, this.options.inlineAnswerMs ?? 30_000);
      timer.unref?.();
      token.onCancellationRequested(() => {
        clearTimeout(timer);
        this.waiters.delete(params.requestId);
        conversation.permissionSettled(params.requestId, "expired", "The bridge stopped waiting.");
        this.listener.changed(conversation);
        resolve({ behavior: "deny", message: "cancelled" });
      });
      const settle = waiter.resolve;
      waiter.resolve = (decision) => {
        clearTimeout(timer);
        settle(decision);
      };
    });
  }

  private onBridgeExit(client: BridgeClient, exit: BridgeExit): void {
    if (this.client === client) this.client = null;
    if (exit.expected) {
      for (const c of this.conversations.values()) {
        if (c.meta.state !== "exited") {
          c.exited({ sessionId: c.meta.sessionId, status: { state: "completed" }, reason: "shutdown" });
          this.listener.changed(c);
        }
      }
      this.setBridge("stopped", null);
      this.listener.tabsChanged();
      return;
    }
    const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
    const tail = exit.stderrTail.trim().split("\n").slice(-2).join(" ");
    const message = `The bridge exited unexpectedly (${how})${tail ? `: ${tail}` : ""}.`;
    for (const c of this.conversations.values()) {
      if (c.meta.state !== "exited") {
        c.bridgeDied(message);
        this.listener.changed(c);
      }
    }
    this.waiters.clear();
    this.setBridge("crashed", message);
    this.listener.tabsChanged();
  }

  private async refreshContext(conversation: Conversation): Promise<void> {
    if (!this.client?.running || conversation.meta.state === "exited") return;
    try {
      const result = await this.client.getContextUsage(conversation.meta.sessionId);
      conversation.setContextUsage(result.usage as Record<string, unknown>);
      this.listener.changed(conversation);
    } catch {
      // Context usage is informative only.
    }
  }

  private requireActive(): Conversation {
    const conversation = this.active;
    if (!conversation || conversation.meta.state === "exited") throw new Error("No open chat.");
    return conversation;
  }

  private firstId(): string | null {
    const ids = [...this.conversations.keys()];
    return ids.length ? ids[ids.length - 1] : null;
  }

  private setBridge(state: BridgeState, message: string | null): void {
    this.bridgeState = state;
    this.listener.bridgeChanged(state, message);
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
