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
import { highlightCode, nextBoundary, renderMarkdown } from "./markdown";
import type { FromWebview, ItemOp, TabInfo, ToWebview } from "./messages";

declare function acquireVsCodeApi(): { postMessage(message: FromWebview): void };
const vscode = acquireVsCodeApi();
const post = (message: FromWebview) => vscode.postMessage(message);

/** Counters a benchmark reads (`window.__claudeBridgeStats`). */
const stats = {
  frames: 0,
  /** The longest and the total time spent in one animation frame's redraw, in ms. */
  longestFrameMs: 0,
  frameMs: 0,
  /** Per phase of the longest frame: apply messages, draw items, scroll (layout). */
  phases: { apply: 0, draw: 0, scroll: 0 },
  ops: 0,
  messages: 0,
  renders: 0,
  /** The last assistant message as the page holds it. */
  lastReply(): { text: string; streaming: boolean } | null {
    const replies = [...items.values()].filter((i): i is AssistantItem => i.kind === "assistant");
    const last = replies.at(-1);
    return last ? { text: last.text, streaming: last.streaming } : null;
  },
};
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
/** Prompts waiting for an answer stay here, above the prompt box, until answered. */
const waiting = h("div", { class: "waiting", "aria-live": "assertive" });
app.append(tabsBar, metaBar, bridgeBanner, log, waiting, composer);

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

/** Follow the end of the chat, until the user scrolls away from it (and again once back). */
let stick = true;
let userScroll = false;
for (const kind of ["wheel", "touchmove", "pointerdown", "keydown"]) {
  log.addEventListener(kind, () => (userScroll = true), { passive: true });
}
log.addEventListener("scroll", () => {
  if (userScroll) stick = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  userScroll = false;
});

/** Scroll to the end if following it; again next frame while sizes settle (off-screen
 * blocks are laid out with an estimated size until they come into view). */
function followEnd(tries = 3): void {
  if (!stick) return;
  log.scrollTop = log.scrollHeight;
  if (tries > 0 && log.scrollHeight - log.scrollTop - log.clientHeight > 1) {
    requestAnimationFrame(() => followEnd(tries - 1));
  }
}
new ResizeObserver(() => followEnd()).observe(log);

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
  const started = performance.now();
  redraw();
  const took = performance.now() - started;
  stats.frameMs += took;
  if (took > stats.longestFrameMs) stats.longestFrameMs = took;
}

function redraw(): void {
  scheduled = false;
  stats.frames++;
  const t0 = performance.now();
  for (const message of queue.splice(0)) apply(message);
  const t1 = performance.now();
  if (metaDirty) drawMeta();
  metaDirty = false;
  const unfinished: number[] = [];
  for (const id of dirty) {
    const item = items.get(id);
    if (item && !draw(item)) unfinished.push(id);
  }
  dirty.clear();
  highlightSome(performance.now() + 4);
  // Work left over (the frame's budget ran out): continue in the next frame.
  for (const id of unfinished) dirty.add(id);
  if ((unfinished.length || toHighlight.length) && !scheduled) {
    scheduled = true;
    requestAnimationFrame(frame);
  }
  empty.classList.toggle("hidden", items.size > 0);
  const t2 = performance.now();
  followEnd(1);
  const t3 = performance.now();
  if (t3 - t0 > stats.phases.apply + stats.phases.draw + stats.phases.scroll) {
    stats.phases = { apply: t1 - t0, draw: t2 - t1, scroll: t3 - t2 };
  }
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
      waiting.replaceChildren();
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
    waiting.replaceChildren();
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
  /** The text rendered into `frozen`. */
  frozenText?: string;
  fenceOpen?: boolean;
  /** What `tail` shows (as Markdown or plain text). */
  tailText?: string;
  /** The group of finished blocks being filled. */
  group?: HTMLElement;
  /** A pending permission prompt's card, shown in the waiting area. */
  waiting?: HTMLElement;
}

/** Draw one item; false when it has more to draw in the next frame. */
function draw(item: Item): boolean {
  stats.renders++;
  let view = views.get(item.id);
  if (!view) {
    view = { root: h("div", { class: `item ${item.kind}` }) };
    views.set(item.id, view);
    log.append(view.root);
  }
  switch (item.kind) {
    case "assistant":
      return drawMarkdown(view, item);
    case "thinking":
      return drawThinking(view, item);
    case "user":
      drawUser(view, item);
      return true;
    case "tool":
      drawTool(view, item);
      return true;
    case "permission":
      drawPermission(view, item);
      return true;
    case "notice":
      drawNotice(view, item);
      return true;
    case "turn":
      drawTurn(view, item);
      return true;
  }
}

function drawUser(view: ItemView, item: UserItem): void {
  view.root.replaceChildren(
    h("div", { class: "who" }, item.live ? "You · sent into the running turn" : "You"),
    h("div", { class: "bubble md" }),
  );
  (view.root.lastElementChild as HTMLElement).innerHTML = renderMarkdown(item.text);
}

