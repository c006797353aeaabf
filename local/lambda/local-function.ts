/**
 * Runs one deployed function's bundled asset the way Lambda runs it: each sandbox is a worker
 * thread (lambda-sandbox.mjs) that sees exactly the template's environment plus the variables
 * the runtime sets, loads the handler once (the cold start), and runs one invocation at a time.
 * Concurrent invocations get more sandboxes, up to a cap. The function's Timeout is enforced:
 * the invocation fails with the runtime's `Sandbox.Timedout` and the sandbox is replaced.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DeployedFunction } from '../assembly/deployed-stack.ts';
import { exitError, LambdaFunctionError, timeoutError, type LambdaErrorPayload } from './lambda-invoke-error.ts';

export { LambdaFunctionError };

const SANDBOX_SCRIPT = fileURLToPath(new URL('./lambda-sandbox.mjs', import.meta.url));
/** Stands in for /var/runtime: the AWS SDK the runtime provides comes from this repository. */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Lambda gives an on-demand init phase 10 seconds. */
const INIT_TIMEOUT_MS = 10_000;
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
  close(): Promise<void>;
}

/** Where one invocation's output goes. */
interface InvocationSink {
  chunk(data: Uint8Array, contentType: string): void;
  result(json: string): void;
  done(): void;
  fail(error: LambdaFunctionError): void;
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
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
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
  private readonly sandboxes = new Set<Sandbox>();
  private readonly idle: Sandbox[] = [];
  private readonly waiting: Array<(sandbox: Sandbox) => void> = [];
  private closed = false;

  constructor(private readonly options: LocalFunctionOptions) {}

