/** The messages between the extension and its chat webview (postMessage only). */
import type { Item, SessionMeta } from "../model/conversation";

export interface TabInfo {
  sessionId: string;
  title: string;
  state: SessionMeta["state"];
}

/** An item changed: its full data, or (while a text streams) the text appended to it. */
export type ItemOp =
  | { op: "put"; item: Item }
  | { op: "append"; id: number; text: string; version: number };

export type ToWebview =
  | { type: "tabs"; tabs: TabInfo[]; active: string | null }
  | { type: "reset"; sessionId: string; meta: SessionMeta; items: Item[] }
  | { type: "ops"; sessionId: string; meta: SessionMeta | null; ops: ItemOp[] }
  | { type: "insert"; text: string }
  | { type: "bridge"; state: "stopped" | "starting" | "running" | "crashed"; message: string | null }
  | { type: "focus" };

export type FromWebview =
  | { type: "ready" }
  | { type: "send"; text: string }
  | { type: "interrupt" }
  | { type: "newChat" }
  | { type: "selectTab"; sessionId: string }
  | { type: "closeTab"; sessionId: string }
  | { type: "permission"; requestId: string; action: "allow" | "deny" | "always"; reason?: string }
  | { type: "answer"; requestId: string; answers: Record<string, string> }
  | { type: "showDiff"; requestId: string }
  | { type: "pickModel" }
  | { type: "pickMode" }
  | { type: "restart" };
