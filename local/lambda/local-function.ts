/**
 * Runs one deployed function's bundled asset the way Lambda runs it: each sandbox is a worker
 * thread (lambda-sandbox.mjs) that sees exactly the template's environment plus the variables
 * the runtime sets, loads the handler once (the cold start), and runs one invocation at a time.
 * Concurrent invocations get more sandboxes, up to a cap. The function's Timeout is enforced:
 * the invocation fails with the runtime's `Sandbox.Timedout` and the sandbox is replaced.
 */
import { randomUUID } from 'node:crypto';
import type { DeployedFunction } from '../assembly/deployed-stack.ts';
import { LambdaFunctionError, timeoutError } from './lambda-invoke-error.ts';
import { SandboxThread, type InvocationSink } from './sandbox-thread.ts';

export { LambdaFunctionError };

const DEFAULT_MAX_SANDBOXES = 10;
const HTTP_INTEGRATION = 'application/vnd.awslambda.http-integration-response';
const PRELUDE_DELIMITER = Buffer.alloc(8);
/** The most a synchronous Invoke returns, in the figure Lambda's error names. */
const INVOKE_RESPONSE_LIMIT = 6_291_556;

function responseTooLarge(): LambdaFunctionError {
  return new LambdaFunctionError({
    errorType: 'Function.ResponseSizeTooLarge',
    errorMessage: `Response payload size exceeded maximum allowed payload size (${INVOKE_RESPONSE_LIMIT} bytes).`,
  });
}

export interface LocalFunctionOptions {
  fn: DeployedFunction;
  /**
   * Variables the Lambda runtime adds beside the template's: the role's credentials
   * (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN) and the endpoints
   * (AWS_ENDPOINT_URL_DYNAMODB, _SFN, _S3, _SECRETS_MANAGER, _LAMBDA). They win over the defaults here.
   */
  runtimeEnvironment: Record<string, string>;
  /** Each line the function writes (console, stdout, stderr) and the runtime's START/END/REPORT lines. */
  onLog: (line: string) => void;
  /** Sandboxes run at once at most; more invocations wait. @default 10 */
  maxConcurrency?: number;
  /** @default `/aws/lambda/<name>` (the template's LoggingConfig, when it names a group, is the runner's to pass) */
  logGroupName?: string;
}

/** One sandbox's init, in milliseconds. */
export interface ColdStart {
  /** As its REPORT line gives it: from the sandbox's start to its handler loaded. */
  initDurationMs: number;
  /** Of that, the import of the handler's module (its module init); the rest is the sandbox's start-up. */
  handlerImportMs: number;
}

/** What a RESPONSE_STREAM invocation gives: the prelude, then the body as it is written. */
export interface StreamingInvocation {
  prelude: { statusCode?: number; headers?: Record<string, string>; cookies?: string[] };
  body: ReadableStream<Uint8Array>;
  /** Set when the handler is not a streaming one: the value it returned (prelude and body are then empty). */
  result?: unknown;
}

export interface LocalFunction {
  /** Plain invoke (Step Functions' lambda:invoke, EventBridge): the handler's result, or a thrown LambdaFunctionError. */
  invoke(event: unknown): Promise<unknown>;
  /** RESPONSE_STREAM invoke: the awslambda.streamifyResponse contract (HttpResponseStream.from prelude, then body chunks). */
  invokeStreaming(event: unknown): Promise<StreamingInvocation>;
  /** Each cold start so far, in the order their REPORT lines were written. */
  readonly coldStarts: readonly ColdStart[];
  close(): Promise<void>;
}

/** Starts the function's sandbox pool; the first invocation pays the cold start, as in Lambda. */
export async function startLocalFunction(options: LocalFunctionOptions): Promise<LocalFunction> {
  const pool = new SandboxPool(options);
  return {
    invoke: (event) =>
      new Promise((resolve, reject) => {
        const chunks: Uint8Array[] = [];
        void pool.run(event, {
          chunk: (data) => chunks.push(data),
          result: (json) => {
            if (Buffer.byteLength(json) > INVOKE_RESPONSE_LIMIT) reject(responseTooLarge());
            else resolve(JSON.parse(json));
          },
          // A streaming handler invoked without streaming: Lambda returns what it wrote as the payload.
          done: () => resolve(parsePayload(Buffer.concat(chunks))),
          fail: reject,
        });
      }),
    invokeStreaming: (event) => new Promise((resolve, reject) => void pool.run(event, streamingSink(resolve, reject))),
    coldStarts: pool.coldStarts,
    close: () => pool.close(),
  };
}