  /** Starts one invocation; never throws (failures go to the sink). */
  async run(event: unknown, sink: InvocationSink): Promise<void> {
    const { fn, onLog } = this.options;
    const requestId = randomUUID();
    let sandbox: Sandbox;
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
      const init = sandbox.initDurationMs === undefined ? '' : `\tInit Duration: ${sandbox.initDurationMs.toFixed(2)} ms`;
      sandbox.initDurationMs = undefined;
      onLog(`REPORT RequestId: ${requestId}\tDuration: ${duration.toFixed(2)} ms\tBilled Duration: ${Math.ceil(duration)} ms\tMemory Size: ${fn.memorySize} MB${init}`);
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

  private async acquire(): Promise<Sandbox> {
    if (this.closed) throw new LambdaFunctionError({ errorType: 'ServiceException', errorMessage: 'The local function is closed' });
    for (let idle = this.idle.pop(); idle; idle = this.idle.pop()) {
      if (!idle.dead) return idle;
      this.sandboxes.delete(idle);
    }
    if (this.sandboxes.size < (this.options.maxConcurrency ?? DEFAULT_MAX_SANDBOXES)) {
      const sandbox = new Sandbox(this.options);
      this.sandboxes.add(sandbox);
      return sandbox;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(sandbox: Sandbox): void {
    if (sandbox.dead || this.closed) return this.discard(sandbox);
    const next = this.waiting.shift();
    if (next) next(sandbox);
    else this.idle.push(sandbox);
  }

  /** A dead sandbox leaves the pool; a waiting invocation gets a fresh one in its place. */
  private discard(sandbox: Sandbox): void {
    sandbox.kill();
    this.sandboxes.delete(sandbox);
    const next = this.waiting.shift();
    if (next && !this.closed) {
      const fresh = new Sandbox(this.options);
      this.sandboxes.add(fresh);
      next(fresh);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter(new Sandbox(this.options, true));
    await Promise.all([...this.sandboxes].map((sandbox) => sandbox.kill()));
    this.sandboxes.clear();
    this.idle.length = 0;
  }
}

/** One worker thread: its init, then one invocation at a time. */
class Sandbox {
  dead = false;
  initDurationMs: number | undefined;
  private readonly worker: Worker | undefined;
  private readonly initialized: Promise<LambdaErrorPayload | undefined>;
  private sink: InvocationSink | undefined;
  private requestId = '';
  private readonly partial = { stdout: '', stderr: '' };

  constructor(
    private readonly options: LocalFunctionOptions,
    closed = false,
  ) {
    if (closed) {
      this.dead = true;
      this.initialized = Promise.resolve({ errorType: 'ServiceException', errorMessage: 'The local function is closed' });
      return;
    }
    const { fn } = options;
    const logStreamName = `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomBytes(16).toString('hex')}`;
    const logGroupName = options.logGroupName ?? `/aws/lambda/${fn.name}`;
    const begun = performance.now();
    this.worker = new Worker(SANDBOX_SCRIPT, {
      env: lambdaEnvironment(fn, options.runtimeEnvironment, logGroupName, logStreamName),
      execArgv: [],
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: fn.memorySize },
      workerData: {
        assetDir: fn.assetDir,
        handler: fn.handler,
        repoRoot: REPO_ROOT,
        sourceMaps: /(^|\s)--enable-source-maps(\s|$)/.test(fn.environment.NODE_OPTIONS ?? ''),
        functionName: fn.name,
        functionVersion: '$LATEST',
        memoryLimitInMB: String(fn.memorySize),
        logGroupName,
        logStreamName,
      },
    });
    // Anything written before the sandbox captures its output (or by native code) still reaches the log.
    this.worker.stdout.on('data', (data: Buffer) => this.log('stdout', data.toString('utf8')));
    this.worker.stderr.on('data', (data: Buffer) => this.log('stderr', data.toString('utf8')));
    this.initialized = new Promise((resolve) => {
      const worker = this.worker!;
      const timer = setTimeout(() => {
        this.kill();
        resolve({ errorType: 'Sandbox.Timedout', errorMessage: `INIT_REPORT Init Duration: ${INIT_TIMEOUT_MS} ms Phase: init Status: timeout` });
      }, INIT_TIMEOUT_MS);
      worker.on('message', (message: SandboxMessage) => {
        if (message.type === 'ready' || message.type === 'init-error') {
          clearTimeout(timer);
          this.initDurationMs = performance.now() - begun;
          resolve(message.type === 'init-error' ? message.error : undefined);
        } else this.onMessage(message);
      });
      worker.on('error', (error: Error & { code?: string }) => {
        clearTimeout(timer);
        const detail = error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'signal: killed' : `${error.name}: ${error.message}`;
        const failure = exitError(this.requestId, detail);
        resolve(failure.payload);
        this.fail(failure);
      });
      worker.on('exit', (code) => {
        clearTimeout(timer);
        this.dead = true;
        this.flushLogs();
        resolve({ errorType: 'Runtime.ExitError', errorMessage: `Error: Runtime exited with error: exit status ${code}` });
        this.fail(exitError(this.requestId, `exit status ${code}`));
      });
    });
  }

  /** The init error, if the cold start failed. */
  ready(requestId: string): Promise<LambdaErrorPayload | undefined> {
    this.requestId = requestId;
    return this.initialized;
  }

  start(requestId: string, event: unknown, timeoutSeconds: number, sink: InvocationSink): void {
    this.requestId = requestId;
    this.sink = sink;
    const deadlineMs = Date.now() + timeoutSeconds * 1000;
    let eventJson: string;
    try {
      // The event travels as JSON, as the Invoke payload does: what JSON cannot carry does not arrive.
      eventJson = JSON.stringify(event ?? null);
    } catch (error) {
      return this.fail(new LambdaFunctionError({ errorType: 'InvalidRequestContentException', errorMessage: `Could not parse request body into json: ${String(error)}` }));
    }
    this.worker!.postMessage({ type: 'invoke', id: requestId, eventJson, awsRequestId: requestId, deadlineMs, invokedFunctionArn: this.options.fn.arn });
  }

  private onMessage(message: SandboxMessage): void {
    if (message.type === 'log') return this.log(message.stream, message.text);
    const sink = this.sink;
    if (!sink || ('id' in message && message.id !== this.requestId)) return;
    switch (message.type) {
      case 'chunk':
        return sink.chunk(message.data, message.contentType);
      case 'result':
        this.sink = undefined;
        return sink.result(message.json);
      case 'done':
        this.sink = undefined;
        return sink.done();
      case 'error':
        this.sink = undefined;
        return sink.fail(new LambdaFunctionError(message.error));
      case 'fatal':
        this.dead = true;
        return this.fail(new LambdaFunctionError(message.error));
    }
  }

  private fail(error: LambdaFunctionError): void {
    const sink = this.sink;
    this.sink = undefined;
    sink?.fail(error);
  }

  private log(stream: 'stdout' | 'stderr', text: string): void {
    const lines = (this.partial[stream] + text).split('\n');
    this.partial[stream] = lines.pop() ?? '';
    for (const line of lines) this.options.onLog(line);
  }

  private flushLogs(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      if (this.partial[stream]) this.options.onLog(this.partial[stream]);
      this.partial[stream] = '';
    }
  }

  async kill(): Promise<void> {
    this.dead = true;
    await this.worker?.terminate();
  }
}

type SandboxMessage =
  | { type: 'ready' }
  | { type: 'init-error'; error: LambdaErrorPayload }
  | { type: 'log'; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'chunk'; id: string; data: Uint8Array; contentType: string }
  | { type: 'result'; id: string; json: string }
  | { type: 'done'; id: string }
  | { type: 'error'; id: string; error: LambdaErrorPayload }
  | { type: 'fatal'; id?: string; error: LambdaErrorPayload };

/**
 * The sandbox's whole environment: the template's variables, then what the runtime sets (which a
 * template cannot override: they are reserved), then credentials and endpoints. Nothing of this
 * process's own environment.
 */
export function lambdaEnvironment(fn: DeployedFunction, runtimeEnvironment: Record<string, string>, logGroupName: string, logStreamName: string): Record<string, string> {
  const region = fn.arn.split(':')[3] || 'us-east-1';
  return {
    ...fn.environment,
    // /var/lang/bin in Lambda: where `node` is.
    PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin/:/bin:/opt/bin`,
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    _HANDLER: fn.handler,
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySize),
    AWS_LAMBDA_LOG_GROUP_NAME: logGroupName,
    AWS_LAMBDA_LOG_STREAM_NAME: logStreamName,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    LAMBDA_TASK_ROOT: fn.assetDir,
    ...runtimeEnvironment,
  };
}
