/**
 * The checkpoint backend of `@aws/durable-execution-sdk-js-testing`, run as the package runs it:
 * its checkpoint server in a worker thread, spoken to by messages. It keeps each execution's
 * operations, checkpoint tokens and callback ids and validates every checkpoint as the service
 * does; what it leaves to its caller (timers, re-invoking the handler) is in `durable-run.ts`.
 * The package exports only its test runner, so the worker is found beside it by path: the
 * version is pinned in package.json for that reason.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';

/** The worker's API calls (its `ApiType` enum) that this service uses. */
export type CheckpointApi =
  | 'StartDurableExecution'
  | 'StartInvocation'
  | 'CompleteInvocation'
  | 'UpdateCheckpointData'
  | 'PollCheckpointData'
  | 'GetDurableExecutionState'
  | 'CheckpointDurableExecutionState'
  | 'SendDurableExecutionCallbackSuccess'
  | 'SendDurableExecutionCallbackFailure'
  | 'SendDurableExecutionCallbackHeartbeat';

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  onApplied?: (response: unknown) => void;
}

interface WorkerReply {
  data: { requestId: string; response?: unknown; error?: unknown };
}

function workerPath(): string {
  const require = createRequire(import.meta.url);
  const main = require.resolve('@aws/durable-execution-sdk-js-testing'); // dist-cjs/index.js
  return join(dirname(main), '..', 'dist', 'checkpoint-server', 'index.mjs');
}

/** One checkpoint worker thread and the calls in flight to it. */
export class CheckpointWorkerClient {
  private readonly worker: Worker;
  private readonly pending = new Map<string, Pending>();
  private closed = false;

  constructor() {
    this.worker = new Worker(workerPath(), { workerData: {} });
    this.worker.on('message', (reply: WorkerReply) => {
      const call = this.pending.get(reply.data.requestId);
      if (!call) return;
      this.pending.delete(reply.data.requestId);
      if ('error' in reply.data) {
        call.reject(reply.data.error);
        return;
      }
      try {
        call.onApplied?.(reply.data.response);
        call.resolve(reply.data.response);
      } catch (error) {
        call.reject(error);
      }
    });
    this.worker.on('error', (error) => this.failAll(error));
    this.worker.on('exit', () => this.failAll(new Error('checkpoint worker exited')));
  }

  /**
   * Calls the worker's `api` with `params`; rejects with the worker's error. `onApplied` runs
   * as the reply arrives, before any other reply is read, so calls it records are recorded in
   * the order the worker applied them (it defers checkpoints, so that is not the order sent);
   * if it throws, the call rejects with its error.
   */
  call<T>(api: CheckpointApi, params: object, onApplied?: (response: T) => void): Promise<T> {
    if (this.closed) return Promise.reject(new Error('checkpoint worker closed'));
    const requestId = randomUUID();
    return new Promise<T>((resolve, reject) => {
      this.pending.set(requestId, { resolve: resolve as (value: unknown) => void, reject, onApplied: onApplied as Pending['onApplied'] });
      this.worker.postMessage({ type: 'API_REQUEST', data: { requestId, type: api, params } });
    });
  }

  /** Ends the thread; calls still waiting (an execution's long poll) are dropped, not failed. */
  async close(): Promise<void> {
    this.closed = true;
    this.pending.clear();
    await this.worker.terminate();
  }

  private failAll(error: unknown): void {
    if (this.closed) return;
    this.closed = true;
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
  }
}
