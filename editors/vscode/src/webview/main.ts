/**
 * The chat page inside the webview. It keeps a copy of the shown conversation, applies the
 * extension's changes as they come, and redraws in batches: once per animation frame, only
 * the items that changed; a streaming reply renders its finished Markdown blocks once and
 * re-renders only the block still being written.
 */
import type {
  AssistantItem,
  Item,
  NoticeItem,
  PermissionItem,
  SessionMeta,
  ThinkingItem,
  ToolItem,
  TurnItem,
  UserItem,
} from "../model/conversation";
import { renderMarkdown, stableBoundary } from "./markdown";
import type { FromWebview, ItemOp, TabInfo, ToWebview } from "./messages";

declare function acquireVsCodeApi(): { postMessage(message: FromWebview): void };
const vscode = acquireVsCodeApi();
const post = (message: FromWebview) => vscode.postMessage(message);

/** Counters a benchmark reads (`window.__claudeBridgeStats`). */
const stats = { frames: 0, ops: 0, messages: 0, renders: 0 };
(window as unknown as { __claudeBridgeStats: typeof stats }).__claudeBridgeStats = stats;

const EDIT_TOOLS = new Set(["Edit", "MultiEdit", "Write"]);

// ---- DOM helpers -------------------------------------------------------------------

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") el.className = v;
    else el.setAttribute(k, v);
  }
  for (const child of children) if (child != null) el.append(child);
  return el;
}

function button(label: string, cls: string, onClick: () => void, title?: string): HTMLButtonElement {
  const b = h("button", { class: cls, type: "button" }, label);
  if (title) b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

// ---- Layout ------------------------------------------------------------------------

const app = document.getElementById("app")!;
const tabsBar = h("div", { class: "tabs", role: "tablist" });
const metaBar = h("div", { class: "meta" });
const bridgeBanner = h("div", { class: "banner hidden" });
const log = h("div", { class: "log", "aria-live": "polite" });
const empty = h(
  "div",
  { class: "empty" },
  h("div", { class: "empty-title" }, "Claude Code, through claude-bridge"),
  h("div", { class: "empty-hint" }, "Ask anything about your workspace. Enter sends, Shift+Enter adds a line; sending while Claude works adds to the running turn."),
);
const prompt = h("textarea", {
  class: "prompt",
  rows: "3",
  placeholder: "Ask Claude…  (Enter to send, Shift+Enter for a new line)",
  "aria-label": "Message to Claude",
});
const sendButton = button("Send", "primary send", () => submit(), "Send (Enter)");
const stopButton = button("Interrupt", "secondary stop", () => post({ type: "interrupt" }), "Interrupt the running turn");
const composer = h("div", { class: "composer" }, prompt, h("div", { class: "composer-actions" }, stopButton, sendButton));
app.append(tabsBar, metaBar, bridgeBanner, log, composer);

prompt.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    submit();
  }
});

function submit(): void {
  const text = prompt.value;
  if (!text.trim()) return;
  prompt.value = "";
  stick = true;
  post({ type: "send", text });
}

let stick = true;
log.addEventListener("scroll", () => {
  stick = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
});

// ---- State ---------------------------------------------------------------------------

let sessionId: string | null = null;
let meta: SessionMeta | null = null;
const items = new Map<number, Item>();
const views = new Map<number, ItemView>();
const dirty = new Set<number>();
let metaDirty = false;
const queue: ToWebview[] = [];
let scheduled = false;

window.addEventListener("message", (event: MessageEvent<ToWebview>) => {
  stats.messages++;
  queue.push(event.data);
  if (!scheduled) {
    scheduled = true;
    requestAnimationFrame(frame);
  }
});

