// The VS Code chat view under load, and its cold start; driven by bench/vscode_firehose.py,
// which starts the fake Messages API and code-server with the .vsix installed and passes:
//   CB_CODE_SERVER_URL, CB_PROJECT, CB_BASELINE_PROJECT, CB_FAKE_API_URL,
//   CB_BRIDGE_COMMAND (JSON argv, --claude-path included), CB_DELTAS, CB_CHUNK, CB_REPS
// Prints one JSON object of figures on stdout. Baselines, measured in the same run: the
// bridge client alone in Node (no VS Code, no view) doing the same thing.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const extension = join(here, "..", "editors", "vscode");
const require = createRequire(join(extension, "package.json"));
const { chromium } = require("playwright-core");
const esbuild = require("esbuild");

const env = process.env;
const bridgeCommand = JSON.parse(env.CB_BRIDGE_COMMAND);
const deltas = Number(env.CB_DELTAS ?? 20000);
const chunk = Number(env.CB_CHUNK ?? 8);
const reps = Number(env.CB_REPS ?? 1);
const log = (m) => console.error(`bench: ${m}`);

// The bridge client, bundled from the extension's sources for the baseline.
const clientFile = join(extension, "out", "bench", "client.mjs");
await esbuild.build({
  entryPoints: [join(extension, "src", "client", "index.ts")],
  outfile: clientFile,
  bundle: true,
  platform: "node",
  format: "esm",
  logLevel: "warning",
  banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
});
const { BridgeClient } = await import(pathToFileURL(clientFile).href);

/** Markdown like a long answer: paragraphs, lists, code; exactly deltas * chunk characters. */
function firehoseText() {
  const parts = [];
  let n = 0;
  while (parts.join("").length < deltas * chunk) {
    n++;
    parts.push(
      `## Step ${n}\n\nThe function \`step${n}\` reads the **input**, checks it and returns a value; ` +
        `see [the docs](https://example.com/${n}) for why it matters.\n\n` +
        `- first, parse the record ${n}\n- then validate the fields\n- finally, store it\n\n` +
        "```python\n" +
        `def step${n}(record):\n    if not record:\n        raise ValueError("empty")\n    return record["value"] * ${n}\n` +
        "```\n\n",
    );
  }
  return parts.join("").slice(0, deltas * chunk);
}

async function enqueue(text) {
  const res = await fetch(`${env.CB_FAKE_API_URL}/_fake/enqueue`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify([{ text, chunkSize: chunk }]),
  });
  if (!res.ok) throw new Error(`enqueue: ${res.status}`);
}

const ms = (a, b) => Math.round((b - a) * 10) / 10;

// ---- Baselines: the client alone ----------------------------------------------------------

async function baselineCold() {
  const t0 = performance.now();
  const client = await BridgeClient.start({ command: bridgeCommand, initializationOptions: { warmPool: { size: 1 } } });
  const { sessionId } = await client.create({ cwd: env.CB_BASELINE_PROJECT });
  const t1 = performance.now();
  const first = new Promise((resolve) =>
    client.onEvent((p) => p.sessionId === sessionId && p.event.type === "textDelta" && resolve(performance.now())),
  );
  const t2 = performance.now();
  const turn = client.send({ sessionId, prompt: "hello" });
  const t3 = await first;
  await turn;
  await client.dispose();
  return { newChatMs: ms(t0, t1), firstCharMs: ms(t2, t3), totalMs: ms(t0, t3) };
}

async function baselineFirehose(expected) {
  const client = await BridgeClient.start({ command: bridgeCommand });
  const { sessionId } = await client.create({ cwd: env.CB_BASELINE_PROJECT });
  let text = "";
  let events = 0;
  client.onEvent((p) => {
    if (p.sessionId === sessionId && p.event.type === "textDelta") {
      events++;
      text += p.event.text;
    }
  });
  await enqueue(expected);
  const t0 = performance.now();
  await client.send({ sessionId, prompt: "firehose" });
  const t1 = performance.now();
  await client.dispose();
  return { ms: ms(t0, t1), textDeltaEvents: events, exact: text === expected };
}

// ---- In VS Code --------------------------------------------------------------------------

async function runCommand(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor();
  await input.fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor();
}