function parsePayload(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Splits the runtime's HTTP integration stream (JSON prelude, 8 NUL bytes, body) as the Function URL does. */
function streamingSink(resolve: (invocation: StreamingInvocation) => void, reject: (error: Error) => void): InvocationSink {
  let stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  // A reader that went away (a client that disconnected mid-stream) cancels the body; the
  // handler's later writes then go nowhere, as they do in Lambda, instead of throwing.
  let open = true;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      stream = c;
    },
    cancel: () => {
      open = false;
    },
  });
  const controller = {
    enqueue: (data: Uint8Array) => {
      if (open) stream?.enqueue(data);
    },
    close: () => {
      if (!open) return;
      open = false;
      stream?.close();
    },
    error: (error: unknown) => {
      if (!open) return;
      open = false;
      stream?.error(error);
    },
  };
  let started = false;
  let pending = Buffer.alloc(0);
  const start = (prelude: StreamingInvocation['prelude']) => {
    started = true;
    resolve({ prelude, body });
  };
  return {
    chunk(data, contentType) {
      if (started) return controller.enqueue(data);
      if (contentType !== HTTP_INTEGRATION) {
        start({ statusCode: 200, headers: { 'content-type': contentType } });
        return controller.enqueue(data);
      }
      pending = Buffer.concat([pending, data]);
      const split = pending.indexOf(PRELUDE_DELIMITER);
      if (split < 0) return;
      let prelude: StreamingInvocation['prelude'];
      try {
        prelude = JSON.parse(pending.subarray(0, split).toString('utf8')) as StreamingInvocation['prelude'];
      } catch {
        prelude = { statusCode: 502 };
      }
      start(prelude);
      const rest = pending.subarray(split + PRELUDE_DELIMITER.length);
      if (rest.length > 0) controller.enqueue(new Uint8Array(rest));
    },
    result(json) {
      controller.close();
      started = true;
      resolve({ prelude: {}, body, result: JSON.parse(json) });
    },
    done() {
      if (!started) start({ statusCode: 200, headers: {} });
      controller.close();
    },
    fail(error) {
      if (started) controller.error(error);
      else reject(error);
    },
  };
}

class SandboxPool {
  private readonly sandboxes = new Set<SandboxThread>();
  private readonly idle: SandboxThread[] = [];
  private readonly waiting: Array<(sandbox: SandboxThread) => void> = [];
  private closed = false;
  /** Each cold start, in the order their REPORT lines were written. */
  readonly coldStarts: ColdStart[] = [];

  constructor(private readonly options: LocalFunctionOptions) {}

  /** Starts one invocation; never throws (failures go to the sink). */
  async run(event: unknown, sink: InvocationSink): Promise<void> {
    const { fn, onLog } = this.options;
    const requestId = randomUUID();
    let sandbox: SandboxThread;
    try {
      sandbox = await this.acquire();
      const initError = await sandbox.ready(requestId);
      if (initError) {
        this.discard(sandbox);
        onLog(`INIT_REPORT Phase: invoke Status: error Error Type: ${initError.errorType}`);
        return sink.fail(new LambdaFunctionError(initError));
      }
    } catch (error) {
      return sink.fail(error instanceof LambdaFunctionError ? error : new LambdaFunctionError({ errorType: 'Runtime.Unknown', errorMessage: String(error) }));
    }
    const started = performance.now();
    onLog(`START RequestId: ${requestId} Version: $LATEST`);
    let ended = false;
    // The sandbox goes back to the pool before the caller hears the outcome, so a caller that
    // invokes again at once finds it warm.
    const end = (deliver: () => void) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      const duration = performance.now() - started;
      onLog(`END RequestId: ${requestId}`);
      // Lambda gives a cold start's Init Duration on the REPORT line of the invocation that paid it.
      const initMs = sandbox.initDurationMs;
      sandbox.initDurationMs = undefined;
      if (initMs !== undefined) this.coldStarts.push({ initDurationMs: initMs, handlerImportMs: sandbox.handlerImportMs ?? Number.NaN });
      const init = initMs === undefined ? '' : `\tInit Duration: ${initMs.toFixed(2)} ms`;
      onLog(
        `REPORT RequestId: ${requestId}\tDuration: ${duration.toFixed(2)} ms\tBilled Duration: ${Math.ceil(duration)} ms\tMemory Size: ${fn.memorySize} MB${init}`,
      );
      this.release(sandbox);
      deliver();
    };
    const timer = setTimeout(() => {
      onLog(`${new Date().toISOString()} ${requestId} Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`);
      void sandbox.kill();
      end(() => sink.fail(timeoutError(requestId, fn.timeoutSeconds)));
    }, fn.timeoutSeconds * 1000);
    sandbox.start(requestId, event, fn.timeoutSeconds, {
      chunk: (data, contentType) => !ended && sink.chunk(data, contentType),
      result: (json) => end(() => sink.result(json)),
      done: () => end(() => sink.done()),
      fail: (error) => end(() => sink.fail(error)),
    });
  }

  private async acquire(): Promise<SandboxThread> {
    if (this.closed) throw new LambdaFunctionError({ errorType: 'ServiceException', errorMessage: 'The local function is closed' });
    for (let idle = this.idle.pop(); idle; idle = this.idle.pop()) {
      if (!idle.dead) return idle;
      this.sandboxes.delete(idle);
    }
    if (this.sandboxes.size < (this.options.maxConcurrency ?? DEFAULT_MAX_SANDBOXES)) {
      const sandbox = new SandboxThread(this.options);
      this.sandboxes.add(sandbox);
      return sandbox;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(sandbox: SandboxThread): void {
    if (sandbox.dead || this.closed) {
      this.discard(sandbox);
      return;
    }
    const next = this.waiting.shift();
    if (next) next(sandbox);
    else this.idle.push(sandbox);
  }

  /** A dead sandbox leaves the pool; a waiting invocation gets a fresh one in its place. */
  private discard(sandbox: SandboxThread): void {
    sandbox.kill();
    this.sandboxes.delete(sandbox);
    const next = this.waiting.shift();
    if (next && !this.closed) {
      const fresh = new SandboxThread(this.options);
      this.sandboxes.add(fresh);
      next(fresh);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter(new SandboxThread(this.options, true));
    await Promise.all([...this.sandboxes].map((sandbox) => sandbox.kill()));
    this.sandboxes.clear();
    this.idle.length = 0;
  }
}