/** One animation frame: apply every queued change, then redraw what changed, once. */
function frame(): void {
  scheduled = false;
  stats.frames++;
  for (const message of queue.splice(0)) apply(message);
  if (metaDirty) drawMeta();
  metaDirty = false;
  for (const id of dirty) {
    const item = items.get(id);
    if (item) draw(item);
  }
  dirty.clear();
  empty.classList.toggle("hidden", items.size > 0);
  if (stick) log.scrollTop = log.scrollHeight;
}

function apply(message: ToWebview): void {
  switch (message.type) {
    case "tabs":
      drawTabs(message.tabs, message.active);
      return;
    case "reset":
      sessionId = message.sessionId;
      meta = message.meta;
      items.clear();
      views.clear();
      log.replaceChildren(empty);
      dirty.clear();
      for (const item of message.items) {
        items.set(item.id, item);
        dirty.add(item.id);
      }
      metaDirty = true;
      stick = true;
      return;
    case "ops":
      if (message.sessionId !== sessionId) return;
      if (message.meta) {
        meta = message.meta;
        metaDirty = true;
      }
      for (const op of message.ops) applyOp(op);
      return;
    case "insert":
      prompt.value += (prompt.value && !prompt.value.endsWith("\n") ? "\n" : "") + message.text;
      prompt.focus();
      prompt.setSelectionRange(prompt.value.length, prompt.value.length);
      return;
    case "bridge":
      drawBridge(message.state, message.message);
      return;
    case "focus":
      prompt.focus();
      return;
  }
}

function applyOp(op: ItemOp): void {
  stats.ops++;
  if (op.op === "put") {
    items.set(op.item.id, op.item);
    dirty.add(op.item.id);
    return;
  }
  const item = items.get(op.id);
  if (item && (item.kind === "assistant" || item.kind === "thinking")) {
    item.text += op.text;
    item.version = op.version;
    dirty.add(op.id);
  }
}

// ---- Tabs, meta, banner --------------------------------------------------------------

function drawTabs(tabs: TabInfo[], active: string | null): void {
  tabsBar.replaceChildren(
    ...tabs.map((tab) => {
      const el = h(
        "div",
        {
          class: `tab${tab.sessionId === active ? " active" : ""} state-${tab.state}`,
          role: "tab",
          "aria-selected": String(tab.sessionId === active),
          title: tab.title,
        },
        h("span", { class: "dot" }),
        h("span", { class: "tab-title" }, tab.title),
      );
      el.addEventListener("click", () => post({ type: "selectTab", sessionId: tab.sessionId }));
      const close = button("×", "tab-close", () => post({ type: "closeTab", sessionId: tab.sessionId }), "Close chat");
      close.addEventListener("click", (e) => e.stopPropagation());
      el.append(close);
      return el;
    }),
    button("+", "tab-new", () => post({ type: "newChat" }), "New chat"),
  );
  if (!tabs.length) {
    sessionId = null;
    meta = null;
    items.clear();
    views.clear();
    log.replaceChildren(empty);
    metaDirty = true;
  }
}

function drawMeta(): void {
  composer.classList.toggle("running", meta?.state === "running");
  stopButton.disabled = meta?.state !== "running";
  sendButton.textContent = meta?.state === "running" ? "Send to running turn" : "Send";
  if (!meta) {
    metaBar.replaceChildren();
    return;
  }
  const model = button(meta.model ?? "default model", "chip", () => post({ type: "pickModel" }), "Switch the model");
  const mode = button(meta.permissionMode ?? "default", "chip", () => post({ type: "pickMode" }), "Permission mode");
  const parts: (Node | string)[] = [
    h("span", { class: `state state-${meta.state}` }, meta.state),
    model,
    mode,
    h("span", { class: "cost", title: "What this chat cost so far" }, `$${meta.totalCostUsd.toFixed(4)}`),
  ];
  if (meta.contextPercent !== null || meta.contextTokens !== null) {
    const pct = meta.contextPercent ?? 0;
    const tokens = meta.contextTokens != null ? `${formatTokens(meta.contextTokens)} / ${formatTokens(meta.contextMax ?? 0)} tokens` : "";
    const bar = h("span", { class: "ctx-bar" }, h("span", { class: "ctx-fill" }));
    (bar.firstChild as HTMLElement).style.width = `${Math.min(100, Math.max(1, pct))}%`;
    parts.push(h("span", { class: "ctx", title: `Context window: ${tokens}` }, bar, `${pct}%`));
  }
  metaBar.replaceChildren(...parts);
}

