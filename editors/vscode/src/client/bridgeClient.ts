/**
 * A typed client of one `claude-bridge` process: spawns it, speaks JSON-RPC over its
 * stdin/stdout with vscode-jsonrpc, and exposes the bridge's methods with the wire types
 * generated from the schema (`../protocol`). No `vscode` import: any Node host can embed it.
 *
 * - Cancellation: every request takes a `CancellationToken`; cancelling sends
 *   `$/cancelRequest` (on `session/send` the bridge interrupts the turn).
 * - Progress: `send(..., { onProgress })` passes a `workDoneToken` and reports `$/progress`.
 * - Permissions: `session/requestPermission` is answered by the `onPermission` callback.
 * - Failure: when the bridge exits, every pending request fails with `BridgeExitedError`
 *   and `onDidExit` fires once.
 */
import { ChildProcess, spawn } from "node:child_process";
import {
  CancellationToken,
  Disposable,
  Emitter,
  ErrorCodes,
  Event,
  MessageConnection,
  ProgressType,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from "vscode-jsonrpc/node";
import type {
  CloseResult,
  ContextUsageResult,
  CreateParams,
  CreateResult,
  EventParams,
  ExitedParams,
  ListTranscriptsParams,
  ListTranscriptsResult,
  InitializationOptions,
  InitializeResult,
  InterruptParams,
  InterruptResult,
  ListResult,
  LogMessageParams,
  MessageParams,
  MessageResult,
  PermissionDecision,
  PermissionParams,
  SendParams,
  SessionStatus,
  SetModelResult,
  SetPermissionModeParams,
  SetPermissionModeResult,
  TurnResult,
} from "../protocol";

export type { TranscriptInfo, ListTranscriptsParams, ListTranscriptsResult } from "../protocol";

/** How the bridge process ended. `expected` is true after `dispose()`. */
export interface BridgeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  expected: boolean;
  /** The end of the bridge's stderr (it writes there only with `--verbose` or when it fails). */
  stderrTail: string;
}