async function chatFrame(page) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      if (await frame.locator(".composer textarea.prompt").count().catch(() => 0)) return frame;
    }
    await page.waitForTimeout(50);
  }
  throw new Error("the chat webview did not appear");
}

function longestTasks(trace) {
  const events = JSON.parse(trace.toString("utf8")).traceEvents ?? [];
  const mainThreads = new Set(
    events
      .filter((e) => e.ph === "M" && e.name === "thread_name" && e.args?.name === "CrRendererMain")
      .map((e) => `${e.pid}:${e.tid}`),
  );
  const tasks = events.filter(
    (e) => e.ph === "X" && (e.name === "RunTask" || e.name === "ThreadControllerImpl::RunTask") && mainThreads.has(`${e.pid}:${e.tid}`),
  );
  const wall = tasks.map((e) => (e.dur ?? 0) / 1000).sort((a, b) => b - a);
  const cpu = tasks.map((e) => (e.tdur ?? 0) / 1000).sort((a, b) => b - a);
  const round = (v) => Math.round((v ?? 0) * 10) / 10;
  return {
    longestTaskMs: round(wall[0]),
    longestTaskCpuMs: round(cpu[0]),
    tasksOver50Ms: wall.filter((d) => d > 50).length,
    tasksOver50MsCpu: cpu.filter((d) => d > 50).length,
    rendererMainThreads: mainThreads.size,
    tasks: wall.length,
  };
}

async function inVsCode(expected) {
  const browser = await chromium.launch({
    executablePath: env.CB_CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
    page.setDefaultTimeout(120_000);
    await page.goto(env.CB_CODE_SERVER_URL);
    await page.locator(".statusbar-item", { hasText: "Claude" }).first().waitFor();

    log("cold new chat + first prompt");
    await runCommand(page, "Claude Bridge: New Chat");
    const t0 = performance.now();
    await page.keyboard.press("Enter");
    const chat = await chatFrame(page);
    await chat.locator(".meta .state", { hasText: "idle" }).waitFor();
    const t1 = performance.now();
    const box = chat.locator("textarea.prompt");
    await box.fill("hello");
    const t2 = performance.now();
    await box.press("Enter");
    await chat.waitForFunction(() => (document.querySelector(".item.assistant .body")?.textContent ?? "").length > 0, null, { polling: "raf" });
    const t3 = performance.now();
    await chat.locator(".item.turn").first().waitFor();
    const cold = { newChatMs: ms(t0, t1), firstCharMs: ms(t2, t3), totalMs: ms(t0, t3) };

    log(`firehose of ${deltas} deltas`);
    await enqueue(expected);
    const before = await chat.evaluate(() => ({ ...window.__claudeBridgeStats }));
    await browser.startTracing(page, { categories: ["devtools.timeline", "toplevel"] });
    const f0 = performance.now();
    await box.fill("firehose");
    await box.press("Enter");
    await chat.waitForFunction(
      (n) => {
        const r = window.__claudeBridgeStats.lastReply();
        return r && !r.streaming && r.text.length >= n;
      },
      expected.length,
      { polling: 250, timeout: 300_000 },
    );
    const f1 = performance.now();
    const trace = await browser.stopTracing();
    const after = await chat.evaluate(() => ({ ...window.__claudeBridgeStats, reply: window.__claudeBridgeStats.lastReply() }));
    const shown = await chat.evaluate(() => document.querySelectorAll(".item.assistant").length);
    return {
      cold,
      firehose: {
        ms: ms(f0, f1),
        exact: after.reply.text === expected,
        framesRendered: after.frames - before.frames,
        longestFrameMs: Math.round(after.longestFrameMs * 10) / 10,
        frameMsTotal: Math.round(after.frameMs - before.frameMs),
        longestFramePhases: after.phases,
        postMessages: after.messages - before.messages,
        ops: after.ops - before.ops,
        assistantItems: shown,
        ...longestTasks(trace),
      },
    };
  } finally {
    await browser.close();
  }
}

const expected = firehoseText();
const result = { deltas, chunk, chars: expected.length };
log("baseline: cold start with the client alone");
result.baselineCold = [];
for (let i = 0; i < reps; i++) result.baselineCold.push(await baselineCold());
log("baseline: firehose into the client alone");
result.baselineFirehose = await baselineFirehose(expected);
Object.assign(result, await inVsCode(expected));
console.log(JSON.stringify(result));
