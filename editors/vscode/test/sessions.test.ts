/**
 * The extension's chats (`Sessions`: client + one model per session, without the UI) against
 * the real bridge and the real CLI: prompts answered in the chat (at once, or late after
 * the bridge was told to wait), resuming a past conversation, closing, a crashed bridge
 * shown with a restart, and nothing left running.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { BridgeState, Sessions } from "../src/chat/sessions";
import type { Conversation, PermissionItem } from "../src/model/conversation";
import { alive, bridgeCommand, eventually, projectDir, realCli } from "./helpers";

function makeSessions(cwd: string, inlineAnswerMs?: number) {
  const states: BridgeState[] = [];
  const sessions = new Sessions(
    {
      client: () => ({ command: [...bridgeCommand(), "--claude-path", realCli()] }),
      createDefaults: () => ({ cwd }),
      inlineAnswerMs,
    },
    {
      changed: () => undefined,
      tabsChanged: () => undefined,
      bridgeChanged: (state) => states.push(state),
      log: () => undefined,
    },
  );
  return { sessions, states };
}

async function pendingPrompt(conversation: Conversation): Promise<PermissionItem> {
  await eventually(() => conversation.pendingPermissions.length > 0, "a permission prompt in the chat", 60_000);
  return conversation.pendingPermissions[0];
}

describe("the chats of a window", () => {
  test("a prompt answered in the chat at once lets the CLI write", async () => {
    const cwd = projectDir();
    const { sessions } = makeSessions(cwd);
    try {
      const chat = await sessions.newChat();
      await sessions.send("please USE_WRITE");
      const prompt = await pendingPrompt(chat);
      assert.equal(prompt.request.toolName, "Write");
      await sessions.answerPermission(chat.meta.sessionId, prompt.request.requestId, {
        behavior: "allow",
        updatedInput: prompt.request.input,
      });
      await sessions.turnDone();
      assert.equal(readFileSync(join(cwd, "written.txt"), "utf8"), "written by claude\n");
      assert.equal(chat.permission(prompt.request.requestId)?.state, "allowed");
      assert.equal(chat.meta.state, "idle");
    } finally {
      await sessions.dispose();
    }
  });

  test("a prompt left open is deferred, and the late answer still counts", async () => {
    const cwd = projectDir();
    const { sessions } = makeSessions(cwd, 100);
    try {
      const chat = await sessions.newChat();
      await sessions.send("please USE_WRITE");
      const prompt = await pendingPrompt(chat);
      // Past the inline window: the bridge holds the request as deferred.
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(existsSync(join(cwd, "written.txt")), false);
      await sessions.answerPermission(chat.meta.sessionId, prompt.request.requestId, {
        behavior: "deny",
        message: "not now",
      });
      await sessions.turnDone();
      assert.equal(existsSync(join(cwd, "written.txt")), false);
      const tool = chat.items.find((i) => i.kind === "tool");
      assert.ok(tool?.kind === "tool" && tool.isError && /not now/.test(tool.result ?? ""));
    } finally {
      await sessions.dispose();
    }
  });

  test("resume replays a past conversation into a new chat that goes on", async () => {
    const cwd = projectDir();
    const { sessions } = makeSessions(cwd);
    try {
      const first = await sessions.newChat();
      await sessions.send("remember the word teapot");
      await sessions.turnDone();
      const claudeSessionId = first.meta.claudeSessionId;
      assert.ok(claudeSessionId);
      await sessions.closeSession(first.meta.sessionId);
      const entries = await sessions.history();
      const entry = entries.find((e) => e.claudeSessionId === claudeSessionId);
      assert.ok(entry, "the conversation is in the workspace's history");
      const resumed = await sessions.resume(entry);
      const texts = resumed.items.map((i) => (i.kind === "user" || i.kind === "assistant" ? `${i.kind}: ${i.text}` : i.kind));
      assert.deepEqual(texts.slice(0, 2), ["user: remember the word teapot", "assistant: Echo: remember the word teapot"]);
      assert.equal(sessions.active, resumed);
      await sessions.send("and now?");
      await sessions.turnDone();
      assert.equal(resumed.lastAssistantText, "Echo: and now?");
    } finally {
      await sessions.dispose();
    }
  });

  test("closing a chat ends its claude process and removes its tab", async () => {
    const { sessions } = makeSessions(projectDir());
    try {
      const chat = await sessions.newChat();
      const pid = chat.meta.pid!;
      await sessions.closeSession();
      assert.equal(sessions.conversations.size, 0);
      assert.equal(alive(pid), false);
    } finally {
      await sessions.dispose();
    }
  });

  test("a crashed bridge is shown in the chat, whose restart resumes the conversation", async () => {
    const { sessions, states } = makeSessions(projectDir());
    try {
      const chat = await sessions.newChat();
      await sessions.send("before the crash");
      await sessions.turnDone();
      const claudeSessionId = chat.meta.claudeSessionId;
      assert.ok(claudeSessionId);
      const costBefore = chat.meta.totalCostUsd;
      assert.ok(costBefore > 0);
      const bridgePid = sessions.bridgePid!;
      const cliPid = chat.meta.pid!;
      process.kill(bridgePid, "SIGKILL");
      await eventually(() => sessions.bridgeState === "crashed", "the crash is noticed");
      assert.equal(chat.meta.state, "exited");
      const notice = chat.items.at(-1);
      assert.ok(notice?.kind === "notice" && notice.restart && /bridge exited unexpectedly/.test(notice.text));
      await eventually(() => !alive(cliPid), "the orphaned CLI leaves");
      // The chat's restart button: a new bridge, the same tab, the conversation resumed.
      await sessions.recover();
      assert.equal(states.at(-1), "running");
      assert.equal(sessions.active, chat);
      assert.equal(chat.meta.state, "idle");
      assert.equal(chat.meta.claudeSessionId, claudeSessionId);
      assert.notEqual(chat.meta.pid, cliPid);
      await sessions.send("back again");
      await sessions.turnDone();
      assert.equal(chat.lastAssistantText, "Echo: back again");
      assert.equal(chat.meta.claudeSessionId, claudeSessionId, "the same conversation goes on");
      assert.ok(chat.meta.totalCostUsd > costBefore, "the chat's cost adds both processes' spend");
    } finally {
      await sessions.dispose();
    }
  });

  test("a chat whose claude process died goes on when the user types", async () => {
    const { sessions } = makeSessions(projectDir());
    try {
      const chat = await sessions.newChat();
      await sessions.send("first words");
      await sessions.turnDone();
      const { pid, claudeSessionId } = chat.meta;
      const bridgePid = sessions.bridgePid;
      process.kill(pid!, "SIGKILL");
      await eventually(() => chat.meta.state === "exited", "the chat sees its process die");
      const notice = chat.items.at(-1);
      assert.ok(notice?.kind === "notice" && notice.restart && /Claude exited/.test(notice.text));
      await sessions.send("second words");
      await sessions.turnDone();
      assert.equal(chat.lastAssistantText, "Echo: second words");
      assert.notEqual(chat.meta.pid, pid);
      assert.equal(chat.meta.claudeSessionId, claudeSessionId);
      assert.equal(sessions.bridgePid, bridgePid, "the bridge itself kept running");
    } finally {
      await sessions.dispose();
    }
  });

  test("dispose leaves no bridge and no claude process", async () => {
    const { sessions } = makeSessions(projectDir());
    const a = await sessions.newChat();
    const b = await sessions.newChat();
    const bridgePid = sessions.bridgePid!;
    await sessions.dispose();
    for (const pid of [bridgePid, a.meta.pid!, b.meta.pid!]) assert.equal(alive(pid), false, `process ${pid} is gone`);
    assert.equal(sessions.bridgeState, "stopped");
  });
});