/** Code blocks are coloured when they come on screen, a few per frame. */
const toHighlight: HTMLElement[] = [];
const onScreen = new IntersectionObserver(
  (entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      onScreen.unobserve(entry.target);
      toHighlight.push(entry.target as HTMLElement);
    }
    if (toHighlight.length && !scheduled) {
      scheduled = true;
      requestAnimationFrame(frame);
    }
  },
  { root: log, rootMargin: "400px 0px" },
);

function highlightSome(deadline: number): void {
  while (toHighlight.length && performance.now() < deadline) highlightCode(toHighlight.shift()!);
}

const BLOCKS_PER_GROUP = 24;

/** Time one frame may spend turning finished Markdown blocks into HTML. */
const FRAME_BUDGET_MS = 10;
/** A block still being written longer than this shows as plain text until it is complete. */
const LIVE_MARKDOWN_LIMIT = 4_000;

/**
 * Render a streaming text without redoing what is done: each finished block (up to a blank
 * line outside code fences) is rendered once and appended; only the block being written is
 * re-rendered. Within FRAME_BUDGET_MS per frame; returns false when work is left for the next.
 */
function renderStreaming(view: ItemView, text: string, streaming: boolean, into: HTMLElement): boolean {
  if (!view.frozen || !view.tail || !text.startsWith(view.frozenText ?? "")) {
    view.frozen = h("div", { class: "md" });
    view.tail = h("div", { class: "md tail" });
    view.frozenLength = 0;
    view.frozenText = "";
    view.group = undefined;
    view.fenceOpen = false;
    view.tailText = undefined;
    into.replaceChildren(view.frozen, view.tail);
  }
  const deadline = performance.now() + FRAME_BUDGET_MS;
  let next = nextBoundary(text, view.frozenLength!, view.fenceOpen!);
  while (next.end > 0 && performance.now() < deadline) {
    const block = h("div", { class: "block" });
    block.innerHTML = renderMarkdown(text.slice(view.frozenLength, next.end), true);
    for (const code of block.querySelectorAll<HTMLElement>("code[data-highlight]")) onScreen.observe(code);
    // Blocks go in groups, so that a frame's layout walks a few groups, not every block.
    if (!view.group || view.group.childElementCount >= BLOCKS_PER_GROUP) {
      view.group = h("div", { class: "group" });
      view.frozen.append(view.group);
    }
    view.group.append(block);
    view.frozenLength = next.end;
    view.fenceOpen = next.fenceOpen;
    next = nextBoundary(text, next.end, next.fenceOpen);
  }
  view.frozenText = text.slice(0, view.frozenLength);
  const caughtUp = next.end < 0;
  const remaining = text.length - view.frozenLength!;
  const asMarkdown = caughtUp && (!streaming || remaining <= LIVE_MARKDOWN_LIMIT);
  // Behind (finished blocks wait for the next frames): a bounded preview, as plain text, so
  // that no frame lays out an unbounded text.
  const rest = asMarkdown ? text.slice(view.frozenLength) : text.slice(view.frozenLength, view.frozenLength! + LIVE_MARKDOWN_LIMIT);
  const key = `${asMarkdown ? "md" : "txt"}:${rest}`;
  if (view.tailText !== key) {
    if (asMarkdown) view.tail.innerHTML = rest ? renderMarkdown(rest) : "";
    else view.tail.textContent = rest;
    view.tailText = key;
  }
  view.tail.classList.toggle("streaming", streaming);
  view.tail.classList.toggle("plain", !asMarkdown);
  return caughtUp;
}

function drawMarkdown(view: ItemView, item: AssistantItem): boolean {
  if (!view.root.firstChild) {
    view.root.append(h("div", { class: "who" }, "Claude"), h("div", { class: "body" }));
  }
  const body = view.root.lastElementChild as HTMLElement;
  view.root.classList.toggle("aborted", item.aborted);
  return renderStreaming(view, item.text, item.streaming, body);
}

function drawThinking(view: ItemView, item: ThinkingItem): boolean {
  let details = view.root.querySelector("details");
  if (!details) {
    details = h("details", { class: "card thinking-card" }, h("summary", {}, "Thinking"), h("div", { class: "card-body" }));
    view.root.append(details);
  }
  (details.querySelector("summary") as HTMLElement).textContent = item.streaming ? "Thinking…" : "Thinking";
  return renderStreaming(view, item.text, item.streaming, details.querySelector(".card-body") as HTMLElement);
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
  // Pending: the card waits above the prompt box, whatever streams meanwhile; answered: it
  // takes its place in the conversation.
  if (item.state === "pending") {
    view.waiting?.remove();
    view.waiting = card;
    waiting.append(card);
    view.root.replaceChildren();
  } else {
    view.waiting?.remove();
    view.waiting = undefined;
    view.root.replaceChildren(card);
  }
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
    if (mode === "acceptEdits") return "edits";
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
