/**
 * Shared by the Node tests. The pytest side (tests/editors/vscode) starts the fake Messages
 * API and sets the environment: the offline CLI environment (ANTHROPIC_BASE_URL, an isolated
 * HOME), CB_BRIDGE_COMMAND (JSON argv of claude-bridge), CB_REAL_CLI, CB_FAKE_CLI, CB_TMP.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BridgeClient, BridgeClientOptions } from "../src/client";
import type { EventParams } from "../src/protocol";

export function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests through pytest (tests/editors/vscode)`);
  return value;
}

export const bridgeCommand = (): string[] => JSON.parse(env("CB_BRIDGE_COMMAND")) as string[];
export const realCli = (): string => env("CB_REAL_CLI");
export const fakeCli = (): string => env("CB_FAKE_CLI");

/** A fresh, empty project directory. */
export function projectDir(): string {
  return mkdtempSync(join(env("CB_TMP"), "project-"));
}

/** A bridge whose sessions run `cli`. */
export function startBridge(cli: string, options: BridgeClientOptions = {}): Promise<BridgeClient> {
  return BridgeClient.start({ command: [...bridgeCommand(), "--claude-path", cli], ...options });
}

/** Resolves with the first event of `sessionId` that `match` accepts. */
export function nextEvent(client: BridgeClient, sessionId: string, match: (p: EventParams) => boolean, timeoutMs = 60_000): Promise<EventParams> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error("timed out waiting for an event"));
    }, timeoutMs);
    const sub = client.onEvent((p) => {
      if (p.sessionId === sessionId && match(p)) {
        clearTimeout(timer);
        sub.dispose();
        resolve(p);
      }
    });
  });
}

/** Whether a process is alive (a zombie counts as dead). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Poll until `check()` holds (or fail after `timeoutMs`). */
export async function eventually(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`still not true after ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Pids of the processes whose parent is `pid`. */
export function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