/** A pending request failed because the bridge process is gone. */
export class BridgeExitedError extends Error {
  constructor(readonly exit: BridgeExit) {
    super(
      `claude-bridge exited (${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`})` +
        (exit.stderrTail ? `: ${exit.stderrTail.trim().split("\n").slice(-3).join(" | ")}` : ""),
    );
    this.name = "BridgeExitedError";
  }
}

/** The `$/progress` values of a turn: begin, one report per tool run, end. */
export interface TurnProgress {
  kind: "begin" | "report" | "end";
  title?: string;
  message?: string;
  cancellable?: boolean;
}

export type PermissionHandler = (
  params: PermissionParams,
  token: CancellationToken,
) => Promise<PermissionDecision> | PermissionDecision;

export interface BridgeClientOptions {
  /** The bridge's command line, program first (default `["claude-bridge"]`). */
  command?: readonly string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Sent in `initialize`; `permissions` is set from `onPermission`. */
  initializationOptions?: Omit<InitializationOptions, "permissions">;
  clientName?: string;
  clientVersion?: string;
  /** Answers `session/requestPermission`. Without it the bridge denies every prompt itself. */
  onPermission?: PermissionHandler;
}

const STDERR_TAIL = 8192;

export class BridgeClient implements Disposable {
  private readonly events = new Emitter<EventParams>();
  private readonly exitedSessions = new Emitter<ExitedParams>();
  private readonly logs = new Emitter<LogMessageParams>();
  private readonly exits = new Emitter<BridgeExit>();
  private readonly pending = new Set<(error: Error) => void>();
  private disposing = false;
  private exitInfo: BridgeExit | undefined;
  private readonly exited: Promise<BridgeExit>;
  private stderrTail = "";
  private progressCounter = 0;

  /** One `session/event` notification. */
  readonly onEvent: Event<EventParams> = this.events.event;
  /** A session is gone (`session/exited`). */
  readonly onSessionExited: Event<ExitedParams> = this.exitedSessions.event;
  /** The bridge's diagnostics (`window/logMessage`). */
  readonly onLogMessage: Event<LogMessageParams> = this.logs.event;
  /** The bridge process ended (once). */
  readonly onDidExit: Event<BridgeExit> = this.exits.event;

  private constructor(
    private readonly process: ChildProcess,
    private readonly connection: MessageConnection,
    private readonly options: BridgeClientOptions,
    public initializeResult?: InitializeResult,
  ) {
    this.exited = new Promise((resolve) => {
      process.once("exit", (code, signal) => {
        const exit: BridgeExit = {
          code,
          signal,
          expected: this.disposing,
          stderrTail: this.stderrTail,
        };
        this.exitInfo = exit;
        const error = new BridgeExitedError(exit);
        for (const reject of [...this.pending]) reject(error);
        this.pending.clear();
        this.exits.fire(exit);
        this.connection.dispose();
        resolve(exit);
      });
    });
    process.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL);
    });
    connection.onNotification("session/event", (p: EventParams) => this.events.fire(p));
    connection.onNotification("session/exited", (p: ExitedParams) =>
      this.exitedSessions.fire(p),
    );
    connection.onNotification("window/logMessage", (p: LogMessageParams) => this.logs.fire(p));
    connection.onRequest(
      "session/requestPermission",
      async (params: PermissionParams, token: CancellationToken): Promise<PermissionDecision> => {
        const handler = this.options.onPermission;
        if (!handler) return { behavior: "deny", message: "This client does not answer." };
        return handler(params, token);
      },
    );
  }

  /** Spawn the bridge and complete `initialize` / `initialized`. */
  static async start(options: BridgeClientOptions = {}): Promise<BridgeClient> {
    const [program, ...args] = options.command?.length ? options.command : ["claude-bridge"];
    const child = spawn(program, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group: dispose() can signal the bridge and whatever it left.
      detached: true,
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", (err) =>
        reject(new Error(`could not start ${JSON.stringify(program)}: ${err.message}`)),
      );
    });
    const connection = createMessageConnection(
      new StreamMessageReader(child.stdout!),
      new StreamMessageWriter(child.stdin!),
    );
    // A write to a bridge that just died must not crash the host.
    child.stdin!.on("error", () => undefined);
    const client = new BridgeClient(child, connection, options);
    connection.listen();
    const initializationOptions: InitializationOptions = {
      ...options.initializationOptions,
      permissions: options.onPermission !== undefined,
    };
    client.initializeResult = await client.request<InitializeResult>("initialize", {
      processId: process.pid,
      clientInfo: {
        name: options.clientName ?? "claude-bridge-node-client",
        version: options.clientVersion ?? null,
      },
      capabilities: {},
      initializationOptions,
    });
    await connection.sendNotification("initialized", {});
    return client;
  }

  /** The bridge's process id. */
  get pid(): number | undefined {
    return this.process.pid;
  }

  /** Whether the bridge process is still running. */
  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** Send one request; it fails with `BridgeExitedError` if the bridge dies first. */
  request<R>(method: string, params: unknown, token?: CancellationToken): Promise<R> {
    if (this.exitInfo) return Promise.reject(new BridgeExitedError(this.exitInfo));
    return new Promise<R>((resolve, reject) => {
      const fail = (error: Error) => reject(error);
      this.pending.add(fail);
      const call =
        token === undefined
          ? this.connection.sendRequest<R>(method, params)
          : this.connection.sendRequest<R>(method, params, token);
      call.then(
        (value) => {
          this.pending.delete(fail);
          resolve(value);
        },
        (error: unknown) => {
          this.pending.delete(fail);
          void this.transportFailure(error).then(reject);
        },
      );
    });
  }

  /**
   * The error to report for a failed request: the bridge's own JSON-RPC error as it is; a
   * transport failure (a write to a bridge that just died) as `BridgeExitedError` once the
   * process is seen to exit.
   */
  private async transportFailure(error: unknown): Promise<Error> {
    const transport =
      !(error instanceof ResponseError) ||
      error.code === ErrorCodes.MessageWriteError ||
      error.code === ErrorCodes.PendingResponseRejected ||
      error.code === ErrorCodes.ConnectionInactive;
    if (transport) {
      const exit = await Promise.race([
        this.exited,
        // The exit event can trail the failed write by seconds on a loaded machine.
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 10_000).unref()),
      ]);
      if (exit) return new BridgeExitedError(exit);
    }
    return error instanceof Error ? error : new Error(String(error));
  }

  create(params: CreateParams, token?: CancellationToken): Promise<CreateResult> {
    return this.request("session/create", params, token);
  }

  /** Run a turn. Cancel `token` to interrupt it (the result then has `interrupted: true`). */
  async send(
    params: Omit<SendParams, "workDoneToken">,
    options: { token?: CancellationToken; onProgress?: (value: TurnProgress) => void } = {},
  ): Promise<TurnResult> {
    if (!options.onProgress) return this.request("session/send", params, options.token);
    const workDoneToken = `turn-${++this.progressCounter}`;
    const subscription = this.connection.onProgress(
      new ProgressType<TurnProgress>(),
      workDoneToken,
      options.onProgress,
    );
    try {
      return await this.request<TurnResult>(
        "session/send",
        { ...params, workDoneToken },
        options.token,
      );
    } finally {
      subscription.dispose();
    }
  }

  /** Write a live message into the running turn. */
  message(params: MessageParams, token?: CancellationToken): Promise<MessageResult> {
    return this.request("session/message", params, token);
  }

  interrupt(params: InterruptParams, token?: CancellationToken): Promise<InterruptResult> {
    return this.request("session/interrupt", params, token);
  }

  /** Answer a permission request the handler deferred (`{behavior: "defer"}`). */
  respondPermission(
    sessionId: string,
    requestId: string,
    decision: PermissionDecision,
  ): Promise<Record<string, never>> {
    return this.request("session/respondPermission", { sessionId, requestId, decision });
  }

  setModel(sessionId: string, model: string | null): Promise<SetModelResult> {
    return this.request("session/setModel", { sessionId, model });
  }

  setPermissionMode(
    sessionId: string,
    mode: SetPermissionModeParams["mode"],
  ): Promise<SetPermissionModeResult> {
    return this.request("session/setPermissionMode", { sessionId, mode });
  }

  getContextUsage(sessionId: string, token?: CancellationToken): Promise<ContextUsageResult> {
    return this.request("session/getContextUsage", { sessionId }, token);
  }

  status(sessionId: string, token?: CancellationToken): Promise<SessionStatus> {
    return this.request("session/status", { sessionId }, token);
  }

  list(token?: CancellationToken): Promise<ListResult> {
    return this.request("session/list", {}, token);
  }

  close(sessionId: string): Promise<CloseResult> {
    return this.request("session/close", { sessionId });
  }

  /** Past conversations of a directory, newest first (`session/history`). */
  history(params: ListTranscriptsParams, token?: CancellationToken): Promise<ListTranscriptsResult> {
    return this.request("session/history", params, token);
  }

  /** Resolves when the bridge process has exited. */
  whenExited(): Promise<BridgeExit> {
    return this.exited;
  }

  /**
   * Shut the bridge down (`shutdown`, `exit`), which closes every session and reaps every
   * `claude` process; signal its process group if it does not leave in time.
   */
  async dispose(): Promise<void> {
    if (this.exitInfo) return;
    this.disposing = true;
    const wait = (ms: number) =>
      Promise.race([
        this.exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref()),
      ]);
    try {
      await Promise.race([
        this.request("shutdown", undefined),
        new Promise((resolve) => setTimeout(resolve, 5000).unref()),
      ]);
      await this.connection.sendNotification("exit");
    } catch {
      // Already gone or not answering: the signals below take over.
    }
    this.process.stdin?.end();
    if (await wait(3000)) return;
    this.signalGroup("SIGTERM");
    if (await wait(3000)) return;
    this.signalGroup("SIGKILL");
    await this.exited;
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.process.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        this.process.kill(signal);
      } catch {
        // Gone.
      }
    }
  }
}

/** The JSON-RPC error code of a failed request, if it was a bridge error. */
export function errorCode(error: unknown): number | undefined {
  return error instanceof ResponseError ? error.code : undefined;
}

export { CancellationTokenSource } from "vscode-jsonrpc/node";
export type { CancellationToken } from "vscode-jsonrpc/node";
