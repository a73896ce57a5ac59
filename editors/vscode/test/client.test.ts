/**
 * The bridge client and the conversation model against the real bridge running the real
 * CLI (offline, against the fake Messages API), and the fake CLI for failures.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { BridgeClient, BridgeExit, BridgeExitedError, CancellationTokenSource, TurnProgress } from "../src/client";
import { Conversation } from "../src/model/conversation";
import type { PermissionDecision, PermissionParams } from "../src/protocol";
import { alive, eventually, fakeCli, nextEvent, projectDir, realCli, startBridge } from "./helpers";

/** A bridge on the real CLI, whose permission prompts `answer` decides. */
function realBridge(answer: (p: PermissionParams) => PermissionDecision | Promise<PermissionDecision>) {
  return startBridge(realCli(), { onPermission: (p) => answer(p) });
}

/** One session with a model fed from its events. */
async function session(client: BridgeClient, cwd = projectDir()) {
  const created = await client.create({ cwd });
  const model = new Conversation(created.sessionId, cwd);
  model.created(created);
  client.onEvent((p) => {
    if (p.sessionId === created.sessionId) model.apply(p);
  });
  return { created, model, cwd, sessionId: created.sessionId };
}

describe("with the real CLI", () => {
  let client: BridgeClient;
  let answer: (p: PermissionParams) => PermissionDecision | Promise<PermissionDecision>;
  const asked: PermissionParams[] = [];

  before(async () => {
    client = await realBridge((p) => {
      asked.push(p);
      return answer(p);
    });
  });
  after(async () => {
    await client.dispose();
  });

  test("a turn streams into the model and its text is exact", async () => {
    const { model, sessionId } = await session(client);
    let deltas = 0;
    const sub = client.onEvent((p) => {
      if (p.sessionId === sessionId && p.event.type === "textDelta") deltas++;
    });
    const result = await client.send({ sessionId, prompt: "hello bridge" });
    sub.dispose();
    model.turnEnded(result);
    assert.equal(result.text, "Echo: hello bridge");
    assert.equal(model.lastAssistantText, "Echo: hello bridge");
    assert.ok(deltas >= 1, "the reply came as text deltas");
    assert.equal(model.meta.state, "idle");
    assert.ok(model.meta.totalCostUsd > 0);
    const turn = model.items.at(-1);
    assert.equal(turn?.kind, "turn");
  });

  test("allowing a Write lets the CLI write the file", async () => {
    answer = (p) => ({ behavior: "allow", updatedInput: p.input });
    const { model, sessionId, cwd } = await session(client);
    const result = await client.send({ sessionId, prompt: "please USE_WRITE" });
    model.turnEnded(result);
    assert.equal(readFileSync(join(cwd, "written.txt"), "utf8"), "written by claude\n");
    const tool = model.items.find((i) => i.kind === "tool");
    assert.ok(tool && tool.kind === "tool" && tool.name === "Write" && !tool.isError);
    assert.equal(asked.at(-1)?.toolName, "Write");
  });

  test("denying a Write leaves the disk untouched and tells the model why", async () => {
    answer = () => ({ behavior: "deny", message: "not in this repo" });
    const { model, sessionId, cwd } = await session(client);
    const result = await client.send({ sessionId, prompt: "please USE_WRITE" });
    model.turnEnded(result);
    assert.equal(existsSync(join(cwd, "written.txt")), false);
    const tool = model.items.find((i) => i.kind === "tool");
    assert.ok(tool && tool.kind === "tool" && tool.isError);
    assert.match(tool.result ?? "", /not in this repo/);
  });

  test("a deferred prompt answered late through respondPermission runs the tool", async () => {
    answer = () => ({ behavior: "defer" });
    const { sessionId, cwd } = await session(client);
    const turn = client.send({ sessionId, prompt: "please USE_WRITE" });
    const request = await new Promise<PermissionParams>((resolve) => {
      const poll = setInterval(() => {
        const p = asked.find((a) => a.sessionId === sessionId);
        if (p) {
          clearInterval(poll);
          resolve(p);
        }
      }, 20);
    });
    const status = await client.status(sessionId);
    assert.deepEqual(status.pendingPermissions, [request.requestId]);
    await client.respondPermission(sessionId, request.requestId, { behavior: "allow", updatedInput: request.input });
    await turn;
    assert.equal(readFileSync(join(cwd, "written.txt"), "utf8"), "written by claude\n");
  });

  test("AskUserQuestion is answered with updatedInput.answers", async () => {
    answer = (p) => {
      assert.equal(p.requiresUserInteraction, true);
      return { behavior: "allow", updatedInput: { ...p.input, answers: { "Which colour?": "Blue" } } };
    };
    const { model, sessionId } = await session(client);
    const result = await client.send({ sessionId, prompt: "ASKQ" });
    model.turnEnded(result);
    const tool = model.items.find((i) => i.kind === "tool");
    assert.ok(tool && tool.kind === "tool" && tool.name === "AskUserQuestion");
    assert.match(tool.result ?? "", /Blue/);
  });

  test("an interrupt stops the turn and keeps the CLI process", async () => {
    const { created, model, sessionId } = await session(client);
    const turn = client.send({ sessionId, prompt: "SLOW" });
    await nextEvent(client, sessionId, (p) => p.event.type === "textDelta");
    await client.interrupt({ sessionId });
    const result = await turn;
    model.turnEnded(result);
    assert.equal(result.interrupted, true);
    assert.ok(model.lastAssistantText.startsWith("word0 "));
    const status = await client.status(sessionId);
    assert.equal(status.pid, created.pid);
    assert.ok(alive(created.pid));
    const next = await client.send({ sessionId, prompt: "still there?" });
    assert.equal(next.text, "Echo: still there?");
  });

  test("a live message goes into the running turn and gets its own reply", async () => {
    const { model, sessionId } = await session(client);
    model.userPrompt("SLOW");
    const turn = client.send({ sessionId, prompt: "SLOW" });
    await nextEvent(client, sessionId, (p) => p.event.type === "textDelta");
    model.userPrompt("and a follow-up");
    const sent = await client.message({ sessionId, prompt: "and a follow-up" });
    await nextEvent(client, sessionId, (p) => p.event.type === "textDelta" && p.event.text.includes("word1"));
    await client.interrupt({ sessionId });
    const result = await turn;
    model.turnEnded(result);
    assert.equal(result.results, 2);
    assert.ok(result.commandUuids?.includes(sent.uuid));
    assert.equal(result.text, "Echo: and a follow-up");
    const live = model.items.find((i) => i.kind === "user" && i.live);
    assert.ok(live, "the model marks the message as live");
    assert.equal(model.lastAssistantText, "Echo: and a follow-up");
  });

  test("cancelling the token of a send interrupts the turn ($/cancelRequest)", async () => {
    const { created, sessionId } = await session(client);
    const source = new CancellationTokenSource();
    const progress: TurnProgress[] = [];
    const turn = client.send({ sessionId, prompt: "SLOW" }, { token: source.token, onProgress: (v) => progress.push(v) });
    await nextEvent(client, sessionId, (p) => p.event.type === "textDelta");
    source.cancel();
    const result = await turn;
    assert.equal(result.interrupted, true);
    assert.equal((await client.status(sessionId)).pid, created.pid);
    assert.equal(progress[0]?.kind, "begin");
    assert.equal(progress.at(-1)?.kind, "end");
    assert.equal(progress.at(-1)?.message, "interrupted");
  });
});

