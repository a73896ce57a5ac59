/**
 * The chat webview view: draws the active conversation from the model in batches (never
 * one message per delta) and turns the webview's clicks into calls on `Sessions`.
 * The page runs media/webview.js under a strict Content Security Policy (a nonce, no
 * inline handlers, no remote content) and talks to the extension only through postMessage.
 */
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import type { Conversation, Item } from "../model/conversation";
import type { FromWebview, ItemOp, TabInfo, ToWebview } from "../webview/messages";
import type { Sessions } from "./sessions";

/** How long changes collect before they are posted to the webview. */
const FLUSH_MS = 16;

export interface ChatViewActions {
  onMessage(message: FromWebview): void | Promise<void>;
}

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = "claudeBridge.chat";
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private readonly dirty = new Set<Conversation>();
  /** Per item id: its version and text length as last posted. */
  private readonly posted = new Map<number, { version: number; length: number }>();
  private shownSession: string | null = null;
  private timer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readyWaiters: (() => void)[] = [];
  /** The bridge's state as last posted, posted again to a page that (re)loads. */
  private bridge: ToWebview | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly sessions: Sessions,
    private readonly actions: ChatViewActions,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    view.webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
    view.webview.html = this.html(view.webview);
    this.disposables.push(
      view.webview.onDidReceiveMessage((message: FromWebview) => {
        if (message.type === "ready") {
          this.ready = true;
          this.shownSession = null;
          this.tabsChanged();
          if (this.bridge) this.post(this.bridge);
          for (const wake of this.readyWaiters.splice(0)) wake();
          return;
        }
        void this.actions.onMessage(message);
      }),
      view.onDidDispose(() => {
        this.view = undefined;
        this.ready = false;
      }),
    );
  }

  /** Resolves once the webview is loaded and listening. */
  whenReady(): Promise<void> {
    if (this.ready) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /** Tabs or the active session changed: redraw the tab strip, reset the shown chat. */
  tabsChanged(): void {
    if (!this.ready) return;
    const tabs: TabInfo[] = [...this.sessions.conversations.values()].map((c) => ({
      sessionId: c.meta.sessionId,
      title: c.meta.title,
      state: c.meta.state,
    }));
    this.post({ type: "tabs", tabs, active: this.sessions.activeId });
    const active = this.sessions.active;
    if (!active) {
      this.shownSession = null;
      return;
    }
    if (active.meta.sessionId !== this.shownSession) {
      this.shownSession = active.meta.sessionId;
      active.takeDirty();
      this.posted.clear();
      for (const item of active.items) this.remember(item);
      this.post({
        type: "reset",
        sessionId: active.meta.sessionId,
        meta: { ...active.meta },
        items: active.items,
      });
    }
  }

  /** A conversation changed: collect, and post the changes within FLUSH_MS. */
  changed(conversation: Conversation): void {
    this.dirty.add(conversation);
    if (this.timer === undefined) this.timer = setTimeout(() => this.flush(), FLUSH_MS);
  }

  post(message: ToWebview): void {
    if (message.type === "bridge") this.bridge = message;
    if (this.view && this.ready) void this.view.webview.postMessage(message);
  }

  /** Whether the chat is on screen. */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  reveal(): void {
    this.view?.show?.(true);
  }

  private flush(): void {
    this.timer = undefined;
    const active = this.sessions.active;
    for (const conversation of this.dirty) {
      if (conversation !== active) continue;
      if (conversation.meta.sessionId !== this.shownSession) {
        this.tabsChanged();
        continue;
      }
      const { items, meta } = conversation.takeDirty();
      if (!items.length && !meta) continue;
      const ops: ItemOp[] = items.map((item) => this.op(item));
      this.post({
        type: "ops",
        sessionId: conversation.meta.sessionId,
        meta: meta ? { ...conversation.meta } : null,
        ops,
      });
    }
    this.dirty.clear();
  }

  /** Only the appended text of a streaming message, else the whole item. */
  private op(item: Item): ItemOp {
    const before = this.posted.get(item.id);
    const streamingText =
      (item.kind === "assistant" || item.kind === "thinking") && item.streaming;
    if (before && streamingText && item.text.length >= before.length) {
      const text = item.text.slice(before.length);
      this.remember(item);
      return { op: "append", id: item.id, text, version: item.version };
    }
    this.remember(item);
    return { op: "put", item };
  }

  private remember(item: Item): void {
    const length = item.kind === "assistant" || item.kind === "thinking" ? item.text.length : 0;
    this.posted.set(item.id, { version: item.version, length });
  }

  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString("base64");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "dist", "webview.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "media", "chat.css"));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>Claude</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