function drawBridge(state: string, message: string | null): void {
  if (state !== "crashed") {
    bridgeBanner.classList.add("hidden");
    return;
  }
  bridgeBanner.replaceChildren(
    h("span", {}, message ?? "The bridge exited."),
    button("Restart", "primary", () => post({ type: "restart" })),
  );
  bridgeBanner.classList.remove("hidden");
}

function formatTokens(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 100_000 ? 0 : 1)}k` : String(n);
}

// ---- Items -----------------------------------------------------------------------------

interface ItemView {
  root: HTMLElement;
  /** Streaming Markdown: the finished blocks, rendered once, and the one being written. */
  frozen?: HTMLElement;
  tail?: HTMLElement;
  frozenLength?: number;
  fenceOpen?: boolean;
  renderedText?: string;
}

function draw(item: Item): void {
  stats.renders++;
  let view = views.get(item.id);
  if (!view) {
    view = { root: h("div", { class: `item ${item.kind}` }) };
    views.set(item.id, view);
    log.append(view.root);
  }
  switch (item.kind) {
    case "user":
      return drawUser(view, item);
    case "assistant":
      return drawMarkdown(view, item);
    case "thinking":
      return drawThinking(view, item);
    case "tool":
      return drawTool(view, item);
    case "permission":
      return drawPermission(view, item);
    case "notice":
      return drawNotice(view, item);
    case "turn":
      return drawTurn(view, item);
  }
}

function drawUser(view: ItemView, item: UserItem): void {
  view.root.replaceChildren(
    h("div", { class: "who" }, item.live ? "You · sent into the running turn" : "You"),
    h("div", { class: "bubble" }, item.text),
  );
}

/** Render only what changed: finished blocks are appended once, the last one re-rendered. */
function renderStreaming(view: ItemView, text: string, streaming: boolean, into: HTMLElement): void {
  if (!view.frozen || !view.tail || (view.renderedText !== undefined && !text.startsWith(view.renderedText.slice(0, view.frozenLength)))) {
    view.frozen = h("div", { class: "md" });
    view.tail = h("div", { class: "md tail" });
    view.frozenLength = 0;
    view.fenceOpen = false;
    into.replaceChildren(view.frozen, view.tail);
  }
  if (streaming) {
    const { end, fenceOpen } = stableBoundary(text, view.frozenLength!, view.fenceOpen!);
    if (end > view.frozenLength!) {
      const block = h("div", { class: "block" });
      block.innerHTML = renderMarkdown(text.slice(view.frozenLength, end));
      view.frozen.append(block);
      view.frozenLength = end;
      view.fenceOpen = fenceOpen;
    }
  }
  const rest = text.slice(view.frozenLength);
  view.tail.innerHTML = rest ? renderMarkdown(rest) : "";
  view.tail.classList.toggle("streaming", streaming);
  view.renderedText = text;
}

function drawMarkdown(view: ItemView, item: AssistantItem): void {
  if (!view.root.firstChild) {
    view.root.append(h("div", { class: "who" }, "Claude"), h("div", { class: "body" }));
  }
  const body = view.root.lastElementChild as HTMLElement;
  renderStreaming(view, item.text, item.streaming, body);
  view.root.classList.toggle("aborted", item.aborted);
}

function drawThinking(view: ItemView, item: ThinkingItem): void {
  let details = view.root.querySelector("details");
  if (!details) {
    details = h("details", { class: "card thinking-card" }, h("summary", {}, "Thinking"), h("div", { class: "card-body" }));
    view.root.append(details);
  }
  (details.querySelector("summary") as HTMLElement).textContent = item.streaming ? "Thinking…" : "Thinking";
  renderStreaming(view, item.text, item.streaming, details.querySelector(".card-body") as HTMLElement);
}

/** `path` relative to the session's directory when it is inside it. */
function relative(path: string): string {
  const cwd = meta?.cwd;
  return cwd && path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path;
}

function toolSummary(name: string, input: Record<string, unknown>): string {
  const pick = (k: string) => (typeof input[k] === "string" ? relative(input[k] as string) : "");
  const detail = pick("command") || pick("file_path") || pick("path") || pick("pattern") || pick("url") || pick("description");
  return detail ? `${name}  ${detail.split("\n")[0]}` : name;
}

function drawTool(view: ItemView, item: ToolItem): void {
  const open = view.root.querySelector("details")?.open ?? false;
  const status = item.result === null ? "running" : item.isError ? "error" : "done";
  const details = h(
    "details",
    { class: `card tool-card ${status}` },
    h("summary", {}, h("span", { class: `badge ${status}` }, status === "running" ? "…" : status === "error" ? "✗" : "✓"), h("span", { class: "tool-name" }, toolSummary(item.name, item.input))),
    h("div", { class: "card-body" }, h("div", { class: "label" }, "Input"), h("pre", { class: "json" }, JSON.stringify(item.input, null, 2)), item.result !== null ? h("div", { class: "label" }, item.isError ? "Error" : "Result") : null, item.result !== null ? h("pre", { class: "result" }, item.result.length > 20_000 ? `${item.result.slice(0, 20_000)}\n…` : item.result) : null),
  );
  details.open = open;
  view.root.replaceChildren(details);
}

interface Question {
  question: string;
  header?: string;
  options?: { label: string; description?: string }[];
  multiSelect?: boolean;
}

function drawPermission(view: ItemView, item: PermissionItem): void {
  const req = item.request;
  const input = req.input as Record<string, unknown>;
  const name = req.displayName ?? req.toolName;
  const card = h("div", { class: `card permission-card ${item.state}` });
  if (req.requiresUserInteraction && Array.isArray(input.questions)) {
    card.append(h("div", { class: "perm-title" }, "Claude asks"));
    drawQuestions(card, item, input.questions as Question[]);
  } else {
    card.append(h("div", { class: "perm-title" }, `${name} wants to run`));
    if (req.description && req.description !== preview(input)) card.append(h("div", { class: "perm-desc" }, req.description));
    card.append(h("pre", { class: "perm-input" }, preview(input)));
    if (req.blockedPath) card.append(h("div", { class: "perm-desc" }, `Outside the allowed directories: ${req.blockedPath}`));
    if (item.state === "pending") {
      const reason = h("input", { class: "reason", type: "text", placeholder: "Reason for denying (optional)", "aria-label": "Reason for denying" });
      const actions = h("div", { class: "actions" });
      actions.append(button(`Allow ${name}`, "primary allow", () => post({ type: "permission", requestId: req.requestId, action: "allow" })));
      if (req.suggestions && req.suggestions.length) {
        actions.append(button(`Always allow ${describeRule(req)}`, "secondary always", () => post({ type: "permission", requestId: req.requestId, action: "always" }), "Allow now and add the rule the CLI suggested"));
      }
      actions.append(button("Deny", "secondary deny", () => post({ type: "permission", requestId: req.requestId, action: "deny", reason: reason.value })));
      if (EDIT_TOOLS.has(req.toolName)) {
        actions.append(button("Show diff", "link diff", () => post({ type: "showDiff", requestId: req.requestId }), "Open the file now vs after the change"));
      }
      card.append(actions, reason);
    }
  }
  if (item.state !== "pending") card.append(h("div", { class: `perm-outcome ${item.state}` }, item.outcome ?? item.state));
  view.root.replaceChildren(card);
}

function preview(input: Record<string, unknown>): string {
  if (typeof input.command === "string") return input.command;
  if (typeof input.file_path === "string") return relative(input.file_path);
  return JSON.stringify(input, null, 2);
}

function describeRule(req: PermissionItem["request"]): string {
  for (const s of req.suggestions ?? []) {
    const rules = (s as { rules?: { toolName?: string; ruleContent?: string }[] }).rules;
    if (Array.isArray(rules) && rules[0]?.toolName) {
      const content = rules[0].ruleContent;
      const short = content && content.length > 40 ? `${content.slice(0, 39)}…` : content;
      return short ? `${rules[0].toolName}(${short})` : rules[0].toolName;
    }
    const mode = (s as { mode?: string }).mode;
    if (mode === "acceptEdits") return "edits (accept edits mode)";
    if (mode) return `(${mode} mode)`;
  }
  return req.toolName;
}

function drawQuestions(card: HTMLElement, item: PermissionItem, questions: Question[]): void {
  const answers: Record<string, string[]> = {};
  const pending = item.state === "pending";
  const submit = button("Answer", "primary answer", () => {
    const out: Record<string, string> = {};
    for (const q of questions) out[q.question] = (answers[q.question] ?? []).join(", ");
    post({ type: "answer", requestId: item.request.requestId, answers: out });
  });
  const refresh = () => {
    submit.disabled = questions.some((q) => !(answers[q.question]?.length));
  };
  for (const q of questions) {
    const box = h("div", { class: "question" }, q.header ? h("div", { class: "q-header" }, q.header) : null, h("div", { class: "q-text" }, q.question));
    const options = h("div", { class: "options" });
    for (const option of q.options ?? []) {
      const b = button(option.label, "option", () => {
        const chosen = answers[q.question] ?? [];
        if (q.multiSelect) {
          answers[q.question] = chosen.includes(option.label) ? chosen.filter((l) => l !== option.label) : [...chosen, option.label];
        } else {
          answers[q.question] = [option.label];
          for (const other of options.querySelectorAll(".option")) other.classList.remove("chosen");
        }
        b.classList.toggle("chosen", answers[q.question].includes(option.label));
        refresh();
        if (!q.multiSelect && questions.length === 1) submit.click();
      }, option.description);
      b.disabled = !pending;
      options.append(b);
    }
    box.append(options);
    card.append(box);
  }
  if (pending) {
    refresh();
    const reason = h("input", { class: "reason", type: "text", placeholder: "Reason for declining (optional)" });
    card.append(h("div", { class: "actions" }, submit, button("Deny", "secondary deny", () => post({ type: "permission", requestId: item.request.requestId, action: "deny", reason: reason.value }))), reason);
  }
}

function drawNotice(view: ItemView, item: NoticeItem): void {
  view.root.className = `item notice ${item.level}`;
  view.root.replaceChildren(h("span", {}, item.text));
  if (item.restart) view.root.append(button("Restart", "primary restart", () => post({ type: "restart" })));
}

function drawTurn(view: ItemView, item: TurnItem): void {
  const parts = [
    item.interrupted ? "interrupted" : item.isError ? "ended with an error" : null,
    `$${item.costUsd.toFixed(4)}`,
    `${(item.durationMs / 1000).toFixed(1)} s`,
    item.inputTokens != null && item.outputTokens != null ? `${item.inputTokens} in · ${item.outputTokens} out` : null,
  ].filter(Boolean);
  view.root.replaceChildren(h("span", {}, parts.join(" · ")));
}

// Links: open through the extension host's default handling (the webview blocks navigation).
log.addEventListener("click", (e) => {
  const a = (e.target as HTMLElement).closest("a");
  if (a) e.preventDefault();
});

log.append(empty);
post({ type: "ready" });