describe("failures, with the fake CLI", () => {
  test("the bridge killed fails every pending request and is reported", async () => {
    const client = await startBridge(fakeCli(), { onPermission: () => ({ behavior: "deny" }) });
    const cwd = projectDir();
    const { sessionId, pid } = await client.create({ cwd });
    const model = new Conversation(sessionId, cwd);
    client.onEvent((p) => model.apply(p));
    const exits: BridgeExit[] = [];
    client.onDidExit((e) => {
      exits.push(e);
      model.bridgeDied("The bridge exited unexpectedly.");
    });
    const turn = client.send({ sessionId, prompt: "SLOW" });
    const status = client.status(sessionId);
    await status;
    await nextEvent(client, sessionId, (p) => p.event.type === "textDelta");
    const pending = [turn, client.getContextUsage(sessionId)];
    process.kill(client.pid!, "SIGKILL");
    for (const request of pending) await assert.rejects(request, BridgeExitedError);
    assert.equal(exits.length, 1);
    assert.equal(exits[0].signal, "SIGKILL");
    assert.equal(exits[0].expected, false);
    await assert.rejects(client.status(sessionId), BridgeExitedError);
    assert.equal(model.meta.state, "exited");
    const notice = model.items.at(-1);
    assert.ok(notice?.kind === "notice" && notice.restart, "the chat offers a restart");
    // The CLI sees its stdin close and leaves: nothing is orphaned.
    await eventually(() => !alive(pid), "the CLI of the killed bridge exits");
  });

  test("dispose shuts the bridge down and leaves no process", async () => {
    const client = await startBridge(realCli(), { initializationOptions: { warmPool: { size: 1 } } });
    const a = await client.create({ cwd: projectDir() });
    const b = await client.create({ cwd: projectDir() });
    const bridgePid = client.pid!;
    const exited: BridgeExit[] = [];
    client.onDidExit((e) => exited.push(e));
    await client.dispose();
    assert.equal(exited[0]?.expected, true);
    assert.equal(exited[0]?.code, 0);
    for (const pid of [bridgePid, a.pid, b.pid]) assert.equal(alive(pid), false, `process ${pid} is gone`);
  });

  test("a bridge that cannot start is a clear error", async () => {
    await assert.rejects(
      BridgeClient.start({ command: ["/nonexistent/claude-bridge"] }),
      /could not start "\/nonexistent\/claude-bridge"/,
    );
  });
});

describe("proposed changes for the diff view", () => {
  test("Edit, MultiEdit and Write give the file after the change", async () => {
    const { proposedChange } = await import("../src/diff");
    const dir = projectDir();
    const file = join(dir, "notes.txt");
    writeFileSync(file, "hello world\nhello again\n");
    const edit = await proposedChange("Edit", { file_path: file, old_string: "hello", new_string: "goodbye" });
    assert.equal(edit.after, "goodbye world\nhello again\n");
    const all = await proposedChange("Edit", { file_path: file, old_string: "hello", new_string: "bye", replace_all: true });
    assert.equal(all.after, "bye world\nbye again\n");
    const multi = await proposedChange("MultiEdit", {
      file_path: file,
      edits: [
        { old_string: "world", new_string: "there" },
        { old_string: "again", new_string: "twice" },
      ],
    });
    assert.equal(multi.after, "hello there\nhello twice\n");
    const write = await proposedChange("Write", { file_path: join(dir, "new.txt"), content: "new\n" });
    assert.deepEqual([write.exists, write.before, write.after], [false, "", "new\n"]);
    await assert.rejects(proposedChange("Edit", { file_path: file, old_string: "absent", new_string: "x" }), /not in the file/);
  });
});
