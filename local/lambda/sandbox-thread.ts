/**
 * One Lambda sandbox as seen from the server: a worker thread running lambda-sandbox.mjs, its
 * init (the cold start), then one invocation at a time, with the sandbox's output split into
 * log lines.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DeployedFunction } from '../assembly/deployed-stack.ts';
import { lambdaEnvironment } from './lambda-environment.ts';
import { exitError, LambdaFunctionError, type LambdaErrorPayload } from './lambda-invoke-error.ts';

const SANDBOX_SCRIPT = fileURLToPath(new URL('./lambda-sandbox.mjs', import.meta.url));
/** Stands in for /var/runtime: the AWS SDK the runtime provides comes from this repository. */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Lambda gives an on-demand init phase 10 seconds. */
const INIT_TIMEOUT_MS = 10_000;

export interface SandboxOptions {
  fn: DeployedFunction;
  runtimeEnvironment: Record<string, string>;
  onLog: (line: string) => void;
  logGroupName?: string;
}

/** Where one invocation's output goes. */
export interface InvocationSink {
  chunk(data: Uint8Array, contentType: string): void;
  result(json: string): void;
  done(): void;
  fail(error: LambdaFunctionError): void;
}

/** One worker thread: its init, then one invocation at a time. */
export class SandboxThread {
  dead = false;
  /** The cold start's Init Duration, until the invocation that paid it reports it. */
  initDurationMs: number | undefined;
  /** Of that, the handler module's import (the rest is the sandbox's own start-up). */
  handlerImportMs: number | undefined;
  private readonly worker: Worker | undefined;
  private readonly initialized: Promise<LambdaErrorPayload | undefined>;
  private sink: InvocationSink | undefined;
  private requestId = '';
  private readonly partial = { stdout: '', stderr: '' };

  constructor(
    private readonly options: SandboxOptions,
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
    const worker = new Worker(SANDBOX_SCRIPT, {
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
    this.worker = worker;
    worker.stdout.on('data', (data: Buffer) => this.log('stdout', data.toString('utf8')));
    worker.stderr.on('data', (data: Buffer) => this.log('stderr', data.toString('utf8')));
    this.initialized = new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.kill();
        resolve({ errorType: 'Sandbox.Timedout', errorMessage: `INIT_REPORT Init Duration: ${INIT_TIMEOUT_MS} ms Phase: init Status: timeout` });
      }, INIT_TIMEOUT_MS);
      worker.on('message', (message: SandboxMessage) => {
        if (message.type === 'ready' || message.type === 'init-error') {
          clearTimeout(timer);
          this.initDurationMs = performance.now() - begun;
          if (message.type === 'ready') this.handlerImportMs = message.importMs;
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
      this.fail(
        new LambdaFunctionError({ errorType: 'InvalidRequestContentException', errorMessage: `Could not parse request body into json: ${String(error)}` }),
      );
      return;
    }
    if (!this.worker) {
      this.fail(new LambdaFunctionError({ errorType: 'ServiceException', errorMessage: 'The local function is closed' }));
      return;
    }
    this.worker.postMessage({ type: 'invoke', id: requestId, eventJson, awsRequestId: requestId, deadlineMs, invokedFunctionArn: this.options.fn.arn });
  }

  private onMessage(message: SandboxMessage): void {
    if (message.type === 'log') {
      this.log(message.stream, message.text);
      return;
    }
    const sink = this.sink;
    if (!sink || ('id' in message && message.id !== this.requestId)) return;
    switch (message.type) {
      case 'chunk':
        sink.chunk(message.data, message.contentType);
        break;
      case 'result':
        this.sink = undefined;
        sink.result(message.json);
        break;
      case 'done':
        this.sink = undefined;
        sink.done();
        break;
      case 'error':
        this.sink = undefined;
        sink.fail(new LambdaFunctionError(message.error));
        break;
      case 'fatal':
        this.dead = true;
        this.fail(new LambdaFunctionError(message.error));
        break;
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
  | { type: 'ready'; importMs: number }
  | { type: 'init-error'; error: LambdaErrorPayload }
  | { type: 'log'; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'chunk'; id: string; data: Uint8Array; contentType: string }
  | { type: 'result'; id: string; json: string }
  | { type: 'done'; id: string }
  | { type: 'error'; id: string; error: LambdaErrorPayload }
  | { type: 'fatal'; id?: string; error: LambdaErrorPayload };
