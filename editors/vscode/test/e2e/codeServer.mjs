// End to end in a real VS Code (code-server) driven by playwright-core and Debian's chromium.
// Run by tests/editors/vscode/test_code_server.py, which installs the .vsix, starts
// code-server against the fake Messages API and passes:
//   CB_CODE_SERVER_URL  the workbench, with ?folder= the project
//   CB_PROJECT          the project folder (the CLI's cwd)
//   CB_OUTPUT           where screenshots go (editors/vscode/.test-output)
// It prints one JSON line of what it saw and exits non-zero on the first failed step.
import { chromium } from "playwright-core";
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";

const url = process.env.CB_CODE_SERVER_URL;
const project = process.env.CB_PROJECT;
const output = process.env.CB_OUTPUT;
mkdirSync(output, { recursive: true });

export const CHROMIUM_ARGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const seen = {};
const step = (name) => console.error(`e2e: ${name}`);

const browser = await chromium.launch({
  executablePath: process.env.CB_CHROMIUM ?? "/usr/bin/chromium",
  args: CHROMIUM_ARGS,
});
let page;
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(60_000);
  step("open the workbench");
  await page.goto(url);
  await page.locator(".monaco-workbench").waitFor();
  await page.locator(".statusbar").waitFor();
  // The extension activates on startup: its status bar item appears.
  await page.locator(".statusbar-item", { hasText: "Claude" }).first().waitFor({ timeout: 90_000 });

  step("open the chat from the command palette");
  await runCommand(page, "Claude Bridge: New Chat");
  const chat = await chatFrame(page);
  await chat.locator(".tab.active").waitFor();
  await chat.locator(".meta .state", { hasText: "idle" }).waitFor({ timeout: 90_000 });

  step("send a prompt, see the streamed reply rendered as Markdown");
  const prompt = "hello **bold** and `code`\n\n```python\ndef greet():\n    return 42\n```";
  await send(chat, prompt);
  const reply = chat.locator(".item.assistant").last();
  await reply.locator("strong", { hasText: "bold" }).waitFor();
  await reply.locator("pre.code code.language-python .hljs-keyword", { hasText: "def" }).waitFor();
  await chat.locator(".item.turn").first().waitFor();
  seen.replyText = (await reply.locator(".body").innerText()).trim();

  step("answer a permission prompt: the file appears on disk");
  await send(chat, "please USE_WRITE");
  const allow = chat.locator(".permission-card.pending button", { hasText: /^Allow/ });
  await allow.waitFor();
  seen.permissionButtons = await chat.locator(".permission-card.pending button").allInnerTexts();
  await allow.click();
  await chat.locator(".permission-card.allowed").waitFor();
  await waitFor(() => existsSync(join(project, "written.txt")), "written.txt on disk");
  seen.written = readFileSync(join(project, "written.txt"), "utf8");
  await chat.locator(".item.turn").nth(1).waitFor();

  step("open the diff of an Edit, then allow it");
  await send(chat, "please USE_EDIT");
  const showDiff = chat.locator(".permission-card.pending button", { hasText: "Show diff" });
  await showDiff.waitFor();
  await showDiff.click();
  const diff = page.locator(".monaco-diff-editor");
  await diff.first().waitFor();
  await page.locator(".tab", { hasText: "notes.txt" }).first().waitFor();
  await diff.locator(".modified-in-monaco-diff-editor .view-line", { hasText: "goodbye" }).first().waitFor();
  seen.diffTab = (await page.locator(".tab.active").first().innerText()).trim();
  await page.screenshot({ path: join(output, "diff.png") });
  await chat.locator(".permission-card.pending button", { hasText: /^Allow/ }).click();
  await waitFor(() => readFileSync(join(project, "notes.txt"), "utf8").includes("goodbye"), "notes.txt edited");
  seen.edited = readFileSync(join(project, "notes.txt"), "utf8");
  await chat.locator(".item.turn").nth(2).waitFor();

  step("answer Claude's question (AskUserQuestion) by choosing an option");
  await send(chat, "ASKQ");
  const blue = chat.locator(".permission-card.pending button.option", { hasText: "Blue" });
  await blue.waitFor();
  await blue.click();
  await chat.locator(".permission-card.allowed").nth(2).waitFor();
  await chat.locator(".item.turn").nth(3).waitFor();
  seen.answerResult = await chat.locator(".tool-card.done").last().locator("pre.result").textContent();

  step("interrupt a streaming reply");
  await send(chat, "SLOW");
  await chat.locator(".item.assistant").last().locator(".body", { hasText: "word3" }).waitFor();
  await chat.locator("button.stop").click();
  await chat.locator(".item.turn", { hasText: "interrupted" }).waitFor();
  seen.interruptedText = (await chat.locator(".item.assistant").last().innerText()).trim().slice(0, 80);
  await chat.locator(".meta .state", { hasText: "idle" }).waitFor();

  step("add an editor's selection to the prompt");
  await page.keyboard.press("F1");
  const quick = page.locator(".quick-input-widget input");
  await quick.fill("notes.txt");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "notes.txt" }).first().waitFor();
  await page.keyboard.press("Enter");
  await page.locator(".monaco-editor .view-line", { hasText: "goodbye world" }).first().click();
  await page.keyboard.press("Control+A");
  await runCommand(page, "Claude Bridge: Add Selection to Chat", { focusWorkbench: false });
  await chat.waitForFunction(() => document.querySelector("textarea.prompt").value.includes("goodbye world"));
  seen.selectionPrompt = await chat.locator("textarea.prompt").inputValue();
  await chat.locator("textarea.prompt").fill("");

  step("a prompt through the claudeBridge.send command");
  await runCommand(page, "Claude Bridge: Send Prompt");
  const ask = page.locator(".quick-input-widget", { hasText: "Message to Claude" }).locator("input");
  await ask.waitFor();
  await ask.fill("sent from the command palette");
  await ask.press("Enter");
  await chat.locator(".item.assistant .body", { hasText: "Echo: sent from the command palette" }).waitFor();
  await chat.locator(".item.turn").nth(5).waitFor();

  step("the bridge killed: the chat says so, and its Restart continues the conversation");
  const bridgePid = bridgeProcess();
  process.kill(bridgePid, "SIGKILL");
  const restart = chat.locator(".item.notice button.restart");
  await restart.waitFor();
  seen.crashNotice = (await chat.locator(".item.notice.error").last().innerText()).trim();
  await restart.click();
  await chat.locator(".item.notice", { hasText: "Restarted: the conversation goes on" }).waitFor();
  await send(chat, "after the restart");
  await chat.locator(".item.assistant .body", { hasText: "Echo: after the restart" }).waitFor();
  seen.restartedBridge = bridgeProcess() !== bridgePid;

  step("a last exchange, and the screenshot");
  await send(
    chat,
    "Summarise what you did, as a list:\n\n- wrote `written.txt`\n- edited `notes.txt`\n- was **interrupted**\n\n" +
      "```ts\nexport function answer(): number {\n  return 42; // the answer\n}\n```",
  );
  await chat.locator(".item.turn").nth(7).waitFor();
  // Close the diff and widen the side bar so the chat is the picture.
  await runCommand(page, "View: Close All Editors");
  const sidebar = await page.locator(".part.sidebar").boundingBox();
  if (sidebar) {
    const y = sidebar.y + sidebar.height / 2;
    await page.mouse.move(sidebar.x + sidebar.width + 1, y);
    await page.mouse.down();
    await page.mouse.move(640, y, { steps: 8 });
    await page.mouse.up();
    await page.mouse.move(1000, 600);
  }
  await page.waitForTimeout(500);
  seen.statusBar = (await page.locator(".statusbar-item", { hasText: "$" }).first().innerText()).trim();
  await page.screenshot({ path: join(output, "chat.png") });
  seen.ok = true;
  console.log(JSON.stringify(seen));
} catch (error) {
  if (page) await page.screenshot({ path: join(output, "failure.png") }).catch(() => undefined);
  console.log(JSON.stringify({ ...seen, ok: false, error: String(error?.stack ?? error) }));
  process.exitCode = 1;
} finally {
  await browser.close();
}

async function runCommand(page, title, { focusWorkbench = true } = {}) {
  if (focusWorkbench) await page.locator(".monaco-workbench").click({ position: { x: 700, y: 400 } }).catch(() => undefined);
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor();
  await input.fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor();
  await page.keyboard.press("Enter");
}

/** The frame that holds the chat webview's page. */
async function chatFrame(page) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      if (await frame.locator(".composer textarea.prompt").count().catch(() => 0)) return frame;
    }
    await page.waitForTimeout(200);
  }
  throw new Error("the chat webview did not appear");
}

async function send(chat, text) {
  const box = chat.locator("textarea.prompt");
  await box.fill(text);
  await box.press("Enter");
}

/** The pid of the extension's bridge: the process started in the project with --claude-path. */
function bridgeProcess() {
  for (const pid of readdirSync("/proc").filter((e) => /^\d+$/.test(e))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (argv.includes("--claude-path") && readlinkSync(`/proc/${pid}/cwd`) === project) return Number(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  throw new Error("no bridge process found");
}

async function waitFor(check, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
