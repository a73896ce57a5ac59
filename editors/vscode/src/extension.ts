/**
 * The extension: wires `Sessions` (client + model) to VS Code — the chat view, commands,
 * the status bar, the output channel, settings and native diffs — and leaves nothing
 * running when it is deactivated.
 */
import * as path from "node:path";
import * as vscode from "vscode";
import { ChatView } from "./chat/chatView";
import { PERMISSION_MODES, PermissionMode, Sessions, messageOf } from "./chat/sessions";
import { EDIT_TOOLS, proposedChange } from "./diff";
import type { Conversation } from "./model/conversation";
import type { PermissionDecision } from "./protocol";
import type { FromWebview } from "./webview/messages";

const PROPOSED_SCHEME = "claude-bridge-proposed";

let sessions: Sessions | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("Claude Bridge", { log: true });
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.name = "Claude Bridge";
  status.command = "claudeBridge.newChat";
  const proposed = new Map<string, string>();
  const proposedEmitter = new vscode.EventEmitter<vscode.Uri>();

  const config = () => vscode.workspace.getConfiguration("claudeBridge");
  const workspaceDir = () =>
    vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ??
    (vscode.window.activeTextEditor?.document.uri.scheme === "file"
      ? path.dirname(vscode.window.activeTextEditor.document.uri.fsPath)
      : process.env.HOME ?? process.cwd());

  let view: ChatView | undefined;
  const store = new Sessions(
    {
      client: () => {
        const warm = config().get<number>("warmPool", 1);
        return {
          command: config().get<string[]>("command", ["claude-bridge"]),
          cwd: workspaceDir(),
          clientName: "claude-bridge-vscode",
          clientVersion: String(context.extension.packageJSON.version ?? ""),
          initializationOptions: warm > 0 ? { warmPool: { size: warm } } : {},
        };
      },
      createDefaults: () => ({
        cwd: workspaceDir(),
        model: config().get<string | null>("model", null) || null,
        permissionMode: config().get<PermissionMode>("permissionMode", "default"),
      }),
    },
    {
      changed: (conversation) => {
        view?.changed(conversation);
        updateStatus();
      },
      tabsChanged: () => {
        view?.tabsChanged();
        updateStatus();
      },
      bridgeChanged: (state, reason) => {
        const message =
          reason && /ENOENT/.test(reason)
            ? `${reason}. Set "claudeBridge.command" to the bridge's full path, for example ["/path/to/venv/bin/claude-bridge"].`
            : reason;
        view?.post({ type: "bridge", state, message });
        if (state === "crashed" && message) {
          output.error(message);
          // The chat shows it with its Restart button; a notification only when it is hidden.
          if (!view?.visible) {
            void vscode.window.showErrorMessage(message, "Restart").then((choice) => {
              if (choice === "Restart") void vscode.commands.executeCommand("claudeBridge.restart");
            });
          }
        }
        updateStatus();
      },
      log: (p) => {
        const text = `[bridge] ${p.message}`;
        if (p.type === 1) output.error(text);
        else if (p.type === 2) output.warn(text);
        else if (p.type === 3) output.info(text);
        else output.debug(text);
      },
    },
  );
  sessions = store;

  function updateStatus(): void {
    const c = store.active;
    if (store.bridgeState === "crashed") {
      status.text = "$(error) Claude: bridge exited";
      status.command = "claudeBridge.restart";
      status.tooltip = "The bridge exited: click to restart it";
    } else if (!c) {
      status.text = "$(comment-discussion) Claude";
      status.command = "claudeBridge.newChat";
      status.tooltip = "Claude Bridge: new chat";
    } else {
      const icon = c.meta.state === "running" ? "$(sync~spin)" : c.meta.state === "exited" ? "$(debug-disconnect)" : "$(comment-discussion)";
      const model = c.meta.model ?? "default model";
      status.text = `${icon} ${model} · ${c.meta.state} · $${c.meta.totalCostUsd.toFixed(4)}`;
      status.command = c.meta.state === "running" ? "claudeBridge.interrupt" : "claudeBridge.chat.focus";
      status.tooltip = `Claude Bridge — ${c.meta.title}\nPermission mode: ${c.meta.permissionMode ?? "default"}`;
    }
    status.show();
  }

  async function reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${ChatView.viewId}.focus`);
    view?.reveal();
  }

  async function guard<T>(what: string, run: () => Promise<T>): Promise<T | undefined> {
    try {
      return await run();
    } catch (error) {
      const message = `${what}: ${messageOf(error)}`;
      output.error(message);
      void vscode.window.showErrorMessage(message);
      return undefined;
    }
  }

  async function showDiff(conversation: Conversation, requestId: string): Promise<void> {
    const item = conversation.permission(requestId);
    if (!item || !EDIT_TOOLS.has(item.request.toolName)) return;
    const change = await proposedChange(item.request.toolName, item.request.input as Record<string, unknown>);
    const base = path.basename(change.filePath);
    const after = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: change.filePath, query: `after-${requestId}` });
    proposed.set(after.toString(), change.after);
    proposedEmitter.fire(after);
    let before = vscode.Uri.file(change.filePath);
    if (!change.exists) {
      before = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: change.filePath, query: `before-${requestId}` });
      proposed.set(before.toString(), "");
    }
    await vscode.commands.executeCommand(
      "vscode.diff",
      before,
      after,
      `${base}: now ↔ after ${item.request.toolName} (proposed)`,
      { preview: true },
    );
  }

  function decisionFor(
    conversation: Conversation,
    message: Extract<FromWebview, { type: "permission" }>,
  ): PermissionDecision | undefined {
    const item = conversation.permission(message.requestId);
    if (!item) return undefined;
    if (message.action === "deny") {
      return { behavior: "deny", message: message.reason?.trim() || "The user denied this." };
    }
    const decision: PermissionDecision = { behavior: "allow", updatedInput: item.request.input };
    if (message.action === "always") decision.updatedPermissions = item.request.suggestions ?? [];
    return decision;
  }

  async function onMessage(message: FromWebview): Promise<void> {
    const active = store.active;
    switch (message.type) {
      case "send":
        await guard("Send failed", () => store.send(message.text));
        return;
      case "interrupt":
        await guard("Interrupt failed", () => store.interrupt());
        return;
      case "newChat":
        await vscode.commands.executeCommand("claudeBridge.newChat");
        return;
      case "selectTab":
        store.select(message.sessionId);
        return;
      case "closeTab":
        await guard("Close failed", () => store.closeSession(message.sessionId));
        return;
      case "permission": {
        if (!active) return;
        const decision = decisionFor(active, message);
        if (decision) await store.answerPermission(active.meta.sessionId, message.requestId, decision);
        return;
      }
      case "answer": {
        const item = active?.permission(message.requestId);
        if (!active || !item) return;
        await store.answerPermission(active.meta.sessionId, message.requestId, {
          behavior: "allow",
          updatedInput: { ...(item.request.input as object), answers: message.answers },
        });
        return;
      }
      case "showDiff":
        if (active) await guard("Cannot show the diff", () => showDiff(active, message.requestId));
        return;
      case "pickModel":
        await vscode.commands.executeCommand("claudeBridge.switchModel");
        return;
      case "pickMode":
        await vscode.commands.executeCommand("claudeBridge.setPermissionMode");
        return;
      case "restart":
        await guard("Could not restart", () => store.recover());
        return;
      default:
        return;
    }
  }

  view = new ChatView(context.extensionUri, store, { onMessage });

  const command = (id: string, run: (...args: any[]) => unknown) =>
    vscode.commands.registerCommand(id, run);

  context.subscriptions.push(
    output,
    status,
    view,
    proposedEmitter,
    vscode.window.registerWebviewViewProvider(ChatView.viewId, view, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, {
      onDidChange: proposedEmitter.event,
      provideTextDocumentContent: (uri) => proposed.get(uri.toString()) ?? "",
    }),
    command("claudeBridge.newChat", async () => {
      await reveal();
      return guard("Could not start a chat", async () => (await store.newChat()).meta.sessionId);
    }),
    command("claudeBridge.send", async (text?: unknown) => {
      let prompt = typeof text === "string" ? text : undefined;
      if (prompt === undefined) {
        prompt = await vscode.window.showInputBox({ prompt: "Message to Claude", ignoreFocusOut: true });
      }
      if (!prompt?.trim()) return;
      await reveal();
      await guard("Send failed", () => store.send(prompt!));
    }),
    command("claudeBridge.interrupt", () => guard("Interrupt failed", () => store.interrupt())),
    command("claudeBridge.switchModel", async (model?: unknown) => {
      const c = store.active;
      if (!c) return void vscode.window.showInformationMessage("Start a chat first.");
      let choice = typeof model === "string" ? model : undefined;
      if (choice === undefined) {
        const items = c.meta.models.map((m) => ({
          label: m.displayName || m.value,
          description: m.value === c.meta.model ? "current" : m.value,
          detail: m.description,
          value: m.value,
        }));
        const picked = await vscode.window.showQuickPick(items, { placeHolder: "Model for the next turns" });
        if (!picked) return;
        choice = picked.value;
      }
      await guard("Could not switch the model", () => store.setModel(choice === "default" ? null : choice!));
    }),
    command("claudeBridge.setPermissionMode", async (mode?: unknown) => {
      if (!store.active) return void vscode.window.showInformationMessage("Start a chat first.");
      let choice = typeof mode === "string" ? (mode as PermissionMode) : undefined;
      if (choice === undefined) {
        const current = store.active.meta.permissionMode;
        const picked = await vscode.window.showQuickPick(
          PERMISSION_MODES.map((m) => ({ label: m, description: m === current ? "current" : undefined })),
          { placeHolder: "Permission mode" },
        );
        if (!picked) return;
        choice = picked.label as PermissionMode;
      }
      await guard("Could not set the permission mode", () => store.setPermissionMode(choice!));
    }),
    command("claudeBridge.resume", async (claudeSessionId?: unknown) => {
      const entries = await guard("Could not list past conversations", () => store.history());
      if (!entries) return;
      let entry = typeof claudeSessionId === "string" ? entries.find((e) => e.claudeSessionId === claudeSessionId) : undefined;
      if (!entry) {
        if (!entries.length) return void vscode.window.showInformationMessage("No past conversations in this workspace.");
        const picked = await vscode.window.showQuickPick(
          entries.map((e) => ({
            label: e.customTitle || e.title || e.firstPrompt || e.claudeSessionId,
            description: `${new Date(e.lastModified).toLocaleString()} · ${e.messageCount} messages${e.gitBranch ? ` · ${e.gitBranch}` : ""}`,
            detail: e.summary ?? e.firstPrompt ?? undefined,
            entry: e,
          })),
          { placeHolder: "Resume a conversation", matchOnDescription: true, matchOnDetail: true },
        );
        if (!picked) return;
        entry = picked.entry;
      }
      await reveal();
      const chosen = entry;
      return guard("Could not resume", async () => (await store.resume(chosen)).meta.sessionId);
    }),
    command("claudeBridge.addSelection", async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) return;
      const doc = editor.document;
      const sel = editor.selection;
      const text = sel.isEmpty ? doc.lineAt(sel.active.line).text : doc.getText(sel);
      const first = sel.start.line + 1;
      const last = sel.isEmpty ? first : sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1;
      const file = vscode.workspace.asRelativePath(doc.uri, false);
      const range = first === last ? `${first}` : `${first}-${last}`;
      const fence = text.includes("```") ? "````" : "```";
      const snippet = `${file}:${range}\n${fence}${doc.languageId}\n${text}\n${fence}\n`;
      await reveal();
      await view?.whenReady();
      view?.post({ type: "insert", text: snippet });
      return snippet;
    }),
    command("claudeBridge.closeSession", () => guard("Close failed", () => store.closeSession())),
    command("claudeBridge.restart", async () => {
      await reveal();
      await guard("Could not restart the bridge", async () => {
        if (store.bridgeState === "crashed") await store.recover();
        else await store.restart();
      });
    }),
    command("claudeBridge.showLog", () => output.show()),
  );
  updateStatus();
}

export async function deactivate(): Promise<void> {
  const store = sessions;
  sessions = undefined;
  await store?.dispose();
}
