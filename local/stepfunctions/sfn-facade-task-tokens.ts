/**
 * Task tokens for `.waitForTaskToken` states: minted when a definition reads
 * `$$.Task.Token`, settled by SendTaskSuccess / SendTaskFailure, kept alive by
 * SendTaskHeartbeat. Answers with the service's errors: a string that is not a token
 * is InvalidToken, a token this runtime never issued is TaskDoesNotExist, and a token
 * whose task has ended (answered, timed out, execution closed) is TaskTimedOut.
 */
import { randomBytes } from 'node:crypto';
import { SfnApiError, TaskError } from './sfn-facade-errors.ts';

const TOKEN = /^[A-Za-z0-9_-]{64}$/;
/** Ended tasks remembered, so a late answer gets TaskTimedOut rather than TaskDoesNotExist. */
const ENDED_KEPT = 10_000;

interface TokenTask {
  executionArn: string;
  state: 'waiting' | 'ended';
  settle: { resolve: (output: unknown) => void; reject: (error: Error) => void };
  promise: Promise<unknown>;
  heartbeatMs?: number;
  heartbeatTimer?: NodeJS.Timeout;
  timeoutTimer?: NodeJS.Timeout;
}

export interface TokenWaitOptions {
  /** The state's HeartbeatSeconds: no heartbeat for that long fails the task with States.HeartbeatTimeout. */
  heartbeatSeconds?: number;
  /** The state's TimeoutSeconds. The interpreter fails the task; this only retires the token. */
  timeoutSeconds?: number;
}

export class TaskTokens {
  private readonly tasks = new Map<string, TokenTask>();
  private readonly ended: string[] = [];

  /** The execution a token was issued for, while it is known (IAM authorizes SendTask* on its machine). */
  executionOf(token: string): string | undefined {
    return this.tasks.get(token)?.executionArn;
  }

  /** Issues a token for a task of `executionArn`; its outcome is read with `wait`. */
  mint(executionArn: string): string {
    const token = randomBytes(48).toString('base64url');
    let settle!: TokenTask['settle'];
    const promise = new Promise<unknown>((resolve, reject) => (settle = { resolve, reject }));
    // The interpreter may never await it (aborted run); a rejection must not go unhandled.
    promise.catch(() => undefined);
    this.tasks.set(token, { executionArn, state: 'waiting', settle, promise });
    return token;
  }

  /** Resolves with the task's output, or rejects with the failure sent for it. */
  wait(token: string, options: TokenWaitOptions = {}): Promise<unknown> {
    const task = this.tasks.get(token);
    if (!task) throw new Error('unknown task token');
    if (options.heartbeatSeconds) {
      task.heartbeatMs = options.heartbeatSeconds * 1000;
      this.armHeartbeat(token, task);
    }
    if (options.timeoutSeconds) {
      task.timeoutTimer = setTimeout(() => this.end(token, task), options.timeoutSeconds * 1000);
    }
    return task.promise;
  }

  succeed(token: string, outputText: string): void {
    // The output's size is a model constraint, checked with the request (sfn-facade-actions.ts).
    const task = this.waiting(token);
    let output: unknown;
    try {
      output = JSON.parse(outputText);
    } catch {
      throw new SfnApiError('InvalidOutput', 'Invalid Output: the output is not valid JSON');
    }
    this.end(token, task);
    task.settle.resolve(output);
  }

  fail(token: string, error: string | undefined, cause: string | undefined): void {
    const task = this.waiting(token);
    this.end(token, task);
    task.settle.reject(new TaskError(error ?? '', cause ?? ''));
  }

  heartbeat(token: string): void {
    const task = this.waiting(token);
    this.armHeartbeat(token, task);
  }

  /** Retires the token without settling it (the task ended some other way). */
  cancel(token: string): void {
    const task = this.tasks.get(token);
    if (task?.state === 'waiting') this.end(token, task);
  }

  /** Ends every task of a closed execution, so its waits release the interpreter. */
  closeExecution(executionArn: string): void {
    for (const [token, task] of this.tasks) {
      if (task.executionArn !== executionArn || task.state !== 'waiting') continue;
      this.end(token, task);
      task.settle.reject(new TaskError('States.Runtime', 'The execution has closed'));
    }
  }

  private waiting(token: string): TokenTask {
    if (!TOKEN.test(token)) throw new SfnApiError('InvalidToken', 'Invalid Token');
    const task = this.tasks.get(token);
    if (!task) throw new SfnApiError('TaskDoesNotExist', 'Task does not exist');
    if (task.state !== 'waiting') throw new SfnApiError('TaskTimedOut', "Task Timed Out: 'Provided task does not exist anymore'");
    return task;
  }

  private armHeartbeat(token: string, task: TokenTask): void {
    if (task.heartbeatMs === undefined) return;
    clearTimeout(task.heartbeatTimer);
    task.heartbeatTimer = setTimeout(() => {
      this.end(token, task);
      task.settle.reject(new TaskError('States.HeartbeatTimeout', 'No heartbeat was received within HeartbeatSeconds'));
    }, task.heartbeatMs);
  }

  private end(token: string, task: TokenTask): void {
    if (task.state === 'ended') return;
    task.state = 'ended';
    clearTimeout(task.heartbeatTimer);
    clearTimeout(task.timeoutTimer);
    this.ended.push(token);
    while (this.ended.length > ENDED_KEPT) {
      const oldest = this.ended.shift();
      if (oldest !== undefined) this.tasks.delete(oldest);
    }
  }
}
